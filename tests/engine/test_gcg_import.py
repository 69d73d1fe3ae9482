"""GCG import as the reference engines read real tournament records (tests/data/gcg holds small records made
for these tests from self-play games, one construct each), the round trip through write_gcg, and positions
that know only what the player on turn knows."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from macondo_server.engine.replay import game_from_position, lexicon_for_record, replay_gcg
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.gcg import GcgGame, decode_gcg, parse_gcg, read_gcg_file, write_gcg
from macondo_server.model.render import render_position
from macondo_server.model.text import FormatError
from macondo_server.model.tiles import rack_tiles

from conftest import GCG_ALL, GCG_DATA, GCG_FOREIGN, GCG_OWN, needs_nwl20

DATA, FOREIGN, OWN, ALL = GCG_DATA, GCG_FOREIGN, GCG_OWN, GCG_ALL
MOVES = ("play", "pass", "exchange", "phony_returned")


def _load(path: Path, registry):
    record = read_gcg_file(str(path))
    name, warnings = lexicon_for_record(record, registry.available(), "NWL20")
    return record, registry.get(name), warnings


def _final_cumulatives(record: GcgGame) -> list[int]:
    nicks = [p[0] for p in record.players]
    out = [0, 0]
    for ev in record.events:
        out[nicks.index(ev.nick)] = ev.cumulative
    return out


@needs_nwl20
@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_record_loads_and_replays_to_the_file_scores(path, registry):
    record, lex, _ = _load(path, registry)
    res = replay_gcg(record, lex)
    assert list(res.game.scores) == _final_cumulatives(record)
    assert res.events_applied == len(record.events)
    unfinished = path.name in ("incomplete.gcg",)
    assert res.game.game_over != unfinished
    if path.name in ("incomplete.gcg", "missing_racks.gcg"):
        assert res.warnings
    elif path in OWN:
        assert res.warnings == [], res.warnings


@needs_nwl20
@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_round_trip_keeps_events_and_scores(path, registry):
    record, lex, _ = _load(path, registry)
    again = parse_gcg(write_gcg(record))

    def plain(game: GcgGame):
        return [dataclasses.replace(ev, line=0) for ev in game.events]

    assert plain(again) == plain(record)
    assert again.players == record.players
    assert sorted(again.pragmas) == sorted(record.pragmas)
    a, b = replay_gcg(record, lex), replay_gcg(again, lex)
    assert a.game.scores == b.game.scores
    assert [write_cgp(p) for p in a.positions] == [write_cgp(p) for p in b.positions]


@needs_nwl20
def test_constructs(registry):
    record, lex, _ = _load(DATA / "challenge_after_out.gcg", registry)
    assert [e.type for e in record.events[-3:]] == ["play", "challenge_bonus", "end_rack_points"]
    record, lex, _ = _load(DATA / "double_challenge_after_out.gcg", registry)
    assert record.events[-2].type == "pass" and record.events[-2].note == "#unsuccessful-challenge"
    record, lex, _ = _load(DATA / "six_passes.gcg", registry)
    res = replay_gcg(record, lex)
    assert res.game.scores == (-16, -23) and res.game.end_reason_name == "consecutive_zeros"
    assert res.positions[5].scores == (0, 0)  # the penalties are the file's own events
    record, _, _ = _load(DATA / "missing_racks.gcg", registry)
    assert [e.rack for e in record.events if e.type == "pass"][:2] == ["", ""]
    record, _, _ = _load(DATA / "notes_pragmas.gcg", registry)
    assert record.pragma("title") == "Notes and pragmas" and record.pragma("id") == "test notes-1"
    notes = [e.note for e in record.events if e.note]
    assert notes[:2] == ["a first note\ncontinued on a second line", "another note\nappended to it"]
    record, _, _ = _load(DATA / "latin1_crlf.gcg", registry)
    assert record.players[1][0] == "jos\u00e9" or record.players[0][0] == "jos\u00e9"
    record, _, _ = _load(DATA / "time_penalty.gcg", registry)
    assert [e.score for e in record.events[-2:]] == [-10, -10]


@needs_nwl20
def test_games_in_a_language_without_its_lexicon_are_refused_as_such(registry):
    """Polish is a distribution here but no Polish lexicon is at hand: the refusal says so (the game's language,
    or the tile the english distribution lacks), never a score mismatch."""
    for name, needle in (("polish_distribution.gcg", "no polish lexicon is available"),
                         ("polish_tiles.gcg", "not in the english letter distribution")):
        assert name in FOREIGN
        with pytest.raises(FormatError) as info:
            record, lex, _ = _load(DATA / name, registry)
            replay_gcg(record, lex)
        msg = str(info.value)
        assert needle in msg, msg
        assert "score" not in msg


@needs_nwl20
def test_contradictions_name_the_line(registry):
    text = (DATA / "challenge_after_out.gcg").read_text()
    lines = text.splitlines()
    # a challenge bonus whose cumulative does not add up
    bad = [ln.replace("(challenge) +5", "(challenge) +6") if "(challenge)" in ln else ln for ln in lines]
    k = next(i for i, ln in enumerate(bad) if "(challenge)" in ln) + 1
    with pytest.raises(FormatError, match=f"GCG line {k} .*do not add up"):
        replay_gcg(parse_gcg("\n".join(bad)), registry.get("NWL20"))
    # end-rack points that are not what the rack is worth (sums adjusted so that they add up)
    last = lines[-1].split()
    lines[-1] = " ".join(last[:-2] + [f"+{int(last[-2]) + 1}", str(int(last[-1]) + 1)])
    with pytest.raises(FormatError, match=f"GCG line {len(lines)} .*worth"):
        replay_gcg(parse_gcg("\n".join(lines)), registry.get("NWL20"))


def test_bom_crlf_and_a_pass_without_rack():
    head = "#player1 a A\n#player2 b B\n"
    data = b"\xef\xbb\xbf" + (head + ">a: ADEIRTW 8D WAITED +28 28\n>b:  - +0 0\n").replace("\n", "\r\n").encode()
    game = parse_gcg(decode_gcg(data))
    assert [e.type for e in game.events] == ["play", "pass"] and game.events[1].rack == ""


@needs_nwl20
def test_late_rack_pragmas_and_lexicon_fallback(registry):
    record = parse_gcg("#player1 a A\n#player2 b B\n#lexicon NWL18\n>a: ADEIRTW 8D WAITED +28 28\n"
                       "#rack2 EEGLNOS\n#incomplete\n")
    name, warnings = lexicon_for_record(record, registry.available(), "NWL20")
    assert name.startswith("NWL") and "NWL18" in warnings[0]
    res = replay_gcg(record, registry.get(name))
    assert sorted(res.positions[-1].racks[0]) == sorted(rack_tiles(res.game.ld, "EEGLNOS", "r"))
    assert res.positions[-1].racks[1] == []
    assert any("not finished" in w for w in res.warnings)
    with pytest.raises(FormatError, match="no polish lexicon is available"):
        lexicon_for_record(parse_gcg("#player1 a A\n#player2 b B\n#lexicon OSPS49\n"), ["NWL20"], "NWL20")


# ------------------------------------------------------------------ honest positions


def _minus(a, b):
    rest = list(a)
    for t in b:
        if t in rest:
            rest.remove(t)
    return rest


def _expected_known(record: GcgGame, ld, upto: int) -> dict[str, list[int]]:
    """What each player's opponent knows of their rack after `upto` events, from the file alone."""
    known: dict[str, list[int]] = {n: [] for n, _ in record.players}
    before: dict[str, list[int]] = {}
    last_play: dict[str, list[int]] = {}
    for ev in record.events[:upto]:
        if ev.type == "play":
            tiles = [0 if ch.islower() else rack_tiles(ld, ch, "t")[0] for ch in ev.word if ch != "."]
            before[ev.nick], last_play[ev.nick] = known[ev.nick], tiles
            known[ev.nick] = _minus(known[ev.nick], tiles)
        elif ev.type == "exchange":
            known[ev.nick] = []
        elif ev.type == "phony_returned":
            base = before[ev.nick]
            known[ev.nick] = base + _minus(last_play[ev.nick], base)
    return known


@needs_nwl20
@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_positions_know_only_what_the_file_revealed(path, registry):
    record, lex, _ = _load(path, registry)
    ld = lex.ld
    res = replay_gcg(record, lex)
    nicks = [p[0] for p in record.players]
    phony_seen = False
    for i, pos in enumerate(res.positions):
        nxt = record.events[i + 1] if i + 1 < len(record.events) else None
        if nxt is None or nxt.type not in MOVES or nxt.type == "phony_returned" or res.positions[i].zeros >= 6:
            continue
        if write_cgp(pos).split()[2] != write_cgp(res.positions[i]).split()[2]:
            continue
        on_turn, other = nxt.nick, nicks[1 - nicks.index(nxt.nick)]
        own = sorted(rack_tiles(ld, nxt.rack, "r", fold_case=True)) if nxt.rack else []
        if len(own) < 7 and pos.tiles_in_bag() > 0:
            own_ok = sorted(pos.racks[0]) == own or not nxt.rack
        else:
            own_ok = sorted(pos.racks[0]) == own
        assert own_ok, (i, pos.racks[0], nxt.rack)
        if pos.tiles_in_bag() == 0 and sum(pos.bag_counts()) == 0:
            continue  # the bag is empty: the opponent's rack is every unseen tile
        want = sorted(_expected_known(record, ld, i + 1)[other])
        assert sorted(pos.racks[1]) == want, (i, on_turn)
        phony_seen = phony_seen or bool(want)
        # the CGP carries the known tiles and nothing else, and becomes a game the engine accepts
        again = parse_cgp(write_cgp(pos))
        assert again == pos
        game_from_position(again, lex)
    if path.name == "phony_withdrawn.gcg":
        assert phony_seen


@needs_nwl20
def test_load_at_turn_hides_racks_revealed_later(registry):
    record, lex, _ = _load(DATA / "notes_pragmas.gcg", registry)
    for turn in (1, 5, 10):
        pos = replay_gcg(record, lex, turn=turn).positions[-1]
        assert pos.racks[1] == []
        assert sorted(pos.racks[0]) == sorted(rack_tiles(lex.ld, record.events[turn].rack, "r"))


@needs_nwl20
def test_show_counts_the_bag_without_the_opponent_rack(registry):
    """A position with 11 unseen tiles and the opponent's rack unknown has 4 tiles in the bag."""
    found = 0
    for path in OWN:
        record, lex, _ = _load(path, registry)
        for pos, game_bag in _positions_with_bag(record, lex):
            assert pos.tiles_in_bag() == game_bag
            assert f"bag {game_bag} tiles" in render_position(pos)
            if 1 <= game_bag <= 6:
                assert sum(pos.unseen_counts(0)) == game_bag + 7   # e.g. 11 unseen: 4 in the bag
                found += 1
    assert found


def _positions_with_bag(record, lex):
    for turn in range(1, len(record.events) + 1):
        res = replay_gcg(record, lex, turn=turn)
        # (a rack the file does not show stays unknown, and then the unseen tiles include it)
        if not res.game.game_over and record.events[turn - 1].type in ("play", "exchange") and \
                res.positions[-1].racks[0]:
            yield res.positions[-1], res.game.bag_size


@needs_nwl20
def test_record_ending_with_a_phony_withdrawn_on_an_empty_bag(registry):
    """The bag is empty, a phony is withdrawn and the file ends: the player's rack, never shown again, is the
    one the engine holds (the unseen tiles), in every position of the replay."""
    lines = (DATA / "phony_withdrawn.gcg").read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if line.startswith(">bot2: III 6M .I. +14 472"))
    record = parse_gcg("\n".join([*lines[: cut + 1], ">bot2: III -- -14 458"]) + "\n")
    name, _ = lexicon_for_record(record, registry.available(), "NWL20")
    res = replay_gcg(record, registry.get(name))
    last = res.positions[-1]
    assert last.scores == (370, 458) and last.tiles_in_bag() == 0
    ld = last.ld
    assert ld.rack_str(last.racks[0]) == "NRTT" and ld.rack_str(last.racks[1]) == "III"
    # before the phony: bot2 on turn, holding the III the engine knows (the file shows it only on the event)
    before_phony = res.positions[-3]
    assert before_phony.scores == (458, 370) and ld.rack_str(before_phony.racks[0]) == "III"
