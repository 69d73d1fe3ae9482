"""The Infer and EvaluateLeave RPCs through the Python client against a live server: the same answers as the
engine's own inference and leave table, a game session inferred at its cursor as its position would be, a
deadline ending an inference with what was judged, and bad input refused with INVALID_ARGUMENT (unknown
names with NOT_FOUND)."""

from __future__ import annotations

import time

import grpc
import pytest
from macondo_client import InvalidArgument, NotFound

from macondo_server.analysis.infer import InferOptions, infer, last_play_on
from macondo_server.api.convert import infer_to_pb
from macondo_server.model.cgp import parse_cgp, write_cgp

from conftest import ROOT, needs_nwl20

CAT = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15 AEINRST/ 10/0 0"
QI = "15/15/15/15/15/15/15/7QI6/15/15/15/15/15/15/15 AEINRST/ 22/0 0"
PHONY = ROOT / "tests" / "data" / "gcg" / "phony_withdrawn.gcg"


def _same(a, b) -> None:
    """Two inference summaries alike but for their timing."""
    a.elapsed_seconds = b.elapsed_seconds = 0.0
    assert a == b


# ------------------------------------------------------------------ Infer


def test_infer_on_a_position_is_the_engines_inference(client, engine):
    resp = client.infer(CAT, "8H CAT", threads=1)
    pos = parse_cgp(CAT)
    lex = engine.lexicon_for(pos)
    want = infer_to_pb(infer(engine, last_play_on(pos, "8H CAT", lex), InferOptions(threads=1)), pos.ld, 15)
    _same(resp.inference, want)
    assert resp.lexicon == lex.name and resp.cgp == write_cgp(pos)
    assert resp.inference.method == "exhaustive" and resp.inference.racks_judged == resp.inference.distinct_leaves
    assert len(resp.inference.top) == min(15, resp.inference.leaves) and resp.inference.tiles
    assert resp.inference.model == "softmax" and resp.inference.temperature == 2
    # options reach the engine: with the tolerance model a looser tolerance keeps more racks, top lists fewer
    # leaves; a higher temperature spreads the posterior
    tight = client.infer(CAT, "8H CAT", model="tolerance", threads=1).inference
    loose = client.infer(CAT, "8H CAT", model="tolerance", tolerance=10, top=3, threads=1).inference
    assert tight.model == "tolerance" and tight.racks_consistent < tight.racks_judged
    assert loose.tolerance == 10 and loose.racks_consistent > tight.racks_consistent and len(loose.top) == 3
    warm = client.infer(CAT, "8H CAT", temperature=8, threads=1).inference
    assert warm.temperature == 8 and warm.effective_leaves > resp.inference.effective_leaves
    assert client.server_info().running_jobs == 0


def test_infer_on_a_game_at_its_cursor(client):
    game = client.create_game(seed=5, players=["ann", "bob"])
    first = client.engine_move(game.game_id).move
    second = client.engine_move(game.game_id)
    state = second.game
    # ann is on turn; bob's play is the one inferred, on the position ann sees
    by_game = client.infer(game_id=game.game_id, threads=1)
    by_play = client.infer(state.cgp, second.move.display.strip(), threads=1)
    assert by_game.inference.play == second.move.display.strip()
    assert by_game.cgp == state.cgp
    _same(by_game.inference, by_play.inference)
    # back one event: bob on turn, ann's first play inferred
    back = client.navigate(game.game_id, "previous")
    earlier = client.infer(game_id=game.game_id, threads=1)
    assert earlier.inference.play == first.display.strip() and earlier.cgp == back.cgp
    # a rack set at the cursor is what the player on turn knows: the inference follows it
    rack = "".join(sorted(back.unseen))[:7]
    changed = client.set_rack(game.game_id, rack)
    assert changed.rack == rack != back.rack
    after = client.infer(game_id=game.game_id, threads=1)
    assert after.cgp == changed.cgp
    _same(after.inference, client.infer(changed.cgp, first.display.strip(), threads=1).inference)
    earlier.inference.elapsed_seconds = after.inference.elapsed_seconds
    assert after.inference != earlier.inference
    client.delete_game(game.game_id)


@needs_nwl20
def test_infer_after_a_withdrawn_phony_knows_its_tiles(client):
    # after event 10 (bot2's EJIDO challenged off) bot1 is on turn: the phony's tiles are on bot2's rack
    game = client.create_game(gcg=PHONY.read_text(encoding="utf-8"), turn=10)
    by_game = client.infer(game_id=game.game_id, threads=1)
    inf = by_game.inference
    assert sorted(inf.known) == sorted("DEIJO") and inf.leave_size == 2 and inf.play == "1D EJIDO"
    by_play = client.infer(game.cgp, "1D EJIDO", withdrawn=True, threads=1)
    _same(client.infer(game_id=game.game_id, threads=1, history_turns=0).inference, by_play.inference)
    # the game's earlier turns are weighed too; bot2's last one before was a bingo, which kept nothing: the
    # turns before it say nothing about the tiles on the rack now
    assert list(inf.history) == ["8G HUP", "E9 FEW", "C7 CRUFT", "J2 TAENIAs"] and inf.history_racks > 0
    assert [v.leave for v in inf.top] == [v.leave for v in by_play.inference.top]
    for a, b in zip(inf.top, by_play.inference.top, strict=True):
        assert a.posterior == pytest.approx(b.posterior, rel=1e-9)
    client.delete_game(game.game_id)


def test_infer_stopped_by_the_deadline_returns_what_was_judged(client):
    t0 = time.monotonic()
    # an exchange is judged on random racks: 200,000 of them take seconds
    resp = client.infer(QI, "exch 3", max_racks=200_000, threads=1, timeout=1.5)
    elapsed = time.monotonic() - t0
    inf = resp.inference
    assert inf.method == "sampled" and inf.kind == "exchange" and inf.leave_size == 4
    assert inf.stopped and 0 <= inf.racks_judged < 200_000 and elapsed < 1.5
    if inf.racks_judged:
        assert inf.racks_consistent > 0 and inf.top
    assert client.server_info().running_jobs == 0


@pytest.mark.parametrize("fields,message", [
    ({"cgp": CAT, "play": ""}, "play is empty"),
    ({"cgp": CAT, "play": "pass"}, "a pass reveals nothing"),
    ({"cgp": CAT, "play": "9H CAT"}, "not on the board"),
    ({"cgp": CAT, "play": "8H CAT", "tolerance": 5000.0}, "tolerance must be 0 to 1000"),
    ({"cgp": CAT, "play": "8H CAT", "tolerance": -1.0}, "tolerance must be a number of 0"),
    ({"cgp": CAT, "play": "8H CAT", "top": 5000}, "top must be 1 to 1000"),
    ({"cgp": CAT, "play": "8H CAT", "max_racks": 10_000_000}, "limit max_infer_racks"),
    ({"cgp": CAT, "play": "exch 9"}, "exchange 1 to 7 tiles"),
    ({"cgp": "not a cgp", "play": "8H CAT"}, "CGP"),
    ({"cgp": CAT, "play": "8H CAT", "threads": 100_000}, "max_threads_per_job"),
    ({"cgp": CAT, "play": "8H CAT", "model": "magic"}, "inference model must be tolerance or softmax"),
    ({"cgp": CAT, "play": "8H CAT", "temperature": -1.0}, "temperature must be a number of 0"),
    ({"cgp": CAT, "play": "8H CAT", "history_turns": 101}, "history must be 0 to 100 turns"),
    ({"cgp": CAT, "play": "8H CAT", "history": [{"cgp": CAT, "play": "9H CAT"}]}, "history turn 1: "),
    ({"cgp": CAT, "play": "8H CAT", "history": [{"cgp": "", "play": "pass"}]}, "history turn 1: position.cgp is empty"),
])
def test_infer_bad_input_is_invalid_argument(client, fields, message):
    with pytest.raises(InvalidArgument) as err:
        client.infer(**fields)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and message in err.value.message
    assert err.value.reason


@needs_nwl20
def test_infer_history_given_as_turns_is_the_games(client):
    """The opponent's earlier turns given as positions and plays weigh as the game record's do; a simulation
    takes them too."""
    gcg = PHONY.read_text(encoding="utf-8")
    game = client.create_game(gcg=gcg, turn=6)     # bot2 on turn: bot1's 8A NU(R)L inferred
    by_game = client.infer(game_id=game.game_id, threads=1).inference
    assert list(by_game.history) == ["F8 WAX", "D10 LOOM"] and by_game.history_racks > 0
    turns = []
    # the positions before bot1's earlier turns, with bot2's rack then (the record's) as the inferrer's
    for turn, inferrer_rack, play in ((1, "ACEFIUW", "F8 WAX"), (3, "ACFIRTU", "D10 LOOM")):
        board, racks, rest = client.navigate(game.game_id, "turn", turn).cgp.split(" ", 2)
        turns.append({"cgp": f"{board} {racks.split('/')[0]}/{inferrer_rack} {rest}", "play": play})
    now = client.navigate(game.game_id, "turn", 6)
    by_turns = client.infer(now.cgp, by_game.play, history=turns, threads=1).inference
    _same(by_turns, by_game)
    alone = client.infer(now.cgp, by_game.play, threads=1).inference
    assert not alone.history and [v.posterior for v in alone.top] != [v.posterior for v in by_game.top]
    snap = client.simulate(now.cgp, infer_play=by_game.play, infer_history=turns, iterations=20, num_plays=2,
                           threads=1, seed=3).result()
    assert snap.inference.drawn_from_inference and list(snap.inference.history) == ["F8 WAX", "D10 LOOM"]
    with pytest.raises(InvalidArgument, match="the play and the earlier turns come from the game"):
        client.infer(game_id=game.game_id, history=turns)
    client.delete_game(game.game_id)


def test_infer_game_errors(client):
    game = client.create_game(cgp=CAT)
    with pytest.raises(InvalidArgument, match="nothing to infer from"):
        client.infer(game_id=game.game_id)
    with pytest.raises(InvalidArgument, match="give no position, play or withdrawn"):
        client.infer(CAT, "8H CAT", game_id=game.game_id)
    with pytest.raises(NotFound) as err:
        client.infer(game_id="no-such-game")
    assert err.value.reason == "UNKNOWN_GAME"
    with pytest.raises(NotFound) as err:
        client.infer(CAT, "8H CAT", lexicon="NOSUCHLEX")
    assert err.value.reason == "UNKNOWN_LEXICON"
    with pytest.raises(InvalidArgument) as err:
        client.infer(CAT, "8H CAT", max_racks=10_000_000)
    assert err.value.reason == "MAX_INFER_RACKS"
    client.delete_game(game.game_id)


# ------------------------------------------------------------------ EvaluateLeave


def test_leave_values_are_the_leave_tables(client, engine):
    lex = engine.lexicon(None)
    ld = lex.ld
    for text in ("AEINST", "?", "qu", "VVWW", "ERS?", "Q"):
        resp = client.evaluate_leave(text)
        tiles = ld.parse_rack(text.upper())
        assert resp.millipoints == lex.klv.leave_value(tiles) and resp.value == pytest.approx(resp.millipoints / 1000)
        assert resp.in_table and resp.leave == ld.rack_str(tiles) and resp.lexicon == lex.name == resp.leaves
    assert client.evaluate_leave("AEINST").value > client.evaluate_leave("VVWW").value
    for text in ("", "AEINRST"):        # not in the table: 0, as move generation counts them
        resp = client.evaluate_leave(text)
        assert resp.millipoints == 0 and not resp.in_table
    sets = client.server_info().leave_sets
    assert sets
    same = [s for s in sets if engine.registry.distribution_of(s) == ld.name]     # the lexicon's language
    named = client.evaluate_leave("AEINST", leaves=same[0])
    assert named.leaves == same[0] and named.in_table


@pytest.mark.parametrize("leave,message", [
    ("AB1", "unknown rack tile '1'"),
    ("AEINRSTU", "has 8 tiles; at most 7"),
    ("???", "has 3 ?; the distribution holds 2"),
    ("ZZ", "has 2 Z; the distribution holds 1"),
    ("A" * 5000, "longer than the limit max_field_chars"),
])
def test_leave_bad_input_is_invalid_argument(client, leave, message):
    with pytest.raises(InvalidArgument) as err:
        client.evaluate_leave(leave)
    assert message in err.value.message


def test_leave_unknown_names(client, registry):
    with pytest.raises(NotFound) as err:
        client.evaluate_leave("AEI", lexicon="NOSUCHLEX")
    assert err.value.reason == "UNKNOWN_LEXICON"
    with pytest.raises(NotFound, match="unknown leave set"):
        client.evaluate_leave("AEI", leaves="NOSUCHSET")
    with pytest.raises(InvalidArgument, match="never a path"):
        client.evaluate_leave("AEI", leaves="../etc/passwd")
    bare = [n for n in registry.available() if not registry.describe(n)[0]]
    if bare:                    # a lexicon without a leave table (a shared word graph alone)
        with pytest.raises(InvalidArgument, match="has no leave values"):
            client.evaluate_leave("AEI", lexicon=bare[0])
