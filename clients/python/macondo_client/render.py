"""Text tables for the API's messages (moves, sim, endgame, pre-endgame, autoplay), as the engine's own
CLI prints them, so a shell or a script shows what a Macondo user expects."""

from __future__ import annotations

from .pb.macondo.v1 import engine_pb2 as pb

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
    lines = [f"{'#':>3}  {'Play':<20}{'Leave':<9}{'Score':>5}  {'Win%':>14}  {'Equity':>16}"]
    for i, p in enumerate(snap.plays, 1):
        mark = " ❌" if p.pruned else ""
        lines.append(f"{i:>3}  {p.move.display.strip():<20}{p.move.leave:<9}{p.move.score:>5}  "
                     f"{p.win_pct:7.2f}±{p.win_pct_stderr:<5.2f}  {p.equity:8.2f}±{p.equity_stderr:<6.2f}{mark}")
        if details:
            for k, ply in enumerate(p.ply_stats, 1):
                lines.append(f"{'':<6}ply {k}: mean score {ply.mean_score:6.2f}, bingos {ply.bingo_pct:5.2f}%")
    state = "final" if snap.final else "running"
    reason = f", {snap.stop_reason}" if snap.stop_reason else ""
    lines.append(f"Iterations: {snap.iterations} ({state}{reason}, {snap.elapsed_seconds:.1f} s)")
    if snap.HasField("inference"):
        inf = snap.inference
        if inf.drawn_from_inference:
            top = ", ".join(f"{v.leave} {100 * v.posterior:.1f}% (random {100 * v.prior:.2f}%)" for v in inf.top[:3])
            lines.append(f"Opponent racks drawn from the inference on {inf.play}: {inf.leaves} leaves, "
                         f"{inf.racks_consistent:,} of {inf.racks_judged:,} racks consistent; most likely {top}")
        else:
            lines.append(f"Inference on {inf.play}: no consistent leave, opponent racks drawn at random")
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
        lines.append(f"Best move: #1 {snap.best_line[0].move.display.strip()}")
    lines.append("Best sequence:")
    for i, m in enumerate(snap.best_line, 1):
        lines.append(f"{i}) {'~' if m.estimated else ''}{m.move.display.strip()} ({m.move.score})")
    note = "" if snap.complete else f" (stopped; deepest completed depth {snap.depth}" + (
        f" of {plies})" if plies else ")")
    lines.append(f"depth {snap.depth}, {snap.nodes} nodes in {snap.elapsed_seconds:.2f} s{note}")
    return "\n".join(lines)


def _pts(x: float) -> str:
    return f"{x:.1f}" if x != int(x) else str(int(x))


def _with_winner(snap: pb.PreEndgameProgress, shown: str) -> pb.PreEndgameProgress:
    if shown == snap.winner:
        return snap
    copy = pb.PreEndgameProgress()
    copy.CopyFrom(snap)
    copy.winner = shown
    return copy


def peg_leader_line(snap: pb.PreEndgameProgress) -> str:
    """Who leads and why: a finished solve's best play, a play proven best by the bounds, or nobody yet."""
    if snap.winner:
        # the table's notation (2L F(O)ND) rather than the wire's (2L F.ND)
        shown = next((p.move.display.strip() for p in snap.plays if p.move.notation == snap.winner), snap.winner)
        snap = _with_winner(snap, shown)
        if snap.finished or snap.complete or not snap.leader_reason:
            reason = snap.leader_reason or "complete"
            return f"Winner: {snap.winner} ({reason})"
        if snap.leader_depth == "quick":
            return (f"Leader: {snap.winner} ({snap.leader_reason}; at full depth so far {_pts(snap.leader_lower)} "
                    f"to {_pts(snap.leader_upper)} of {snap.total_permutations})")
        return (f"Leader: {snap.winner} ({snap.leader_reason}: at least {_pts(snap.leader_lower)} of "
                f"{snap.total_permutations})")
    why = snap.no_leader_reason or "the bounds overlap"
    return (f"No leader yet: {why} (best lower bound {_pts(snap.best_lower)}, best upper bound "
            f"{_pts(snap.best_upper)} of {snap.total_permutations})")


def _peg_outcomes(p: pb.PEGPlayInfo, verbose: bool) -> str:
    parts = []
    counts = {c.result: c for c in p.outcome_counts}
    for result in ("win", "draw", "loss", "unresolved"):
        labels = [o.draw for o in p.outcomes if o.result == result]
        if not labels:
            continue
        if not verbose and len(labels) > 6:
            weight = counts[result].weight if result in counts else sum(o.weight for o in p.outcomes
                                                                        if o.result == result)
            parts.append(f"{_MARK[result]}: {len(labels)} draws (weight {weight})")
        else:
            parts.append(f"{_MARK[result]}: " + " ".join(labels))
    pending = counts.get("pending")
    if pending is not None and pending.draws and not p.cut_off:
        parts.append(f"not solved yet: {pending.draws} draws (weight {pending.weight})")
    return " ".join(parts)


def peg_table(snap: pb.PreEndgameProgress, rows: int = 30, verbose: bool = False) -> str:
    lines = [peg_leader_line(snap)]
    tot = snap.total_permutations
    # bounds are shown unless every play has a verdict on every draw (servers without them: as before)
    exact = not any(p.draws_total for p in snap.plays) or (
        snap.finished and all(p.cut_off or p.lower_wins == p.upper_wins for p in snap.plays))
    if exact:
        lines.append(f"{'#':>3}  {'Play':<20}{'Wins':<8}{'%Win':<8}{'Spread':<9}{'Outcomes':<32}")
    else:
        lines.append(f"{'#':>3}  {'Play':<20}{'Wins (min-max)':<18}{'%Win (min-max)':<17}{'Quick':<9}"
                     f"{'Draws':<12}{'Outcomes':<32}")
    for i, p in enumerate(snap.plays[:rows], 1):
        spread = f"{p.spread:.2f}" if p.HasField("spread") else ""
        extra = f" (unresolved {p.unresolved})" if p.unresolved else ""
        mark = " ❌" if p.cut_off else ""
        outcomes = _peg_outcomes(p, verbose)
        if exact:
            wins, pct = ("---", "---") if p.cut_off else (f"{p.wins:.1f}", f"{p.win_pct:.2f}")
            lines.append(f"{i:>3}  {p.move.display.strip():<20}{wins:<8}{pct:<8}{spread:<9}{outcomes}{extra}{mark}")
            continue
        lo, hi = p.lower_wins, p.upper_wins
        if lo == hi:
            wins, pct = f"{lo:.1f}", (f"{100 * lo / tot:.2f}" if tot else "0.00")
        else:
            wins = f"{lo:.1f}-{hi:.1f}"
            pct = f"{100 * lo / tot:.1f}-{100 * hi / tot:.1f}" if tot else ""
        done = f"{p.draws_done}/{p.draws_total}"
        quick = (f"{100 * p.quick_wins / tot:.1f}%" if tot and p.draws_total and p.quick_draws_done == p.draws_total
                 else f"{p.quick_draws_done}/{p.draws_total}" if p.quick_draws_done else "")
        lines.append(f"{i:>3}  {p.move.display.strip():<20}{wins:<18}{pct:<17}{quick:<9}{done:<12}{outcomes}{extra}"
                     f"{mark}")
    if len(snap.plays) > rows:
        lines.append(f"... {len(snap.plays) - rows} more plays")
    lines.append("❌ marks plays cut off early (they cannot beat the leader).")
    if not exact:
        lines.append("min-max: wins certain so far - wins if every draw not yet resolved were won; "
                     "Draws: draw groups with a verdict / all; Quick: win % at the quick pass (1-ply endgames, "
                     "the best replies only: a preview, not a bound).")
    lines.append("[XY]Z: we draw X and Y in any order and Z stays in the bag for the opponent; "
                 f"{tot} ordered draws in all.")
    state = "complete" if snap.complete else ("stopped" if snap.stopped else
                                              "running: quick pass" if snap.phase in ("setup", "quick") else "running")
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
        if snap.winner:
            lead = f"leader {snap.winner} {_pts(snap.leader_lower)}-{_pts(snap.leader_upper)}"
        else:
            lead = f"no leader yet (best lower {_pts(snap.best_lower)}, best upper {_pts(snap.best_upper)})"
        left = ""
        if snap.draw_groups_left:
            left = f", at most {snap.draw_groups_left} draw groups (~{snap.endgames_left} endgames) left"
            if snap.eta_seconds:
                left += f", ~{snap.eta_seconds:.0f} s at this rate"
        return (f"peg: {lead}; {snap.draws_done}/{snap.draws_total} draws, {snap.endgames} endgames "
                f"({snap.endgames_per_second:.0f}/s){left}, {snap.nested_calls} nested, "
                f"{snap.elapsed_seconds:.1f} s")
    if isinstance(snap, pb.AutoplayProgress):
        return autoplay_text(snap)
    return str(snap)


def events_table(state: pb.GameState) -> str:
    """The game's events with scores; the cursor (the position shown) is marked after its event."""
    lines = [f"{'#':>4}  {'Player':<12}{'Rack':<9}{'Move':<22}{'Score':>6}{'Total':>7}"]
    if state.turn == 0:
        lines.append("  ->  (start)")
    for ev in state.events:
        note = "  [note]" if ev.note else ""
        lines.append(f"{ev.number:>4}  {ev.nick[:11]:<12}{ev.rack:<9}{ev.move[:21]:<22}{ev.score:>+6}{ev.cumulative:>7}"
                     f"{note}")
        if ev.number == state.turn:
            lines.append(f"  ->  turn {state.turn}: {state.players[state.on_turn]} to move"
                         if not state.game_over else f"  ->  turn {state.turn}: game over")
    lines.append(f"{state.num_events} events; the cursor is at turn {state.turn}; challenge rule {state.challenge_rule}")
    return "\n".join(lines)
