"""The game clock over the API (the CGP's tmr op, time charged to the mover, the overtime penalty in the score
and the record), EngineMove's strategies and levels, and the `bots` arena: seeded pairs with seats swapped,
the report by phase and time, and another engine through an adapter process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import grpc
import pytest
from macondo_client import MacondoError
from macondo_client.bots import Bot, CommandBot, GameResult, MoveRecord, clock_of, run_bots, summarize

from conftest import needs_nwl20

EMPTY = "/".join(["15"] * 15)


@needs_nwl20
def test_a_timed_game_carries_its_clock(client) -> None:
    state = client.create_game(lexicon="NWL20", seed=2, clock_seconds=300)
    mine, theirs = state.clock_remaining
    assert 299.0 < mine <= 300.0 and theirs == 300.0 and state.overtime_penalty == 10
    seen = clock_of(state.cgp)
    assert seen is not None and abs(seen - mine) < 0.01 and "/300000;" in state.cgp
    after = client.engine_move(state.game_id, "expert")
    assert after.phase == "static"
    left = list(after.game.clock_remaining)
    assert left[0] < 300.0 and 299.0 < left[1] <= 300.0
    later = list(client.get_game(state.game_id).clock_remaining)
    assert later[0] == left[0] and later[1] <= left[1]   # the time of the player on turn runs, only theirs
    # the CGP names the player on turn's clock first
    assert after.game.cgp.split("tmr ")[1].startswith(f"{round(left[1] * 1000)}/")
    untimed = client.create_game(lexicon="NWL20", seed=2)
    assert not untimed.clock_remaining and "tmr" not in untimed.cgp


@needs_nwl20
def test_time_over_costs_points_at_the_end(client) -> None:
    """A position where the player on turn is 61 s over and goes out: 2 minutes or part of one, 10 each."""
    game = client.create_game(lexicon="NWL20", seed=5)
    while not game.game_over and game.bag_count > 0:
        game = client.engine_move(game.game_id, "expert").game
    assert not game.game_over
    full = client.create_game(lexicon="NWL20", cgp=game.cgp.replace(";", "; tmr -61000/5000;", 1)
                              if "tmr" not in game.cgp else game.cgp, seed=1)
    assert list(full.clock_remaining)[0] < -60.9
    before = list(full.scores)
    end = full
    while not end.game_over:
        end = client.engine_move(end.game_id, "expert").game
    assert list(end.time_penalties) == [20, 0]
    assert any(e.type == "time_penalty" and e.score == -20 for e in end.events)
    assert before  # (the scores moved with the moves; the penalty is in the final score)
    totals = {e.player: e.cumulative for e in end.events}
    assert totals[0] == end.scores[0]


@needs_nwl20
def test_a_bad_clock_or_strategy_is_invalid_argument(client) -> None:
    with pytest.raises(MacondoError) as err:
        client.create_game(lexicon="NWL20", clock_seconds=-5)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and "clock" in err.value.message
    with pytest.raises(MacondoError) as err:
        client.create_game(lexicon="NWL20", cgp=f"{EMPTY} AEINQST/ 0/0 0 tmr 5;")
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and "tmr" in err.value.message
    game = client.create_game(lexicon="NWL20", seed=1)
    with pytest.raises(MacondoError) as err:
        client.engine_move(game.game_id, "grandmaster")
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "beginner" in err.value.message and "champion" in err.value.message


@needs_nwl20
def test_game_pairs_share_their_tiles_with_seats_swapped(server) -> None:
    from macondo_client import Client

    with Client(f"127.0.0.1:{server.port}") as c:
        bots = (Bot("bot1", c, "expert"), Bot("bot2", c, "club"))
        results, summary = run_bots(c, bots, 4, seed=9, lexicon="NWL20", parallel=2)
    assert [r.index for r in results] == [0, 1, 2, 3] and [r.first for r in results] == [0, 1, 0, 1]
    for a, b in ((results[0], results[1]), (results[2], results[3])):
        # the first player's first rack is the same in both games of a pair
        assert _first_rack(a.gcg) == _first_rack(b.gcg)
    assert _first_rack(results[0].gcg) != _first_rack(results[2].gcg)
    assert summary.games == 4 and sum(summary.wins) + summary.draws == 4
    assert summary.move_seconds[0]["moves"] == sum(1 for r in results for m in r.records if m.bot == 0)
    assert set(summary.by_phase) <= {"early", "pre-endgame", "endgame", "drawn"}
    assert sum(int(v["games"]) for v in summary.by_phase.values()) == 4


def test_an_engine_move_may_outlast_the_unary_deadline(server) -> None:
    """A move on a tournament clock can take minutes: EngineMove is a job, so neither the client's deadline for
    quick calls nor a fixed one in the arena cuts it short (only the mover's clock plus a grace does)."""
    import time

    from macondo_client import Client

    with Client(f"127.0.0.1:{server.port}") as setup:
        games = [setup.create_game(seed=5).game_id for _ in range(2)]   # (the first loads the lexicon)
        timed = setup.create_game(seed=6, clock_seconds=30)
    with Client(f"127.0.0.1:{server.port}", timeout=0.4) as c:
        t0 = time.monotonic()
        r = c.engine_move(games[0], "sim:max_time=1.2,stop=none,iterations=100000")
        assert time.monotonic() - t0 > 0.8 and r.phase == "sim"
        # a deadline given is still one: the server answers within it (DEADLINE_EXCEEDED otherwise), with its
        # best so far
        t0 = time.monotonic()
        r = c.engine_move(games[1], "sim:max_time=3,stop=none,iterations=100000", timeout=1.5)
        assert time.monotonic() - t0 < 1.5 and r.phase == "sim"
        played = Bot("bot1", c, "sim:stop=none").choose(timed.cgp, 6, 86, clock=30.0)
        assert played.seconds > 0.8 and played.phase == "sim"


def _first_rack(gcg: str) -> str:
    line = next(x for x in gcg.splitlines() if x.startswith(">"))
    return line.split()[1]


def test_decided_in_is_the_last_lead_change() -> None:
    def rec(bag: int, spread: int) -> MoveRecord:
        return MoveRecord(0, "x", bag, "", 0.1, spread)

    never_behind = GameResult(0, 0, (400, 300), 3, "standard", "", records=[rec(80, 10), rec(70, 5), rec(0, 100)])
    assert never_behind.decided_in == "early"
    late = GameResult(0, 0, (400, 390), 3, "standard", "", records=[rec(80, 10), rec(4, -20), rec(0, 10)])
    assert late.decided_in == "endgame"
    peg = GameResult(0, 0, (300, 400), 3, "standard", "", records=[rec(80, 10), rec(3, -5), rec(0, -100)])
    assert peg.decided_in == "pre-endgame"
    s = summarize([never_behind, late, peg], 1.0, ("a", "b"))
    assert s.by_phase["early"]["win_rate"] == 1.0 and s.by_phase["pre-endgame"]["win_rate"] == 0.0


ADAPTER = textwrap.dedent("""
    import json, sys
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("quit"):
            break
        if "{mode}" == "garbage":
            print("not json", flush=True)
        else:
            assert req["seconds"] > 0 and "tmr" in req["cgp"]
            print(json.dumps({{"move": "pass"}}), flush=True)
""")


@needs_nwl20
def test_another_engine_through_an_adapter(client, tmp_path) -> None:
    script = tmp_path / "adapter.py"
    script.write_text(ADAPTER.format(mode="pass"))
    adapter = CommandBot("bot2", f"{sys.executable} {script}")
    try:
        results, summary = run_bots(client, (Bot("bot1", client, "expert"), adapter), 2, seed=3, lexicon="NWL20",
                                    clock=120)
    finally:
        adapter.close()
    # a bot that only passes loses both games of the pair
    assert summary.wins == (2, 0) and summary.strategies[1].startswith("adapter")
    bad = tmp_path / "bad.py"
    bad.write_text(ADAPTER.format(mode="garbage"))
    broken = CommandBot("bot2", f"{sys.executable} {bad}")
    try:
        with pytest.raises(MacondoError) as err:
            run_bots(client, (Bot("bot1", client, "expert"), broken), 2, seed=3, lexicon="NWL20")
    finally:
        broken.close()
    # garbage every time: asked again after each of its 2 restarts, then the run ends naming the failure
    assert "not JSON" in err.value.message and "after 2 restarts" in err.value.message
    assert broken.restarts == 2
    with pytest.raises(MacondoError) as err:
        CommandBot("x", "/no/such/adapter").choose(f"{EMPTY} AEINQST/ 0/0 0", 1, 86)
    assert "cannot start the adapter" in err.value.message


SLOW = textwrap.dedent("""
    import json, sys, time
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("quit"):
            break
        time.sleep(req["seconds"] * 0.8)    # thinks for most of its budget, as a bot on a clock does
        print(json.dumps({"move": "pass"}), flush=True)
""")


def test_an_adapter_is_waited_for_its_whole_budget(tmp_path) -> None:
    """`timeout` is the least wait for an answer: a move with a longer budget (a long clock) gets that budget
    and a grace, so a bot thinking as long as it may is not taken for a silent one."""
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    adapter = CommandBot("bot2", f"{sys.executable} {script}", move_time=1.5, timeout=0.5, retries=0)
    try:
        played = adapter.choose(f"{EMPTY} AEINQST/ 0/0 0", 1, 86)
    finally:
        adapter.close()
    assert played.notation == "pass" and played.seconds > 1.0 and adapter.restarts == 0


FLAKY = textwrap.dedent("""
    import json, os, sys
    marker = sys.argv[1]
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("quit"):
            break
        if not os.path.exists(marker):      # the first adapter dies at its first question
            open(marker, "w").close()
            sys.exit(3)
        print(json.dumps({"move": "pass"}), flush=True)
""")


@needs_nwl20
def test_a_failing_adapter_is_restarted_and_asked_again(client, tmp_path, capsys) -> None:
    script = tmp_path / "flaky.py"
    script.write_text(FLAKY)
    adapter = CommandBot("bot2", f"{sys.executable} {script} {tmp_path / 'died'}")
    try:
        results, summary = run_bots(client, (Bot("bot1", client, "expert"), adapter), 2, seed=3, lexicon="NWL20")
    finally:
        adapter.close()
    assert summary.games == 2 and summary.wins == (2, 0) and adapter.restarts == 1
    assert "bot2: the adapter adapter: " in capsys.readouterr().err
    # a run's report counts the restarts
    (tmp_path / "died").unlink()
    out = subprocess.run([sys.executable, "-m", "macondo_server", "bots", "--strategy1", "expert", "--command2",
                          f"{sys.executable} {script} {tmp_path / 'died'}", "--games", "2", "--lexicon", "NWL20",
                          "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["adapter_restarts"] == [0, 1] and "restarting the adapter" in out.stderr
    # none allowed: the first failure ends the run
    (tmp_path / "died").unlink()
    none = CommandBot("bot2", f"{sys.executable} {script} {tmp_path / 'died'}", retries=0)
    try:
        with pytest.raises(MacondoError) as err:
            run_bots(client, (Bot("bot1", client, "expert"), none), 2, seed=3, lexicon="NWL20")
    finally:
        none.close()
    assert "after 0 restarts" in err.value.message and none.restarts == 0


@needs_nwl20
def test_bots_command_reports_clock_and_phases(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "macondo_server", "bots", "--strategy1", "expert", "--strategy2",
                          "novice", "--games", "2", "--lexicon", "NWL20", "--clock", "60", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["games"] == 2 and doc["overtime_games"] == [0, 0]
    assert doc["move_seconds"][0]["moves"] > 0 and "p95" in doc["move_seconds"][1]
    assert all("decided_in" in r for r in doc["results"])
    bad = subprocess.run([sys.executable, "-m", "macondo_server", "bots", "--strategy1", "grandmaster"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "champion" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_the_bot_sees_the_record_without_the_opponents_racks() -> None:
    from macondo_client.bots import honest_record

    gcg = ("#player1 ann Ann\n#player2 bob Bob\n#rack1 EGLMRSV\n#rack2 AADGNTT\n"
           ">ann: AEHJLOR 8G HAJ +26 26\n>bob: AACCEIU J5 ACAI +26 26\n>ann: DELOOPR -OO +0 26\n"
           ">bob: CDEOPTU - +0 26\n")
    for_bob = honest_record(gcg, 1)
    assert "AEHJLOR" not in for_bob and "DELOOPR" not in for_bob and "EGLMRSV" not in for_bob
    assert ">ann: 8G HAJ +26 26" in for_bob and ">ann: -OO +0 26" in for_bob
    assert "AACCEIU" in for_bob and "#rack2 AADGNTT" in for_bob
    for_ann = honest_record(gcg, 0)
    assert "AACCEIU" not in for_ann and "CDEOPTU" not in for_ann and "AADGNTT" not in for_ann
    assert ">bob: - +0 26" in for_ann and "#rack1 EGLMRSV" in for_ann


@needs_nwl20
def test_an_inferring_bot_weighs_the_opponents_earlier_turns(server) -> None:
    """`infer=1` hands the simulation the opponent's earlier turns since their last exchange, as the mover's
    record shows them, besides their last play."""
    from macondo_client import Client
    from macondo_client.bots import honest_record

    from macondo_server.api.sessions import _history

    with Client(f"127.0.0.1:{server.port}") as client:
        gid = client.create_game(lexicon="NWL20", seed=5).game_id
        for _ in range(7):
            client.engine_move(gid, "static")
        whole = client.get_game(gid)
        theirs = [h.move for h in whole.history if h.player == 0]     # the opponent of the player on turn
        assert whole.on_turn == 1 and len(theirs) == 4 and all(m.tiles_played > 0 for m in theirs)
        state = client.create_game(gcg=honest_record(client.export_game(gid), 1), seed=3)
        session = server.servicer.sessions.get(state.game_id)
        history = _history(session)
        # the earlier turns, oldest first; the last one is the play inferred from, not part of the history
        assert [t.text for t in history] == [m.display.strip() for m in theirs[:-1]]
        assert all(len(t.before.racks[1]) == 0 for t in history)      # the opponent's racks never seen
        r = client.engine_move(state.game_id, "sim:infer=1,iterations=20,num_plays=3")
        assert r.phase == "sim"


@needs_nwl20
def test_the_shell_lets_the_engine_play(client) -> None:
    import io

    from macondo_client.shell import run_shell

    out = io.StringIO()
    run_shell(client, stdin=io.StringIO("set lexicon NWL20\nnew\naiplay club\naiplay best:max_time=1\n"
                                        "aiplay grandmaster\n"), stdout=out)
    text = out.getvalue()
    assert "Traceback" not in text
    club = text.split("macondo> aiplay club\n", 1)[1].split("macondo> ", 1)[0]
    assert club.startswith("engine (club) plays ") and "(static" in club
    best = text.split("macondo> aiplay best:max_time=1\n", 1)[1].split("macondo> ", 1)[0]
    assert best.startswith("engine (best:max_time=1) plays ") and "(sim, " in best
    bad = text.split("macondo> aiplay grandmaster\n", 1)[1]
    assert "unknown strategy" in bad and "champion" in bad


def test_the_log_reads_back_as_it_was_written(tmp_path) -> None:
    from macondo_client.bots import result_from_json, result_to_json

    game = GameResult(4, 0, (400, 390), 3, "standard", "", ["8G QI", "pass", "exch A"],
                      [MoveRecord(0, "8G QI", 80, "sim", 1.25, 11), MoveRecord(1, "pass", 3, "pre-endgame", 2.5, 11),
                       MoveRecord(0, "exch A", 0, "endgame", 0.5, 10)], (0, 10), (0.0, 42.5))
    back = result_from_json(json.loads(json.dumps(result_to_json(game))))
    assert back == game and back.decided_in == game.decided_in
