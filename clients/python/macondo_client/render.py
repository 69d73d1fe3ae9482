"""The one rendering of every result, from the API's messages: text tables (moves, simulation, endgame,
pre-endgame, self-play, inference, a game's events, a game review) and the JSON that `macondo ... --json`
prints. The shell draws what a server sends; the engine's CLI converts its results to the same messages
(macondo_server/api/convert.py) and draws them with these same functions."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .pb.macondo.v1 import engine_pb2 as pb

if TYPE_CHECKING:
    from rich.console import Console

JSON = dict[str, Any]

RACK_SIZE = 7
_MARK = {"win": "👍", "draw": "🤝", "loss": "👎", "unresolved": "?"}
_VERDICTS = ("win", "draw", "loss", "unresolved")       # the order verdicts are listed in
SUMMARY_AT = 6      # a verdict with more draws than this is shown as a count and weight unless verbose


def _pts(x: float) -> str:
    """Points as shown: whole numbers without a decimal."""
    return f"{x:.1f}" if x != int(x) else str(int(x))


def _duration(sec: float) -> str:
    if sec < 90:
        return f"{sec:.0f} s"
    if sec < 5400:
        return f"{sec / 60:.0f} min"
    return f"{sec / 3600:.1f} h"


# ------------------------------------------------------------------ server info


def lexicon_label(lx: pb.LexiconInfo) -> str:
    """A lexicon as a server lists it: its name, then its letter distribution and board when the server
    says them ("FRA20 (french, standard15)")."""
    board = ", ".join(x for x in (lx.distribution, lx.layout) if x)
    return f"{lx.name} ({board})" if board else lx.name


# ------------------------------------------------------------------ move generation


def moves_table(resp: pb.GenerateMovesResponse) -> str:
    lines = [f"{'#':>3}  {'Move':<20}{'Leave':<9}{'Score':>5}{'Equity':>9}"]
    for i, m in enumerate(resp.moves, 1):
        lines.append(f"{i:>3}  {m.display.strip():<20}{m.leave:<9}{m.score:>5}{m.equity:>9.2f}")
    c = resp.counts
    lines.append(f"{c.placements + c.exchanges + c.passes} legal moves ({c.placements} placements, "
                 f"{c.exchanges} exchanges, {c.passes} pass{'' if c.passes == 1 else 'es'}); lexicon {resp.lexicon}")
    return "\n".join(lines)


def moves_json(resp: pb.GenerateMovesResponse) -> JSON:
    return {
        "moves": [{"move": m.notation, "score": m.score, "equity": round(m.equity, 3), "leave": m.leave,
                   "tiles_played": m.tiles_played} for m in resp.moves],
        "counts": {"placements": resp.counts.placements, "exchanges": resp.counts.exchanges,
                   "passes": resp.counts.passes},
    }


# ------------------------------------------------------------------ simulation


def sim_table(snap: pb.SimulateProgress, details: bool = False) -> str:
    lines = [f"{'#':>3}  {'Play':<20}{'Leave':<9}{'Score':>5}  {'Win%':>14}  {'Equity':>16}"]
    for i, p in enumerate(snap.plays, 1):
        mark = " ❌" if p.pruned else ""
        lines.append(f"{i:>3}  {p.move.display.strip():<20}{p.move.leave:<9}{p.move.score:>5}  "
                     f"{p.win_pct:7.2f}±{p.win_pct_stderr:<5.2f}  {p.equity:8.2f}±{p.equity_stderr:<6.2f}{mark}".rstrip())
        if details:
            for k, ply in enumerate(p.ply_stats, 1):
                lines.append(f"{'':<6}ply {k}: mean score {ply.mean_score:6.2f}, bingos {ply.bingo_pct:5.2f}%")
    state = "final" if snap.final else "running"
    reason = f", {snap.stop_reason}" if snap.stop_reason else ""
    lines.append(f"Iterations: {snap.iterations} ({state}{reason}, {snap.elapsed_seconds:.1f} s)")
    if snap.stop_rule == "bai":
        lines.append(f"Best-arm identification at {100 * snap.confidence:g}% confidence: {snap.samples} playouts "
                     "(each draw simulates the leader and its challenger)")
    if snap.HasField("inference"):
        inf = snap.inference
        if inf.drawn_from_inference:
            top = ", ".join(f"{v.leave} {100 * v.posterior:.1f}% (random {100 * v.prior:.2f}%)" for v in inf.top[:3])
            if inf.model == "softmax":
                how = f"{inf.method}, {inf.racks_judged:,} racks weighed, about {inf.effective_leaves:,.0f} equally likely"
            else:
                how = f"{inf.method}, {inf.racks_consistent:,} of {inf.racks_judged:,} racks consistent"
            earlier = f" and {len(inf.history)} earlier turns" if inf.history else ""
            lines.append(f"Opponent racks drawn from the inference on {inf.play}{earlier}: {inf.leaves} leaves "
                         f"({how}); most likely {top}")
        else:
            lines.append(f"Inference on {inf.play}: no consistent leave, opponent racks drawn at random")
    return "\n".join(lines)


def sim_json(snap: pb.SimulateProgress) -> JSON:
    out: JSON = {}
    if snap.HasField("inference"):
        inf = snap.inference
        out["inference"] = {
            "play": inf.play, "method": inf.method, "racks_judged": inf.racks_judged,
            "racks_consistent": inf.racks_consistent, "leaves": inf.leaves, "tolerance": inf.tolerance,
            "top": [{"leave": v.leave, "posterior": round(v.posterior, 6), "prior": round(v.prior, 6)}
                    for v in inf.top],
            "drawn_from_inference": inf.drawn_from_inference,
            "model": inf.model, "temperature": inf.temperature, "history": list(inf.history),
        }
    return out | {
        "iterations": snap.iterations,
        "plays": [
            {
                "move": p.move.notation,
                "score": p.move.score,
                "leave": p.move.leave,
                "win_pct": round(p.win_pct, 3),
                "win_pct_stderr": round(p.win_pct_stderr, 3),
                "equity": round(p.equity, 3),
                "equity_stderr": round(p.equity_stderr, 3),
                "pruned": p.pruned,
                "ply_stats": [_ply_json(s) for s in p.ply_stats],
            } | ({"opponent_leave": {t.tile: {"held": round(t.held, 4), "kept": round(t.kept, 4)}
                                     for t in p.opponent_leave}} if p.opponent_leave else {})
            for p in snap.plays
        ],
        "seconds": round(snap.elapsed_seconds, 3),
        "stopped_reason": snap.stop_reason,
        "samples": snap.samples,
        "stop_rule": snap.stop_rule or "z",
        "confidence": snap.confidence or None,
    } | ({"score_bin_width": snap.score_bin_width} if snap.score_bin_width else {})


def _ply_json(s: pb.PlyStats) -> JSON:
    out: JSON = {"mean_score": round(s.mean_score, 2), "bingo_pct": round(s.bingo_pct, 2)}
    if s.score_histogram:
        out["score_histogram"] = list(s.score_histogram)
    if s.heatmap:
        dim = math.isqrt(len(s.heatmap))
        out["heatmap"] = [list(s.heatmap[r * dim:(r + 1) * dim]) for r in range(dim)]
    return out


# ------------------------------------------------------------------ simulation statistics (SimulateRequest.stats)


def _norm_play(text: str) -> str:
    return " ".join(text.upper().split())


def find_sim_play(snap: pb.SimulateProgress, text: str) -> tuple[int, pb.SimmedPlayInfo]:
    """A simulated play by its rank in the table (3, #3) or its notation ('8G QI', '2L P.ND', '2L P(O)ND'):
    (rank, play). A ValueError names what was asked for when no play matches."""
    want = _norm_play(text)
    rank = want.lstrip("#")
    if rank.isdigit():
        k = int(rank)
        if not 1 <= k <= len(snap.plays):
            raise ValueError(f"no play #{k}: the simulation has {len(snap.plays)}")
        return k, snap.plays[k - 1]
    for i, p in enumerate(snap.plays, 1):
        display = _norm_play(p.move.display)
        dotted = re.sub(r"\([^)]*\)", lambda m: "." * len(m.group(0)[1:-1]), display)
        if want in (_norm_play(p.move.notation), display, dotted):
            return i, p
    raise ValueError(f"{text[:40]!r} is not among the simulated plays (a play's notation or its rank, e.g. 1)")


def _has_stats(p: pb.SimmedPlayInfo) -> bool:
    return any(len(s.score_histogram) for s in p.ply_stats) or len(p.opponent_leave) > 0


def _need_stats(snap: pb.SimulateProgress, p: pb.SimmedPlayInfo) -> None:
    if not _has_stats(p):
        raise ValueError("the simulation collected no statistics (simulate with stats on)"
                         if not any(_has_stats(q) for q in snap.plays) else
                         f"no statistics for {p.move.notation}: it has no complete iteration")


def _bin_label(k: int, width: int, last: bool) -> str:
    return f"{k * width}+" if last else f"{k * width}-{(k + 1) * width - 1}"


def _who(ply: int) -> str:
    return "the opponent" if ply % 2 == 1 else "the player on turn"


def sim_playstats_text(snap: pb.SimulateProgress, play: str, bar: int = 40) -> str:
    """One play's statistics per ply: the mean score, the bingo rate and the histogram of the scores (each bin's
    iterations, share and a bar)."""
    rank, p = find_sim_play(snap, play)
    _need_stats(snap, p)
    width = snap.score_bin_width or 10
    lines = [f"#{rank} {p.move.display.strip()}: {p.iterations} iterations, win {p.win_pct:.2f}%, "
             f"equity {p.equity:+.2f}"]
    for k, ply in enumerate(p.ply_stats, 1):
        lines.append(f"Ply {k} ({_who(k)}): mean score {ply.mean_score:.2f}, bingos {ply.bingo_pct:.2f}%")
        hist = list(ply.score_histogram)
        total = sum(hist) or 1
        top = max(hist) if hist else 0
        last_used = max((i for i, c in enumerate(hist) if c), default=-1)
        for i, c in enumerate(hist):
            if i > last_used and i > 4:
                break
            n = round(bar * c / top) if top else 0
            lines.append(f"  {_bin_label(i, width, i == len(hist) - 1):>8} {c:>9} {100 * c / total:5.1f}% "
                         f"{'█' * n}".rstrip())
    return "\n".join(lines)


def sim_tilestats_text(snap: pb.SimulateProgress, plays: list[str] | None = None, top: int = 5) -> str:
    """The opponent's rack around their reply (ply 1): per letter, the mean count on it before the reply (held,
    the leader's column) and left after it (kept) for each play (the top `top` plays, or those named)."""
    chosen = ([find_sim_play(snap, t) for t in plays] if plays else
              [(i, p) for i, p in enumerate(snap.plays[:top], 1)])
    for _, p in chosen:
        _need_stats(snap, p)
    if not chosen:
        raise ValueError("the simulation has no plays")
    heads = [f"#{i} {p.move.display.strip()}" for i, p in chosen]
    cols = [max(9, len(h)) for h in heads]
    lines = ["The opponent's rack around their reply (ply 1), mean count per iteration: held before it, kept "
             "after it (before drawing)",
             f"{'tile':<5}{'held':>7}  " + "  ".join(f"{h:>{w}}" for h, w in zip(heads, cols, strict=True))]
    first = chosen[0][1]
    for j, t in enumerate(first.opponent_leave):
        if all(p.opponent_leave[j].held == 0 for _, p in chosen):
            continue
        kept = [p.opponent_leave[j].kept for _, p in chosen]
        lines.append(f"{t.tile:<5}{t.held:>7.3f}  " + "  ".join(f"{k:>{w}.3f}" for k, w in zip(kept, cols, strict=True)))
    held = sum(t.held for t in first.opponent_leave)
    lines.append(f"{'all':<5}{held:>7.3f}  " + "  ".join(
        f"{sum(t.kept for t in p.opponent_leave):>{w}.3f}" for (_, p), w in zip(chosen, cols, strict=True)))
    return "\n".join(lines)


def board_cells(cgp: str) -> list[list[str]]:
    """The board of a CGP as rows of cells: "" empty, else the tile (lower case a blank; a multi-letter tile
    written [L·L] is one cell)."""
    rows = (cgp.split() or [""])[0].split("/")
    out = []
    for row in rows:
        cells: list[str] = []
        for m in re.finditer(r"(\d+)|\[([^\]]+)\]|(.)", row):
            if m.group(1):
                cells.extend([""] * int(m.group(1)))
            else:
                cells.append(m.group(2) or m.group(3))
        out.append(cells)
    return out


def _move_cells(move: pb.Move) -> dict[tuple[int, int], str]:
    """The squares a placement puts tiles on (played-through squares left out)."""
    if move.type != pb.TILE_PLACEMENT:
        return {}
    tiles = [m.group(1) or m.group(2) for m in re.finditer(r"\[([^\]]+)\]|(.)", move.tiles)]
    down = move.direction == pb.VERTICAL
    return {(move.row + (i if down else 0), move.column + (0 if down else i)): t
            for i, t in enumerate(tiles) if t != "."}


def _heat_color(x: float) -> tuple[int, int, int]:
    """0..1 to a colour: dark slate through amber to red."""
    stops = ((0.0, (52, 58, 70)), (0.5, (235, 170, 40)), (1.0, (215, 40, 30)))
    for (a, ca), (b, cb) in zip(stops, stops[1:], strict=False):
        if x <= b:
            f = (x - a) / (b - a)
            r, g, bl = (round(u + (v - u) * f) for u, v in zip(ca, cb, strict=True))
            return r, g, bl
    return stops[-1][1]


def sim_heatmap(snap: pb.SimulateProgress, play: str, ply: int = 1, cgp: str = "", color: bool = True,
                width: int = 200) -> str:
    """Where one play's `ply` (1: the opponent's reply) put its tiles: the board (from `cgp`, the position
    simulated) with each empty square's share of the iterations in which that ply put a tile on it, in per cent,
    shaded from cool to hot when `color`; the play's own tiles marked *. Drawn with rich (ANSI colours when
    `color`)."""
    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

    rank, p = find_sim_play(snap, play)
    _need_stats(snap, p)
    if not 1 <= ply <= len(p.ply_stats):
        raise ValueError(f"ply must be 1 to {len(p.ply_stats)} (the simulation's plies), got {ply}")
    heat = list(p.ply_stats[ply - 1].heatmap)
    dim = math.isqrt(len(heat))
    board = board_cells(cgp) if cgp else []
    own = _move_cells(p.move)
    n = p.iterations or 1
    top = max(heat) if heat else 0
    cols = "ABCDEFGHIJKLMNOPQRSTU"
    text = Text()
    text.append(f"#{rank} {p.move.display.strip()}, ply {ply} ({_who(ply)}): the squares its tiles went on, "
                f"% of {p.iterations} iterations ({sum(heat)} tiles; * the play's own tiles)\n")
    text.append("    " + "".join(f"{c:>3} " for c in cols[:dim]).rstrip() + "\n")
    for r in range(dim):
        text.append(f"{r + 1:>3} ")
        for c in range(dim):
            tile = board[r][c] if r < len(board) and c < len(board[r]) else ""
            count = heat[r * dim + c]
            if (r, c) in own:
                text.append(f"{own[(r, c)].upper() + '*':>3} ", Style(bold=True, color="black", bgcolor="rgb(120,200,255)"))
            elif tile:
                text.append(f"{tile.upper():>3} ", Style(bold=True, color="white", bgcolor="rgb(90,90,90)"))
            elif count == 0:
                text.append("  . ", Style(color="rgb(120,120,120)"))
            else:
                pct = 100 * count / n
                label = "<1" if pct < 1 else f"{pct:.0f}"
                rgb = _heat_color(count / top)
                fg = "black" if 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 150 else "white"
                text.append(f"{label:>3} ", Style(color=fg, bgcolor=f"rgb{rgb}".replace(" ", "")))
        text.append("\n")
    out = io.StringIO()
    console = Console(file=out, highlight=False, force_terminal=color, no_color=not color, width=width,
                      color_system="truecolor" if color else None)
    console.print(text, end="", soft_wrap=True)
    return "\n".join(line.rstrip() for line in out.getvalue().rstrip("\n").split("\n"))


# ------------------------------------------------------------------ inference


def inference_text(inf: pb.InferenceSummary, top: int = 15) -> str:
    """A whole inference (`macondo infer`): how it judged, the likeliest leaves, the tiles kept."""
    what = f"exchange of {RACK_SIZE - inf.leave_size}" if inf.kind == "exchange" else "play"
    lines = [f"Inference for the opponent's {what} {inf.play} ({inf.description or f'tolerance {inf.tolerance:g} points'})"]
    if inf.known:
        lines.append(f"Known on their rack: {inf.known} (the withdrawn phony's tiles)")
    if inf.history:
        lines.append(f"Weighed with their earlier turns: {', '.join(inf.history)} ({inf.history_racks:,} racks judged)")
    if inf.method == "none":
        lines.append("The play used every tile: nothing was kept, nothing to infer.")
        return "\n".join(lines)
    exhaustive = inf.method == "exhaustive"
    how = "every possible rack" if exhaustive else f"{inf.racks_judged:,} random racks"
    kind = "distinct racks" if exhaustive else "racks"
    if inf.model == "softmax":
        lines.append(f"Judged {how}: {inf.racks_judged:,} {kind}, each weighed against its own moves; "
                     f"{inf.leaves:,} leaves of {inf.leave_size} kept ({inf.distinct_leaves:,} possible), worth "
                     f"{inf.effective_leaves:,.0f} equally likely ones" + (" (stopped early)" if inf.stopped else ""))
    else:
        lines.append(f"Judged {how}: {inf.racks_judged:,} {kind}, {inf.racks_consistent:,} consistent, "
                     f"{inf.leaves:,} distinct leaves of {inf.leave_size} kept ({inf.distinct_leaves:,} possible)"
                     + (" (stopped early)" if inf.stopped else ""))
    if not inf.leaves:
        lines.append("No rack makes this play near the best: nothing inferred (a simulation draws at random).")
        return "\n".join(lines)
    lines.append(f"{'Leave':<10}{'Inferred':>10}{'Random':>10}{'Ratio':>9}")
    for v in inf.top[:top]:
        ratio = v.posterior / v.prior if v.prior > 0 else float("inf")
        lines.append(f"{v.leave:<10}{100 * v.posterior:>9.2f}%{100 * v.prior:>9.3f}%{ratio:>9.1f}")
    if inf.tiles:
        lines.append("Tiles kept (expected count, inferred vs random):")
        cells = [f"{t.tile} {t.inferred:.2f}/{t.random:.2f}" for t in inf.tiles]
        for i in range(0, len(cells), 6):
            lines.append("  " + "   ".join(cells[i:i + 6]))
    lines.append(f"{inf.elapsed_seconds:.2f} s")
    return "\n".join(lines)


def inference_json(inf: pb.InferenceSummary) -> JSON:
    return {
        "play": inf.play,
        "kind": inf.kind,
        "known": inf.known,
        "leave_size": inf.leave_size,
        "method": inf.method,
        "racks_judged": inf.racks_judged,
        "racks_consistent": inf.racks_consistent,
        "distinct_leaves": inf.distinct_leaves,
        "consistent_leaves": inf.leaves,
        "tolerance": inf.tolerance,
        "model": inf.model,
        "temperature": inf.temperature,
        "effective_leaves": round(inf.effective_leaves, 2),
        "history": list(inf.history),
        "history_racks": inf.history_racks,
        "seconds": round(inf.elapsed_seconds, 3),
        "stopped": inf.stopped,
        "leaves": [{"leave": v.leave, "posterior": round(v.posterior, 6), "prior": round(v.prior, 6),
                    "racks": v.racks} for v in inf.top],
        "tiles": [{"tile": t.tile, "inferred": round(t.inferred, 4), "random": round(t.random, 4)}
                  for t in inf.tiles],
    }


# ------------------------------------------------------------------ endgame


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
    reason = snap.stop_reason
    if reason == "solved":
        note = " (solved: every line ends the game within this depth)"
    elif snap.complete:
        note = f" ({reason})" if reason else ""
    elif snap.depth == 0:
        note = f" ({reason or 'stopped'} during depth 1: the best of the first moves searched)"
    else:
        note = (f" ({reason or 'stopped'}; deepest completed depth {snap.depth}"
                + (f" of {plies})" if plies else ")"))
    lines.extend(endgame_lines_text(snap))
    lines.append(f"depth {snap.depth}, {snap.nodes} nodes in {snap.elapsed_seconds:.2f} s{note}")
    return "\n".join(lines)


def _eg_moves(line: Iterable[pb.EndgameMove]) -> str:
    return "; ".join(f"{'~' if m.estimated else ''}{m.move.display.strip()} ({m.move.score})" for m in line)


def endgame_lines_text(snap: pb.EndgameProgress) -> list[str]:
    """A top-k solve's first moves (rank, value, loss against the best, line) and its also-solved moves."""
    out: list[str] = []
    if snap.top_lines:
        at = f" at depth {snap.depth}" if snap.depth else " (depth 1 not complete: the first moves searched)"
        out.append(f"Best {len(snap.top_lines)} first moves{at} (exact values; ~ past the horizon):")
        out.append(f"{'#':>3} {'value':>6} {'loss':>5}  line")
        for i, t in enumerate(snap.top_lines, 1):
            out.append(f"{i:>3} {t.value:>+6d} {t.loss:>5d}  {_eg_moves(t.line)}")
    if snap.also_solved:
        out.append("Also solved:")
        for t in snap.also_solved:
            if not t.searched:
                out.append(f"  {t.requested}: not searched (stopped first)")
            else:
                out.append(f"  {t.requested}: value {t.value:+d}, loses {t.loss} against the best: {_eg_moves(t.line)}")
    return out


def _eg_line_json(line: Iterable[pb.EndgameMove]) -> list[JSON]:
    return [{"move": m.move.notation, "score": m.move.score, "estimated": m.estimated} for m in line]


def endgame_json(snap: pb.EndgameProgress) -> JSON:
    out: JSON = {
        "value": snap.value,
        "final_spread": snap.final_spread,
        "best_line": _eg_line_json(snap.best_line),
        "depth": snap.depth,
        "nodes": snap.nodes,
        "seconds": round(snap.elapsed_seconds, 4),
        "stop_reason": snap.stop_reason or None,
    }
    if snap.top_lines:
        out["top_lines"] = [{"move": t.line[0].move.notation if t.line else None, "value": t.value,
                             "final_spread": t.final_spread, "loss": t.loss, "line": _eg_line_json(t.line)}
                            for t in snap.top_lines]
    if snap.also_solved:
        out["also_solved"] = [{"move": t.requested, "searched": t.searched,
                               "value": t.value if t.searched else None,
                               "final_spread": t.final_spread if t.searched else None,
                               "loss": t.loss if t.searched else None, "line": _eg_line_json(t.line)}
                              for t in snap.also_solved]
    return out


# ------------------------------------------------------------------ pre-endgame


def _leader_name(snap: pb.PreEndgameProgress) -> str:
    """The play named now: the leader (servers that send only the winner: the winner)."""
    return snap.leader or snap.winner


def _leader(snap: pb.PreEndgameProgress) -> pb.PEGPlayInfo | None:
    name = _leader_name(snap)
    return next((p for p in snap.plays if p.move.notation == name), None) if name else None


def _shown(snap: pb.PreEndgameProgress, notation: str) -> str:
    """A play as the table shows it (2L F(O)ND rather than the wire's 2L F.ND)."""
    p = next((q for q in snap.plays if q.move.notation == notation), None)
    return p.move.display.strip() if p is not None else notation


def _quick_label(snap: pb.PreEndgameProgress) -> str:
    if not snap.quick_endgame_plies:
        return "quick pass"
    label = (f"quick pass ({snap.quick_endgame_plies}-ply endgames, the {snap.quick_replies_per_turn} best replies "
             "per turn")
    if snap.quick2_endgame_plies and snap.quick2_draws_done:
        label += f"; + its second level, {snap.quick2_endgame_plies}-ply endgames"
    return label + ")"


def _all_judged(p: pb.PEGPlayInfo, judged: int) -> bool:
    """`judged` (a quick level's draws done for the play) covers every draw of the play."""
    return bool(p.draws_total) and judged == p.draws_total


def _quick_cell(p: pb.PEGPlayInfo, tot: int) -> str:
    """A play's quick column: the win % at the deepest quick level complete ("+": the second level), else the
    draw groups judged so far."""
    if tot and _all_judged(p, p.quick2_draws_done):
        return f"{100 * p.quick2_wins / tot:.1f}%+"
    if tot and _all_judged(p, p.quick_draws_done):
        return f"{100 * p.quick_wins / tot:.1f}%"
    return f"{p.quick_draws_done}/{p.draws_total}" if p.quick_draws_done else ""


def _quick_wins(p: pb.PEGPlayInfo) -> float:
    """Its points at the deepest quick level complete."""
    return p.quick2_wins if _all_judged(p, p.quick2_draws_done) else p.quick_wins


def _ties(snap: pb.PreEndgameProgress) -> str:
    if not snap.leader_ties:
        return ""
    names = [_shown(snap, t) for t in snap.leader_ties]
    listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"; tied by everything known with {len(names)} other play{'s' if len(names) > 1 else ''}: {listed}"


def peg_leader_line(snap: pb.PreEndgameProgress) -> str:
    """Who leads and why: a finished solve's best play, a play proven best by the bounds, the best estimate
    while the full solve runs (full-depth verdicts, the calibrated quick pass elsewhere), or nobody yet;
    plays tied with it by everything known are named."""
    tot = snap.total_permutations
    name = _leader_name(snap)
    if name:
        p = _leader(snap)
        shown = _shown(snap, name)
        lo, hi = _pts(snap.leader_lower), _pts(snap.leader_upper)
        ties = _ties(snap)
        if snap.finished or snap.complete or not snap.leader_reason:
            return f"Winner: {shown} ({snap.leader_reason or 'complete'}{ties})"
        if snap.leader_depth in ("quick", "estimate"):
            est = f"estimate {_pts(round(p.estimate, 1))} of {tot}; " if p is not None else ""
            quick = f"quick {_pts(_quick_wins(p))}; " if p is not None else ""
            return (f"Leader: {shown} ({snap.leader_reason}: {est}{quick}at full depth so far {lo} to {hi}; not "
                    f"proven{ties})")
        if snap.leader_depth == "only" or len(snap.plays) == 1:
            return f"Leader: {shown} (the only play; so far {lo} to {hi} of {tot})"
        others = "" if p is None else (
            f", every other play at most {_pts(max((q.upper_wins for q in snap.plays if q is not p), default=0.0))}")
        return f"Winner: {shown} ({snap.leader_reason}: at least {lo} of {tot}{others}{ties})"
    why = snap.no_leader_reason or "the bounds overlap"
    return (f"No leader yet: {why} (best lower bound {_pts(snap.best_lower)}, best upper bound "
            f"{_pts(snap.best_upper)} of {tot})")


def _peg_outcomes(p: pb.PEGPlayInfo, verbose: bool) -> str:
    """The Outcomes column: the draws of each verdict, or their count and weight when there are many (or
    when the message carries the counts only)."""
    parts = []
    counts = {c.result: c for c in p.outcome_counts}
    for result in _VERDICTS:
        labels = sorted(o.draw for o in p.outcomes if o.result == result)
        count = counts.get(result)
        if not labels:
            if count is not None and count.draws and not p.outcomes:
                parts.append(f"{_MARK[result]}: {count.draws} draws (weight {count.weight})")
            continue
        if not verbose and len(labels) > SUMMARY_AT:
            weight = count.weight if count is not None else sum(o.weight for o in p.outcomes if o.result == result)
            parts.append(f"{_MARK[result]}: {len(labels)} draws (weight {weight})")
        else:
            parts.append(f"{_MARK[result]}: " + " ".join(labels))
    pending = counts.get("pending")
    if pending is not None and pending.draws and not p.cut_off:
        parts.append(f"not solved yet: {pending.draws} draws (weight {pending.weight})")
    return " ".join(parts)


def peg_table(snap: pb.PreEndgameProgress, rows: int = 30, verbose: bool = False, cluster: str = "",
              checkpoint: str = "") -> str:
    """The pre-endgame's ranking: the leader line, a row per play (exact figures once every play has a verdict
    on every draw, else the bounds so far), the legend, and the work done. `cluster` and `checkpoint` name
    where the solve ran and recorded (shown with their figures)."""
    lines = [peg_leader_line(snap)]
    tot = snap.total_permutations
    plays = list(snap.plays)
    # bounds are shown unless every play has a verdict on every draw (servers without them: as before)
    exact = not any(p.draws_total for p in plays) or (
        snap.finished and all(p.cut_off or p.lower_wins == p.upper_wins for p in plays))
    if exact:
        lines.append(f"{'#':>3}  {'Play':<20}{'Wins':<8}{'%Win':<8}{'Spread':<9}Outcomes")
    else:
        lines.append(f"{'#':>3}  {'Play':<20}{'Wins (min-max)':<18}{'%Win (min-max)':<17}{'Quick':<10}"
                     f"{'Draws':<12}Outcomes")
    shown = list(range(min(rows, len(plays))))
    if not exact and plays and rows < len(plays):
        # the play with the most points for certain is always shown, even when plays it has not beaten yet
        # (their draws still unsolved) sort above it
        best = max(range(len(plays)), key=lambda i: (plays[i].lower_wins, -i))
        if best not in shown:
            shown = shown[:-1] + [best] if rows > 1 else [best]
    for i in shown:
        p = plays[i]
        spread = f"{p.spread:.2f}" if p.HasField("spread") else ""
        extra = f" (unresolved {p.unresolved})" if p.unresolved else ""
        if p.capped_weight:
            extra += f" (nesting cap: {_pts(p.capped_low)}-{_pts(p.capped_high)})"
        mark = " ❌" if p.cut_off else ""
        outcomes = _peg_outcomes(p, verbose)
        if exact:
            wins, pct = ("---", "---") if p.cut_off else (f"{p.wins:.1f}", f"{p.win_pct:.2f}")
            lines.append(f"{i + 1:>3}  {p.move.display.strip():<20}{wins:<8}{pct:<8}{spread:<9}{outcomes}{extra}"
                         f"{mark}")
            continue
        lo, hi = p.lower_wins, p.upper_wins
        if lo == hi:
            wins, pct = f"{lo:.1f}", (f"{100 * lo / tot:.2f}" if tot else "0.00")
        else:
            wins = f"{lo:.1f}-{hi:.1f}"
            pct = f"{100 * lo / tot:.1f}-{100 * hi / tot:.1f}" if tot else ""
        done = f"{p.draws_done}/{p.draws_total}"
        quick = _quick_cell(p, tot)
        lines.append(f"{i + 1:>3}  {p.move.display.strip():<20}{wins:<18}{pct:<17}{quick:<10}{done:<12}{outcomes}"
                     f"{extra}{mark}")
    if len(plays) > len(shown):
        lines.append(f"... {len(plays) - len(shown)} more plays")
    lines.append("❌ marks plays cut off early (they cannot beat the leader).")
    if not exact:
        depth = f" at {snap.endgame_plies} plies" if snap.endgame_plies else ""
        lines.append(f"min-max: wins certain so far{depth} - wins if every draw not yet resolved were won; "
                     f"Draws: draw groups with a verdict / all; Quick: win % at the {_quick_label(snap)} (a preview, "
                     "not a bound; + at the second level).")
    lines.append("[XY]Z: we draw X and Y in any order and Z stays in the bag for the opponent; "
                 f"{tot} ordered draws in all.")
    if snap.nesting_note:
        lines.append(f"Note: {snap.nesting_note}.")
    if snap.scope_note:
        lines.append(f"Scope: {snap.scope_note}.")
    if snap.complete:
        state = "complete"
    elif snap.finished:
        state = "finished: unresolved draws are shown as such"
    elif snap.final or snap.stopped:
        state = "stopped: unresolved draws are shown as such"
    else:
        state = ("running: quick pass" if snap.phase in ("setup", "quick") else
                 "running: the quick pass's second level" if snap.phase == "quick2" else "running")
    lines.append(f"{snap.draws_done}/{snap.draws_total} play-draw jobs, {snap.endgames} endgames, "
                 f"{snap.nested_calls} nested solves ({snap.nested_cache_hits} from the cache) in "
                 f"{snap.elapsed_seconds:.2f} s ({state})")
    if snap.cluster_workers:
        lines.append(f"cluster{' ' + cluster if cluster else ''}: {snap.cluster_workers} workers, "
                     f"{snap.cluster_tasks} tasks")
    if checkpoint or snap.reused_verdicts or snap.checkpointed_verdicts:
        lines.append(f"checkpoint{' ' + checkpoint if checkpoint else ''}: {snap.reused_verdicts} verdicts reused, "
                     f"{snap.checkpointed_verdicts} recorded in all"
                     + ("" if snap.finished else "; resuming continues this solve"))
    return "\n".join(lines)


def peg_json(snap: pb.PreEndgameProgress) -> JSON:
    order = {name: i for i, name in enumerate(_VERDICTS)}
    return {
        "winner": snap.winner or None,
        "leader": _leader_name(snap) or None,
        "leader_reason": snap.leader_reason or None,
        "leader_depth": snap.leader_depth or None,
        "leader_ties": list(snap.leader_ties),
        "scope_note": snap.scope_note or None,
        "plays_out_of_scope": snap.plays_out_of_scope,
        "nesting_cap": snap.nesting_cap or None,
        "nesting_note": snap.nesting_note or None,
        "stop_reason": snap.stop_reason or None,
        "phase": snap.phase,
        "opponent_model": snap.opponent_model,
        "endgame_plies": snap.endgame_plies,
        "quick_pass": {"endgame_plies": snap.quick_endgame_plies, "replies_per_turn": snap.quick_replies_per_turn,
                       "draws_done": snap.quick_draws_done,
                       "second_level": {"endgame_plies": snap.quick2_endgame_plies,
                                        "replies_per_turn": snap.quick2_replies_per_turn,
                                        "draws_done": snap.quick2_draws_done,
                                        "draws_taken": snap.quick2_draws_taken}},
        "no_leader_reason": snap.no_leader_reason or None,
        "best_lower": snap.best_lower,
        "best_upper": snap.best_upper,
        "total_permutations": snap.total_permutations,
        "plays": [
            {
                "move": p.move.notation,
                "display": p.move.display.strip(),
                "score": p.move.score,
                "wins": p.wins,
                "win_pct": round(p.win_pct, 2),
                "lower": p.lower_wins,
                "upper": p.upper_wins,
                "draws_done": p.draws_done,
                "draws_total": p.draws_total,
                "complete_at": p.complete_at or None,
                "quick_wins": p.quick_wins,
                "quick_draws_done": p.quick_draws_done,
                "quick2_wins": p.quick2_wins if p.quick2_draws_done else None,
                "quick2_draws_done": p.quick2_draws_done,
                "estimate": p.estimate,
                "estimate_sd": round(p.estimate_sd, 3),
                "pending_weight": p.pending_weight,
                "spread": round(p.spread, 2) if p.HasField("spread") else None,
                "cut_off": p.cut_off,
                "unresolved": p.unresolved,
                "capped": ({"low": p.capped_low, "high": p.capped_high, "weight": p.capped_weight}
                           if p.capped_weight else None),
                "outcome_counts": {c.result: {"draws": c.draws, "weight": c.weight} for c in p.outcome_counts},
                "outcomes": [{"draw": o.draw, "result": o.result, "weight": o.weight}
                             for o in sorted(p.outcomes, key=lambda o: (order.get(o.result, len(order)), o.draw))],
            }
            for p in snap.plays
        ],
        "endgames": snap.endgames,
        "nested_calls": snap.nested_calls,
        "nested_cache_hits": snap.nested_cache_hits,
        "opponent_solves": snap.opponent_solves,
        "seconds": round(snap.elapsed_seconds, 3),
        "endgames_per_second": round(snap.endgames_per_second, 1),
        "draw_groups_left": snap.draw_groups_left,
        "endgames_left_estimate": snap.endgames_left,
        "complete": snap.complete,
        "checkpoint": {"reused": snap.reused_verdicts, "recorded": snap.checkpointed_verdicts},
        "cluster": ({"workers": snap.cluster_workers, "tasks": snap.cluster_tasks} if snap.cluster_workers
                    else None),
    }


# ------------------------------------------------------------------ self-play


def autoplay_line(snap: pb.AutoplayProgress) -> str:
    """One line: the tally so far."""
    wins = list(snap.wins) or [0, 0]
    scores = list(snap.mean_score) or [0.0, 0.0]
    return (f"games {snap.games_done}/{snap.games_total}: wins {wins[0]}-{wins[1]}, draws {snap.draws}; "
            f"bot 1 win rate {100 * snap.win_rate:.1f}% ±{100 * snap.win_rate_ci95:.1f}; "
            f"mean score {scores[0]:.1f}-{scores[1]:.1f}; {snap.games_per_second:.1f} games/s")


def autoplay_text(snap: pb.AutoplayProgress) -> str:
    """The tally per bot: wins, mean score, bingos; the win rate with its 95% interval, the spread."""
    wins = list(snap.wins) or [0, 0]
    scores = list(snap.mean_score) or [0.0, 0.0]
    bingos = list(snap.bingos_per_game) or [0.0, 0.0]
    of = f" of {snap.games_total}" if snap.games_total and snap.games_total != snap.games_done else ""
    lines = [f"games {snap.games_done}{of} in {snap.elapsed_seconds:.2f} s ({snap.games_per_second:.1f} games/s)"
             + (" (stopped)" if snap.stopped else "")]
    for b in (0, 1):
        lines.append(f"bot{b + 1}: wins {wins[b]}  mean score {scores[b]:.1f}  bingos/game {bingos[b]:.2f}")
    lines.append(f"draws {snap.draws}; bot1 win rate {100 * snap.win_rate:.1f}% ± {100 * snap.win_rate_ci95:.1f} "
                 f"(95%); mean spread {snap.mean_spread:+.1f} (sd {snap.spread_stdev:.1f}); "
                 f"turns/game {snap.turns_per_game:.1f}")
    return "\n".join(lines)


def autoplay_json(snap: pb.AutoplayProgress) -> JSON:
    return {
        "games": snap.games_done,
        "wins": list(snap.wins),
        "draws": snap.draws,
        "mean_score": [round(x, 3) for x in snap.mean_score],
        "bingos_per_game": [round(x, 4) for x in snap.bingos_per_game],
        "turns_per_game": round(snap.turns_per_game, 3),
        "games_per_second": round(snap.games_per_second, 2),
        "seconds": round(snap.elapsed_seconds, 3),
        "mean_spread": round(snap.mean_spread, 3),
        "win_rate": round(snap.win_rate, 4),
        "win_rate_ci95": round(snap.win_rate_ci95, 4),
    }


# ------------------------------------------------------------------ progress of a running job


def progress_line(snap: object) -> str:
    """One line for a running job's snapshot."""
    if isinstance(snap, pb.SimulateProgress):
        lead = snap.plays[0] if snap.plays else None
        best = f"; leader {lead.move.display.strip()} {lead.win_pct:.1f}%" if lead else ""
        return f"sim: {snap.iterations} iterations, {snap.elapsed_seconds:.1f} s{best}"
    if isinstance(snap, pb.EndgameProgress):
        line = " ".join(m.move.display.strip() for m in snap.best_line[:6])
        return (f"endgame: depth {snap.depth}, value {snap.value:+d} {line} ({snap.nodes} nodes, "
                f"{snap.elapsed_seconds:.1f} s)")
    if isinstance(snap, pb.PreEndgameProgress):
        return _peg_progress(snap)
    if isinstance(snap, pb.AutoplayProgress):
        return autoplay_line(snap)
    return str(snap)


def _peg_progress(snap: pb.PreEndgameProgress) -> str:
    name = _leader_name(snap)
    if name:
        shown = _shown(snap, name)
        lead = f"leader {shown} {snap.leader_lower:g}-{snap.leader_upper:g}" + (
            f" ({snap.leader_reason})" if snap.leader_reason else "")
    else:
        lead = f"no leader yet (best lower {snap.best_lower:g}, best upper {snap.best_upper:g})"
    quick = snap.phase in ("setup", "quick", "quick2")
    stage = (f"quick pass {snap.quick_draws_done}/{snap.draws_total} draws" if snap.phase != "quick2" and quick
             else f"quick pass, second level {snap.quick2_draws_done}/{snap.quick2_draws_taken} draws" if quick
             else f"{snap.endgame_plies}-ply solve")
    plays_done = sum(q.cut_off or q.pending_weight == 0 for q in snap.plays)
    cut = sum(q.cut_off for q in snap.plays)
    work = f"{snap.endgames_per_second:.0f} endgames/s"
    if not snap.finished and snap.draw_groups_left:
        what = ("quick pass" if snap.phase != "quick2" else "its second level") if quick else \
            f"{snap.endgame_plies}-ply solve"
        work += f", {what}: at most {snap.draw_groups_left} draw groups (~{snap.endgames_left} endgames) left"
        if snap.eta_seconds:
            work += f", ~{_duration(snap.eta_seconds)} at this rate"
    return (f"peg [{stage}]: {lead}; plays {plays_done}/{len(snap.plays)} done ({cut} cut off), "
            f"draws {snap.draws_done}/{snap.draws_total}, {snap.endgames} endgames, {work}, "
            f"{snap.nested_calls} nested calls ({snap.nested_cache_hits} cached), {snap.elapsed_seconds:.1f} s")


# ------------------------------------------------------------------ games


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


# ------------------------------------------------------------------ game review


def _opt(msg: Any, name: str, digits: int | None = None) -> Any:
    """An optional field's value (rounded), or None when it is not set."""
    if not msg.HasField(name):
        return None
    v = getattr(msg, name)
    return round(v, digits) if digits is not None else v


def _analyzed_move_json(m: pb.AnalyzedMove) -> JSON:
    out: JSON = {"move": m.move, "score": m.score}
    if m.HasField("equity"):
        out["equity"] = round(m.equity, 2)
    if m.HasField("win_pct"):
        out["win_pct"] = round(m.win_pct, 2)
    if m.HasField("value"):
        out["value"] = m.value
    if m.HasField("spread"):
        out["spread"] = round(m.spread, 2)
    return out


def _turn_json(t: pb.TurnAnalysis) -> JSON:
    return {
        "event": t.event, "line": t.line, "player": t.player, "nick": t.nick,
        "rack": t.rack, "bag": t.bag, "phase": t.phase or None,
        "played": _analyzed_move_json(t.played), "best": _analyzed_move_json(t.best) if t.HasField("best") else None,
        "rank": t.rank or None, "candidates": t.candidates,
        "equity_loss": _opt(t, "equity_loss", 2), "win_loss": _opt(t, "win_loss", 2),
        "spread_loss": _opt(t, "spread_loss"), "loss_is_bound": t.loss_is_bound, "mistake": t.mistake,
        "blown_endgame": t.blown_endgame, "bingo_available": t.bingo_available,
        "missed_bingo": t.missed_bingo, "phony": t.phony, "phony_words": list(t.phony_words),
        "phony_challenged": t.phony_challenged, "missed_challenge": t.missed_challenge,
        "complete": t.complete, "skipped": t.skipped or None, "notes": list(t.notes),
        "withdrawn": t.withdrawn, "best_bingo": t.best_bingo, "win_after": _opt(t, "win_after", 2),
        "win_best": _opt(t, "win_best", 2), "win_source": t.win_source or None,
    }


def _summary_json(s: pb.PlayerAnalysisSummary) -> JSON:
    return {
        "player": s.player, "nick": s.nick, "turns": s.turns, "optimal": s.optimal,
        "equity_lost": round(s.equity_lost, 2), "win_pct_lost": round(s.win_pct_lost, 2),
        "spread_lost": s.spread_lost,
        "mistakes": {"small": s.small_mistakes, "medium": s.medium_mistakes, "large": s.large_mistakes},
        "mistake_index": round(s.mistake_index, 2), "bingos_available": s.bingos_available,
        "bingos_missed": s.bingos_missed, "phonies": s.phonies,
        "phonies_challenged": s.phonies_challenged, "challenges_missed": s.challenges_missed,
        "biggest_mistakes": list(s.biggest_mistakes),
    }


def analysis_json(msg: pb.AnalyzeProgress) -> JSON:
    """A game's whole analysis (AnalyzeGame's final message) as `macondo analyze --json` prints a game."""
    b = msg.budget
    return {
        "game": msg.game, "lexicon": msg.lexicon,
        "players": [{"nick": p.nick, "name": p.name} for p in msg.players],
        "budget": {"sim_plies": b.sim_plies, "sim_plays": b.sim_plays, "sim_iterations": b.sim_iterations,
                   "peg_max_bag": b.peg_max_bag, "peg_plays": b.peg_plays,
                   "peg_endgame_plies": b.peg_endgame_plies,
                   "endgame_plies": b.endgame_plies, "endgame_candidates": b.endgame_candidates,
                   "seed": b.seed},
        "turns_analysed": len(msg.turns), "turns_total": msg.turns_total, "stopped": msg.stopped,
        "reused": msg.reused, "warnings": list(msg.warnings),
        "summary": [_summary_json(s) for s in msg.summary],
        "turns": [_turn_json(t) for t in msg.turns],
    }


_FLAG_NAMES = (("missed_bingo", "missed bingo"), ("phony", "phony"), ("phony_challenged", "challenged off"),
               ("missed_challenge", "missed challenge"), ("blown_endgame", "blown endgame"))


def _flags(t: pb.TurnAnalysis) -> str:
    return ", ".join(name for attr, name in _FLAG_NAMES if getattr(t, attr))


def _num(x: float | None, fmt: str = "{:.1f}", bound: bool = False) -> str:
    if x is None:
        return "-"
    return (">=" if bound else "") + fmt.format(x)


def analysis_report(msg: pb.AnalyzeProgress, console: Console) -> None:
    """A game's analysis as a readable report on a rich Console (tables on a terminal; plain columns when
    piped): a row per turn, the summary per player, each player's biggest mistakes."""
    from rich import box
    from rich.table import Table

    names = " vs ".join(p.nick for p in msg.players)
    console.print(f"[bold]{msg.game or 'game'}[/bold]: {names} ({msg.lexicon}); "
                  f"{len(msg.turns)} of {msg.turns_total} turns analysed in {msg.elapsed_seconds:.1f} s"
                  + (" (taken from the review store)" if msg.reused else "")
                  + (" [yellow](stopped: what was done so far)[/yellow]" if msg.stopped else ""))
    for w in msg.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")
    plain = not console.is_terminal
    tb = Table(box=box.SIMPLE if plain else box.ROUNDED, show_edge=not plain, pad_edge=False)
    # narrow terminals: the columns a reader needs first (rack, bag and phase are in the JSON and the notes)
    wide = plain or console.width >= 120
    cols = [("#", "right", 3), ("Player", "left", 6)] + (
        [("Rack", "left", 7), ("Bag", "right", 3), ("Phase", "left", 5)] if wide else []) + [
        ("Played", "left", 8), ("Rank", "right", 5), ("Best", "left", 8), ("Win%-", "right", 5),
        ("Eq-", "right", 5), ("Mistake", "left", 6)]
    for col, just, width in cols:
        tb.add_column(col, justify=just, min_width=width)  # type: ignore[arg-type]
    tb.add_column("Notes", overflow="fold", min_width=10)
    colours = {"small": "blue", "medium": "dark_orange", "large": "red"}
    for t in msg.turns:
        head = [str(t.event), t.nick[:12] if wide else t.nick[:8]]
        if wide:
            head += [t.rack, str(t.bag), t.phase or "-"]
        if t.skipped:
            tb.add_row(*head, t.played.move or "-", "-", "-", "-", "-", "-", f"not analysed: {t.skipped}")
            continue
        mistake = t.mistake if t.mistake not in colours else f"[{colours[t.mistake]}]{t.mistake}[/]"
        eq = _opt(t, "spread_loss") if t.phase == "endgame" else _opt(t, "equity_loss")
        notes = "; ".join(x for x in [_flags(t), *t.notes] if x)
        tb.add_row(*head, t.played.move or "-", f"{t.rank}/{t.candidates}" if t.rank else "-",
                   t.best.move if t.HasField("best") else "-", _num(_opt(t, "win_loss"), bound=t.loss_is_bound),
                   _num(eq), mistake if t.rank else "-", notes)
    console.print(tb)
    # the summary: a row per figure, a column per player (fits any terminal)
    st = Table(title="Summary", box=box.SIMPLE if plain else box.ROUNDED, show_edge=not plain, pad_edge=False)
    st.add_column("")
    for s in msg.summary:
        st.add_column(s.nick, justify="right")
    rows: list[tuple[str, str]] = [
        ("turns analysed", "{s.turns}"),
        ("best move played", "{s.optimal}"),
        ("equity lost", "{s.equity_lost:.1f}"),
        ("win% lost", "{s.win_pct_lost:.1f}"),
        ("endgame spread lost", "{s.spread_lost}"),
        ("mistakes small/medium/large", "{s.small_mistakes}/{s.medium_mistakes}/{s.large_mistakes}"),
        ("mistake index", "{s.mistake_index:.1f}"),
        ("bingos missed/available", "{s.bingos_missed}/{s.bingos_available}"),
        ("phonies (challenged off)", "{s.phonies} ({s.phonies_challenged})"),
        ("challenges missed", "{s.challenges_missed}"),
    ]
    for label, fmt in rows:
        st.add_row(label, *[fmt.format(s=s) for s in msg.summary])
    console.print(st)
    by_event = {t.event: t for t in msg.turns}
    for s in msg.summary:
        if not s.biggest_mistakes:
            continue
        console.print(f"Biggest mistakes of {s.nick}:")
        for ev in s.biggest_mistakes:
            t = by_event[ev]
            loss = (f"-{t.win_loss:.1f}% win" if t.HasField("win_loss") and t.phase != "endgame"
                    else f"-{_opt(t, 'spread_loss')} spread")
            est = "" if t.complete else "; an estimate: the budget was cut"
            console.print(f"  event {t.event} (line {t.line}): {t.played.move} instead of "
                          f"{t.best.move if t.HasField('best') else '?'} ({loss}, {t.mistake}{est})")


def _mistake_json(m: pb.ReviewMistake) -> JSON:
    return {"game": m.game, "event": m.event, "line": m.line, "nick": m.nick, "phase": m.phase, "played": m.played,
            "best": m.best, "size": m.size, "win_loss": _opt(m, "win_loss", 2), "spread_loss": _opt(m, "spread_loss"),
            "equity_loss": _opt(m, "equity_loss", 2), "loss_is_bound": m.loss_is_bound, "complete": m.complete}


def review_summary_json(s: pb.ReviewSummary) -> JSON:
    """The summary of many reviewed games, as `macondo analyze --summary --json` prints it."""
    return {
        "games": s.games, "analysed": s.analysed, "reused": s.reused, "failed": s.failed, "stopped": s.stopped,
        "players": [{
            "name": r.name, "nicks": list(r.nicks), "games": r.games, "turns": r.turns, "optimal": r.optimal,
            "equity_lost": round(r.equity_lost, 2), "win_pct_lost": round(r.win_pct_lost, 2),
            "win_pct_lost_per_turn": round(r.win_pct_lost_per_turn, 2), "spread_lost": r.spread_lost,
            "mistakes": {"small": r.small_mistakes, "medium": r.medium_mistakes, "large": r.large_mistakes},
            "mistake_index": round(r.mistake_index, 2), "mistake_index_per_game": round(r.mistake_index_per_game, 2),
            "best_bingos_missed": r.best_bingos_missed, "bingos_available": r.bingos_available,
            "bingos_missed": r.bingos_missed, "phonies": r.phonies, "phonies_challenged": r.phonies_challenged,
            "challenges_missed": r.challenges_missed, "blown_endgames": r.blown_endgames,
            "biggest_mistakes": [_mistake_json(m) for m in r.biggest_mistakes],
        } for r in s.players],
    }


def _mistake_loss(m: pb.ReviewMistake) -> str:
    if m.HasField("win_loss") and m.phase != "endgame":
        return f"-{'>=' if m.loss_is_bound else ''}{m.win_loss:.1f}% win"
    if m.HasField("spread_loss"):
        return f"-{m.spread_loss} spread"
    return f"-{m.equity_loss:.1f} equity" if m.HasField("equity_loss") else "?"


def review_summary_report(s: pb.ReviewSummary, console: Console) -> None:
    """The summary of many reviewed games on a rich Console: a row per player (the lowest mistake index per
    game first), then each player's biggest mistakes."""
    from rich import box
    from rich.table import Table

    failed = f"; {s.failed} could not be analysed" if s.failed else ""
    console.print(f"[bold]Review of {s.games} game{'s' if s.games != 1 else ''}[/bold]: {s.analysed} analysed, "
                  f"{s.reused} taken from the review store{failed}"
                  + (" [yellow](stopped: what was done so far)[/yellow]" if s.stopped else ""))
    plain = not console.is_terminal
    tb = Table(box=box.SIMPLE if plain else box.ROUNDED, show_edge=not plain, pad_edge=False)
    cols = [("Player", "left"), ("Games", "right"), ("Turns", "right"), ("Best", "right"),
            ("Win%-/turn", "right"), ("Win%-", "right"), ("Mistakes S/M/L", "right"), ("MI", "right"),
            ("MI/game", "right"), ("Bingos missed", "right"), ("Phonies", "right"), ("Chall. missed", "right")]
    for col, just in cols:
        tb.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in s.players:
        nicks = [n for n in r.nicks if n != r.name]
        who = r.name + (f" ({', '.join(nicks)})" if nicks else "")
        tb.add_row(who, str(r.games), str(r.turns), str(r.optimal), f"{r.win_pct_lost_per_turn:.2f}",
                   f"{r.win_pct_lost:.1f}", f"{r.small_mistakes}/{r.medium_mistakes}/{r.large_mistakes}",
                   f"{r.mistake_index:.1f}", f"{r.mistake_index_per_game:.2f}",
                   f"{r.best_bingos_missed} ({r.bingos_missed}/{r.bingos_available})",
                   f"{r.phonies} ({r.phonies_challenged})", str(r.challenges_missed))
    console.print(tb)
    console.print("Best: best moves played. Win%-: win probability lost (simulated and pre-endgame turns). MI: "
                  "mistake index (0.2 small + 0.5 medium + 1.0 large). Bingos missed: the best move was a bingo "
                  "(a bingo available and none played / bingos available). Phonies (challenged off).")
    for r in s.players:
        if not r.biggest_mistakes:
            continue
        console.print(f"Biggest mistakes of {r.name}:")
        for m in r.biggest_mistakes:
            est = "" if m.complete else "; an estimate: the budget was cut"
            console.print(f"  {m.game} event {m.event} (line {m.line}): {m.played} instead of {m.best or '?'} "
                          f"({_mistake_loss(m)}, {m.size}{est})")


def review_progress_line(snap: pb.ReviewGamesProgress) -> str:
    """One line for a running review of many games."""
    return f"review: {snap.games_done}/{snap.games_total} games"


# ------------------------------------------------------------------ inference and leave values (Infer, EvaluateLeave)


def infer_response_text(resp: pb.InferResponse, top: int = 15) -> str:
    """An Infer answer: the inference (as `macondo infer` prints it) and the lexicon it was judged with."""
    return f"{inference_text(resp.inference, top)}\nlexicon {resp.lexicon}"


def leave_text(resp: pb.EvaluateLeaveResponse) -> str:
    """A leave's value, as Macondo's `leave` prints it (points to three decimals)."""
    table = resp.leaves if resp.leaves == resp.lexicon else f"{resp.leaves} (leave set)"
    shown = resp.leave or "(empty)"
    if resp.in_table:
        return f"{shown}: {resp.value:.3f} (leave values of {table})"
    return (f"{shown}: {resp.value:.3f} (not in the leave table of {table}: an empty leave or a full rack counts "
            "as 0)")


def analysis_progress_line(snap: pb.AnalyzeProgress) -> str:
    """One line for a running game analysis."""
    last = snap.turns[-1] if snap.turns else None
    latest = f"; event {last.event}: {last.played.move} ({last.mistake or last.skipped or '-'})" if last else ""
    return f"analyze: {snap.turns_done}/{snap.turns_total} turns{latest}"
