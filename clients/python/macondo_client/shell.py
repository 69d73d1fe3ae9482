"""`macondo shell`: an interactive shell in the spirit of Macondo's, driving an engine server over gRPC.

Flags are written `-name value` (or `--name value`); booleans may stand alone or take `true`/`false`.
Errors are printed as messages and the shell keeps running.
"""

from __future__ import annotations

import cmd
import contextlib
import functools
import io
import math
import os
import shlex
import shutil
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .client import Client, MacondoError, Stream, pb
from .render import (
    analysis_progress_line,
    analysis_report,
    autoplay_text,
    endgame_text,
    events_table,
    infer_response_text,
    leave_text,
    moves_table,
    peg_table,
    progress_line,
    review_progress_line,
    review_summary_report,
    sim_heatmap,
    sim_playstats_text,
    sim_table,
    sim_tilestats_text,
)

HISTORY_FILE = os.environ.get("MACONDO_HISTORY", str(Path.home() / ".macondo_shell_history"))
MAX_STEP = 600.0
POLL = 0.05          # seconds between checks of a followed job (Ctrl-C, progress)
ABANDON_WAIT = 5.0   # after a second Ctrl-C, how long to wait for the cancelled stream to wind up
SIM_UNTIL_STOPPED = 10_000_000   # the server's iteration cap: a sim without a limit runs until stopped
CHALLENGE_RULES = ("void", "single", "double", "five", "ten")
FETCH_MAX_BYTES = 1 << 20   # `load URL`: the largest record or position fetched
FETCH_TIMEOUT = 15.0        # seconds for the whole fetch
INFER_TOP = 15


class ShellError(Exception):
    """A user error in a command: printed as a message."""


_NOT_MOVES = ("challenge_bonus", "time_penalty", "end_rack_points", "end_rack_penalty")


def last_opponent_play(game: pb.GameState) -> tuple[str, bool]:
    """The opponent's last play before the cursor, as the player on turn saw it, for inference: (the play as it
    stands on the board, or 'exch N'; whether it was a phony challenged off). A ShellError when there is
    none to infer from (their last move a pass, or our own move since)."""
    events = [e for e in game.events if e.number <= game.turn]
    for k in range(len(events) - 1, -1, -1):
        e = events[k]
        if e.type in _NOT_MOVES:
            continue
        if e.player == game.on_turn:
            break
        if e.type == "play":
            # the game's own record of the move on the board, played-through tiles in parentheses
            mine = [h for h in game.history if h.player == e.player]
            if not mine or mine[-1].move.type != pb.TILE_PLACEMENT:
                break
            return mine[-1].move.display.strip(), False
        if e.type == "exchange":
            n = e.move.split(" ", 1)[1] if " " in e.move else ""
            return f"exch {n}", False
        if e.type == "phony_returned" and k > 0 and events[k - 1].type == "play":
            return events[k - 1].move, True
        break
    raise ShellError("nothing to infer from: the opponent's last move was not a play or an exchange")


@dataclass
class Flag:
    field: str
    kind: str = "int"          # int, float, str, bool, list
    help: str = ""


def _value(name: str, flag: Flag, text: str) -> Any:
    try:
        if flag.kind == "int":
            return int(text)
        if flag.kind == "float":
            return float(text)
    except ValueError:
        raise ShellError(f"-{name} takes a {'whole number' if flag.kind == 'int' else 'number'}, "
                         f"got {text!r}") from None
    return text


def parse_flags(tokens: list[str], spec: dict[str, Flag]) -> tuple[list[str], dict[str, Any]]:
    """Split tokens into positional words and flag values named by `spec` (field -> value)."""
    positional: list[str] = []
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("-") and len(tok) > 1 and not tok.lstrip("-").lstrip("0123456789.") == "":
            name = tok.lstrip("-")
            flag = spec.get(name)
            if flag is None:
                known = " ".join(f"-{k}" for k in spec) or "none"
                raise ShellError(f"unknown flag -{name} (known: {known})")
            if flag.kind == "bool":
                value = True
                if i + 1 < len(tokens) and tokens[i + 1].lower() in ("true", "false"):
                    value = tokens[i + 1].lower() == "true"
                    i += 1
                out[flag.field] = value
            else:
                if i + 1 >= len(tokens):
                    raise ShellError(f"-{name} needs a value")
                v = _value(name, flag, tokens[i + 1])
                if flag.kind == "list":
                    out.setdefault(flag.field, []).append(v)
                else:
                    out[flag.field] = v
                i += 1
        else:
            positional.append(tok)
        i += 1
    return positional, out


def _split(arg: str) -> list[str]:
    try:
        return shlex.split(arg)
    except ValueError as exc:
        raise ShellError(f"cannot parse the command line: {exc}") from None


SIM_FLAGS = {
    "plies": Flag("plies", "int", "look-ahead plies after the candidate (2)"),
    "threads": Flag("threads", "int", "worker threads (all cores)"),
    "stop": Flag("stop", "int", "confidence-based auto-stop: 95, 98 or 99"),
    "stop-rule": Flag("stop_rule", "str", "z (the z-test of -stop) or bai (best-arm identification)"),
    "confidence": Flag("confidence", "float", "the stopping rule's confidence (bai: 0.5 to 0.9999, default 0.95)"),
    "opprack": Flag("opp_rack", "str", "known opponent tiles (default: those the game reveals)"),
    "iterations": Flag("iterations", "int", "iteration cap (none: runs until sim stop / Ctrl-C)"),
    "maxtime": Flag("max_time", "float", "seconds: runs this long (unless -iterations or -stop ends it first)"),
    "seed": Flag("seed", "int", "random seed"),
    "num-plays": Flag("num_plays", "int", "candidates by static equity (15)"),
    "play": Flag("plays", "list", "also simulate this play (repeatable)"),
    "avoid-prune": Flag("plays", "list", "never prune this play; added if missing (repeatable)"),
    "fg": Flag("foreground", "bool", "run in the foreground: Ctrl-C stops it and shows the result"),
    "useinferences": Flag("use_inferences", "bool",
                          "draw the opponent's rack from what their last play suggests (weightedrandomracks)"),
    "tolerance": Flag("infer_tolerance", "float", "inference, tolerance model: points the play may fall short of "
                      "the best (3)"),
    "model": Flag("infer_model", "str", "inference: softmax (default) or tolerance"),
    "temperature": Flag("infer_temperature", "float", "inference, softmax: T in points of equity (2)"),
    "stats": Flag("stats", "bool", "collect each play's statistics for sim heatmap, playstats, tilestats (true)"),
    "collect-heatmap": Flag("stats", "bool", "same as -stats"),
}
ENDGAME_FLAGS = {
    "plies": Flag("plies", "int", "search depth cap (with -maxtime: none, until solved; else 4)"),
    "maxtime": Flag("max_time", "float", "seconds; returns the deepest completed depth"),
    "threads": Flag("threads", "int", "threads (all cores)"),
    "first-win-optim": Flag("first_win", "bool", "stop at the first win found"),
    "heuristics": Flag("heuristics", "bool", "greedy playout at leaves (true)"),
    "tt-mb": Flag("tt_megabytes", "int", "transposition table size in MB (256)"),
    "top": Flag("top_k", "int", "the best K first moves, each with its exact value and line (1)"),
    "also-solve": Flag("also_solve", "list", "also value this first move exactly: what it loses (repeatable)"),
}
PEG_FLAGS = {
    "endgameplies": Flag("endgame_plies", "int", "depth of each endgame (4)"),
    "endgame-plies": Flag("endgame_plies", "int", "same as -endgameplies"),
    "maxtime": Flag("max_time", "float", "seconds: runs this long (unless -iterations or -stop ends it)"),
    "threads": Flag("threads", "int", "threads (all cores)"),
    "max-tiles-left": Flag("max_tiles_left", "int", "plays leaving at most N in the bag; -1 all, 0 emptying (1)"),
    "max-nested-depth": Flag("max_nested_depth", "int", "nested pre-endgame depth; -1 unlimited, 0 none (1)"),
    "nesting-cap": Flag("nesting_cap", "str", "past the nesting cap: skip (default) or unresolved"),
    "skip-deep-pass": Flag("skip_deep_pass", "bool", "nested passes only after a pass (true)"),
    "early-cutoff": Flag("early_cutoff", "bool", "abandon plays that cannot beat the leader"),
    "skip-tiebreaker": Flag("skip_tiebreaker", "bool", "no spread tiebreak"),
    "opprack": Flag("opp_rack", "str", "known opponent tiles"),
    "only-solve": Flag("only_solve", "list", "solve only this play (repeatable)"),
    "endgame-heuristics": Flag("endgame_heuristics", "bool", "greedy playout at every endgame leaf"),
    "opponent-model": Flag("opponent_model", "str", "pessimistic (every reply) or solver (they solve too)"),
    "quick-pass": Flag("quick_pass", "bool", "rank every play at low fidelity first (true)"),
    "endgame-leaf": Flag("endgame_leaf", "str", "auto (playouts where a tile is at risk), playout or static"),
    "maxsolutions": Flag("rows", "int", "rows printed (30)"),
    "eventuality": Flag("eventuality", "str", "explain one draw order (first drawn first) for the plays"),
    "verbose": Flag("verbose", "bool", "list every draw of every verdict (default: counts for long lists)"),
}
AUTOPLAY_FLAGS = {
    "games": Flag("games", "int", "games (100)"),
    "lexicon": Flag("lexicon", "str", "bot 1 lexicon"),
    "leaves": Flag("leaves", "str", "bot 1 leave file (server path)"),
    "lexicon2": Flag("lexicon2", "str", "bot 2 lexicon"),
    "leaves2": Flag("leaves2", "str", "bot 2 leave file"),
    "seed": Flag("seed", "int", "random seed"),
    "threads": Flag("threads", "int", "threads (all cores)"),
    "pairs": Flag("pairs", "bool", "play games in pairs with identical draws"),
}
SIM_CONTINUE_FLAGS = {
    "iterations": Flag("iterations", "int", "more iterations (none: runs until sim stop / Ctrl-C)"),
    "maxtime": Flag("max_time", "float", "seconds: runs this long (unless -iterations ends it first)"),
    "threads": Flag("threads", "int", "worker threads (those of the simulation continued)"),
    "fg": Flag("foreground", "bool", "run in the foreground: Ctrl-C stops it and shows the result"),
}
ANALYZE_FLAGS = {
    "player": Flag("player", "str", "only this player's turns: nickname, 1 or 2 (both)"),
    "iterations": Flag("sim_iterations", "int", "simulation iterations per turn (600)"),
    "plies": Flag("sim_plies", "int", "simulation look-ahead (2)"),
    "plays": Flag("sim_plays", "int", "candidates simulated per turn (12; the played move is added)"),
    "peg-max-bag": Flag("peg_max_bag", "int", "the pre-endgame solver for 1 to N tiles in the bag, 0 never (1)"),
    "peg-plays": Flag("peg_plays", "int", "pre-endgame candidates (8)"),
    "endgameplies": Flag("endgame_plies", "int", "endgame depth (6)"),
    "threads": Flag("threads", "int", "threads (as many as the server allows a job)"),
    "seed": Flag("seed", "int", "random seed (the same seed gives the same analysis)"),
}
REVIEW_FLAGS = {
    **ANALYZE_FLAGS,
    "lexicon": Flag("lexicon", "str", "lexicon (default: each file's #lexicon)"),
    "top": Flag("top", "int", "biggest mistakes listed per player (5)"),
}
MAX_REVIEW_FILES = 1000
INFER_FLAGS = {
    "model": Flag("model", "str", "softmax (default: racks weighed by how the play compares with their moves) or "
                  "tolerance (a rack fits or not)"),
    "temperature": Flag("temperature", "float", "softmax: T in points of equity (2; 0: the best play only)"),
    "history": Flag("history_turns", "int", "on the game: the opponent's earlier turns weighed (8; 0: none)"),
    "tolerance": Flag("tolerance", "float", "tolerance model: points the play may fall short of the rack's best (3)"),
    "max-racks": Flag("max_racks", "int", "exhaustive up to this many leaves, else this many random racks (50000)"),
    "threads": Flag("threads", "int", "threads (as many as the server allows a job)"),
    "seed": Flag("seed", "int", "the order of the racks judged (and the sample)"),
    "top": Flag("top", "int", f"leaves listed ({INFER_TOP})"),
    "withdrawn": Flag("withdrawn", "bool", "with PLAY: it was a phony challenged off (its tiles are back on the rack)"),
}
NEW_FLAGS = {"seed": Flag("seed", "int", "tile draws"), "lexicon": Flag("lexicon", "str", "lexicon")}
LOAD_FLAGS = {"turn": Flag("turn", "int", "replay this many events")}
COMMIT_FLAGS = {"tileorder": Flag("tile_order", "str", "draw order, first drawn first")}
FLAG_SPECS = {"sim": SIM_FLAGS, "endgame": ENDGAME_FLAGS, "peg": PEG_FLAGS, "autoplay": AUTOPLAY_FLAGS,
              "analyze": ANALYZE_FLAGS, "review": REVIEW_FLAGS, "infer": INFER_FLAGS,
              "new": NEW_FLAGS, "load": LOAD_FLAGS, "commit": COMMIT_FLAGS}


def _flag_help(spec: dict[str, Flag]) -> str:
    return "\n".join(f"  -{name:<20}{flag.help}" for name, flag in spec.items())


# ------------------------------------------------------------------ simulations continued and trimmed
#
# `sim continue` runs the simulation's plays again on the same position with the same options and a new seed,
# and merges the new run's statistics into the old: the runs are independent samples of the same plays, so the
# counts add and the means and variances combine exactly. The server keeps nothing between runs.


def _sums(n: int, mean: float, stderr: float) -> tuple[float, float]:
    """The sum and the sum of squares of n samples with this mean and standard error (the server's statistics
    inverted: stderr = sqrt(var / n), var the sample variance over n - 1)."""
    if n <= 0:
        return 0.0, 0.0
    s = mean * n
    return s, stderr * stderr * n * (n - 1) + s * s / n


def _mean_stderr(n: int, s: float, sq: float) -> tuple[float, float]:
    if n <= 0:
        return 0.0, 0.0
    mean = s / n
    if n < 2:
        return mean, 0.0
    var = max(0.0, (sq - s * s / n) / (n - 1))
    return mean, math.sqrt(var / n)


def merge_play(a: pb.SimmedPlayInfo, b: pb.SimmedPlayInfo) -> pb.SimmedPlayInfo:
    """One play's statistics over two independent runs: iterations add; equity and win% combine their sums and
    sums of squares; the per-ply means are weighted by the iterations."""
    out = pb.SimmedPlayInfo()
    out.CopyFrom(a)
    n = a.iterations + b.iterations
    out.iterations = n
    if n == 0:
        return out
    es_a, eq_a = _sums(a.iterations, a.equity, a.equity_stderr)
    es_b, eq_b = _sums(b.iterations, b.equity, b.equity_stderr)
    out.equity, out.equity_stderr = _mean_stderr(n, es_a + es_b, eq_a + eq_b)
    ws_a, wq_a = _sums(a.iterations, a.win_pct / 100, a.win_pct_stderr / 100)
    ws_b, wq_b = _sums(b.iterations, b.win_pct / 100, b.win_pct_stderr / 100)
    win, win_se = _mean_stderr(n, ws_a + ws_b, wq_a + wq_b)
    out.win_pct, out.win_pct_stderr = 100 * win, 100 * win_se
    del out.ply_stats[:]
    for k in range(max(len(a.ply_stats), len(b.ply_stats))):
        pa = a.ply_stats[k] if k < len(a.ply_stats) else pb.PlyStats()
        pb_ = b.ply_stats[k] if k < len(b.ply_stats) else pb.PlyStats()
        ply = pb.PlyStats(
            mean_score=(pa.mean_score * a.iterations + pb_.mean_score * b.iterations) / n,
            bingo_pct=(pa.bingo_pct * a.iterations + pb_.bingo_pct * b.iterations) / n)
        # the statistics' counts add (kept only when both runs have them)
        if len(pa.score_histogram) == len(pb_.score_histogram):
            ply.score_histogram.extend(x + y for x, y in zip(pa.score_histogram, pb_.score_histogram, strict=True))
        if len(pa.heatmap) == len(pb_.heatmap):
            ply.heatmap.extend(x + y for x, y in zip(pa.heatmap, pb_.heatmap, strict=True))
        out.ply_stats.append(ply)
    del out.opponent_leave[:]
    if len(a.opponent_leave) == len(b.opponent_leave):
        for ta, tb in zip(a.opponent_leave, b.opponent_leave, strict=True):
            out.opponent_leave.append(pb.LeaveTileStats(
                tile=ta.tile, held=(ta.held * a.iterations + tb.held * b.iterations) / n,
                kept=(ta.kept * a.iterations + tb.kept * b.iterations) / n))
    return out


def _compare(a: pb.SimmedPlayInfo, b: pb.SimmedPlayInfo) -> int:
    """The server's order: pruned plays last; then win% (equal when both are near certain either way), then
    equity."""
    if a.pruned != b.pruned:
        return 1 if a.pruned else -1
    wa, wb = a.win_pct / 100, b.win_pct / 100
    same = abs(wa - wb) <= 1e-9 or (wa > 0.995 and wb > 0.995) or (wa < 0.005 and wb < 0.005)
    if not same:
        return -1 if wa > wb else 1
    if a.equity != b.equity:
        return -1 if a.equity > b.equity else 1
    return 0


def merge_sim(base: pb.SimulateProgress | None, latest: pb.SimulateProgress | None,
              runs: int = 2) -> pb.SimulateProgress | None:
    """The earlier runs' statistics (`base`) with the latest run's merged in, ranked. Only the plays of `base`
    are kept (the latest run may have simulated one more: the top play by static equity, which every
    simulation includes); a play pruned in `base` keeps its statistics. Iterations and time add up."""
    if base is None:
        return latest
    out = pb.SimulateProgress()
    out.CopyFrom(latest if latest is not None else base)
    new = {p.move.notation: p for p in latest.plays} if latest is not None else {}
    plays = [merge_play(p, new[p.move.notation]) if p.move.notation in new and not p.pruned else p
             for p in base.plays]
    del out.plays[:]
    out.plays.extend(sorted(plays, key=functools.cmp_to_key(_compare)))
    out.iterations = base.iterations + (latest.iterations if latest is not None else 0)
    out.samples = base.samples + (latest.samples if latest is not None else 0)
    out.elapsed_seconds = base.elapsed_seconds + (latest.elapsed_seconds if latest is not None else 0.0)
    if latest is None:
        out.final, out.stopped, out.stop_reason = False, False, ""
    elif latest.final:
        out.stop_reason = f"{latest.stop_reason}; {runs} runs merged" if latest.stop_reason else f"{runs} runs merged"
    if latest is not None and not latest.HasField("inference") and base.HasField("inference"):
        out.inference.CopyFrom(base.inference)
    return out


def continuation_seed(seed: int, run: int) -> int:
    """The seed of run `run` (2, 3, ...) of a simulation begun with `seed`: a different seed for every run
    (splitmix64), so that the runs are independent samples, and the same ones for the same seed."""
    z = (seed + run * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


@dataclass
class BackgroundSim:
    stream: Stream[pb.SimulateProgress]
    thread: threading.Thread
    error: list[str] = field(default_factory=list)
    cgp: str = ""                                   # the position simulated
    options: dict[str, Any] = field(default_factory=dict)   # its request's options (sim continue reuses them)
    base: pb.SimulateProgress | None = None         # the earlier runs, merged (sim continue, sim trim)
    runs: int = 1
    merged: bool = False                            # this run is in `base` already (sim trim)

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

    def result(self) -> pb.SimulateProgress | None:
        """The simulation so far: every run merged, the trimmed plays gone."""
        if self.merged:
            return self.base
        return merge_sim(self.base, self.stream.latest, self.runs)


# ------------------------------------------------------------------ records and positions from the web


def is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://")) and not any(c.isspace() for c in text)


class _HttpRedirectsOnly(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http and https only (never to file:, ftp: or data:)."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: Any, newurl: str) -> urllib.request.Request | None:
        if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise urllib.error.URLError(f"redirected to {newurl[:100]!r}, which is not an http(s) address")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch_url(url: str, max_bytes: int | None = None, timeout: float | None = None) -> str:
    """The text at an http(s) URL, fetched here (the server never fetches anything): at most `max_bytes`
    (FETCH_MAX_BYTES), within `timeout` seconds in all (FETCH_TIMEOUT); a ShellError that says what went wrong
    otherwise. The fetch runs in a thread, so a server that trickles its answer cannot hold the shell longer."""
    max_bytes = FETCH_MAX_BYTES if max_bytes is None else max_bytes
    timeout = FETCH_TIMEOUT if timeout is None else timeout
    if not is_url(url):
        raise ShellError(f"not an http:// or https:// address: {url[:100]!r}")
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["text"] = _fetch(url, max_bytes, timeout)
        except ShellError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="fetch", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive() or "error" in outcome and "timed out" in str(outcome["error"]):
        raise ShellError(f"cannot load {url}: no answer within {timeout:g} s")
    if "error" in outcome:
        raise outcome["error"]
    text: str = outcome["text"]
    return text


def _fetch(url: str, max_bytes: int, timeout: float) -> str:
    opener = urllib.request.build_opener(_HttpRedirectsOnly)
    request = urllib.request.Request(url, headers={"User-Agent": "macondo-client"})
    chunks: list[bytes] = []
    size = 0
    try:
        with opener.open(request, timeout=timeout) as resp:
            declared = resp.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise ShellError(f"{url} is {int(declared):,} bytes; load takes at most {max_bytes:,}")
            charset = resp.headers.get_content_charset() or "utf-8"
            while True:
                chunk = resp.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise ShellError(f"{url} is longer than {max_bytes:,} bytes, the most load takes")
                chunks.append(chunk)
    except urllib.error.HTTPError as exc:
        raise ShellError(f"cannot load {url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise ShellError(f"cannot load {url}: timed out") from None
        raise ShellError(f"cannot load {url}: {exc.reason}") from None
    except TimeoutError:
        raise ShellError(f"cannot load {url}: timed out") from None
    except (OSError, ValueError) as exc:
        raise ShellError(f"cannot load {url}: {exc}") from None
    data = b"".join(chunks)
    try:
        return data.decode(charset, errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


def looks_like_gcg(text: str) -> bool:
    """A GCG record (pragma or event lines) rather than a CGP position (one line)."""
    lines = [x.strip() for x in text.lstrip("\ufeff").splitlines() if x.strip()]
    return any(x.startswith((">", "#player", "#character-encoding")) for x in lines)


def only_event(gcg: str, event: int) -> str:
    """The record with the rack of every event but `event` left out (GCG allows it): an analysis skips the
    turns whose rack it does not know at once, and the replay still places every tile, so the one turn is
    analysed exactly as in the whole game."""
    out: list[str] = []
    k = 0
    for line in gcg.splitlines():
        if line.startswith(">"):
            k += 1
            head, colon, rest = line.partition(":")
            toks = rest.split()
            mid = toks[:-2]
            has_rack = len(mid) == 3 or (len(mid) == 2 and mid[-1].startswith("-"))
            if colon and k != event and has_rack:
                line = f"{head}: " + " ".join(toks[1:])
        out.append(line)
    return "\n".join(out) + "\n"


def follow(stream: Stream[Any], errors: list[str], name: str,
           each: Callable[[Any], None] | None = None) -> threading.Thread:
    """Consume `stream` in a daemon thread (its snapshots land in stream.latest, and go to `each`; failures in
    `errors`). gRPC's stream iterator must never see a KeyboardInterrupt (the call breaks: 'Internal gRPC call
    error 8', then the channel), so the main thread only ever waits on this thread."""
    def run() -> None:
        try:
            for msg in stream:
                if each is not None:
                    each(msg)
        except MacondoError as exc:
            errors.append(exc.message)
        except Exception as exc:  # noqa: BLE001 (shown to the user; the shell keeps running)
            errors.append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def sigint_counter() -> Iterator[list[int]]:
    """While the block runs, Ctrl-C only counts (hits[0]) instead of raising KeyboardInterrupt; the caller
    polls the count. A no-op outside the main thread, where signals cannot be handled."""
    hits = [0]
    if threading.current_thread() is not threading.main_thread():
        yield hits
        return

    def on_sigint(signum: int, frame: object) -> None:
        hits[0] += 1

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield hits
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_in_background(stream: Stream[Any], errors: list[str]) -> None:
    """StopJob without blocking the caller (a second Ctrl-C must still be able to abandon the job)."""
    def run() -> None:
        try:
            stream.stop()
        except MacondoError as exc:
            errors.append(exc.message)

    threading.Thread(target=run, name="stop-job", daemon=True).start()


class MacondoShell(cmd.Cmd):
    intro = "macondo shell: type help for the commands, quit to leave."
    prompt = "macondo> "

    def __init__(self, client: Client, stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 interactive: bool | None = None) -> None:
        super().__init__(stdin=stdin, stdout=stdout)
        self.client = client
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.lexicon = ""
        self.game: pb.GameState | None = None
        self.ranking: list[str] = []     # the latest ranking shown (gen, sim, endgame, peg): commit #N
        self.ranking_from = ""
        self.challenge_rule = "double"   # as Macondo's shell
        self.sim: BackgroundSim | None = None

    # -------------------------------------------------------------- plumbing

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def precmd(self, line: str) -> str:
        if not self.interactive and line != "EOF":
            self.say(line)     # a transcript reads like a session
        return line

    def onecmd(self, line: str) -> bool:
        try:
            return super().onecmd(line)
        except ShellError as exc:
            self.say(f"error: {exc}")
        except MacondoError as exc:
            self.say(f"error: {exc.message}")
        except (ValueError, OSError) as exc:
            self.say(f"error: {exc}")
        except KeyboardInterrupt:
            self.say("interrupted")
        except Exception as exc:  # the shell keeps running whatever happens
            self.say(f"internal error: {type(exc).__name__}: {exc}")
        return False

    def emptyline(self) -> bool:
        return False

    def default(self, line: str) -> None:
        self.say(f"error: unknown command {line.split()[0]!r}; type help for the list")

    def cmdloop(self, intro: str | None = None) -> None:
        while True:
            try:
                super().cmdloop(intro if intro is not None else (self.intro if self.interactive else ""))
                return
            except KeyboardInterrupt:
                self.say("^C (type quit to leave)")
                intro = ""

    def _need_game(self) -> pb.GameState:
        if self.game is None:
            raise ShellError("no position loaded: use load cgp <CGP>, load gcg <FILE> or new")
        return self.game

    def _rank(self, source: str, notations: list[str]) -> None:
        """The ranking just shown: `commit #N` plays its N-th move."""
        self.ranking = notations
        self.ranking_from = source

    def _set_game(self, state: pb.GameState, show: bool = True) -> None:
        old = self.game
        self.game = state
        if old is None or old.cgp != state.cgp or old.game_id != state.game_id:
            self._rank("", [])
            if self.sim is not None and self.sim.running:
                _stop_in_background(self.sim.stream, self.sim.error)
                self.say("(the position changed: the background simulation is stopped)")
        if old is not None and old.game_id != state.game_id:
            try:
                self.client.delete_game(old.game_id)
            except MacondoError:
                pass
        if show:
            self.say(state.display)

    def _foreground(self, stream: Stream[Any], render: Callable[[Any], str],
                    errors: list[str] | None = None, thread: threading.Thread | None = None,
                    line: Callable[[Any], str] = progress_line) -> Any:
        """Follow a job to its end with a progress line on a terminal. Ctrl-C stops it (StopJob): the server
        then sends its best result so far as the final snapshot, which is shown. A second Ctrl-C abandons
        the job (the stream is cancelled) and shows the last snapshot received, if any."""
        live = self.interactive and self.stdout.isatty()
        errors = [] if errors is None else errors
        if thread is None:
            thread = follow(stream, errors, "job-follow")
        last = 0.0
        handled = 0
        abandoned = False
        with sigint_counter() as hits:
            while thread.is_alive():
                thread.join(POLL)
                if hits[0] > handled:
                    handled = hits[0]
                    if handled == 1:
                        self.say("\nstopping; the best result so far follows "
                                 "(Ctrl-C again to abandon the job)")
                        _stop_in_background(stream, errors)
                    elif not abandoned:
                        self.say("abandoning the job")
                        abandoned = True
                        stream.cancel()
                        thread.join(ABANDON_WAIT)
                        break
                snap = stream.latest
                if live and handled == 0 and snap is not None and not snap.final and \
                        time.monotonic() - last > 0.5:
                    last = time.monotonic()
                    self.stdout.write("\r" + line(snap)[:110].ljust(110))
                    self.stdout.flush()
        if live:
            self.stdout.write("\r" + " " * 110 + "\r")
            self.stdout.flush()
        snap = stream.latest
        if snap is None or (errors and not snap.final):
            raise ShellError(errors[0] if errors else "the job ended without a result")
        if not snap.final:
            self.say("(abandoned: the last progress report follows)")
        self.say(render(snap))
        return snap

    # -------------------------------------------------------------- position and moves

    def do_load(self, arg: str) -> None:
        """load cgp <CGP...|URL> | load gcg <FILE|URL> [-turn N] | load <FILE.gcg|URL> [-turn N]
        Load a position (a CGP becomes a single-position game) or replay a GCG game, to turn N or the end.
        An http:// or https:// address is fetched here (at most 1 MiB, within 15 s), never by the server;
        without cgp or gcg its text says which it is."""
        words = arg.strip().split(None, 1)
        if not words:
            raise ShellError("load what? load cgp <CGP> or load gcg <FILE>")
        kind = words[0].lower()
        if kind == "cgp":
            if len(words) < 2:
                raise ShellError("load cgp needs a position")
            cgp = words[1].strip()
            if is_url(cgp):
                cgp = self._cgp_text(fetch_url(cgp), cgp)
            self._set_game(self.client.create_game(lexicon=self.lexicon, cgp=cgp,
                                                   challenge_rule=self.challenge_rule))
            return
        rest = words[1] if kind == "gcg" and len(words) > 1 else arg
        if kind == "gcg" and len(words) < 2:
            raise ShellError("load gcg needs a file name")
        pos, opts = parse_flags(_split(rest), LOAD_FLAGS)
        if len(pos) != 1:
            raise ShellError("load gcg takes one file name")
        if is_url(pos[0]):
            text = fetch_url(pos[0])
            if kind != "gcg" and not looks_like_gcg(text):
                if "turn" in opts:
                    raise ShellError(f"{pos[0]} holds a CGP position, not a GCG record: -turn does not apply")
                self._set_game(self.client.create_game(lexicon=self.lexicon, cgp=self._cgp_text(text, pos[0]),
                                                       challenge_rule=self.challenge_rule))
                return
        else:
            path = Path(pos[0]).expanduser()
            if not path.is_file():
                raise ShellError(f"no such file: {path}")
            text = path.read_bytes().decode("utf-8", errors="replace")
        state = self.client.create_game(lexicon=self.lexicon, gcg=text, turn=opts.get("turn"),
                                        challenge_rule=self.challenge_rule)
        self._set_game(state, show=False)
        self._show_turn(state)
        for warning in state.warnings:
            self.say(f"warning: {warning}")

    @staticmethod
    def _cgp_text(text: str, url: str) -> str:
        lines = [x.strip() for x in text.lstrip("\ufeff").splitlines() if x.strip()]
        if len(lines) != 1:
            raise ShellError(f"{url} holds neither a GCG record nor a CGP position (one line): "
                             f"{len(lines)} lines")
        return lines[0]

    def complete_load(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        words = line[:begidx].split()
        if len(words) == 1:
            return [w for w in ("cgp", "gcg") if w.startswith(text)] + _complete_path(text)
        if text.startswith("-"):
            return [f"-{name}" for name in LOAD_FLAGS if f"-{name}".startswith(text)]
        if words[1] == "gcg" or words[1].endswith(".gcg"):
            return _complete_path(text)
        return []

    def do_new(self, arg: str) -> None:
        """new [-seed S] [-lexicon NAME]
        Start a game from the empty board with random racks."""
        pos, opts = parse_flags(_split(arg), NEW_FLAGS)
        if pos:
            raise ShellError(f"new takes only flags, got {' '.join(pos)!r}")
        seed = opts.get("seed", int(time.time() * 1000) & 0x7FFFFFFF)
        self._set_game(self.client.create_game(lexicon=opts.get("lexicon", self.lexicon), seed=seed,
                                               challenge_rule=self.challenge_rule))

    def do_show(self, arg: str) -> None:
        """show
        Draw the board (premium squares: = triple word, - double word, " triple letter, ' double letter),
        the racks, scores and the tiles unseen by the player on turn."""
        game = self._need_game()
        self.game = self.client.get_game(game.game_id)
        self.say(self.game.display)
        if self.game.history:
            last = self.game.history[-1]
            self.say(f"last move: {self.game.players[last.player]} {last.move.display.strip()} "
                     f"({last.move.score})")

    def do_gen(self, arg: str) -> None:
        """gen [N]
        Generate every legal move and show the top N by equity (15)."""
        game = self._need_game()
        words = _split(arg)
        try:
            n = int(words[0]) if words else 15
        except ValueError:
            raise ShellError(f"gen takes a number of moves, got {words[0]!r}") from None
        if n <= 0 or len(words) > 1:
            raise ShellError("gen takes one positive number")
        resp = self.client.generate(game.cgp, num_plays=n, lexicon=self.lexicon)
        self.say(moves_table(resp))
        self._rank("gen", [m.notation for m in resp.moves])

    def do_commit(self, arg: str) -> None:
        """commit #N | commit <MOVE> [-tileorder LETTERS]
        Play move N of the latest ranking shown (gen, sim, endgame or peg), or a move in notation (8G QI,
        2L P.ND, exch ABC, pass), at the cursor: later events of the game are dropped. The tile order fixes
        the draws (first drawn first) and the opponent holds the other unseen tiles."""
        game = self._need_game()
        pos, opts = parse_flags(_split(arg), COMMIT_FLAGS)
        if not pos:
            raise ShellError("commit what? commit #N or commit <MOVE>")
        text = " ".join(pos)
        if text.startswith("#"):
            try:
                k = int(text[1:])
            except ValueError:
                raise ShellError(f"{text!r} is not a move number") from None
            if not self.ranking:
                raise ShellError(f"no ranking to take move #{k} from: run gen, sim, endgame or peg first")
            if not 1 <= k <= len(self.ranking):
                raise ShellError(f"no move #{k}: the latest ranking ({self.ranking_from}) lists "
                                 f"{len(self.ranking)} moves")
            text = self.ranking[k - 1]
            self.say(f"committing #{k} of the {self.ranking_from} ranking: {text}")
        state = self.client.play_move(game.game_id, text, opts.get("tile_order", ""))
        self._set_game(state, show=False)
        self._show_turn(state)

    def do_aiplay(self, arg: str) -> None:
        """aiplay [STRATEGY]
        Let the engine play the turn at the cursor (best by default): static, sim[:key=value,...],
        best[:key=value,...] (simulation, pre-endgame, exact endgame by phase, timed by the game's clock), or
        a level: beginner, novice, club, expert, champion. Ctrl-C stops a long choice: the server plays its
        best move so far."""
        game = self._need_game()
        strategy = arg.strip() or "best"
        try:
            resp = self.client.engine_move(game.game_id, strategy)
        except KeyboardInterrupt:
            self.say("stopped: the engine plays its best move so far")
            state = self.client.get_game(game.game_id)
            self._set_game(state, show=False)
            self._show_turn(state)
            return
        how = f"{resp.phase}, {resp.seconds:.1f} s" + (f" of {resp.budget_seconds:.1f}" if resp.budget_seconds else "")
        self.say(f"engine ({strategy}) plays {resp.move.notation} ({how})" +
                 (f": {resp.detail}" if resp.detail else ""))
        self._set_game(resp.game, show=False)
        self._show_turn(resp.game)

    def do_add(self, arg: str) -> None:
        """add <MOVE>
        Play a move at the cursor (as commit): the game's later events are dropped, as in Macondo."""
        if not arg.strip() or arg.strip().startswith("#"):
            raise ShellError("add takes a move in notation (8G QI, exch ABC, pass); commit #N plays a ranked one")
        self.do_commit(arg)

    # -------------------------------------------------------------- game review

    def _show_turn(self, state: pb.GameState) -> None:
        self.say(state.display)
        where = f"turn {state.turn} of {state.num_events}"
        if state.turn:
            ev = state.events[state.turn - 1]
            where += f"; last event: {ev.nick} {ev.move} {ev.score:+d} ({ev.cumulative})"
            if ev.note:
                where += f"\nnote: {ev.note}"
        self.say(where)

    def _navigate(self, to: str, turn: int = 0) -> None:
        game = self._need_game()
        state = self.client.navigate(game.game_id, to, turn)
        self._set_game(state, show=False)
        self._show_turn(state)

    def do_turn(self, arg: str) -> None:
        """turn N
        Go to the position after N events of the game (0: the start)."""
        words = _split(arg)
        if len(words) != 1 or not words[0].isdigit():
            raise ShellError("turn takes one event number (0 is the start)")
        self._navigate("turn", int(words[0]) if len(words[0]) <= 9 else 10**9)

    def do_n(self, arg: str) -> None:
        """n
        Step to the next event of the game."""
        self._navigate("next")

    def do_p(self, arg: str) -> None:
        """p
        Step back to the previous event of the game."""
        self._navigate("previous")

    def do_first(self, arg: str) -> None:
        """first
        Go to the start of the game."""
        self._navigate("first")

    def do_last(self, arg: str) -> None:
        """last
        Go to the end of the game."""
        self._navigate("last")

    def do_rack(self, arg: str) -> None:
        """rack LETTERS
        Set the rack of the player on turn (from the tiles they cannot see; ? is a blank)."""
        game = self._need_game()
        words = _split(arg)
        if len(words) != 1:
            raise ShellError("rack takes one rack, e.g. rack AEINST?")
        self._set_game(self.client.set_rack(game.game_id, words[0]))

    def do_list(self, arg: str) -> None:
        """list
        The game's events with their scores; the cursor is marked."""
        game = self._need_game()
        self.game = self.client.get_game(game.game_id)
        self.say(events_table(self.game))

    def do_challenge(self, arg: str) -> None:
        """challenge
        Challenge the last play under the challenge rule (set challenge): a phony comes off; a valid play
        costs the challenger the turn (double) or gives its player 5 or 10 points (five, ten)."""
        game = self._need_game()
        if arg.strip():
            raise ShellError("challenge takes no arguments (the rule: set challenge single|double|void|five|ten)")
        resp = self.client.challenge(game.game_id)
        self._set_game(resp.game, show=False)
        self._show_turn(resp.game)
        self.say(resp.outcome)

    def do_note(self, arg: str) -> None:
        """note TEXT
        Attach a note to the event before the cursor (note with no text removes it)."""
        game = self._need_game()
        self.game = self.client.set_note(game.game_id, arg.strip())
        self.say("note removed" if not arg.strip() else f"note attached to event {self.game.turn}")

    def do_export(self, arg: str) -> None:
        """export FILE.gcg
        Write the whole game (every event and note) as GCG to a file here."""
        game = self._need_game()
        words = _split(arg)
        if len(words) != 1:
            raise ShellError("export takes one file name, e.g. export game.gcg")
        path = Path(words[0]).expanduser()
        if path.suffix.lower() != ".gcg":
            raise ShellError(f"export writes GCG: the file name must end in .gcg, got {words[0]!r}")
        text = self.client.export_game(game.game_id)
        path.write_text(text, encoding="utf-8")
        self.say(f"wrote {len(self.game.events) if self.game else 0} events to {path}")

    # -------------------------------------------------------------- analysis

    def do_sim(self, arg: str) -> None:
        """sim [options] | sim stop | show | details | watch | continue [options] | trim N | heatmap | playstats | tilestats
        Simulate the top plays in the background (with -fg in the foreground: Ctrl-C stops it and shows
        the result). Without -iterations or -maxtime it runs until stopped (or, with -stop, until the
        leader is that sure); with -maxtime alone it runs for that time (or until -stop's level), with
        -iterations it stops at that count at the latest; the tiles the game showed of the opponent's rack are passed as -opprack.
        -stop-rule bai [-confidence C] stops by best-arm identification instead of -stop's z-test: the leader
        and its challenger are sampled until the leader is named with error probability 1 - C (0.95 default).
        stop: stop and show the result; show: the ranking so far; details: with per-ply statistics;
        watch: follow it live until it ends (Ctrl-C returns; the simulation goes on).
        continue [-iterations N] [-maxtime S] [-threads T] [-fg]: simulate the plays of the stopped simulation
        further (until sim stop without a limit) and merge the new iterations into its statistics.
        trim N: drop the N worst plays of the stopped simulation; sim continue goes on with the rest.
        Statistics (collected unless -stats false; running or stopped): heatmap PLAY [PLY]: the squares the
        play's ply PLY (1, the opponent's reply, by default) put tiles on, over the board; playstats PLAY: its
        score histogram and bingo rate per ply; tilestats [PLAY]: what the opponent held and kept around their
        reply, for the top plays or PLAY. PLAY is a play's notation (quoted or not: "8G QI") or its rank (1).
        Options:
        """
        words = _split(arg)
        if words and words[0] in ("heatmap", "playstats", "tilestats"):
            return self._sim_stats(words[0], words[1:])
        if words and words[0] in ("stop", "show", "details", "watch"):
            if len(words) > 1:
                raise ShellError(f"sim {words[0]} takes no arguments")
            return self._sim_verb(words[0])
        if words and words[0] == "continue":
            return self._sim_continue(words[1:])
        if words and words[0] == "trim":
            return self._sim_trim(words[1:])
        game = self._need_game()
        if self.sim is not None and self.sim.running:
            raise ShellError("a simulation is running: sim stop first")
        for i, w in enumerate(words[:-1]):
            if w.lstrip("-") == "useinferences" and words[i + 1].lower().startswith("weightedrandom"):
                if words[i + 1].lower() != "weightedrandomracks":
                    raise ShellError("-useinferences supports weightedrandomracks (whole inferred leaves)")
                del words[i + 1]
                break
        pos, opts = parse_flags(words, SIM_FLAGS)
        if pos:
            raise ShellError(f"unexpected {' '.join(pos)!r}; moves go after -play")
        foreground = opts.pop("foreground", False)
        if opts.pop("use_inferences", False):
            play, withdrawn = last_opponent_play(game)
            opts["infer_play"] = play
            opts["infer_withdrawn"] = withdrawn
            if not withdrawn and "opp_rack" not in opts:
                opts["opp_rack"] = ""         # inference takes the place of the known tiles
        else:
            for key, flag in (("infer_tolerance", "tolerance"), ("infer_model", "model"),
                              ("infer_temperature", "temperature")):
                if key in opts:
                    raise ShellError(f"-{flag} goes with -useinferences")
        limited = any(k in opts for k in ("iterations", "max_time"))
        if not limited:
            opts["iterations"] = SIM_UNTIL_STOPPED   # until sim stop, Ctrl-C, or -stop's confidence level
        if "opp_rack" not in opts and game.known_opp:
            opts["opp_rack"] = game.known_opp    # what the game has shown of the opponent's rack
        if not opts.get("opp_rack"):
            opts.pop("opp_rack", None)
        opts.setdefault("stats", True)       # for sim heatmap, playstats, tilestats
        if opts.get("plies", 2) == 0:
            opts["stats"] = False            # nothing is played after the candidate: no statistics
        stream = self.client.simulate(game.cgp, lexicon=self.lexicon, **opts)
        errors: list[str] = []
        thread = follow(stream, errors, "sim-follow")
        self.sim = BackgroundSim(stream, thread, errors, cgp=game.cgp, options=dict(opts))
        if foreground:
            snap = self._foreground(stream, sim_table, errors, thread)
            self._rank("sim", [p.move.notation for p in snap.plays])
            return
        thread.join(0.3)
        if errors:
            raise ShellError(errors[0])
        sure = ""          # the stopping rule, as the end of "until ..."
        if opts.get("stop_rule") == "bai":
            level = opts.get("confidence") or (opts["stop"] / 100 if "stop" in opts else 0.95)
            sure = f"best-arm identification names the leader at {100 * level:g}% confidence"
        elif "stop" in opts or "confidence" in opts:
            sure = f"the leader is {opts.get('stop') or round(100 * opts['confidence'])}% sure"
        if limited:
            until = "" if "iterations" in opts else f" (it runs for {opts['max_time']:g} s" + (
                f" or until {sure})" if sure else ")")
        else:
            until = (f" (no limit: it runs until {sure} or sim stop)" if sure else " (no limit: it runs until sim stop)")
        known = f"; the opponent is known to hold {game.known_opp}" if "opp_rack" in opts else ""
        if "infer_play" in opts:
            known += f"; their rack drawn from the inference on {opts['infer_play']}"
        self.say(f"simulation started in the background{until}{known}: sim show, sim watch, sim stop")

    def _sim_verb(self, verb: str) -> None:
        sim = self.sim
        if sim is None:
            raise ShellError("no simulation: start one with sim [options]")
        if verb == "stop":
            if sim.running:
                with sigint_counter() as hits:
                    _stop_in_background(sim.stream, sim.error)
                    deadline = time.monotonic() + MAX_STEP
                    while sim.running and not hits[0] and time.monotonic() < deadline:
                        sim.thread.join(POLL)
        elif verb == "watch":
            self._watch(sim)
        if sim.error:
            raise ShellError(sim.error[0])
        snap = sim.result()
        if snap is None:
            self.say("the simulation has no results yet")
            return
        self.say(sim_table(snap, details=verb == "details"))
        self._rank("sim", [p.move.notation for p in snap.plays])

    def _sim_stats(self, verb: str, words: list[str]) -> None:
        """sim heatmap PLAY [PLY], sim playstats PLAY, sim tilestats [PLAY]: the statistics of the simulation so
        far (every run merged)."""
        sim = self.sim
        if sim is None:
            raise ShellError("no simulation: start one with sim [options]")
        snap = sim.result()
        if snap is None or not snap.plays:
            raise ShellError("the simulation has no results yet")
        try:
            if verb == "tilestats":
                self.say(sim_tilestats_text(snap, [" ".join(words)] if words else None))
                return
            if not words:
                raise ShellError(f"sim {verb} takes a play: its notation or its rank, e.g. sim {verb} 1")
            if verb == "playstats":
                self.say(sim_playstats_text(snap, " ".join(words)))
                return
            ply = 1
            if len(words) > 1 and words[-1].isdigit():
                ply = int(words[-1])
                words = words[:-1]
            color = self.interactive and self.stdout.isatty()
            self.say(sim_heatmap(snap, " ".join(words), ply, sim.cgp, color=color,
                                 width=shutil.get_terminal_size().columns if color else 200))
        except ValueError as exc:
            raise ShellError(str(exc)) from None

    def _stopped_sim(self, verb: str) -> tuple[BackgroundSim, pb.SimulateProgress]:
        sim = self.sim
        if sim is None:
            raise ShellError(f"no simulation to {verb}: start one with sim [options]")
        if sim.running:
            raise ShellError(f"the simulation is running: sim stop first, then sim {verb}")
        result = sim.result()
        if result is None or not result.plays:
            raise ShellError(f"the simulation has no results to {verb}" +
                             (f" ({sim.error[0]})" if sim.error else ""))
        game = self._need_game()
        if game.cgp != sim.cgp:
            raise ShellError(f"the position changed since that simulation: nothing to {verb}")
        return sim, result

    def _sim_continue(self, words: list[str]) -> None:
        """Run the simulation's plays again with the same options and a new seed; its statistics merge in."""
        pos, opts = parse_flags(words, SIM_CONTINUE_FLAGS)
        if pos:
            raise ShellError(f"unexpected {' '.join(pos)!r}; sim continue takes -iterations, -maxtime, -threads, -fg")
        sim, result = self._stopped_sim("continue")
        keep = [p.move.notation for p in result.plays if not p.pruned]
        if not keep:
            raise ShellError("every play of the simulation was pruned: nothing to continue")
        foreground = opts.pop("foreground", False)
        request = {k: v for k, v in sim.options.items()
                   if k not in ("iterations", "max_time", "stop", "stop_rule", "confidence", "plays")}
        request.update(plays=keep, num_plays=1, seed=continuation_seed(int(sim.options.get("seed", 0)), sim.runs + 1))
        request.update(opts)
        limited = "iterations" in opts or "max_time" in opts
        if not limited:
            request["iterations"] = SIM_UNTIL_STOPPED
        stream = self.client.simulate(sim.cgp, lexicon=self.lexicon, **request)
        errors: list[str] = []
        thread = follow(stream, errors, "sim-follow")
        self.sim = BackgroundSim(stream, thread, errors, cgp=sim.cgp, options=dict(sim.options, seed=request["seed"]),
                                 base=result, runs=sim.runs + 1)
        # a pruned play stays as it was, shown below the others
        done = result.plays[0].iterations if result.plays else 0
        if foreground:
            current = self.sim

            def merged_table(snap: pb.SimulateProgress) -> str:
                return sim_table(merge_sim(current.base, snap, current.runs) or snap)

            self._foreground(stream, merged_table, errors, thread)
            final = current.result()
            if final is not None:
                self._rank("sim", [p.move.notation for p in final.plays])
            return
        thread.join(0.3)
        if errors:
            raise ShellError(errors[0])
        until = (f" for {opts['iterations']} more iterations" if "iterations" in opts else
                 f" for {opts['max_time']:g} s" if "max_time" in opts else " until sim stop")
        self.say(f"continuing the simulation of {len(keep)} plays (the leader has {done} iterations){until}, in the "
                 "background: sim show, sim watch, sim stop")

    def _sim_trim(self, words: list[str]) -> None:
        """Drop the N worst plays of the stopped simulation."""
        if len(words) != 1 or not words[0].isdigit() or int(words[0]) < 1:
            raise ShellError("sim trim takes one positive number: the worst plays to drop")
        n = int(words[0])
        sim, result = self._stopped_sim("trim")
        live = sum(not p.pruned for p in result.plays)
        if n >= len(result.plays) or live - max(0, n - (len(result.plays) - live)) < 1:
            raise ShellError(f"the simulation has {len(result.plays)} plays ({live} not pruned): trimming {n} would "
                             "leave none to simulate")
        trimmed = pb.SimulateProgress()
        trimmed.CopyFrom(result)
        gone = [p.move.notation for p in result.plays[len(result.plays) - n:]]
        del trimmed.plays[len(result.plays) - n:]
        sim.base, sim.merged = trimmed, True
        self.say(f"trimmed {n} play{'s' if n > 1 else ''}: {', '.join(gone)}")
        self.say(sim_table(trimmed))
        self._rank("sim", [p.move.notation for p in trimmed.plays])

    def _watch(self, sim: BackgroundSim) -> None:
        """Follow the background simulation until it ends; Ctrl-C returns at once (the table so far is
        shown and the simulation goes on)."""
        with sigint_counter() as hits, contextlib.ExitStack() as stack:
            live = None
            if self.interactive and self.stdout.isatty():
                from rich.live import Live
                from rich.text import Text

                live = stack.enter_context(Live(Text(""), refresh_per_second=4, transient=True))
            while sim.running and not hits[0]:
                snap = sim.result()
                if live is not None and snap is not None:
                    live.update(Text(sim_table(snap)))
                sim.thread.join(0.25 if live is not None else POLL)
        if hits[0] and sim.running:
            self.say("(the simulation goes on in the background: sim stop ends it)")

    def complete_sim(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        if line.split()[1:2] == ["continue"]:
            return _complete_words(text, line, [], SIM_CONTINUE_FLAGS)
        return _complete_words(text, line, ["stop", "show", "details", "watch", "continue", "trim", "heatmap",
                                            "playstats", "tilestats"], SIM_FLAGS)

    def do_endgame(self, arg: str) -> None:
        """endgame [options]
        Solve the endgame (the bag must be empty). With -maxtime and no -plies it deepens until solved
        (every line ends the game) or out of time; -plies caps the depth (4 when neither is given). The
        result says the depth reached and why the search ended. Ctrl-C stops and shows the deepest
        completed result. -top K lists the best K first moves with their exact values and lines (commit #N
        plays the Nth); -also-solve MOVE values that first move exactly too and says what it loses.
        Options:
        """
        game = self._need_game()
        pos, opts = parse_flags(_split(arg), ENDGAME_FLAGS)
        if pos:
            raise ShellError(f"unexpected {' '.join(pos)!r}")
        if "heuristics" in opts:
            opts["disable_heuristics"] = not opts.pop("heuristics")
        if opts.get("top_k", 1) < 1:
            raise ShellError(f"-top must be 1 to 64, got {opts['top_k']}")   # (0 would ask for the default)
        stream = self.client.solve_endgame(game.cgp, lexicon=self.lexicon, **opts)
        snap = self._foreground(stream, lambda s: endgame_text(s, opts.get("first_win", False),
                                                               opts.get("plies") or
                                                               (0 if opts.get("max_time") else 4)))
        if snap.top_lines:
            self._rank("endgame", [t.line[0].move.notation for t in snap.top_lines if t.line])
        else:
            self._rank("endgame", [m.move.notation for m in snap.best_line[:1]])

    def do_peg(self, arg: str) -> None:
        """peg [options]
        Solve the pre-endgame (1 to 6 tiles in the bag) over every draw. Ctrl-C stops and shows the best
        ranking so far.
        Options:
        """
        game = self._need_game()
        pos, opts = parse_flags(_split(arg), PEG_FLAGS)
        if pos:
            raise ShellError(f"unexpected {' '.join(pos)!r}; moves go after -only-solve")
        rows = opts.pop("rows", 30)
        verbose = bool(opts.pop("verbose", False))
        stream = self.client.solve_pre_endgame(game.cgp, lexicon=self.lexicon, **opts)
        snap = self._foreground(stream, lambda s: s.eventuality if s.eventuality else peg_table(s, rows, verbose))
        if not snap.eventuality:
            self._rank("peg", [p.move.notation for p in snap.plays])

    def do_analyze(self, arg: str) -> None:
        """analyze [EVENT] [options]
        Analyse the loaded game as `macondo analyze` does (a simulation, the pre-endgame solver with 1 to
        -peg-max-bag tiles in the bag, the exact endgame once it is empty): every turn, or only event EVENT
        (numbered as list shows them: the move played from the position after EVENT-1 events). The played
        move is ranked among the engine's candidates. Ctrl-C stops and shows the turns done.
        Options:
        """
        game = self._need_game()
        pos, opts = parse_flags(_split(arg), ANALYZE_FLAGS)
        if len(pos) > 1 or (pos and not pos[0].isdigit()):
            raise ShellError("analyze takes at most one event number (list shows them), then options")
        self.game = game = self.client.get_game(game.game_id)
        event = int(pos[0]) if pos else None
        if event is not None:
            if not 1 <= event <= len(game.events):
                raise ShellError(f"no event {event}: the game has {len(game.events)} events")
            ev = game.events[event - 1]
            if ev.type not in ("play", "pass", "exchange"):
                raise ShellError(f"event {event} ({ev.move}) is not a move to analyse")
            if not ev.rack:
                raise ShellError(f"the game does not show the rack of event {event}: it cannot be analysed")
            if "player" in opts:
                raise ShellError("-player goes with the whole game, not one event")
        gcg = self.client.export_game(game.game_id)
        if event is not None:
            gcg = only_event(gcg, event)
        lexicon = self.lexicon or game.lexicon
        stream = self.client.analyze(gcg, lexicon=lexicon, **opts)
        received: list[pb.TurnAnalysis] = []

        def collect(msg: pb.AnalyzeProgress) -> None:
            if not msg.final:
                received.extend(msg.turns)

        def render(msg: pb.AnalyzeProgress) -> str:
            shown = pb.AnalyzeProgress()
            shown.CopyFrom(msg)
            if not msg.final:      # abandoned: every turn that came
                del shown.turns[:]
                shown.turns.extend(list(received))
                shown.stopped, shown.lexicon = True, lexicon
            if event is not None:
                turns = [t for t in shown.turns if t.event == event]
                summary = [s for s in shown.summary if turns and s.player == turns[0].player]
                del shown.turns[:], shown.summary[:], shown.warnings[:]
                shown.turns.extend(turns)
                shown.summary.extend(summary)
                shown.warnings.extend(game.warnings)
                shown.turns_total = 1
            return self._analysis_text(shown)

        errors: list[str] = []
        thread = follow(stream, errors, "analyze-follow", collect)
        self._foreground(stream, render, errors, thread, line=analysis_progress_line)

    def _analysis_text(self, msg: pb.AnalyzeProgress) -> str:
        """The analysis report as `macondo analyze` prints it: rich tables on a terminal, plain columns in a
        transcript."""
        from rich.console import Console

        tty = self.interactive and self.stdout.isatty()
        out = io.StringIO()
        console = Console(file=out, highlight=False, force_terminal=tty, no_color=not tty,
                          width=shutil.get_terminal_size().columns if tty else 200)
        analysis_report(msg, console)
        return out.getvalue().rstrip("\n")

    def do_review(self, arg: str) -> None:
        """review FILE|FOLDER... [options]
        Review many games as `macondo analyze --summary` does: each .gcg file (a folder: its .gcg files) is
        read here and sent to the server (ReviewGames), which analyses it (or takes it from its review store)
        and sums the games up per player: mistakes, mistake index, win% lost, missed bingos, phonies and the
        biggest mistakes. Ctrl-C stops and sums up the games done.
        Options:
        """
        pos, opts = parse_flags(_split(arg), REVIEW_FLAGS)
        if not pos:
            raise ShellError("review which games? review FILE.gcg|FOLDER ...")
        files: list[Path] = []
        for word in pos:
            path = Path(word).expanduser()
            if path.is_dir():
                found = sorted(q for q in path.iterdir() if q.suffix.lower() == ".gcg" and q.is_file())
                if not found:
                    raise ShellError(f"folder {path} holds no .gcg files")
                files.extend(found)
            elif path.is_file():
                files.append(path)
            else:
                raise ShellError(f"no such file or folder: {path}")
        if len(files) > MAX_REVIEW_FILES:
            raise ShellError(f"{len(files)} games: at most {MAX_REVIEW_FILES} a review")
        games = [pb.ReviewGame(name=f.name, gcg=f.read_bytes().decode("utf-8", errors="replace")) for f in files]
        top = opts.pop("top", None)
        lexicon = opts.pop("lexicon", None) or self.lexicon or None
        stream = self.client.review_games(games, top=top, lexicon=lexicon, **opts)

        def render(msg: pb.ReviewGamesProgress) -> str:
            out = io.StringIO()
            tty = self.interactive and self.stdout.isatty()
            from rich.console import Console

            console = Console(file=out, highlight=False, force_terminal=tty, no_color=not tty,
                              width=shutil.get_terminal_size().columns if tty else 200)
            for err in msg.errors:
                console.print(f"{err.game}: not reviewed: {err.error}")
            if msg.final:
                review_summary_report(msg.summary, console)
            return out.getvalue().rstrip("\n")

        self._foreground(stream, render, line=review_progress_line)

    def complete_review(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        if text.startswith("-"):
            return [f"-{name}" for name in REVIEW_FLAGS if f"-{name}".startswith(text)]
        return _complete_path(text)

    def do_infer(self, arg: str) -> None:
        """infer [PLAY [-withdrawn]] [options]
        What the opponent's last play says about the tiles they kept (docs/inference.md): the likeliest
        leaves and each letter's expected count, against a random draw. Without PLAY, their last play before
        the cursor, as the player on turn saw it (a phony challenged off included), weighed with their earlier
        turns in the game; with PLAY (as it stands on the board, 8G Q(I), or exch N), that play on the position
        shown.
        Options:
        """
        game = self._need_game()
        pos, opts = parse_flags(_split(arg), INFER_FLAGS)
        top = opts.get("top", INFER_TOP)
        if pos:
            if "history_turns" in opts:
                raise ShellError("-history goes with the game's last play (no PLAY): the game gives the earlier turns")
            resp = self.client.infer(game.cgp, " ".join(pos), lexicon=self.lexicon, **opts)
        else:
            if "withdrawn" in opts:
                raise ShellError("-withdrawn goes with a PLAY; without one the game says what was withdrawn")
            resp = self.client.infer(game_id=game.game_id, **opts)
        self.say(infer_response_text(resp, top))

    def do_leave(self, arg: str) -> None:
        """leave RACK
        The value of a leave (up to 7 tiles, ? a blank) in points, from the leave table of the lexicon in use
        (set lexicon, else the loaded game's, else the server's default)."""
        words = _split(arg)
        if len(words) != 1:
            raise ShellError("leave takes one rack, e.g. leave AEINST or leave ?S")
        lexicon = self.lexicon or (self.game.lexicon if self.game is not None else "")
        self.say(leave_text(self.client.evaluate_leave(words[0], lexicon=lexicon)))

    def do_autoplay(self, arg: str) -> None:
        """autoplay [options]
        Static-equity bot against static-equity bot on the server. Ctrl-C stops with the tally so far.
        Options:
        """
        pos, opts = parse_flags(_split(arg), AUTOPLAY_FLAGS)
        if pos:
            raise ShellError(f"unexpected {' '.join(pos)!r}")
        if self.lexicon and "lexicon" not in opts:
            opts["lexicon"] = self.lexicon
        self._foreground(self.client.autoplay(**opts), autoplay_text)

    def completedefault(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        spec = FLAG_SPECS.get(line.split()[0] if line.split() else "")
        return _complete_words(text, line, [], spec) if spec else []

    # -------------------------------------------------------------- settings

    def do_set(self, arg: str) -> None:
        """set | set lexicon [NAME] | set challenge single|double|void|five|ten
        Show the settings (set lexicon without a name: the lexicon in use, the loaded game's), choose the
        lexicon for new positions, move generation and analysis, or the challenge rule (double by default;
        void: phonies cannot be played)."""
        words = _split(arg)
        if not words or words == ["lexicon"]:
            info = self.client.server_info()
            self._say_lexicon(info.default_lexicon)
            if not words:
                self.say(f"challenge {self.challenge_rule}")
                self.say(f"server {self.client.address}, engine {info.version}, API {info.api_version}")
            return
        if words[0] == "challenge":
            if len(words) != 2 or words[1].lower() not in CHALLENGE_RULES:
                raise ShellError(f"usage: set challenge {'|'.join(CHALLENGE_RULES)}")
            self.challenge_rule = words[1].lower()
            if self.game is not None:
                self.game = self.client.set_challenge_rule(self.game.game_id, self.challenge_rule)
            self.say(f"challenge rule set to {self.challenge_rule}")
            return
        if words[0] != "lexicon" or len(words) != 2:
            raise ShellError("usage: set lexicon NAME | set challenge RULE")
        names = [lx.name for lx in self.client.server_info().lexica]
        match = next((n for n in names if n.lower() == words[1].lower()), None)
        if match is None:
            raise ShellError(f"unknown lexicon {words[1]!r} (available: {', '.join(names)})")
        self.lexicon = match
        self.say(f"lexicon set to {match}")

    def _say_lexicon(self, default: str) -> None:
        game = self.game
        if game is None:
            self.say(f"lexicon {self.lexicon or default}{'' if self.lexicon else ' (the server default)'}")
            return
        if self.lexicon and self.lexicon != game.lexicon:
            self.say(f"lexicon {self.lexicon} (set; the loaded game's is {game.lexicon}: gen, sim, endgame, peg, "
                     f"analyze and leave use {self.lexicon})")
        else:
            self.say(f"lexicon {game.lexicon} (the loaded game's)")
        if not self.lexicon:
            self.say(f"new games: {default} (the server default)")

    def complete_set(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        words = line[:begidx].split()
        if len(words) == 1:
            return [w for w in ("lexicon", "challenge") if w.startswith(text)]
        if len(words) == 2 and words[1] == "challenge":
            return [r for r in CHALLENGE_RULES if r.startswith(text)]
        if len(words) == 2 and words[1] == "lexicon":
            try:
                names = [lx.name for lx in self.client.server_info().lexica]
            except MacondoError:
                return []
            return [n for n in names if n.lower().startswith(text.lower())]
        return []

    def do_info(self, arg: str) -> None:
        """info
        The server's version, lexica (each with its letter distribution, board and leaves) and limits."""
        info = self.client.server_info()
        self.say(f"engine {info.version}, API {info.api_version}, default lexicon {info.default_lexicon}")
        for lx in info.lexica:
            self.say(f"  {lx.name:<10} {lx.distribution:<14} {lx.layout:<11} "
                     f"{'leaves' if lx.has_leaves else 'no leaves':<10} {lx.source}")
        self.say(f"jobs running {info.running_jobs}/{info.limits.max_jobs}")

    def do_quit(self, arg: str) -> bool:
        """quit | exit
        Leave the shell (a running simulation is stopped)."""
        if self.sim is not None and self.sim.running:
            self.sim.stream.stop()
            self.sim.thread.join(5)
        if self.game is not None:
            try:
                self.client.delete_game(self.game.game_id)
            except MacondoError:
                pass
        return True

    do_exit = do_quit

    def do_EOF(self, arg: str) -> bool:
        if self.interactive:
            self.say("")
        return self.do_quit(arg)

    def do_help(self, arg: str) -> None:
        """help [command]
        List the commands, or explain one."""
        if arg:
            fn = getattr(self, "do_" + arg.strip(), None)
            if fn is None or not fn.__doc__:
                raise ShellError(f"no help on {arg!r}")
            doc = "\n".join(line.strip() for line in fn.__doc__.strip().splitlines())
            spec = FLAG_SPECS.get(arg.strip())
            self.say(doc + ("\n" + _flag_help(spec) if spec else ""))
            return
        self.say("commands (help <command> for details):")
        for name in sorted(n[3:] for n in self.get_names() if n.startswith("do_") and n not in ("do_EOF", "do_exit")):
            lines = (getattr(self, "do_" + name).__doc__ or "").strip().splitlines()
            self.say(f"  {lines[0] if lines else name}")


def _complete_path(text: str) -> list[str]:
    base = Path(text).expanduser()
    folder = base if text.endswith("/") else base.parent
    stem = "" if text.endswith("/") else base.name
    try:
        entries = sorted(folder.iterdir()) if str(folder) else sorted(Path(".").iterdir())
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name.startswith(stem) and (e.is_dir() or e.suffix.lower() == ".gcg"):
            shown = os.path.join(os.path.dirname(text), e.name) if not text.endswith("/") else text + e.name
            out.append(shown + ("/" if e.is_dir() else ""))
    return out


def _complete_words(text: str, line: str, verbs: list[str], spec: dict[str, Flag]) -> list[str]:
    first = len(line.split()) <= 1 or (len(line.split()) == 2 and not line.endswith(" "))
    options = (verbs if first else []) + [f"-{name}" for name in spec]
    return [o for o in options if o.startswith(text)]


def run_shell(client: Client, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    interactive = sys.stdin.isatty() if stdin is None else False
    shell = MacondoShell(client, stdin=stdin, stdout=stdout, interactive=interactive)
    if stdin is not None:
        shell.use_rawinput = False
    readline = None
    if interactive:
        try:
            import readline as _readline

            readline = _readline
            readline.set_completer_delims(" \t\n")
            if os.path.exists(HISTORY_FILE):
                readline.read_history_file(HISTORY_FILE)
            readline.set_history_length(2000)
        except (ImportError, OSError):
            readline = None
    else:
        shell.prompt = "macondo> "
    try:
        shell.cmdloop()
    finally:
        if readline is not None:
            try:
                readline.write_history_file(HISTORY_FILE)
            except OSError:
                pass
    return 0
