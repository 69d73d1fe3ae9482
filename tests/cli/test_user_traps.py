"""User traps of the command line: options accepted in one place only, errors that do not say what to do, a
Ctrl-C'd run that looks like a success, a default lexicon used without a word."""

from __future__ import annotations

import argparse
import json

import pytest

from macondo_server.cli import build_parser, main

from conftest import needs_nwl20

EMPTY = "/".join(["15"] * 15)

# commands that read nothing from the data directories (lexica, letter distributions, layouts), so take no --data-dir
NO_LEXICON = {("proto-path",)}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of every leaf command."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _commands(child, (*path, name))


def test_every_lexicon_command_takes_data_dir_after_the_command_too():
    leaves = dict(_commands(build_parser()))
    assert {"gen", "peg", "sim", "endgame", "infer", "serve", "shell", "bots"} <= {p[0] for p in leaves}
    for path, parser in leaves.items():
        options = {s for a in parser._actions for s in a.option_strings}
        if path in NO_LEXICON:
            assert "--data-dir" not in options, path
            continue
        assert "--data-dir" in options, f"macondo {' '.join(path)} does not take --data-dir"
        action = next(a for a in parser._actions if "--data-dir" in a.option_strings)
        # not given after the command, the global option stands
        assert action.default is argparse.SUPPRESS, path


@pytest.mark.parametrize("argv", [
    ["gen", "CGP"], ["peg", "CGP"], ["sim", "CGP"], ["endgame", "CGP"], ["infer", "CGP", "8G QI"],
    ["commit", "CGP", "pass"], ["load", "x.gcg"], ["analyze", "x.gcg"], ["autoplay"], ["leaves", "train", "--out", "o"],
    ["lexicon", "check", "QI"], ["lexicon", "list"], ["serve"], ["shell"], ["bots"],
])
def test_data_dir_before_or_after_the_command(argv):
    p = build_parser()
    assert p.parse_args([*argv, "--data-dir", "/after"]).data_dir == "/after"
    assert p.parse_args(["--data-dir", "/before", *argv]).data_dir == "/before"
    assert p.parse_args(argv).data_dir is None
    # both: the one after the command wins
    assert p.parse_args(["--data-dir", "/before", *argv, "--data-dir", "/after"]).data_dir == "/after"


def test_gen_with_data_dir_after_the_command(capsys, tmp_path):
    words = tmp_path / "w.txt"
    words.write_text("QI\nQIS\nAT\n")
    assert main(["lexicon", "build", str(words), "-o", str(tmp_path / "TINY.kwg")]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "gen", f"{EMPTY} AEINQST/ 0/0 0", "--lexicon", "TINY", "--data-dir", str(tmp_path),
                         "-n", "1")
    assert code == 0, err
    assert "QI" in out and "lexicon TINY" in out
    code, out, err = run(capsys, "lexicon", "list", "--data-dir", str(tmp_path))
    assert code == 0 and "TINY" in out.split()


def test_unknown_lexicon_says_how_to_add_one(capsys):
    code, _, err = run(capsys, "lexicon", "check", "--lexicon", "NOPE", "QI")
    assert code == 1 and len(err.splitlines()) == 1
    assert "unknown lexicon 'NOPE' (available:" in err
    for hint in ("NAME.kwg", "NAME.txt", "NAME.klv2", "--data-dir", "MACONDO_DATA_DIR"):
        assert hint in err


def test_serve_web_prints_the_board_url_and_the_grpc_address():
    import os
    import re
    import signal
    import subprocess
    import sys
    import threading
    import urllib.request

    from macondo_server.api.connect import WEB_DIR

    if not (WEB_DIR / "index.html").is_file():
        pytest.skip("the web board is not built here (`python3 dev.py install` builds it)")
    proc = subprocess.Popen([sys.executable, "-m", "macondo_server", "serve", "--port", "0", "--web",
                             "--http-port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "web board at" in line:
                found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert found.wait(60), "".join(lines)
        text = "".join(lines)
        assert re.search(r"^macondo: gRPC server at 127\.0\.0\.1:\d+ ", text, re.M), text
        url = re.search(r"^macondo: web board at (http://127\.0\.0\.1:\d+/) ", text, re.M)
        assert url, text
        with urllib.request.urlopen(url.group(1), timeout=10) as resp:
            assert resp.status == 200
        assert "serving host=" in text          # the log lines are kept
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_server_address_for_wildcards_and_ipv6():
    from macondo_server.api.grpc_server import address

    assert address("127.0.0.1", 80) == "127.0.0.1:80"
    assert address("0.0.0.0", 80) == "127.0.0.1:80"
    assert address("::", 80) == "[::1]:80"
    assert address("[::1]", 80) == "[::1]:80"
    assert address("localhost", 8080) == "localhost:8080"


def _ctrl_c_once_the_job_runs() -> None:
    """SIGINT this process as soon as run_interruptible has its handler in place (not before: that would be
    a plain KeyboardInterrupt)."""
    import os
    import signal
    import threading
    import time

    original = signal.getsignal(signal.SIGINT)

    def fire() -> None:
        deadline = time.monotonic() + 30
        while signal.getsignal(signal.SIGINT) is original and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=fire, daemon=True).start()


def test_a_run_stopped_by_ctrl_c_prints_its_result_and_exits_130(capsys):
    _ctrl_c_once_the_job_runs()
    code, out, err = run(capsys, "autoplay", "--games", "100000000", "--threads", "1", "--json")
    assert "stopping the autoplay" in err and "Traceback" not in err
    assert json.loads(out)["games"] < 100000000      # the result so far is printed
    assert code == 130
    # the next command in the same process is not taken for stopped
    code, _, _ = run(capsys, "lexicon", "check", "QI")
    assert code == 0


# an endgame after aZOIC and a pass: the mover holds two tiles, the bag is empty
EMPTY_BAG_SHORT_RACK = (
    "14B/14I/2a9ADD/2Z9NAE/2O5FLICKS1/1QI4ROO2UH1/MIC1D1BARRETS2/A2TORII2N1HUN/LUXATED3G4/L3T1EMOJI4/O2OY5R4/"
    "W2G6TE3/3E2FOE2P3/3E1WANT2E3/NUtSIER3PEAVY LS/AAEGINV 451/261 1 lex NWL20;"
)


@needs_nwl20
def test_peg_on_an_empty_bag_blames_the_bag_not_the_rack(capsys):
    for cgp in (EMPTY_BAG_SHORT_RACK, EMPTY_BAG_SHORT_RACK.replace("LS/AAEGINV", "LS/")):
        code, out, err = run(capsys, "peg", cgp)
        assert code == 1 and out == "" and len(err.splitlines()) == 1, err
        assert "the bag is empty" in err and "1 to 6 tiles in the bag" in err and "macondo endgame" in err
        assert "must hold 7 tiles" not in err
    # a full bag is still a bag problem, a short rack with tiles in the bag still a rack problem
    code, _, err = run(capsys, "peg", f"{EMPTY} AEINQST/ 0/0 0")
    assert code == 1 and "the bag must hold 1 to 6 tiles for a pre-endgame, not 86" in err
    code, _, err = run(capsys, "peg", f"{EMPTY} AEINQS/ 0/0 0")
    assert code == 1 and "the player on turn must hold 7 tiles, not 6" in err


NO_PRAGMA_GCG = "#player1 a A\n#player2 b B\n>a: AEINQST 8G QI +22 22\n"


def _no_lexicon_warning(err: str) -> None:
    lines = [line for line in err.splitlines() if "no #lexicon line" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("macondo: warning: ") or lines[0].startswith("warning: ")
    assert "the default lexicon SCOWL70" in lines[0] and "--lexicon" in lines[0]


def test_gcg_without_lexicon_pragma_warns_which_lexicon_is_used(capsys, tmp_path):
    gcg = tmp_path / "g.gcg"
    gcg.write_text(NO_PRAGMA_GCG)
    code, out, err = run(capsys, "load", str(gcg))
    assert code == 0 and "events replayed: 1/1" in out
    _no_lexicon_warning(err)
    code, out, err = run(capsys, "load", str(gcg), "--json")
    assert code == 0 and any("no #lexicon line" in w for w in json.loads(out)["warnings"])
    code, out, err = run(capsys, "infer", "--gcg", str(gcg), "--json")
    assert code == 0, err
    _no_lexicon_warning(err)
    code, out, err = run(capsys, "analyze", str(gcg), "--sim-iterations", "2", "--sim-plays", "1", "--threads", "1",
                         "--json")
    assert code == 0, err
    _no_lexicon_warning(err)
    # a lexicon named: no warning
    code, out, err = run(capsys, "load", str(gcg), "--lexicon", "SCOWL70")
    assert code == 0 and "no #lexicon" not in err
    gcg.write_text("#lexicon SCOWL70\n" + NO_PRAGMA_GCG)
    code, out, err = run(capsys, "infer", "--gcg", str(gcg))
    assert code == 0 and "no #lexicon" not in err
