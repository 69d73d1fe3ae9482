"""Clients: the typed Python client, the shell driven as a user would (scripted stdin and a pseudo-terminal),
the bot harness against a live server (the TypeScript client: tests/api/test_connect_node.py)."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import time

import pytest
from macondo_client import Client, InvalidArgument, NotFound, Unavailable
from macondo_client.bots import Bot, derive_seed, run_bots
from macondo_client.shell import SIM_FLAGS, ShellError, parse_flags, run_shell

from macondo_server.cli import main as cli_main
from macondo_server.model.gcg import parse_gcg

from conftest import CASES_DIR, SHARED, load_cases, needs_cases, needs_nwl20

EMPTY = "/".join(["15"] * 15)
START = f"{EMPTY} AEINQST/ 0/0 0"


def _case(case_id: str) -> dict:
    for kind in ("peg", "endgame"):
        for case in load_cases(kind):
            if case["id"] == case_id:
                return case
    pytest.skip(f"case {case_id} absent")


# ------------------------------------------------------------------ typed client


def test_client_generate_and_errors(client):
    resp = client.generate(START, num_plays=3)
    assert [m.notation for m in resp.moves][:1] == ["8G QI"] or resp.moves[0].score >= 22
    assert len(resp.moves) == 3
    with pytest.raises(InvalidArgument) as err:
        client.generate("not a cgp")
    assert "CGP" in err.value.message and err.value.reason == "INVALID_ARGUMENT"
    with pytest.raises(NotFound) as err:
        client.generate(START, lexicon="NOSUCHLEX")
    assert "NOSUCHLEX" in err.value.message
    with pytest.raises(ValueError, match="unknown option"):
        client.simulate(START, iterationz=5)


def test_client_unreachable_server():
    with pytest.raises(Unavailable, match="cannot reach"):
        Client("127.0.0.1:1", connect_timeout=0.5)


def test_client_stream_stop_returns_best_so_far(client):
    stream = client.simulate(START, iterations=1_000_000, threads=1, seed=3, num_plays=4)
    seen = 0
    t0 = time.monotonic()
    for snap in stream:
        seen += 1
        if seen == 2:
            stream.stop()
        if snap.final:
            break
    assert snap.final and snap.stopped and snap.iterations > 0
    assert time.monotonic() - t0 < 10
    assert stream.job_id and stream.latest is snap


def test_client_game_session_from_cgp_and_tile_order(client):
    cgp = f"{EMPTY} AEINQST/ 0/0 0 lex SCOWL70;"
    state = client.create_game(cgp=cgp, seed=5)
    assert state.rack == "AEINQST" and state.bag_count == 86 and "AEINQST" in state.display
    # a draw order for the whole bag: unseen (93) less a full opponent rack
    unseen = state.unseen
    order = unseen[:86]
    after = client.play_move(state.game_id, "8G QI", tile_order=order)
    assert after.on_turn == 1 and after.scores[0] == 22
    # the opponent holds the unseen tiles not in the order, and the mover drew the first two of it
    assert sorted(after.rack) == sorted(unseen[86:])
    with pytest.raises(InvalidArgument, match="tile order"):
        client.play_move(state.game_id, "pass", tile_order="QQQ")
    assert client.delete_game(state.game_id)


# ------------------------------------------------------------------ shell


def _shell(client, script: str) -> str:
    out = io.StringIO()
    run_shell(client, stdin=io.StringIO(script), stdout=out)
    return out.getvalue()


def test_parse_flags():
    pos, opts = parse_flags(["-plies", "3", "-play", "8G QI", "-play", "exch Q", "-stop", "99"], SIM_FLAGS)
    assert pos == [] and opts == {"plies": 3, "plays": ["8G QI", "exch Q"], "stop": 99}
    with pytest.raises(ShellError, match="unknown flag -bogus"):
        parse_flags(["-bogus", "1"], SIM_FLAGS)
    with pytest.raises(ShellError, match="whole number"):
        parse_flags(["-plies", "x"], SIM_FLAGS)


def test_shell_errors_never_end_the_session(client):
    text = _shell(client, "gen\nbogus\nload cgp nonsense\ncommit\nload gcg /no/such.gcg\nset lexicon NOPE\n"
                          "help gen\nsim stop\nquit\n")
    assert "no position loaded" in text
    assert "unknown command 'bogus'" in text
    assert "error: CGP" in text or "error: " in text.split("load cgp nonsense")[1].splitlines()[1]
    assert "no such file" in text and "unknown lexicon 'NOPE'" in text
    assert "Generate every legal move" in text and "no simulation" in text
    assert "Traceback" not in text


@needs_nwl20
@needs_cases
def test_shell_reference_positions_gen_commit_tileorder(client):
    pond = _case("peg-doc1-pond-nwl20")
    text = _shell(client, f"load cgp {pond['cgp']}\ngen 5\ncommit 2L P.ND -tileorder IIIA\nshow\nquit\n")
    assert "DEFNNPT" in text and "bag 4 tiles" in text
    gen_part = text.split("gen 5")[1]
    assert "legal moves" in gen_part
    after = text.split("commit 2L P.ND -tileorder IIIA")[1]
    # we drew I, I, I; A stays in the bag; the opponent (now on turn) holds the rest
    assert "AEGRSTU" in after and "bag 1 tiles" in after and "408" in after
    assert "last move: player1 2L P(O)ND (14)" in after.split("macondo> show")[1] or "P(O)ND" in after


@needs_nwl20
@needs_cases
def test_shell_peg_and_endgame(client):
    onyx = _case("peg-onyx-nwl20")
    text = _shell(client, f"load cgp {onyx['cgp']}\npeg -endgameplies 3 -early-cutoff -threads 2\n"
                          "commit 13L ONYX -tileorder Y\nendgame -plies 2\nquit\n")
    peg = text.split("peg -endgameplies")[1]
    assert "Winner: 13L ONYX" in peg and "7.5" in peg.split("13L ONYX", 2)[2].splitlines()[0]
    eg = text.split("endgame -plies 2")[1]
    assert "Best sequence has a spread difference" in eg and "Best move:" in eg


def test_shell_sim_background_stop_show(client):
    text = _shell(client, "new -seed 11\nsim -iterations 100000 -seed 2 -threads 1 -num-plays 4\nsim show\n"
                          "sim stop\nsim details\nsim -iterations 64 -seed 2 -threads 1 -num-plays 3\nsim watch\n"
                          "quit\n")
    assert "simulation started in the background" in text
    stopped = text.split("macondo> sim stop")[1]
    assert "Play" in stopped and "Iterations:" in stopped and "final" in stopped
    details = text.split("macondo> sim details")[1]
    assert "ply 1: mean score" in details
    watched = text.split("macondo> sim watch")[1]
    assert "Iterations: 64 (final" in watched


@needs_nwl20
def test_shell_sim_maxtime_and_endgame_maxtime_use_the_time(client):
    t0 = time.monotonic()
    text = _shell(client, "new -seed 11\nsim -fg -maxtime 2 -threads 1 -num-plays 3\nquit\n")
    elapsed = time.monotonic() - t0
    assert 1.5 <= elapsed < 4, elapsed
    line = next(x for x in text.splitlines() if x.startswith("Iterations:"))
    assert "(final, time limit, " in line
    text = _shell(client, "new -seed 11\nsim -fg -threads 1 -num-plays 2 -plies 1 -iterations 64\nquit\n")
    assert "Iterations: 64 (final, iterations cap 64, " in text
    canik = _case("eg-canik-nwl20")
    text = _shell(client, f"load cgp {canik['cgp']}\nendgame -maxtime 3 -threads 1\nendgame -threads 1\nquit\n")
    timed = text.split("endgame -maxtime 3")[1].split("macondo> endgame -threads 1")[0]
    depth = next(x for x in timed.splitlines() if x.startswith("depth "))
    assert int(depth.split()[1].rstrip(",")) > 4 and ("(solved" in depth or "(time limit" in depth), depth
    plain = text.split("macondo> endgame -threads 1")[1]
    assert "depth 4," in plain and "(plies cap 4 (default))" in plain


def test_shell_gcg_load(client):
    gcg = CASES_DIR / "gcg" / "success_standard.gcg"
    if not gcg.is_file() or not (SHARED / "lexica" / "CSW21.txt").is_file():
        pytest.skip("shared GCG or CSW21 absent")
    text = _shell(client, f"load gcg {gcg} -turn 6\nshow\nload {gcg}\nquit\n")
    assert "HastyBot" in text and "last move: RightBehindYou" in text
    assert "game over" in text.split(f"load {gcg}\n")[-1]


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals")
def test_shell_in_a_pseudo_terminal(server, tmp_path):
    """A user at a terminal: prompt, tab completion, history file, Ctrl-D to leave."""
    env = dict(os.environ, MACONDO_HISTORY=str(tmp_path / "hist"), TERM="dumb")
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "macondo_server", "shell", "--server", f"127.0.0.1:{server.port}"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    fd = master
    out = b""

    def read_until(marker: bytes, timeout: float = 60.0, count: int = 1) -> bytes:
        nonlocal out
        end = time.monotonic() + timeout
        while out.count(marker) < count and time.monotonic() < end:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
        return out

    try:
        read_until(b"macondo> ")
        os.write(fd, b"new -se\t 4\r")          # tab completes -seed
        read_until(b"bag 86 tiles")
        read_until(b"macondo> ", 60, count=2)
        os.write(fd, b"ge\t 2\r")               # tab completes gen
        read_until(b"macondo> ", 60, count=3)
        os.write(fd, b"\x04")                   # Ctrl-D at the prompt leaves
        proc.wait(30)
    finally:
        try:
            status = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = -1
        os.close(fd)
    text = out.decode("utf-8", "replace")
    assert "macondo shell" in text and "bag 86 tiles" in text and "legal moves" in text
    assert status == 0
    assert "gen 2" in (tmp_path / "hist").read_text()


# ------------------------------------------------------------------ bots


def test_bots_ten_seeded_games_replay_identically(client, tmp_path):
    sim = "sim:iterations=8,num_plays=3,plies=1,endgame_plies=2,threads=1"
    bots = (Bot("bot1", client, "static"), Bot("bot2", client, sim))
    res1, sum1 = run_bots(client, bots, 10, seed=4, gcg_dir=str(tmp_path / "a"))
    res2, sum2 = run_bots(client, bots, 10, seed=4)
    assert sum1.games == 10 and sum1.wins[0] + sum1.wins[1] + sum1.draws == 10
    assert sum1.strategies == ("static", sim)
    assert [(r.scores, r.moves) for r in res1] == [(r.scores, r.moves) for r in res2]
    timing = {"seconds": 0, "move_seconds": 0}          # wall times differ from run to run
    assert sum1.to_json() | timing == sum2.to_json() | timing
    assert {r.first for r in res1} == {0, 1}
    # each game's GCG replays to the reported scores
    for r in res1[:3]:
        record = parse_gcg((tmp_path / "a" / f"game-{r.index + 1:04d}.gcg").read_text())
        first_name = "bot1" if r.first == 0 else "bot2"
        assert record.players[0][0] == first_name
        cum = {}
        for ev in record.events:
            cum[ev.nick] = ev.cumulative
        assert (cum["bot1"], cum["bot2"]) == r.scores
    assert derive_seed(4, 1) != derive_seed(4, 2)


def test_bots_cli_two_strategies(server, capsys):
    addr = f"127.0.0.1:{server.port}"
    rc = cli_main(["bots", "--server", addr, "--server2", addr, "--games", "2", "--seed", "3",
                   "--strategy2", "sim:iterations=16,num_plays=3,plies=1", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["games"] == 2 and doc["strategies"] == ["static", "sim:iterations=16,num_plays=3,plies=1"]
    assert 0 <= doc["win_rate"] <= 1 and len(doc["results"]) == 2
    assert cli_main(["bots", "--server", addr, "--strategy1", "greedy"]) == 1
    assert "unknown strategy 'greedy'" in capsys.readouterr().err


# (the TypeScript client under Node, over Connect, gRPC-Web and gRPC: tests/api/test_connect_node.py)


@needs_cases
def test_eventuality_over_grpc_and_in_the_shell(client):
    axe = _case("peg-axe-2bag-csw21")
    final = client.solve_pre_endgame(axe["cgp"], only_solve=["6F .X."], endgame_plies=2, eventuality="IE").result()
    assert final.final and final.eventuality.endswith("verdict: LOSS") and "the decisive reply" in final.eventuality
    with pytest.raises(InvalidArgument, match="the bag holds 2"):
        client.solve_pre_endgame(axe["cgp"], eventuality="I").result()
    text = _shell(client, f"load cgp {axe['cgp']}\npeg -only-solve \"6F .X.\" -endgameplies 2 -eventuality EI\nquit\n")
    assert "Eventuality EI" in text and "verdict: WIN" in text
