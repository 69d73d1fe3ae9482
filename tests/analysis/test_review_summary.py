"""The summary of many reviewed games (analysis/review_summary.py): players by name across nicknames, the mistake
index and its mean per game, win% lost per turn, bingos missed against the engine's best, phonies (challenged off
by the record or outside the lexicon), the biggest mistakes across games, and its JSON and text renderings."""

from __future__ import annotations

import io

import pytest
from macondo_client.render import review_summary_json, review_summary_report
from rich.console import Console

from macondo_server.analysis.review import (
    AnalyzeOptions,
    Candidate,
    GameAnalysis,
    PlayerSummary,
    TurnAnalysis,
)
from macondo_server.analysis.review_summary import summarize
from macondo_server.api.convert import review_summary_to_pb


def _turn(event: int, player: int, nick: str, mistake: str = "none", win_loss: float | None = 0.0,
          **kw: object) -> TurnAnalysis:
    t = TurnAnalysis(event=event, line=event + 4, player=player, nick=nick, rack="AEINRST", bag=50, phase="sim",
                     played=Candidate(f"played{event}", 10), best=Candidate(f"best{event}", 20),
                     rank=1 if mistake == "none" else 2, candidates=5, win_loss=win_loss,
                     equity_loss=(win_loss or 0.0) * 2, mistake=mistake)
    for k, v in kw.items():
        setattr(t, k, v)
    return t


def _game(name: str, players: list[tuple[str, str]], turns: list[TurnAnalysis], reused: bool = False) -> GameAnalysis:
    return GameAnalysis(name=name, lexicon="NWL20", players=players, turns=turns,
                        summaries=[PlayerSummary(0, players[0][0]), PlayerSummary(1, players[1][0])],
                        turns_total=len(turns), stopped=False, warnings=[], options=AnalyzeOptions(), reused=reused)


@pytest.fixture
def games() -> list[GameAnalysis]:
    # Ann Smith plays as "ann" in the first game and "annie" in the second; Bob Jones as "bob" in both
    g1 = _game("one.gcg", [("ann", "Ann Smith"), ("bob", "Bob Jones")], [
        _turn(1, 0, "ann", "large", 12.0, best_bingo=True, bingo_available=True, missed_bingo=True),
        _turn(2, 1, "bob", "small", 1.2),
        _turn(3, 0, "ann", "none", 0.0),
        _turn(4, 1, "bob", "medium", 5.0, phony=True, phony_words=["ZZZ"]),
        _turn(5, 0, "ann", skipped="the file does not show this rack", withdrawn=True, win_loss=None),
    ])
    g2 = _game("two.gcg", [("bob", "Bob Jones"), ("annie", "Ann Smith")], [
        _turn(1, 0, "bob", "none", 0.0, best_bingo=True, played_bingo=True, bingo_available=True),
        _turn(2, 1, "annie", "medium", 6.5, withdrawn=True, phony=True, phony_challenged=True),
        _turn(3, 0, "bob", "large", None, phase="endgame", spread_loss=20, blown_endgame=True),
    ], reused=True)
    return [g1, g2]


def test_players_are_summed_by_name(games):
    s = summarize(games, top=5, failed=1)
    assert (s.games, s.analysed, s.reused, s.failed) == (2, 1, 1, 1)
    by = {r.name: r for r in s.players}
    assert set(by) == {"Ann Smith", "Bob Jones"}
    ann, bob = by["Ann Smith"], by["Bob Jones"]
    assert ann.nicks == ["ann", "annie"] and bob.nicks == ["bob"]
    assert (ann.games, bob.games) == (2, 2)
    assert ann.turns == 3 and bob.turns == 4          # the skipped turn is not analysed
    assert (ann.small, ann.medium, ann.large) == (0, 1, 1)
    assert (bob.small, bob.medium, bob.large) == (1, 1, 1)
    assert ann.mistake_index == pytest.approx(1.5) and ann.mistake_index_per_game == pytest.approx(0.75)
    assert bob.mistake_index == pytest.approx(1.7) and bob.mistake_index_per_game == pytest.approx(0.85)
    # win% lost per turn: over the turns that have a win-probability loss (not the endgame)
    assert ann.win_lost == pytest.approx(18.5) and ann.win_lost_per_turn == pytest.approx(18.5 / 3)
    assert bob.win_lost == pytest.approx(6.2) and bob.win_turns == 3
    assert ann.best_bingos_missed == 1 and bob.best_bingos_missed == 0      # bob played the bingo
    assert ann.bingos_missed == 1 and bob.bingos_available == 1
    # phonies: a withdrawn play (skipped or not) and a word outside the lexicon
    assert (ann.phonies, ann.phonies_challenged) == (2, 2)
    assert (bob.phonies, bob.phonies_challenged) == (1, 0)
    assert bob.blown_endgames == 1
    # lowest mistake index per game first
    assert [r.name for r in s.players] == ["Ann Smith", "Bob Jones"]


def test_biggest_mistakes_across_games(games):
    s = summarize(games, top=2)
    bob = next(r for r in s.players if r.name == "Bob Jones")
    assert [(m.game, m.event, m.size) for m in bob.biggest] == [("two.gcg", 3, "large"), ("one.gcg", 4, "medium")]
    ann = next(r for r in s.players if r.name == "Ann Smith")
    assert [(m.game, m.event) for m in ann.biggest] == [("one.gcg", 1), ("two.gcg", 2)]
    assert ann.biggest[0].played == "played1" and ann.biggest[0].best == "best1"
    assert summarize(games, top=0).players[0].biggest == []
    with pytest.raises(ValueError, match="top must be 0 to 100"):
        summarize(games, top=101)


def test_json_and_report(games):
    msg = review_summary_to_pb(summarize(games, top=3, failed=1))
    doc = review_summary_json(msg)
    assert doc["games"] == 2 and doc["analysed"] == 1 and doc["reused"] == 1 and doc["failed"] == 1
    ann = doc["players"][0]
    assert ann["name"] == "Ann Smith" and ann["mistakes"] == {"small": 0, "medium": 1, "large": 1}
    assert ann["mistake_index_per_game"] == 0.75 and ann["best_bingos_missed"] == 1
    assert ann["biggest_mistakes"][0] == {
        "game": "one.gcg", "event": 1, "line": 5, "nick": "ann", "phase": "sim", "played": "played1",
        "best": "best1", "size": "large", "win_loss": 12.0, "spread_loss": None, "equity_loss": 24.0,
        "loss_is_bound": False, "complete": True}
    out = io.StringIO()
    review_summary_report(msg, Console(file=out, width=200, no_color=True))
    text = out.getvalue()
    assert "Review of 2 games: 1 analysed, 1 taken from the review store; 1 could not be analysed" in text
    assert "Ann Smith (ann, annie)" in text
    assert "one.gcg event 1 (line 5): played1 instead of best1 (-12.0% win, large)" in text
    assert "two.gcg event 3 (line 7): played3 instead of best3 (-20 spread, large)" in text


def test_empty_summary():
    s = summarize([])
    assert (s.games, s.players) == (0, [])
