"""Stopping long jobs interactively is quick and always keeps the best result so far.

1. `macondo shell` driven through a pseudo-terminal: Ctrl-C in a foreground peg, endgame and sim (and in
   `sim watch`), ten times in a row each, prints a result, gives the prompt back and the next command works.
2. The CLI's endgame, sim and peg: SIGINT prints the best result so far within a second and exits 130 (a
   stopped run is not a finished one).
3. The engines: a simulation (long iterations) and an endgame stop within half a second of the stop flag;
   the endgame returns the deepest completed depth's line; a stopped simulation's statistics are those of
   its complete iterations only; a stopped pre-endgame records no verdict for the draws it cut short.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from macondo_server.model.cgp import parse_cgp
from macondo_server.model.move import format_move

from conftest import LEXICA, needs_nwl20

ROOT = Path(__file__).resolve().parents[2]
REPEATS = int(os.environ.get("MACONDO_STOP_REPEATS", "6"))

# an endgame whose depth 1 alone takes seconds with the greedy playouts (shell default), and ~0.3 s / 1 s /
# 6 s to depths 2 / 3 / 4 without them
ENDGAME = ("14B/14I/12ADD/12NAE/8FLICKS1/1Q5ROO2UH1/MI2D1BARRETS2/A2TORII2N1HUN/LUXATED3G4/L3T1EMOJI4/"
           "O2OY5R4/W2G6TE3/3E2FOE2P3/3E1WANT2E3/NUtSIER3PEAVY ?CILOSZ/AAEGINV 394/261 0 lex NWL20;")
# four tiles in the bag: minutes for every play
PEG = ("12D2/1U10O2/1p10L2/1R1C3KANJIS2/1I1O3A2U4/1G1T3I2I4/1H1E3Z2C1LOO/1TED3E1BYWORD/2Q4N3AXE1/1RuBIGOS3I3/"
       "F1A5WEAVE2/O1T8E3/V1E5LOURY2/ENSNARL2HM4/A6TEMP4 DEFNNPT/ 394/365 0 lex NWL20;")
MIDGAME = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
           "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 302/300 0 lex NWL20;")
# an open board and a blank: 13,313 legal plays, long simulation iterations
OPEN_BLANK = "15/15/15/15/15/15/15/4QUOTE6/15/15/15/15/15/15/15 ?AEINRT/ 40/0 0 lex NWL20;"


def _macondo(*args: str) -> list[str]:
    return [sys.executable, "-m", "macondo_server", "--data-dir", str(LEXICA), *args]


class Terminal:
    """A child process on a pseudo-terminal that is its controlling terminal, so that writing ^C to the
    master delivers SIGINT exactly as a user's keyboard does."""

    def __init__(self, argv: list[str], stdout=None, env: dict | None = None) -> None:
        master, slave = pty.openpty()

        def controlling_tty() -> None:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave if stdout is None else stdout,
                                     stderr=slave, preexec_fn=controlling_tty, cwd=ROOT, env=env, close_fds=True)
        os.close(slave)
        self.fd = master
        self.seen = b""     # everything read so far
        self.pos = 0        # expect() searches from here

    def _read(self, timeout: float) -> bool:
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:     # the child closed the terminal
            return False
        self.seen += data
        return bool(data)

    def expect(self, pattern: bytes, timeout: float) -> bytes:
        """The output from the last match up to and including `pattern`."""
        end = time.monotonic() + timeout
        while True:
            i = self.seen.find(pattern, self.pos)
            if i >= 0:
                out = self.seen[self.pos:i + len(pattern)]
                self.pos = i + len(pattern)
                return out
            left = end - time.monotonic()
            if left <= 0 or (not self._read(min(left, 0.1)) and self.proc.poll() is not None):
                tail = self.seen[self.pos:][-3000:].decode(errors="replace")
                raise AssertionError(f"no {pattern!r} within {timeout} s; output since the last match:\n"
                                     f"{tail}")

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def line(self, text: str) -> None:
        self.send(text.encode() + b"\r")

    def drain(self, timeout: float = 1.0) -> None:
        """Read what is left (until end of file or `timeout`)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and self._read(0.05):
            pass

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        os.close(self.fd)


def _env(tmp_path: Path) -> dict:
    env = dict(os.environ, MACONDO_HISTORY=str(tmp_path / "history"), TERM="dumb", COLUMNS="120")
    env.pop("MACONDO_DATA_DIR", None)
    return env


# ------------------------------------------------------------------ 1. the shell


PROMPT = b"macondo> "


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    if not (LEXICA / "NWL20.txt").is_file() and not (LEXICA / "NWL20.kwg").is_file():
        pytest.skip("shared NWL20 lexicon absent")
    term = Terminal(_macondo("shell"), env=_env(tmp_path_factory.mktemp("shell")))
    try:
        term.expect(PROMPT, 60)
        yield term
    finally:
        term.line("quit")
        try:
            term.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        term.close()


def _load(term: Terminal, cgp: str) -> None:
    term.line(f"load cgp {cgp}")
    term.expect(PROMPT, 30)


def _interrupt(term: Terminal, i: int, result: bytes, max_latency: float = 3.0) -> bytes:
    """Ctrl-C after 0.5 or 1 s; the result and the prompt must follow, and the next command must work."""
    time.sleep(0.5 if i % 2 == 0 else 1.0)
    t0 = time.monotonic()
    term.send(b"\x03")
    out = term.expect(result, 15)
    out += term.expect(PROMPT, 15)
    latency = time.monotonic() - t0
    assert latency < max_latency, f"the prompt came back {latency:.2f} s after Ctrl-C"
    assert b"Traceback" not in out and b"error" not in out.lower(), out.decode(errors="replace")
    term.line("info")
    info = term.expect(PROMPT, 15)
    assert b"jobs running" in info and b"error" not in info.lower(), info.decode(errors="replace")
    return out


def test_shell_ctrl_c_peg(shell):
    _load(shell, PEG)
    for i in range(REPEATS):
        shell.line("peg")
        out = _interrupt(shell, i, b"play-draw jobs")
        assert b"stopping" in out and b"(stopped: " in out and b"ordered draws in all" in out


def test_shell_ctrl_c_endgame(shell):
    _load(shell, ENDGAME)
    for i in range(REPEATS):
        shell.line("endgame -plies 8")
        out = _interrupt(shell, i, b" nodes in ")
        assert b"stopping" in out and b"Best move: " in out and b"(stopped;" in out


def test_shell_ctrl_c_sim_foreground(shell):
    _load(shell, MIDGAME)
    for i in range(REPEATS):
        shell.line("sim -fg -plies 5 -iterations 1000000")
        out = _interrupt(shell, i, b"Iterations: ")
        assert b"stopping" in out and b"K9 TAEL" in out and b"(final" in out


def test_shell_ctrl_c_sim_watch(shell):
    _load(shell, MIDGAME)
    for i in range(REPEATS):
        shell.line("sim -plies 5 -iterations 1000000")
        shell.expect(b"simulation started in the background", 15)
        shell.expect(PROMPT, 15)
        shell.line("sim watch")
        out = _interrupt(shell, i, b"Iterations: ")
        assert b"goes on in the background" in out
        shell.line("sim stop")
        out = shell.expect(b"Iterations: ", 10) + shell.expect(PROMPT, 10)
        assert b"(final" in out and b"K9 TAEL" in out


# ------------------------------------------------------------------ 2. the CLI


def _cli_interrupt(tmp_path: Path, args: list[str], ready: bytes, linger: float) -> tuple[float, str]:
    """Run the CLI with stdout to a file and stderr on a terminal (for its progress lines); SIGINT `linger`
    seconds after `ready` appears on stderr. Returns (seconds from SIGINT to exit, stdout)."""
    out_path = tmp_path / "stdout.txt"
    with open(out_path, "wb") as out:
        term = Terminal(_macondo(*args), stdout=out, env=_env(tmp_path))
        try:
            term.expect(ready, 60)
            time.sleep(linger)
            t0 = time.monotonic()
            term.proc.send_signal(signal.SIGINT)
            code = term.proc.wait(10)
            seconds = time.monotonic() - t0
            term.drain()
            err = term.seen.decode(errors="replace")
        finally:
            term.close()
    assert code == 130, err
    assert "Traceback" not in err and "stopping the" in err, err
    return seconds, out_path.read_text()


@needs_nwl20
def test_cli_endgame_sigint_prints_deepest_line(tmp_path):
    seconds, out = _cli_interrupt(tmp_path, ["endgame", ENDGAME, "--plies", "8", "--no-heuristics",
                                             "--threads", "2", "--tt-mb", "64"], b"endgame: depth 2,", 0.3)
    assert seconds < 1.0, f"exit {seconds:.2f} s after SIGINT"
    assert "Best move: " in out and "Best sequence:\n1) " in out
    depth = int(out.split("deepest completed depth ")[1].split()[0])
    assert depth >= 2 and "of 8)" in out


@needs_nwl20
def test_cli_sim_sigint_prints_table(tmp_path):
    seconds, out = _cli_interrupt(tmp_path, ["sim", OPEN_BLANK, "--num-plays", "300", "--plies", "5",
                                             "--iterations", "100000", "--threads", "2"],
                                  b"simulation running", 1.0)
    assert seconds < 1.0, f"exit {seconds:.2f} s after SIGINT"
    assert out.startswith("  #  Play ") and "(final, stopped, " in out and len(out.splitlines()) == 302


@needs_nwl20
def test_cli_peg_sigint_prints_ranking(tmp_path):
    # unlimited nesting: a draw can only be unresolved because the stop cut it, and then it is no verdict
    seconds, out = _cli_interrupt(tmp_path, ["peg", PEG, "--threads", "2", "--tt-mb", "64",
                                             "--max-nested-depth", "-1"], b"pre-endgame running", 1.5)
    assert seconds < 1.0, f"exit {seconds:.2f} s after SIGINT"
    assert "Play " in out and "(stopped: unresolved draws are shown as such)" in out
    assert "(unresolved " not in out and "?: " not in out


# ------------------------------------------------------------------ 3. the engines


def _stop_after(job, delay: float, **kw):
    """Run job.run(**kw) in a thread, stop it after `delay` s; (seconds from stop to return, result)."""
    out: dict = {}

    def run() -> None:
        out["result"] = job.run(**kw)
        out["done"] = time.monotonic()

    th = threading.Thread(target=run)
    th.start()
    time.sleep(delay)
    t0 = time.monotonic()
    job.stop()
    th.join(30)
    assert not th.is_alive()
    return out["done"] - t0, out["result"]


def _sim_job(engine, cgp: str, n_plays: int, plies: int, threads: int):
    from macondo_server.analysis.sim import SimJob, SimOptions

    pos = parse_cgp(cgp)
    texts = [format_move(m.move, pos.ld, pos.board) for m in engine.generate(pos).moves[:n_plays]]
    return SimJob(engine, pos, SimOptions(plies=plies, num_plays=1, plays=texts, iterations=1_000_000,
                                          threads=threads, seed=3))


@needs_nwl20
def test_sim_with_long_iterations_stops_fast(engine):
    job = _sim_job(engine, OPEN_BLANK, 400, 6, 2)
    assert len(job.plays) == 400
    latency, res = _stop_after(job, 1.0)
    assert latency < 0.5, f"stopped {latency:.3f} s after the flag"
    assert res.final and res.stopped_reason == "stopped"
    assert all(p.n == res.iterations for p in res.plays)     # whole iterations only


@needs_nwl20
def test_sim_setup_of_every_legal_play_is_fast(engine):
    pos = parse_cgp(OPEN_BLANK)
    n = len(engine.generate(pos).moves)
    t0 = time.monotonic()
    job = _sim_job(engine, OPEN_BLANK, n, 2, 1)
    assert len(job.plays) == n > 10000
    assert time.monotonic() - t0 < 10


@needs_nwl20
def test_stopped_sim_statistics_are_whole_iterations(engine):
    """A worker stopped in the middle of an iteration has exactly the statistics of a worker that ran only
    the iterations it completed."""
    a = _sim_job(engine, OPEN_BLANK, 150, 6, 1).workers[0]
    b = _sim_job(engine, OPEN_BLANK, 150, 6, 1).workers[0]
    t0 = time.monotonic()
    assert a.run(0, 1, 1) == 1
    one = time.monotonic() - t0            # one iteration's time
    out: dict = {}
    th = threading.Thread(target=lambda: out.setdefault("done", a.run(1, 1, 1000)))
    th.start()
    time.sleep(2.5 * one)                  # in the middle of the third iteration, give or take
    t0 = time.monotonic()
    a.stop = 1
    th.join(30)
    assert time.monotonic() - t0 < 0.5
    done = out["done"]
    assert 0 <= done < 1000
    assert b.run(0, 1, 1 + done) == 1 + done
    assert a.iterations == b.iterations == 1 + done
    assert a.cut_iterations == 1           # the stop did cut an iteration in the middle
    assert a.stats() == b.stats()


@needs_nwl20
def test_endgame_stop_returns_deepest_completed_line(engine):
    from macondo_server.analysis.endgame import EndgameJob, EndgameOptions

    job = EndgameJob(engine, parse_cgp(ENDGAME), EndgameOptions(plies=8, threads=2, heuristics=False,
                                                                 tt_megabytes=64))
    depths: list = []
    reached = threading.Event()

    def progress(r) -> None:
        depths.append(r)
        if r.depth >= 2:
            reached.set()

    out: dict = {}
    th = threading.Thread(target=lambda: out.setdefault("r", job.run(progress)))
    th.start()
    assert reached.wait(60)
    time.sleep(0.2)
    t0 = time.monotonic()
    job.stop()
    th.join(30)
    latency = time.monotonic() - t0
    assert latency < 0.5, f"stopped {latency:.3f} s after the flag"
    res = out["r"]
    last = depths[-1]
    assert not res.complete and res.depth == last.depth >= 2
    assert [m.text for m in res.line] == [m.text for m in last.line] and res.value == last.value


@needs_nwl20
def test_endgame_stop_during_depth_one_keeps_a_move(engine):
    """With greedy playouts depth 1 takes a good part of a second here (seconds before the endgame speed-ups):
    a stop during it still ends the solve within half a second (a 0.3 s grace for depth 1), with the best root
    move searched so far (depth 0), or depth 1 if it finished within the grace."""
    from macondo_server.analysis.endgame import EndgameJob, EndgameOptions

    job = EndgameJob(engine, parse_cgp(ENDGAME), EndgameOptions(plies=8, threads=2, heuristics=True,
                                                                 tt_megabytes=64))
    latency, res = _stop_after(job, 0.05)
    assert latency < 0.5 + 0.1
    assert not res.complete and res.depth <= 1 and res.line and res.best_move is not None


@needs_nwl20
def test_peg_stop_is_fast_and_records_no_cut_draws(engine):
    from macondo_server.analysis.peg.job import PegJob
    from macondo_server.analysis.peg.options import PegOptions

    # unlimited nesting: a draw can only be unresolved because the stop cut it
    job = PegJob(engine, parse_cgp(PEG), PegOptions(threads=2, tt_megabytes=64, max_nested_depth=-1))
    latency, res = _stop_after(job, 1.5)
    assert latency < 0.5, f"stopped {latency:.3f} s after the flag"
    assert not res.complete
    assert all(p.unresolved == 0 for p in res.plays)
    assert res.done_jobs == sum(g.outcome is not None for p in res.plays for g in p.groups)
