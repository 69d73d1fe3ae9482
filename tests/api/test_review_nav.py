"""Game review: navigation, challenges, notes and export over gRPC and in the shell; honest positions at every
turn; the simulation takes known opponent tiles only from its explicit field."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from macondo_client import InvalidArgument, NotFound
from macondo_client.shell import MacondoShell, run_shell

from macondo_server.analysis.sim import SimJob, SimOptions
from macondo_server.api.sessions import MAX_NOTE_CHARS, SessionStore
from macondo_server.engine.facade import Engine
from macondo_server.engine.replay import position_from_game, replay_gcg
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.gcg import GcgGame, decode_gcg, parse_gcg, read_gcg_file
from macondo_server.model.tiles import rack_tiles

from conftest import GCG_ALL, GCG_DATA, GCG_FOREIGN, GCG_OWN, needs_nwl20, shared_settings

DATA, FOREIGN, OWN, ALL = GCG_DATA, GCG_FOREIGN, GCG_OWN, GCG_ALL
NOTES = DATA / "notes_pragmas.gcg"

pytestmark = needs_nwl20


@pytest.fixture(scope="module")
def store():
    return SessionStore(Engine(shared_settings()))


def _text(path: Path) -> str:
    return decode_gcg(path.read_bytes())


def _totals(record: GcgGame) -> list[int]:
    nicks = [p[0] for p in record.players]
    out = [0, 0]
    for ev in record.events:
        out[nicks.index(ev.nick)] = ev.cumulative
    return out


# ------------------------------------------------------------------ export round trip


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_every_record_exports_and_reloads_to_the_same_events(path, store):
    session = store.create(None, 7, [], 0, gcg=_text(path))
    original = parse_gcg(_text(path))
    exported = store.export(session)
    again = parse_gcg(exported)
    assert again.players == original.players
    assert again.events == original.events          # type, nick, rack, coordinates, word, scores, notes
    assert [p for p in again.pragmas] == [p for p in original.pragmas]
    replay = replay_gcg(again, session.lexicon)
    assert list(replay.game.scores) == list(session.game.scores) == _totals(original)
    store.delete(session.game_id)


# ------------------------------------------------------------------ honest positions at every turn


def _revealed_rack(record: GcgGame, turn: int, player: int) -> str | None:
    """Independently of the replay: the rack the file shows `player` holding at the position after `turn`
    events, i.e. on their next move event ("" when that event is written without one; None when a phony
    withdrawal comes first or there is no such event)."""
    nicks = [p[0] for p in record.players]
    for ev in record.events[turn:]:
        if nicks.index(ev.nick) == player and ev.type in ("play", "pass", "exchange"):
            return ev.rack or ""
        if ev.type == "phony_returned":
            return None
    return None


def _phony_tiles(record: GcgGame, turn: int, player: int) -> list[str]:
    """Tiles of `player` the other has seen come back from withdrawn phonies before `turn` (letters, '?')."""
    nicks = [p[0] for p in record.players]
    seen: list[str] = []
    events = record.events[:turn]
    for i, ev in enumerate(events):
        if ev.type == "phony_returned" and nicks.index(ev.nick) == player:
            word = events[i - 1].word
            seen += ["?" if c.islower() else c for c in word if c != "."]
    return seen


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_navigation_gives_only_what_the_player_on_turn_knows(path, store):
    record = parse_gcg(_text(path))
    session = store.create(None, 3, [], 0, gcg=_text(path))
    ld = session.lexicon.ld
    for turn in range(len(record.events) + 1):
        store.navigate(session, "turn", turn)
        view, game = session.view, session.game
        assert session.cursor == turn
        p = game.on_turn
        if game.game_over:
            continue
        if game.bag_size == 0:
            # the bag is empty: the unseen tiles are the opponent's rack
            assert sorted(view.racks[1]) == sorted(game.rack(1 - p))
            continue
        own = _revealed_rack(record, turn, p)
        if own == "":
            assert view.racks[0] == [], (path.name, turn)        # the file does not show it: unknown, not made up
        elif own is not None:
            assert sorted(view.racks[0]) == sorted(rack_tiles(ld, own, "rack", fold_case=True)), turn
        # known opponent tiles: only tiles the file showed coming back from a withdrawn phony
        allowed = _phony_tiles(record, turn, 1 - p)
        known = [ld.label(t) for t in view.racks[1]]
        for t in known:
            assert t in allowed, (path.name, turn, known, allowed)
            allowed.remove(t)
        # the CGP sent to clients names no more than that
        assert sorted(parse_cgp(write_cgp(view)).racks[1]) == sorted(view.racks[1])
    store.delete(session.game_id)


def test_note_bounds(store):
    s = store.create(None, 1, [], 0, gcg=_text(NOTES), turn=3)
    with pytest.raises(ValueError, match="at most"):
        store.set_note(s, "x" * (MAX_NOTE_CHARS + 1))
    store.set_note(s, ">bot1: not an event\n#note not a pragma\n\n")
    again = parse_gcg(store.export(s))
    assert again.events[2].note == ">bot1: not an event\n#note not a pragma" and len(again.events) == 24


def test_withdrawn_phony_tiles_are_known_then_played_off(store):
    session = store.create(None, 1, [], 0, gcg=_text(DATA / "phony_withdrawn.gcg"), turn=9)
    assert session.view.racks[1] == []                  # the play is on the board, not yet challenged
    store.navigate(session, "next")
    ld = session.lexicon.ld
    assert sorted(ld.label(t) for t in session.view.racks[1]) == sorted("DEIJO")
    store.navigate(session, "turn", 12)                 # EJIDO played again: nothing known any more
    assert session.view.racks[1] == []


# ------------------------------------------------------------------ the simulation's known tiles


def test_sim_takes_known_opponent_tiles_only_from_the_explicit_field(store):
    session = store.create(None, 1, [], 0, gcg=_text(NOTES), turn=6)
    game = session.game
    leaked = position_from_game(game, {"lex": "NWL20"}, show_opponent=True)    # the opponent's later reveal
    honest = position_from_game(game, {"lex": "NWL20"}, show_opponent=False)
    assert leaked.racks[1] and not honest.racks[1]
    opp = session.lexicon.ld.rack_str(leaked.racks[1])

    def run(pos, opp_rack=None):
        opts = SimOptions(plies=1, num_plays=4, iterations=60, threads=1, seed=11, opp_rack=opp_rack)
        res = SimJob(store.engine, parse_cgp(write_cgp(pos)), opts).run()
        return [(p.text, round(p.win_pct, 9), round(p.equity, 9)) for p in res.plays]

    plain = run(honest)
    assert run(leaked) == plain                  # a rack merely written in the CGP is not taken as known
    assert run(honest, opp) != plain             # ... while the explicit field is used


# ------------------------------------------------------------------ challenges


def test_challenge_rules_on_a_valid_play(store):
    text = _text(NOTES)
    outcomes = {}
    for rule in ("single", "double", "five", "ten"):
        s = store.create(None, 1, [], 0, gcg=text, turn=3, challenge_rule=rule)   # after 7J AHOLD (bot1)
        bad, outcome = store.challenge(s)
        assert bad == []
        events = s.record.events
        outcomes[rule] = (len(events), events[-1].type, events[-1].score, events[-1].cumulative, s.game.on_turn)
        assert s.cursor == len(events)
        store.delete(s.game_id)
    assert outcomes["single"] == (3, "play", 31, 69, 1)                # no penalty, bot2 still to move
    assert outcomes["double"][:4] == (4, "pass", 0, 12) and outcomes["double"][4] == 0   # bot2 lost the turn
    assert outcomes["five"] == (4, "challenge_bonus", 5, 74, 1)
    assert outcomes["ten"] == (4, "challenge_bonus", 10, 79, 1)


def test_challenge_of_a_play_that_went_out_settles_the_end_again(store):
    text = _text(DATA / "challenge_after_out.gcg")
    s = store.create(None, 1, [], 0, gcg=text, turn=22, challenge_rule="ten")     # after bot1's 1A Aa
    bad, _ = store.challenge(s)
    assert bad == []
    tail = [(e.type, e.score, e.cumulative) for e in s.record.events[22:]]
    assert tail == [("challenge_bonus", 10, 429), ("end_rack_points", 6, 435)]
    assert s.game.game_over and list(s.game.scores) == [402, 435]
    again = parse_gcg(store.export(s))
    assert list(replay_gcg(again, s.lexicon).game.scores) == [402, 435]


def test_phony_under_void_is_refused_and_under_double_comes_off(store):
    s = store.create(None, 1, [], 0, gcg=_text(NOTES), turn=2)          # the server default: void
    with pytest.raises(ValueError, match="not a word"):
        store.play(s, "M8 DORT")
    with pytest.raises(ValueError, match="void"):
        store.challenge(s)
    store.set_rule(s, "double")
    store.play(s, "M8 DORT")
    assert s.game.scores[0] == 61 and len(s.record.events) == 3         # later events dropped
    bad, outcome = store.challenge(s)
    assert sorted(bad) == ["DORT", "ENJOYD"] and "phony" in outcome
    assert [e.type for e in s.record.events] == ["play", "play", "play", "phony_returned"]
    assert list(s.game.scores) == [38, 12] and s.game.on_turn == 1
    assert sorted(s.lexicon.ld.label(t) for t in s.view.racks[1]) == sorted("DORT")


# ------------------------------------------------------------------ gRPC, hostile inputs


def test_grpc_navigation_rack_note_export(client):
    state = client.create_game(gcg=_text(NOTES), challenge_rule="double")
    gid = state.game_id
    assert state.turn == state.num_events == 24 and state.challenge_rule == "double"
    assert client.navigate(gid, "first").turn == 0
    s = client.navigate(gid, "next")
    assert s.turn == 1 and s.on_turn == 1 and s.scores[0] == 38 and s.events[0].move == "8H ENJOY"
    s = client.navigate(gid, "turn", 10)
    assert s.turn == 10 and s.rack == "ABCIILT" and s.known_opp == ""
    assert client.navigate(gid, "previous").turn == 9
    s = client.set_rack(gid, "QZ")
    assert s.rack == "QZ" and s.turn == 9 and s.num_events == 24        # a what-if rack, history kept
    s = client.navigate(gid, "turn", 9)
    assert s.rack != "QZ"                                                 # moving the cursor drops it
    s = client.set_note(gid, "line one\r\nline two")
    assert s.events[8].note == "line one\nline two"
    gcg = client.export_game(gid)
    assert "#note line one\n#- line two\n" in gcg
    assert parse_gcg(gcg).events[8].note == "line one\nline two"
    s = client.navigate(gid, "last")
    assert s.turn == 24 and s.game_over


def test_grpc_hostile_inputs(client):
    gid = client.create_game(gcg=_text(NOTES)).game_id
    with pytest.raises(InvalidArgument, match="out of range"):
        client.navigate(gid, "turn", 25)
    with pytest.raises(InvalidArgument, match="out of range"):
        client.navigate(gid, "turn", -1)
    with pytest.raises(InvalidArgument, match="unknown navigation"):
        client.navigate(gid, "sideways")
    with pytest.raises(InvalidArgument, match="already at the end"):
        client.navigate(gid, "next")
    with pytest.raises(InvalidArgument, match="max_field_chars"):
        client.set_note(gid, "x" * 100_000)                                 # the server's field limit
    with pytest.raises(InvalidArgument, match="control character"):
        client.set_note(gid, "bad\x07bell")
    with pytest.raises(InvalidArgument, match="unknown challenge rule"):
        client.set_challenge_rule(gid, "triple")
    with pytest.raises(InvalidArgument, match="game is over"):
        client.set_rack(gid, "AB")
    client.navigate(gid, "first")
    with pytest.raises(InvalidArgument, match="already at the start"):
        client.navigate(gid, "previous")
    with pytest.raises(InvalidArgument, match="no event"):
        client.set_note(gid, "hello")
    with pytest.raises(InvalidArgument, match="void"):
        client.challenge(gid)
    client.set_challenge_rule(gid, "double")
    with pytest.raises(InvalidArgument, match="no play to challenge"):
        client.challenge(gid)
    with pytest.raises(InvalidArgument, match="unseen"):
        client.set_rack(gid, "ZZ")
    with pytest.raises(InvalidArgument, match="tiles"):
        client.set_rack(gid, "ABCDEFGH")
    for call in (lambda g: client.navigate(g, "first"), lambda g: client.set_rack(g, "A"),
                 lambda g: client.challenge(g), lambda g: client.set_note(g, "x"), client.export_game,
                 lambda g: client.set_challenge_rule(g, "double")):
        with pytest.raises(NotFound, match="unknown game"):
            call("no-such-game")
        with pytest.raises((NotFound, InvalidArgument)):
            call("x" * 500)
    cgp_game = client.create_game(cgp=f"{'/'.join(['15'] * 15)} AEINQST/ 0/0 0 lex NWL20;")
    with pytest.raises(InvalidArgument, match="CGP position"):
        client.export_game(cgp_game.game_id)
    # a CGP game still navigates over its moves
    s = client.play_move(cgp_game.game_id, "8G QI")
    assert s.turn == 1 and s.scores[0] == 22
    s = client.navigate(cgp_game.game_id, "first")
    assert s.turn == 0 and s.rack == "AEINQST" and s.scores[0] == 0
    s = client.navigate(cgp_game.game_id, "last")
    assert s.turn == 1 and s.scores[0] == 22 and "QI" in s.events[0].move
    client.delete_game(gid)
    client.delete_game(cgp_game.game_id)


def test_new_game_keeps_racks_across_navigation(client):
    state = client.create_game(lexicon="NWL20", seed=9)
    first_rack = state.rack
    s = client.engine_move(state.game_id).game
    s = client.engine_move(state.game_id).game
    racks_at_end = (s.rack, s.on_turn)
    assert client.navigate(state.game_id, "first").rack == first_rack
    back = client.navigate(state.game_id, "last")
    assert (back.rack, back.on_turn) == racks_at_end and back.turn == 2
    again = parse_gcg(client.export_game(state.game_id))
    assert [e.rack for e in again.events][:1] == ["".join(sorted(first_rack, key=lambda c: (c == "?", c)))] \
        or sorted(again.events[0].rack) == sorted(first_rack)


# ------------------------------------------------------------------ the shell, scripted


def _shell(client, script: str) -> str:
    out = io.StringIO()
    run_shell(client, stdin=io.StringIO(script), stdout=out)
    return out.getvalue()


def _after(text: str, command: str) -> str:
    """The output of one command in a transcript (up to the next prompt)."""
    part = text.split(f"macondo> {command}\n", 1)[1]
    return part.split("macondo> ", 1)[0]


def test_scripted_review_session(client, tmp_path):
    out_file = tmp_path / "review.gcg"
    script = "\n".join([
        "set challenge double",
        f"load {NOTES}",
        "turn 4",
        "n",
        "p",
        "turn 2",
        "add M8 DORT",
        "challenge",
        "list",
        "sim -fg -iterations 30 -plies 1 -num-plays 5 -threads 1 -seed 3",
        "commit #9",
        "commit #2",
        "note my favourite move",
        f"export {out_file}",
        "turn 99",
        "commit #1",
        "export nogcg.txt",
        "quit",
    ]) + "\n"
    text = _shell(client, script)
    assert "Traceback" not in text and "internal error" not in text
    assert "turn 24 of 24" in _after(text, f"load {NOTES}")
    assert "turn 4 of 24" in _after(text, "turn 4") and "AIRRSTU" in _after(text, "turn 4")
    assert "turn 5 of 24" in _after(text, "n") and "?AABDET" in _after(text, "n")
    assert "turn 4 of 24" in _after(text, "p")
    assert "ADHLORT" in _after(text, "turn 2")
    challenged = _after(text, "challenge")
    assert "is a phony" in challenged and "turn 4 of 4" in challenged
    listing = _after(text, "list")
    assert "(phony withdrawn)" in listing and "->  turn 4: bot2 to move" in listing
    # the sim ranking is numbered, and commit #2 takes its second row
    table = _after(text, "sim -fg -iterations 30 -plies 1 -num-plays 5 -threads 1 -seed 3")
    row2 = next(line for line in table.splitlines() if re.match(r"\s+2\s{2}\S", line))
    shown = row2.split()[1] + " " + row2.split()[2]
    through = re.sub(r"\(([^)]*)\)", lambda m: "." * len(m.group(1)), shown)
    committed = _after(text, "commit #2")
    m = re.search(r"committing #2 of the sim ranking: (.+)", committed)
    assert m and m.group(1).strip() == through
    assert "error: no move #9: the latest ranking (sim) lists 5 moves" in _after(text, "commit #9")
    assert "error: no ranking" in _after(text, "commit #1")                # the position changed since
    assert "error: turn '99' is out of range" in _after(text, "turn 99")
    assert "must end in .gcg" in _after(text, "export nogcg.txt")
    # the exported game: the loaded events to turn 2, the phony and its withdrawal, the committed play
    record = read_gcg_file(str(out_file))
    assert [e.type for e in record.events] == ["play", "play", "play", "phony_returned", "play"]
    last = record.events[-1]
    assert f"{last.position} {last.word}" == through and last.nick == "bot2" and last.note == "my favourite move"
    assert record.events[0].note.startswith("a first note")                 # the file's notes stay
    assert last.cumulative == 12 + last.score
    engine = Engine(shared_settings())
    replay = replay_gcg(record, engine.lexicon("NWL20"))
    assert list(replay.game.scores) == [38, 12 + last.score]


def test_shell_sim_without_a_limit_runs_until_stopped(client):
    out = io.StringIO()
    shell = MacondoShell(client, stdin=io.StringIO(), stdout=out, interactive=False)
    shell.onecmd(f"load {NOTES} -turn 6")
    shell.onecmd("sim -plies 1 -threads 1 -num-plays 3 -seed 2")
    assert "runs until sim stop" in out.getvalue()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        snap = shell.sim.stream.latest
        if snap is not None and snap.iterations > 1000:     # past the old default cap of 1,000
            break
        time.sleep(0.2)
    assert shell.sim.running and snap.iterations > 1000 and not snap.final
    shell.onecmd("sim stop")
    assert not shell.sim.running
    final = shell.sim.stream.latest
    assert final.final and final.stopped and final.iterations >= snap.iterations
    assert shell.ranking == [p.move.notation for p in final.plays] and shell.ranking_from == "sim"
    shell.onecmd("commit #3")
    assert shell.game.turn == 7 and shell.game.events[6].move == final.plays[2].move.notation
    shell.onecmd("quit")


def test_set_rack_draws_only_on_tiles_the_player_cannot_see(store):
    s = store.create(None, 1, [], 0, gcg=_text(DATA / "phony_withdrawn.gcg"), turn=10)   # bot1 knows DEIJO
    ld = s.lexicon.ld
    assert s.view.racks[0] and sorted(ld.label(t) for t in s.view.racks[1]) == sorted("DEIJO")
    with pytest.raises(ValueError, match="no J left"):
        store.set_rack(s, "J")                       # the only J is known to be on the opponent's rack
    with pytest.raises(ValueError, match="no Q left"):
        store.set_rack(s, "QQ")                      # one Q in the set
    store.set_rack(s, "Q")
    assert [ld.label(t) for t in s.view.racks[0]] == ["Q"]
    assert sorted(ld.label(t) for t in s.view.racks[1]) == sorted("DEIJO")
    assert list(s.game.rack(s.game.on_turn)) == list(s.view.racks[0])


def test_cli_sim_opp_rack_only_from_the_flag(store, capsys):
    """`macondo sim` on `macondo load`'s kind of CGP: an opponent rack written in it changes nothing, the
    --opp-rack flag does."""
    import json

    from macondo_server.cli import main as cli_main

    session = store.create(None, 1, [], 0, gcg=_text(NOTES), turn=6)
    leaked = write_cgp(position_from_game(session.game, {"lex": "NWL20"}, show_opponent=True))
    honest = write_cgp(position_from_game(session.game, {"lex": "NWL20"}, show_opponent=False))
    opp = leaked.split()[1].split("/")[1]
    assert opp and honest.split()[1].endswith("/")

    def sim(cgp, *extra):
        capsys.readouterr()
        assert cli_main(["sim", cgp, "--iterations", "60", "--plies", "1", "--num-plays", "4", "--threads", "1",
                         "--seed", "5", "--json", *extra]) == 0
        return [(p["move"], p["win_pct"], p["equity"]) for p in json.loads(capsys.readouterr().out)["plays"]]

    plain = sim(honest)
    assert sim(leaked) == plain
    assert sim(honest, "--opp-rack", opp) != plain
