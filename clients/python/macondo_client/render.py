"""Text tables for the API's messages (moves, sim, endgame, pre-endgame, autoplay), as the engine's own
CLI prints them, so a shell or a script shows what a Macondo user expects."""

from __future__ import annotations

from macondo_server.pb.macondo.v1 import engine_pb2 as pb

_MARK = {"win": "👍", "draw": "🤝", "loss": "👎", "unresolved": "?"}


def moves_table(resp: pb.GenerateMovesResponse) -> str:
    lines = [f"{'#':>3}  {'Move':<20}{'Leave':<9}{'Score':>5}{'Equity':>9}"]
    for i, m in enumerate(resp.moves, 1):
        lines.append(f"{i:>3}  {m.display.strip():<20}{m.leave:<9}{m.score:>5}{m.equity:>9.2f}")
    c = resp.counts
    lines.append(f"{c.placements + c.exchanges + c.passes} legal moves ({c.placements} placements, "
                 f"{c.exchanges} exchanges, {c.passes} passes); lexicon {resp.lexicon}")
    return "\n".join(lines)


def sim_table(snap: pb.SimulateProgress, details: bool = False) -> str:
    lines = [f"{'Play':<20}{'Leave':<9}{'Score':>5}  {'Win%':>14}  {'Equity':>16}"]
    for p in snap.plays:
        mark = " ❌" if p.pruned else ""
        lines.append(f"{p.move.display.strip():<20}{p.move.leave:<9}{p.move.score:>5}  "
                     f"{p.win_pct:7.2f}±{p.win_pct_stderr:<5.2f}  {p.equity:8.2f}±{p.equity_stderr:<6.2f}{mark}")
        if details:
            for k, ply in enumerate(p.ply_stats, 1):
                lines.append(f"{'':<6}ply {k}: mean score {ply.mean_score:6.2f}, bingos {ply.bingo_pct:5.2f}%")
    state = "final" if snap.final else "running"
    reason = f", {snap.stop_reason}" if snap.stop_reason else ""
    lines.append(f"Iterations: {snap.iterations} ({state}{reason}, {snap.elapsed_seconds:.1f} s)")
    return "\n".join(lines)


def endgame_text(snap: pb.EndgameProgress, first_win: bool = False, plies: int = 0) -> str:
    lines = []
    if first_win:
        lines.append("Win found!" if snap.final_spread > 0 else
                     ("Draw found." if snap.final_spread == 0 else "Win was not found."))
    else:
        lines.append(f"Best sequence has a spread difference (value) of {snap.value:+d}")
    lines.append(f"Final spread after seq: {snap.final_spread:+d}")
    if snap.best_line:
        lines.append(f"Best move: {snap.best_line[0].move.display.strip()}")
    lines.append("Best sequence:")
    for i, m in enumerate(snap.best_line, 1):
        lines.append(f"{i}) {'~' if m.estimated else ''}{m.move.display.strip()} ({m.move.score})")
    note = "" if snap.complete else f" (stopped; deepest completed depth {snap.depth}" + (
        f" of {plies})" if plies else ")")
    lines.append(f"depth {snap.depth}, {snap.nodes} nodes in {snap.elapsed_seconds:.2f} s{note}")
    return "\n".join(lines)


def peg_table(snap: pb.PreEndgameProgress, rows: int = 30) -> str:
    lines = []
    if snap.winner:
        lines.append(f"Winner: {snap.winner}")
    lines.append(f"{'Play':<20}{'Wins':<8}{'%Win':<8}{'Spread':<9}{'Outcomes':<32}")
    for p in snap.plays[:rows]:
        wins, pct = ("---", "---") if p.cut_off else (f"{p.wins:.1f}", f"{p.win_pct:.2f}")
        spread = f"{p.spread:.2f}" if p.HasField("spread") else ""
        parts = []
        for result in ("win", "draw", "loss", "unresolved"):
            labels = [o.draw for o in p.outcomes if o.result == result]
            if not labels:
                continue
            if result == "win" and len(labels) > 6:
                parts.append(f"{_MARK[result]}: {len(labels)} draws")
            else:
                parts.append(f"{_MARK[result]}: " + " ".join(labels))
        extra = f" (unresolved {p.unresolved})" if p.unresolved else ""
        mark = " ❌" if p.cut_off else ""
        lines.append(f"{p.move.display.strip():<20}{wins:<8}{pct:<8}{spread:<9}{' '.join(parts)}{extra}{mark}")
    lines.append("❌ marks plays cut off early (they cannot beat the leader).")
    lines.append("[XY]Z: we draw X and Y in any order and Z stays in the bag for the opponent; "
                 f"{snap.total_permutations} ordered draws in all.")
    state = "complete" if snap.complete else ("stopped" if snap.stopped else "running")
    lines.append(f"{snap.draws_done}/{snap.draws_total} play-draw jobs, {snap.endgames} endgames, "
                 f"{snap.nested_calls} nested solves, {snap.elapsed_seconds:.1f} s ({state})")
    return "\n".join(lines)


def autoplay_text(snap: pb.AutoplayProgress) -> str:
    wins = list(snap.wins) or [0, 0]
    scores = list(snap.mean_score) or [0.0, 0.0]
    return (f"games {snap.games_done}/{snap.games_total}: wins {wins[0]}-{wins[1]}, draws {snap.draws}; "
            f"bot 1 win rate {100 * snap.win_rate:.1f}% ±{100 * snap.win_rate_ci95:.1f}; "
            f"mean score {scores[0]:.1f}-{scores[1]:.1f}; {snap.games_per_second:.1f} games/s")


def progress_line(snap: object) -> str:
    """One line for a running job's snapshot."""
    if isinstance(snap, pb.SimulateProgress):
        lead = snap.plays[0] if snap.plays else None
        best = f"; leader {lead.move.display.strip()} {lead.win_pct:.1f}%" if lead else ""
        return f"sim: {snap.iterations} iterations, {snap.elapsed_seconds:.1f} s{best}"
    if isinstance(snap, pb.EndgameProgress):
        line = " ".join(m.move.display.strip() for m in snap.best_line[:4])
        return f"endgame: depth {snap.depth}, value {snap.value:+d} {line} ({snap.nodes} nodes, {snap.elapsed_seconds:.1f} s)"
    if isinstance(snap, pb.PreEndgameProgress):
        return (f"peg: {snap.draws_done}/{snap.draws_total} draws, {snap.endgames} endgames, "
                f"{snap.nested_calls} nested, {snap.elapsed_seconds:.1f} s")
    if isinstance(snap, pb.AutoplayProgress):
        return autoplay_text(snap)
    return str(snap)
