"""An adapter process that lets MAGPIE's strongest bot play in the bot arena, one JSON line per request.

MAGPIE is not part of this project: build it yourself from its public source (github.com/jvc56/MAGPIE,
`make magpie BUILD=release`, the default 15x15 board) and give it a data directory holding
letterdistributions/english.csv, layouts/standard15.txt, strategy/winpct.csv (the win-percentage table of
MAGPIE's data set, which its sim needs) and, in lexica/, the lexicon's NAME.kwg, its NAME.klv2 leaves and
NAME.wmp, its word map. MAGPIE makes the .kwg and the .wmp from a word list put at lexica/NAME.txt:
`bin/magpie convert text2kwg NWL20`, then `bin/magpie convert text2wordmap NWL20` (or pass --no-wmp: slower).
Pass the binary with --magpie or MAGPIE_BIN; it runs with the directory above its bin/ as its working
directory, where it looks for ./data (or give --data-path).

The bot. MAGPIE's strongest player is its play chooser (the bot its autoplay runs on a clock). With more than
4 tiles in the bag it simulates the top 15 static moves 2 plies deep, sampling them with its best-arm
identification rule (top-two) and no statistical stopping rule until the time is spent, and ranks them by a
blend of win percentage and spread; with 1 to 4 (its pre-endgame solver's range) it runs the pre-endgame
solver, which ranks moves by their win percentage over the possible draws against a rational opponent; with
the bag empty it runs the endgame solver as deep as the time allows; a search that yields nothing falls back
to the best static move. Its console has no command for the chooser, so this adapter drives one long-running
console (one MAGPIE process, not one per move) through the commands the chooser's choice amounts to, with
the chooser's settings:

    cgp BOARD RACKS SCORES ZEROS -seed N  the position (the opponent's rack written in when the bag is empty)
    gen                                   the static ranking, -numplays 15: the fallback, and a lone move
    sim -tlim T                           -plies 2 -sr tt -threshold none -scondition none -minplayiterations 1
                                          -cutoff 0 -sinfer false -uwin 1 -uspread 0.5 -uspreadscale 100
    peg -pegtlim T                        -pegnested false -pegpess false -pegstride 0 (every draw order)
    endgame -etlim T                      -eplies 25 -etopk 1, its transposition table kept across moves

and reads the first row of the printed ranking (the tables are sorted by the comparator that picks the best
move). The move, in MAGPIE's notation (`8G QI`, `L4 (MUREX)ES`, `(exch AQ)`, `pass`), is checked against
the board and the rack and written in ours (`8G QI`, `L4 (MUREX)ES`, `exch AQ`, `pass`).

Time. The budget is counted from the moment the request is read. The sim's limit is the budget less a
reserve for what lies outside the search (loading the position, the static ranking, the pipes): --reserve S
plus --reserve-fraction F of the budget (defaults 0.05 s and 0.03); the sim stops at its limit to the
millisecond. The solvers' limits end 0.18 s before the end of the budget when that is earlier, for they run
past them. The endgame solver always completes 4 plies before it judges whether the next depth fits its
limit, and can run past it many times over, so it runs in the console's async mode and is sent MAGPIE's
`stop` when its limit is up: that ends it with its deepest completed line, within 0.06 s typically (0.12 s
seen on a loaded machine). The pre-endgame solver cannot be stopped while it evaluates a candidate (up to
seconds for one with 3 or 4 tiles in the bag and every draw order; --peg-stride, MAGPIE's sampling of the
draws, shortens that), and it evaluates them in the order MAGPIE generates them (the pass first), so a short
budget ranks only the first few. A search still running 0.03 s before the end of the budget is given up on:
the reply is the static best, and the search's output is dropped before the next command (which waits).

Memory. MAGPIE zeroes a transposition table of a twentieth of the machine's memory for every pre-endgame solve
and the endgame's (--tt-fraction) once: with its word map, over 2 GB for each adapter on a 24 GB machine. At
start-up the adapter runs one small search of each kind, and MAGPIE runs with glibc's malloc keeping freed
memory in the process, in transparent huge pages (GLIBC_TUNABLES mmap_max=0, a large trim_threshold,
hugetlb=1), so that a solve reuses the pages zeroed before, or faults them back 2 MB at a time, instead of
paying the kernel's first touch of 4 kB pages (seconds on virtual machines, which also reclaim memory left
idle for a few seconds) inside the move's time. The first reply waits for the start-up (seconds).

Protocol (stdin/stdout, one JSON object a line):

    request  {"cgp": "<CGP as the player on turn sees it>", "seconds": <budget>, "seed": <int>}
    reply    {"move": "8G QI" | "2L P(O)ND" | "exch ABC?" | "pass", "detail": "<how MAGPIE chose>"}
             or {"error": "<one line>"}
    {"quit": true} or the end of the input ends the process.

The CGP's lex op, if any, must name the adapter's lexicon; its other ops are not passed on. The detail names
the phase, MAGPIE's limit and the time it reports; with --verbose it goes to stderr too, with the reply time.

Run: .venv/bin/python bench/magpie_bot.py [--magpie PATH] [--lexicon NWL20] [--leaves NAME] [--threads 1]
     [--tt-fraction 0.05] [--peg-stride 0] [--reserve 0.05] [--reserve-fraction 0.03] [--verbose]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError
from macondo_server.model.tiles import RACK_SIZE

DEFAULT_MAGPIE = "/tmp/magpie_build/src15/bin/magpie"
PEG_MAX_BAG = 4          # the pre-endgame solver's range is 1..4 tiles in the bag
SIM_CANDIDATES = 15      # the chooser sims its top 15 static moves ...
SIM_PLIES = 2            # ... 2 plies deep
ENDGAME_PLIES = 25       # as deep as the time allows (MAGPIE's longest variation)
MIN_SECONDS = 0.01       # the least time given to a search
GRACE_SECONDS = 60.0     # MAGPIE is restarted when a command runs this much past its budget
GIVE_UP_MARGIN = 0.03    # a search still running this long before the end of the budget is given up on
OVERRUN = 0.15           # a solver's room past its limit: a stopped endgame ends within this (0.06 s typically)
STARTUP_SECONDS = 300.0
SETTLE_SECONDS = 5.0     # MAGPIE answers a probe within this once a command has finished

# a move in MAGPIE's notation at the start of `text`: pass, an exchange, or a coordinate and a word
_MOVE = r"(pass|\(exch [^)\s]+\)|(?:[A-Z]\d{1,2}|\d{1,2}[A-Z]) \S+)"
_GEN_ROW = re.compile(rf"^\s*(\d+):\s+{_MOVE}(?:\s|$)")
_PEG_ROW = re.compile(rf"^\s*(?:\S+\s+)?(\d+)\s+{_MOVE}\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(-?\d+(?:\.\d+)?)\s")
_ENDGAME_ROW = re.compile(rf"^{_MOVE}(?:\s|$)")
_ERROR = re.compile(r"^\(error \d+\)")
_FINISHED = re.compile(r"^finished \S+$")


class MagpieError(Exception):
    """MAGPIE failed, died, or printed something this adapter cannot read."""


class Console:
    """One MAGPIE console: commands in, their printed lines out (stderr is merged into stdout; MAGPIE flushes
    both after each write).

    It runs in MAGPIE's sync mode, in which the console reads the next command only when the last one is done:
    a batch of commands is followed by a unique unknown command, which MAGPIE answers with an error line naming
    it, marking the end of the batch's output. A search that must be stoppable (the endgame's) runs in async
    mode, the one in which MAGPIE reads `stop` while a command runs and answers any other line with an error
    naming it; with -printonfinish it ends with a `finished NAME` line, after which probe lines (unknown
    commands) are sent until one is answered as a command rather than as input to the finished one, and the
    console goes back to sync mode."""

    def __init__(self, binary: str, workdir: str, setup: list[str], env: dict[str, str]) -> None:
        self.binary = binary
        self.workdir = workdir
        self.setup = setup
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.marks = itertools.count()
        # a command given up on that is still running: the mark ending its batch (sync) or "async"
        self.pending: str | None = None

    def start(self, timeout: float) -> list[str]:
        self.lines = queue.Queue()
        self.pending = None
        self.proc = subprocess.Popen([self.binary, *self.setup], cwd=self.workdir, env=self.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()
        return self.run([], timeout) or []

    @staticmethod
    def _read(proc: subprocess.Popen[bytes], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        lines.put(None)

    def _mark(self) -> str:
        return f"mb_mark_{os.getpid()}_{next(self.marks)}"

    def _write(self, *lines: str) -> None:
        if self.proc is None or self.proc.stdin is None or self.proc.poll() is not None:
            raise MagpieError("MAGPIE is not running")
        try:
            self.proc.stdin.write("".join(line + "\n" for line in lines).encode())
            self.proc.stdin.flush()
        except OSError as e:
            raise MagpieError(f"MAGPIE's input is closed: {e}") from e

    def _line(self, deadline: float, out: list[str]) -> str | None:
        """The next line, or None at `deadline`; MagpieError when MAGPIE has exited."""
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is None:
            code = self.proc.wait() if self.proc is not None else None
            self.proc = None
            raise MagpieError(f"MAGPIE exited (status {code}); last output: {' | '.join(out[-3:])}")
        return line

    def _until(self, done, deadline: float, what: str) -> list[str]:
        """Lines up to and including the first for which done(line) holds; kills MAGPIE at `deadline`."""
        out: list[str] = []
        while True:
            line = self._line(deadline, out)
            if line is None:
                self.kill()
                raise MagpieError(f"MAGPIE did not finish {what} in time (stopped it)")
            out.append(line)
            if done(line):
                return out

    def _settle(self, deadline: float) -> list[str]:
        """After an async command: probe until MAGPIE answers a probe as a command; the lines before."""
        out: list[str] = []
        while True:
            probe = self._mark()
            self._write(probe)
            lines = self._until(lambda ln, p=probe: p in ln, deadline, "a probe")
            out += lines[:-1]
            if "async command" not in lines[-1]:
                return out
            time.sleep(0.002)

    def drain(self, deadline: float) -> None:
        """Wait for a command given up on to finish and drop its output."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        if pending == "async":
            self._until(lambda ln: bool(_FINISHED.match(ln) or _ERROR.match(ln)), deadline, "a given-up search")
            self._settle(min(deadline, time.monotonic() + SETTLE_SECONDS))
            self._back_to_sync(min(deadline, time.monotonic() + SETTLE_SECONDS))
        else:
            self._until(lambda ln: pending in ln, deadline, "a given-up search")

    def _back_to_sync(self, deadline: float) -> None:
        # the mode changes when the command is read; with -printonfinish false it ends without a line
        self._write("set -mode sync -printonfinish false")
        check_errors(self._settle(deadline))

    def run(self, commands: list[str], timeout: float, give_up_at: float | None = None) -> list[str] | None:
        """The lines the commands print (sync mode); MagpieError on an error line or when MAGPIE exits, or
        after `timeout` seconds (then MAGPIE is killed). At `give_up_at` (monotonic time) None is returned and
        the batch left to finish: its output is dropped before the next command."""
        deadline = time.monotonic() + timeout
        self.drain(deadline)
        mark = self._mark()
        self._write(*commands, mark)
        out: list[str] = []
        while True:
            line = self._line(min(deadline, give_up_at or deadline), out)
            if line is None:
                if give_up_at is not None and time.monotonic() >= give_up_at:
                    self.pending = mark
                    return None
                self.kill()
                raise MagpieError(f"MAGPIE did not answer within {timeout:.1f} s (stopped it)")
            if mark in line:
                break
            out.append(line)
        check_errors(out)
        return out

    def run_stoppable(self, command: str, timeout: float, stop_at: float,
                      give_up_at: float) -> list[str] | None:
        """Like run() for one command, run in MAGPIE's async mode: at `stop_at` a command still running is
        sent `stop` (MAGPIE's own interrupt: the search ends with its best result so far)."""
        deadline = time.monotonic() + timeout
        self.run(["set -mode async -printonfinish true"], timeout)
        self._write(command)
        out: list[str] = []
        stopped = False
        while True:
            wake = min(deadline, give_up_at, stop_at if not stopped else deadline)
            line = self._line(wake, out)
            if line is None:
                now = time.monotonic()
                if now >= give_up_at:
                    if not stopped:
                        self._write("stop")
                    self.pending = "async"
                    return None
                if not stopped and now >= stop_at:
                    self._write("stop")
                    stopped = True
                    continue
                if now >= deadline:
                    self.kill()
                    raise MagpieError(f"MAGPIE did not finish {command.split()[0]} within {timeout:.1f} s")
                continue
            out.append(line)
            if _FINISHED.match(line) or _ERROR.match(line):
                break
        try:
            out += self._settle(min(deadline, time.monotonic() + SETTLE_SECONDS))
            self._back_to_sync(min(deadline, time.monotonic() + SETTLE_SECONDS))
        except MagpieError:
            # MAGPIE can hang when a `stop` crosses the search's own end (its console then waits for a status
            # the stop has overwritten): it is killed, and restarted after the reply, which is already here
            if not any(_FINISHED.match(ln) for ln in out):
                raise
        check_errors(out)
        return out

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.pending = None

    def stop(self) -> None:
        """End MAGPIE: close its input (it exits at the end of its input), or kill it."""
        if self.proc is None:
            return
        if self.pending is not None:         # it would first finish the search given up on
            self.kill()
            return
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self.proc = None


def check_errors(lines: list[str]) -> None:
    """MagpieError for MAGPIE's error lines, but the one a `stop` gets when the command had just finished."""
    errors = [ln.strip() for ln in lines if _ERROR.match(ln.strip()) and "nothing to stop" not in ln
              and "no currently running command" not in ln]
    if errors:
        raise MagpieError("MAGPIE: " + "; ".join(errors))


def magpie_fields(pos: Position) -> str:
    """The four CGP fields MAGPIE's cgp command takes (board, racks, scores, zeros) of `pos`."""
    return " ".join(write_cgp(Position(board=pos.board, racks=pos.racks, scores=pos.scores, zeros=pos.zeros,
                                       ld=pos.ld)).split()[:4])


def synthetic_position(empty: Position, on_turn: int, opponent: int) -> Position:
    """For the start-up searches that make MAGPIE load and allocate what it needs: `on_turn` and `opponent`
    tiles on the racks and the rest on the board (rows filled in order, no words) but for one tile in the bag
    when the opponent's rack is left empty (a pre-endgame), or an empty board when `opponent` is -1."""
    ld = empty.ld
    tiles = [ml for ml in range(ld.size) for _ in range(ld.count(ml))]
    letters = [t for t in tiles if t != 0]
    racks = (letters[:on_turn], letters[on_turn:on_turn + max(0, opponent)])
    board = empty.board.copy()
    if opponent >= 0:
        rest = letters[on_turn + opponent:] + [0x80 | 1] * (len(tiles) - len(letters))   # blanks as a
        bag = RACK_SIZE + 1 if opponent == 0 else 0
        for i, t in enumerate(rest[bag:]):
            board.set_tile(i // board.dim, i % board.dim, t)
    return Position(board=board, racks=racks, scores=(0, 0), zeros=0, ld=ld)


class MagpieBot:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.lexicon = args.lexicon
        binary = Path(args.magpie)
        if not binary.is_file():
            raise SystemExit(f"magpie_bot: no MAGPIE binary at {binary} (--magpie or MAGPIE_BIN)")
        setup = ["set", "-mode", "sync", "-printonfinish", "false", "-savesettings", "false", "-shprompt", "false",
                 "-threads", str(args.threads), "-lex", args.lexicon, "-leaves", args.leaves or args.lexicon,
                 "-wmp", "false" if args.no_wmp else "true", "-winpct", args.winpct,
                 "-hr", "false", "-shwithmoves", "false", "-pretty", "false",
                 "-r1", "all", "-r2", "all", "-s1", "equity", "-s2", "equity", "-numplays", str(SIM_CANDIDATES),
                 "-plies", str(SIM_PLIES), "-sr", "tt", "-threshold", "none", "-scondition", "none",
                 "-minplayiterations", "1", "-iterations", str(10**15), "-cutoff", "0", "-sinfer", "false",
                 "-useheatmap", "false", "-uwin", "1", "-uspread", "0.5", "-uspreadscale", "100",
                 "-pegnested", "false", "-pegpess", "false", "-pegstride", str(args.peg_stride),
                 "-pegoutcomes", "false", "-eplies", str(ENDGAME_PLIES), "-etopk", "1",
                 "-ttfraction", str(args.tt_fraction)]
        if args.data_path:
            setup += ["-path", args.data_path]
        env = dict(os.environ)
        if not args.no_malloc_tuning:
            # freed memory stays in the process (no mmap for large blocks, no trimming), in huge pages
            env.setdefault("GLIBC_TUNABLES", f"glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold={1 << 40}"
                                             ":glibc.malloc.hugetlb=1")
        workdir = str(binary.resolve().parent.parent)
        self.console = Console(str(binary), workdir, setup, env)
        self.empty = parse_cgp("/".join(["15"] * 15) + f" / 0/0 0 lex {args.lexicon};")
        self.start()

    def log(self, text: str) -> None:
        if self.args.verbose:
            print(f"magpie_bot: {text}", file=sys.stderr, flush=True)

    def start(self) -> None:
        """Start MAGPIE, load the lexicon and run the start-up solves (see the docstring)."""
        t0 = time.monotonic()
        self.console.start(timeout=STARTUP_SECONDS)
        if not self.args.no_warmup:
            # the endgame's table first: it is kept, and the pre-endgame's, freed after each solve, then
            # lies above it for the next solve to reuse
            endgame = magpie_fields(synthetic_position(self.empty, 1, 1))
            peg = magpie_fields(synthetic_position(self.empty, RACK_SIZE, 0))
            opening = magpie_fields(synthetic_position(self.empty, RACK_SIZE, -1))
            self.console.run([f"cgp {endgame}", "endgame -etlim 0.05", f"cgp {peg}", "peg -pegtlim 0.05",
                              f"cgp {opening}", "gen", "sim -tlim 0.05"], timeout=STARTUP_SECONDS)
        self.log(f"MAGPIE ready in {time.monotonic() - t0:.2f} s")

    def restart(self) -> None:
        self.log("restarting MAGPIE")
        self.console.kill()
        self.start()

    def close(self) -> None:
        self.console.stop()

    def choose(self, cgp: str, seconds: float, seed: int, t0: float) -> tuple[str, str]:
        """Our notation of the move MAGPIE's bot plays in the CGP position within `seconds` of `t0` (the
        monotonic time the request arrived), and how it chose."""
        pos = parse_cgp(cgp)
        if pos.lexicon is not None and pos.lexicon.upper() != self.lexicon.upper():
            raise FormatError(f"this adapter plays {self.lexicon}, not {pos.lexicon}")
        if not pos.racks[0]:
            raise FormatError("the player on turn has no tiles")
        bag = pos.tiles_in_bag()
        if bag == 0:
            # every unseen tile is on the opponent's rack: MAGPIE's endgame needs it written
            counts = pos.unseen_counts(0)
            opp = [ml for ml in range(len(counts)) for _ in range(counts[ml])]
            if not opp:
                raise FormatError("the game is over: the opponent has no tiles and the bag is empty")
            pos = Position(board=pos.board, racks=(pos.racks[0], opp), scores=pos.scores, zeros=pos.zeros,
                           ops=pos.ops, ld=pos.ld)
        if pos.zeros >= pos.max_scoreless_turns:
            raise FormatError("the game is over: the scoreless-turn limit is reached")
        timeout = seconds + GRACE_SECONDS
        out = self.console.run([f"cgp {magpie_fields(pos)} -seed {seed}", "gen"], timeout) or []
        ranked = [m.group(2) for m in map(_GEN_ROW.match, out) if m]
        if not ranked:
            raise MagpieError("MAGPIE generated no moves: " + " | ".join(out[-3:]))
        # the timeline: a sim's limit ends `reserve` before the end of the budget; a solver's (which overruns)
        # also OVERRUN before the give-up, when an endgame still running is stopped; a search still running
        # GIVE_UP_MARGIN before the end of the budget is given up on (the reply is the static best)
        end = t0 + seconds
        reserve = self.args.reserve + self.args.reserve_fraction * seconds
        give_up_at = end - GIVE_UP_MARGIN
        stop_at = min(end - reserve, give_up_at - OVERRUN)
        limit = max(MIN_SECONDS, (end - reserve if bag > PEG_MAX_BAG else stop_at) - time.monotonic())
        choice = None
        phase = "only move"
        out = []
        if len(ranked) > 1:
            if bag == 0:
                phase, read = "endgame", read_endgame
                result = self.console.run_stoppable(f"endgame -etlim {limit:.3f}", timeout, stop_at, give_up_at)
            elif bag <= PEG_MAX_BAG:
                phase, read = "peg", read_peg
                result = self.console.run([f"peg -pegtlim {limit:.3f}"], timeout, give_up_at)
            else:
                phase, read = "sim", read_sim
                result = self.console.run([f"sim -tlim {limit:.3f}"], timeout, give_up_at)
            if result is None:
                phase += ", given up on at the end of the budget: the static best"
            else:
                out = result
                choice = read(out)
                if choice is None:
                    phase += ", no result: the static best"
        text = choice or ranked[0]
        move = our_move(text, pos)
        said = [" ".join(ln.split()) for ln in out if ln.startswith(("Endgame (", "PEG (", "Time:"))]
        detail = "; ".join([phase, f"MAGPIE's limit {limit:.3f} s", *said])
        self.log(f"{text} -> {move} (bag {bag}, budget {seconds:.3f} s, replied after {time.monotonic() - t0:.3f} s):"
                 f" {detail}")
        return move, detail


def read_sim(lines: list[str]) -> str | None:
    """The first row of the sim's table (sorted by the comparator that picks its best move)."""
    for line in lines:
        m = _GEN_ROW.match(line)
        if m:
            return m.group(2)
    return None


def read_peg(lines: list[str]) -> str | None:
    """The first row of the pre-endgame solver's ranking, or None when it scored no move (win% -100)."""
    header = next((i for i, ln in enumerate(lines) if re.search(r"\brank\s+move\b", ln)), None)
    if header is None:
        return None
    for line in lines[header + 1:]:
        m = _PEG_ROW.match(line)
        if m:
            return m.group(2) if float(m.group(6)) >= 0 else None
    return None


def read_endgame(lines: list[str]) -> str | None:
    """The first move of the endgame solver's principal variation, or None when it has none."""
    header = next((i for i, ln in enumerate(lines) if ln.startswith("Endgame (")), None)
    if header is None:
        return None
    for line in lines[header + 1:]:
        m = _ENDGAME_ROW.match(line)
        if m:
            return m.group(1)
    return None


def our_move(text: str, pos: Position) -> str:
    """MAGPIE's move `text` in our notation, checked against the board and the rack."""
    try:
        move = parse_move(text, pos.board, pos.ld)
    except FormatError as e:
        raise MagpieError(f"MAGPIE's move {text!r} does not fit the position: {e}") from e
    short = Counter(move.rack_tiles()) - Counter(pos.racks[0])
    if short:
        raise MagpieError(f"MAGPIE's move {text!r} uses tiles not on the rack")
    return notation(move, pos)


def notation(move: Move, pos: Position) -> str:
    if move.kind == "place":
        return format_move(move, pos.ld, pos.board, style="table").strip()
    return format_move(move, pos.ld)


def request_fields(line: str) -> tuple[str, float, int] | None:
    """(cgp, seconds, seed) of a request line, None for a quit request; ValueError when malformed."""
    try:
        req = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON: {e}") from e
    if not isinstance(req, dict):
        raise ValueError("a request is a JSON object")
    if req.get("quit") is True:
        return None
    cgp, seconds, seed = req.get("cgp"), req.get("seconds"), req.get("seed", 0)
    if not isinstance(cgp, str) or not cgp.strip():
        raise ValueError("'cgp' must be a CGP string")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds <= 86400:
        raise ValueError("'seconds' must be a number of seconds above 0")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError("'seed' must be an integer")
    return cgp, float(seconds), seed % (1 << 63)


def serve(bot: MagpieBot, inp, out) -> None:
    for line in inp:
        t0 = time.monotonic()
        if not line.strip():
            continue
        try:
            fields = request_fields(line)
            if fields is None:
                break
            move, detail = bot.choose(*fields, t0)
            reply = {"move": move, "detail": detail}
        except ValueError as e:          # a malformed request or position (FormatError is a ValueError)
            reply = {"error": " ".join(str(e).split())}
        except MagpieError as e:
            reply = {"error": " ".join(str(e).split())}
        except Exception as e:           # one bad request must not end the process
            reply = {"error": f"{type(e).__name__}: {' '.join(str(e).split())}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if not bot.console.running():
            try:
                bot.restart()
            except MagpieError as e:
                raise SystemExit(f"magpie_bot: MAGPIE does not restart: {e}") from e


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--magpie", default=os.environ.get("MAGPIE_BIN") or DEFAULT_MAGPIE, help="the MAGPIE binary")
    ap.add_argument("--lexicon", default="NWL20")
    ap.add_argument("--leaves", default=None, help="MAGPIE's leave file name (default: the lexicon's)")
    ap.add_argument("--winpct", default="winpct", help="MAGPIE's win-percentage file name")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data-path", default=None, help="MAGPIE's data directory (default: ./data beside its bin/)")
    ap.add_argument("--no-wmp", action="store_true", help="run MAGPIE without its word map (no NAME.wmp)")
    ap.add_argument("--tt-fraction", type=float, default=0.05,
                    help="share of the machine's memory for the endgame's transposition table (MAGPIE's bot: 0.2)")
    ap.add_argument("--reserve", type=float, default=0.05, help="seconds of each budget kept outside the search")
    ap.add_argument("--reserve-fraction", type=float, default=0.03, help="share of each budget kept likewise")
    ap.add_argument("--peg-stride", type=int, default=0,
                    help="MAGPIE's pre-endgame scenario sampling stride (0: its default, every draw order)")
    ap.add_argument("--no-warmup", action="store_true", help="skip the start-up solves")
    ap.add_argument("--no-malloc-tuning", action="store_true", help="leave MAGPIE's malloc settings alone")
    ap.add_argument("--verbose", action="store_true", help="log each move's phase and times to stderr")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    if not 0 < args.tt_fraction <= 0.5:
        ap.error("--tt-fraction must be in (0, 0.5]")
    try:
        bot = MagpieBot(args)
    except MagpieError as e:
        raise SystemExit(f"magpie_bot: MAGPIE does not start: {e}") from e
    try:
        serve(bot, sys.stdin, sys.stdout)
    finally:
        bot.close()


if __name__ == "__main__":
    main()
