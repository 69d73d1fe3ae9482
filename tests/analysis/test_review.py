"""Game review analysis (`macondo analyze`, AnalyzeGame): coverage of a real tournament game at a small budget,
exact final turns checked against `macondo endgame` and the rules, honest positions, stable JSON for a seed,
the stream's progress and stop, and hostile inputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import grpc
import pytest

from macondo_server.analysis import review as an
from macondo_server.analysis.review import (
    AnalyzeOptions,
    analyze_record,
    size_by_spread_loss,
    size_by_win_loss,
)
from macondo_server.api.grpc_server import create_server
from macondo_server.cli import main
from macondo_server.engine.replay import replay_gcg
from macondo_server.model.cgp import write_cgp
from macondo_server.model.gcg import parse_gcg, read_gcg_file
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

from conftest import CASES_DIR, LEXICA, ROOT, needs_csw21, needs_nwl20, shared_settings

GAME = CASES_DIR / "gcg" / "success_standard.gcg"
needs_game = pytest.mark.skipif(not GAME.is_file(), reason="shared tournament game absent")

# a budget small enough for a test; the limits that bind are iteration and depth counts (the one pre-endgame
# turn of the game solves in about a second at this budget; its time limit is only a safety cap)
SMALL = dict(sim_iterations=24, sim_plays=3, sim_plies=1, peg_max_bag=6, peg_plays=2, peg_endgame_plies=1,
             peg_max_time=30,
             endgame_plies=2, endgame_max_time=0, endgame_candidates=1, threads=2)
SMALL_CLI = ["--sim-iterations", "24", "--sim-plays", "3", "--sim-plies", "1", "--peg-max-bag", "6", "--peg-plays", "2",
             "--peg-endgame-plies", "1", "--peg-time", "30", "--endgame-plies", "2", "--endgame-time", "0",
             "--endgame-candidates", "1", "--threads", "2"]


def test_mistake_sizes_follow_woogles_bands():
    assert [size_by_win_loss(x) for x in (None, 0, 0.4, 0.6, 3.4, 3.6, 7.4, 7.6, 40)] == [
        "none", "none", "none", "small", "small", "medium", "medium", "large", "large"]
    assert [size_by_spread_loss(x) for x in (None, 0, 1, 7, 8, 15, 16, 100)] == [
        "none", "none", "small", "small", "medium", "medium", "large", "large"]
    assert size_by_spread_loss(0, blown=True) == "large"
    s = an.PlayerSummary(0, "a", small=3, medium=2, large=1)
    assert s.mistake_index == pytest.approx(0.2 * 3 + 0.5 * 2 + 1.0)


@pytest.fixture(scope="module")
def record():
    if not GAME.is_file():
        pytest.skip("shared tournament game absent")
    return read_gcg_file(str(GAME))


@pytest.fixture(scope="module")
def full(engine, record):
    """The whole tournament game at the small budget, with every position each engine was given."""
    seen: list[tuple] = []
    originals = (an.SimJob, an.PegJob, an.EndgameJob)

    def spy(kind, cls):
        def make(engine_, pos, opts, *args, **kwargs):
            seen.append((kind, pos, opts))
            return cls(engine_, pos, opts, *args, **kwargs)
        return make

    an.SimJob, an.PegJob, an.EndgameJob = spy("sim", originals[0]), spy("peg", originals[1]), spy("eg", originals[2])
    try:
        res = analyze_record(engine, record, AnalyzeOptions(**SMALL), name=GAME.name)
    finally:
        an.SimJob, an.PegJob, an.EndgameJob = originals
    return res, seen


@needs_csw21
@needs_game
def test_every_turn_is_analysed_with_rank_and_loss(full, record):
    res, _ = full
    moves = [n for n, ev in enumerate(record.events, 1) if ev.type in ("play", "pass", "exchange")]
    assert [t.event for t in res.turns] == moves and res.turns_total == len(moves) == 26
    assert not res.stopped and res.lexicon == "CSW21"
    for t in res.turns:
        assert not t.skipped, (t.event, t.skipped)
        assert t.best is not None and t.played.move
        assert t.rank is not None and 1 <= t.rank <= t.candidates, (t.event, t.rank, t.candidates)
        loss = t.spread_loss if t.phase == "endgame" else t.win_loss
        assert loss is not None and loss >= 0
        if t.rank == 1:
            assert loss == 0 and t.mistake == "none"
        if t.played.move == t.best.move:
            assert t.rank == 1
    phases = {t.event: t.phase for t in res.turns}
    assert all(phases[e] == "sim" for e in moves if e <= 22)
    assert phases[23] in ("peg", "peg>sim") and all(phases[e] == "endgame" for e in (24, 25, 26, 27))
    # the phony VOKDA (event 10) was challenged off and counted as a pass; nobody let a phony stand
    vokda = next(t for t in res.turns if t.event == 10)
    assert vokda.phony and vokda.phony_challenged and vokda.phony_words == ["VOKDA"]
    assert not any(t.missed_challenge for t in res.turns)
    assert sum(t.phony for t in res.turns) == 1
    # summaries add up
    for s in res.summaries:
        mine = [t for t in res.turns if t.player == s.player]
        assert s.turns == len(mine)
        assert s.small + s.medium + s.large == sum(t.mistake != "none" for t in mine)
        assert s.mistake_index == pytest.approx(0.2 * s.small + 0.5 * s.medium + s.large)
        assert s.bingos_missed == sum(t.missed_bingo for t in mine)
        assert s.equity_lost == pytest.approx(sum(t.equity_loss or 0 for t in mine))


@needs_csw21
@needs_game
def test_final_turns_are_solved_exactly(full, record, engine, capsys):
    """The last two turns against `macondo endgame` on the same positions (deep enough to reach the end) and
    the played move's value against the rules (a play that goes out scores twice the opponent's rack)."""
    res, _ = full
    replay = replay_gcg(record, engine.lexicon("CSW21"))
    befores = [replay.start] + replay.positions
    by_event = {t.event: t for t in res.turns}
    for event in (26, 27):
        t = by_event[event]
        assert t.complete
        cgp = write_cgp(befores[event - 1])
        assert main(["--data-dir", str(LEXICA), "endgame", cgp, "--plies", "8", "--json"]) == 0
        ref = json.loads(capsys.readouterr().out)
        assert t.best.value == ref["value"], (event, t.best, ref)
    last = by_event[27]
    # D11 .OTS uses O, S and T: RightBehindYou goes out; HastyBot holds I (1 point)
    assert last.played.move == "D11 .OTS" and last.played.value == 14 + 2 * 1
    assert last.spread_loss == last.best.value - last.played.value


@needs_csw21
@needs_game
def test_positions_are_honest(full):
    """Every engine saw only what the player on turn could know: no opponent tiles while the bag holds tiles
    (except ADKOV, the tiles of the withdrawn phony VOKDA, which HastyBot saw), the whole pool once empty."""
    _, seen = full
    assert seen
    known = set()
    for kind, pos, opts in seen:
        opp = pos.ld.rack_str(list(pos.racks[1]))
        if pos.tiles_in_bag() > 0:
            assert kind in ("sim", "peg")
            assert len(pos.racks[0]) == 7
            assert (opts.opp_rack or "") == opp      # the known tiles reach the engine, explicitly
            known.add(opp)
        else:
            assert kind == "eg"
            assert sum(pos.unseen_counts(0)) == len(pos.racks[1])
    assert known == {"", "ADKOV"}


@needs_csw21
@needs_game
def test_json_is_stable_for_a_seed(capsys):
    def run(seed: str) -> str:
        assert main(["--data-dir", str(LEXICA), "analyze", str(GAME), "--player", "HastyBot", *SMALL_CLI,
                     "--seed", seed, "--json"]) == 0
        return capsys.readouterr().out

    a, b, c = run("5"), run("5"), run("6")
    assert a == b
    assert a != c           # the seed matters (the simulations draw differently)
    game = json.loads(a)["games"][0]
    assert {t["player"] for t in game["turns"]} == {1} and len(game["summary"]) == 1
    assert all(t["complete"] for t in game["turns"])


@needs_csw21
@needs_game
def test_peg_max_bag_chooses_the_phase(engine, record):
    """The pre-endgame solver takes the turns with 1 to peg_max_bag tiles in the bag, a simulation the rest
    (event 23 of the game is played with 5 tiles in the bag)."""
    phases = {}
    for max_bag in (4, 5):
        res = analyze_record(engine, record, AnalyzeOptions(**{**SMALL, "peg_max_bag": max_bag},
                                                            player=record.events[22].nick), name=GAME.name)
        t = next(t for t in res.turns if t.event == 23)
        assert t.bag == 5 and t.complete
        phases[max_bag] = t.phase
        assert res.options.peg_max_bag == max_bag
    assert phases[4] == "sim" and phases[5] in ("peg", "peg>sim")
    assert AnalyzeOptions().peg_max_bag == 1


@pytest.mark.slow
@needs_csw21
@needs_game
def test_default_budgets_give_the_same_json_twice(capsys):
    """At the default budgets (no budget option given) the work, not the clock, decides: two runs of a whole
    game agree, and no safety cap bound."""
    def run() -> str:
        assert main(["--data-dir", str(LEXICA), "analyze", str(GAME), "--seed", "3", "--json"]) == 0
        return capsys.readouterr().out

    a, b = run(), run()
    assert a == b
    game = json.loads(a)["games"][0]
    assert all(t["complete"] for t in game["turns"]) and len(game["turns"]) == 26


@needs_csw21
@needs_game
def test_report_and_annotated_gcg(tmp_path, capsys, record):
    out = tmp_path / "noted.gcg"
    assert main(["--data-dir", str(LEXICA), "analyze", str(GAME), "--player", "2", *SMALL_CLI,
                 "--gcg-out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Summary" in text and "mistake index" in text and "RightBehindYou" in text
    noted = parse_gcg(out.read_text(encoding="utf-8"))
    assert [(e.type, e.score, e.cumulative) for e in noted.events] == [
        (e.type, e.score, e.cumulative) for e in record.events]
    notes = [e.note for e in noted.events if "analysis" in e.note]
    assert len(notes) == 13 and all(e.nick == "RightBehindYou" for e in noted.events if "analysis" in e.note)
    assert "this\nis\na\nmultiline\nnote" in noted.events[16].note     # the file's own notes are kept


@pytest.mark.parametrize("argv, needle", [
    (["analyze", "/nonexistent/x.gcg"], "does not exist"),
    (["analyze", str(GAME), "--player", "nobody"], "is not in the game"),
    (["analyze", str(GAME), "--sim-iterations", "0"], "--sim-iterations"),
    (["analyze", str(GAME), "--endgame-plies", "99"], "--endgame-plies"),
    (["analyze", str(GAME), "--peg-time", "-1"], "--peg-time"),
    (["analyze", str(GAME), "--lexicon", "NOPE"], "NOPE"),
])
def test_cli_errors_are_one_line(argv, needle, capsys):
    if not GAME.is_file():
        pytest.skip("shared tournament game absent")
    try:
        code = main(["--data-dir", str(LEXICA), *argv])
    except SystemExit as exc:     # usage errors leave through argparse, with status 1 as well
        code = exc.code
    assert code == 1
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


@needs_nwl20
def test_cli_batch_reports_each_game(capsys):
    """Several games: each analysed or refused on its own line; turns whose rack the file does not show are
    skipped (never analysed with a made-up rack); the pass after the opponent went out is no turn."""
    data = ROOT / "tests" / "data" / "gcg"
    files = [data / n for n in ("missing_racks.gcg", "polish_tiles.gcg", "double_challenge_after_out.gcg")]
    code = main(["--data-dir", str(LEXICA), "analyze", *map(str, files), "--player", "2", "--sim-iterations", "2",
                 "--sim-plays", "1", "--sim-plies", "0", "--peg-plays", "1", "--peg-endgame-plies", "1",
                 "--peg-time", "2", "--endgame-plies", "1", "--endgame-candidates", "0", "--json"])
    out = capsys.readouterr()
    # one error line (the game refused); files without a #lexicon line are also named in a warning each
    errors = [line for line in out.err.splitlines() if "no #lexicon line" not in line]
    assert code == 1 and len(errors) == 1 and "polish_tiles.gcg" in errors[0]
    assert "not in the english letter distribution" in errors[0]
    games = json.loads(out.out)["games"]
    assert [g["game"] for g in games] == [f.name for f in files]
    assert "error" in games[1] and "turns" not in games[1]
    skipped = {t["event"]: t["skipped"] for t in games[0]["turns"] if t["skipped"]}
    assert skipped == {4: "the file does not show this rack", 6: "the file does not show this rack"}
    record = read_gcg_file(str(files[2]))
    analysed = {t["event"] for t in games[2]["turns"]}
    last_pass = max(n for n, ev in enumerate(record.events, 1) if ev.type == "pass")
    assert last_pass not in analysed and not any(t["skipped"] for t in games[2]["turns"])


def test_cli_garbage_and_empty_folder(tmp_path, capsys):
    bad = tmp_path / "bad.gcg"
    bad.write_bytes(b"\x00\x01garbage\n>x: nothing\n")
    assert main(["--data-dir", str(LEXICA), "analyze", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert "bad.gcg" in err and "\n" not in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--data-dir", str(LEXICA), "analyze", str(empty)]) == 1
    assert "no .gcg files" in capsys.readouterr().err


@needs_csw21
@needs_game
def test_cli_ctrl_c_keeps_what_is_done(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "macondo_server", "--data-dir", str(LEXICA), "analyze", str(GAME),
                             "--sim-iterations", "100000", "--sim-time", "1", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    time.sleep(8)      # past the start-up (about 1 s) and a few turns; 26 turns x 1 s are far from done
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err     # stopped by Ctrl-C: what is done is printed, the status says so
    game = json.loads(out)["games"][0]
    assert game["stopped"] and 0 < game["turns_analysed"] < game["turns_total"]
    assert not game["turns"][-1]["complete"]


# ------------------------------------------------------------------ the streaming RPC


@pytest.fixture(scope="module")
def stub():
    running = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=3)
    channel = grpc.insecure_channel(f"127.0.0.1:{running.port}")
    yield pb_grpc.EngineStub(channel), running
    channel.close()
    running.stop(1)


@needs_csw21
@needs_game
def test_rpc_streams_turns_and_matches_cli(stub, capsys):
    s, _ = stub
    gcg = GAME.read_text(encoding="utf-8")
    req = pb.AnalyzeGameRequest(gcg=gcg, player="HastyBot", seed=5, annotated_gcg=True, sim_iterations=24,
                                sim_plays=3, sim_plies=1, peg_max_bag=6, peg_plays=2, peg_endgame_plies=1,
                                endgame_plies=2,
                                endgame_candidates=1, threads=2)
    msgs = list(s.AnalyzeGame(req, timeout=300))
    final = msgs[-1]
    assert final.final and not final.stopped and final.turns_done == final.turns_total == 13
    assert all(not m.final for m in msgs[:-1]) and len({m.job_id for m in msgs}) == 1
    streamed = [t.event for m in msgs[:-1] for t in m.turns]
    assert streamed == sorted(streamed) and len(streamed) == len(set(streamed)) >= 1
    done = [m.turns_done for m in msgs]
    assert done == sorted(done)
    assert [t.event for t in final.turns] == [t.event for t in final.turns if t.player == 1]
    assert final.summary[0].nick == "HastyBot" and "analysis" in final.annotated_gcg
    # the same analysis as the CLI at the same budget and seed (time limits never bind at this budget)
    assert main(["--data-dir", str(LEXICA), "analyze", str(GAME), "--player", "HastyBot", *SMALL_CLI,
                 "--seed", "5", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["games"][0]
    rpc = json.loads(final.json)
    for key in ("turns", "summary"):
        assert rpc[key] == cli[key]


@needs_csw21
@needs_game
def test_rpc_stop_keeps_what_is_done(stub):
    s, running = stub
    gcg = GAME.read_text(encoding="utf-8")
    call = s.AnalyzeGame(pb.AnalyzeGameRequest(gcg=gcg, sim_iterations=200_000, sim_max_time=2, threads=1),
                         timeout=300)
    msgs = []
    stopped_at = None
    for m in call:
        msgs.append(m)
        if stopped_at is None and m.turns_done >= 2:
            stopped_at = time.monotonic()
            assert s.StopJob(pb.StopJobRequest(job_id=m.job_id)).found
    final = msgs[-1]
    assert final.final and final.stopped
    assert time.monotonic() - stopped_at < 5
    assert 2 <= final.turns_done < final.turns_total and len(final.turns) == final.turns_done
    assert not final.turns[-1].complete
    json.loads(final.json)


@needs_csw21
@needs_game
def test_rpc_cancel_and_deadline_end_the_job(stub):
    s, running = stub
    gcg = GAME.read_text(encoding="utf-8")
    req = pb.AnalyzeGameRequest(gcg=gcg, sim_iterations=200_000, sim_max_time=5, threads=1)
    call = s.AnalyzeGame(req, timeout=300)
    next(call)
    call.cancel()
    msgs = list(s.AnalyzeGame(req, timeout=4))      # the deadline: the best so far, just before it
    assert msgs[-1].final and msgs[-1].stopped
    for _ in range(100):
        if running.servicer.jobs.running() == 0:
            break
        time.sleep(0.1)
    assert running.servicer.jobs.running() == 0


def _huge_gcg() -> str:
    head = "#player1 a A\n#player2 b B\n"
    return head + "".join(f">{'ab'[i % 2]}: ABCDEFG - +0 0\n" for i in range(2100))


@pytest.mark.parametrize("fields, needle", [
    (dict(gcg=""), "gcg is empty"),
    (dict(gcg="garbage"), "GCG line 1"),
    (dict(gcg="x" * 300_000), "max_gcg_chars"),
    (dict(gcg=_huge_gcg()), "events"),
    (dict(gcg="#player1 a A\n#player2 b B\n>a: ABCDEFG 8D ZZZZ +99 99\n"), "GCG line 3"),
    (dict(player="nobody"), "is not in the game"),
    (dict(sim_iterations=-5), "sim iterations"),
    (dict(sim_iterations=2_000_000), "sim iterations"),
    (dict(sim_max_time=float("nan")), "sim_max_time"),
    (dict(peg_max_time=1e7), "peg max time"),
    (dict(peg_max_bag=9), "peg max bag"),
    (dict(endgame_plies=99), "endgame plies"),
    (dict(endgame_candidates=-1), "endgame candidates"),
    (dict(threads=999), "max_threads_per_job"),
])
def test_rpc_hostile_requests(stub, fields, needle):
    s, _ = stub
    if "gcg" not in fields:
        if not GAME.is_file():
            pytest.skip("shared tournament game absent")
        fields = dict(fields, gcg=GAME.read_text(encoding="utf-8"))
    with pytest.raises(grpc.RpcError) as err:
        list(s.AnalyzeGame(pb.AnalyzeGameRequest(**fields), timeout=60))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
    assert needle in err.value.details()


def test_rpc_unknown_lexicon_is_not_found(stub):
    s, _ = stub
    if not GAME.is_file():
        pytest.skip("shared tournament game absent")
    with pytest.raises(grpc.RpcError) as err:
        list(s.AnalyzeGame(pb.AnalyzeGameRequest(gcg=GAME.read_text(encoding="utf-8"), lexicon="NOPE"), timeout=60))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_analyze_options_validate():
    for bad in (dict(sim_iterations=0), dict(sim_plies=11), dict(peg_max_time=-1), dict(threads=0),
                dict(seed=-1), dict(endgame_plies=True), dict(peg_max_bag=7), dict(peg_max_bag=-1)):
        with pytest.raises(ValueError):
            AnalyzeOptions(**bad).validate()
    AnalyzeOptions().validate()


@needs_csw21
@needs_game
def test_python_client_analyze(stub):
    from macondo_client import Client, InvalidArgument

    _, running = stub
    gcg = GAME.read_text(encoding="utf-8")
    with Client(f"127.0.0.1:{running.port}") as c:
        final = c.analyze(gcg, player="1", seed=2, sim_iterations=8, sim_plays=2, sim_plies=1, endgame_plies=2,
                          endgame_candidates=0, timeout=300).result()
        assert final.final and final.turns_done == 13 and final.summary[0].nick == "HastyBot"
        assert json.loads(final.json)["turns_analysed"] == 13
        with pytest.raises(InvalidArgument, match="is not in the game"):
            c.analyze(gcg, player="3").result()
        with pytest.raises(ValueError, match="unknown option"):
            c.analyze(gcg, plies=3)
