from __future__ import annotations

import json

from macondo_server.analysis.selfplay import BotSpec, run_autoplay
from macondo_server.cli import main
from macondo_server.engine.replay import replay_gcg
from macondo_server.model.gcg import read_gcg_file

from conftest import needs_nwl20


def _bots(registry, name="SCOWL70"):
    lex = registry.get(name)
    return BotSpec(lex, lex.klv, "one"), BotSpec(lex, lex.klv, "two")


def test_deterministic_across_threads_and_runs(registry, tmp_path):
    b1, b2 = _bots(registry)
    runs = [run_autoplay(b1, b2, 12, seed=9, threads=t) for t in (1, 2, 2)]
    recs = [[(r.index, r.scores, r.bingos, r.turns) for r in s.records] for s in runs]
    assert recs[0] == recs[1] == recs[2]
    s = runs[0]
    assert s.games == 12 and sum(s.wins) + s.draws == 12
    assert all(r.end_reason in ("standard", "consecutive_zeros") for r in s.records)
    other = run_autoplay(b1, b2, 12, seed=10, threads=1)
    assert [r.scores for r in other.records] != [r.scores for r in s.records]


def test_pairs_share_draws(registry):
    b1, b2 = _bots(registry)
    s = run_autoplay(b1, b2, 4, seed=2, pairs=True)
    # identical bots with identical draws: the seat that moves first gets the same game
    a, b = s.records[0], s.records[1]
    assert a.scores == (b.scores[1], b.scores[0]) and a.turns == b.turns


def test_gcg_output_replays_to_the_same_scores(registry, tmp_path):
    b1, b2 = _bots(registry)
    s = run_autoplay(b1, b2, 6, seed=4, threads=2, gcg_dir=str(tmp_path))
    lex = registry.get("SCOWL70")
    for rec in s.records:
        record = read_gcg_file(str(tmp_path / f"game-{rec.index:05d}.gcg"))
        res = replay_gcg(record, lex)
        seat_scores = res.game.scores
        by_bot = seat_scores if rec.first_bot == 0 else (seat_scores[1], seat_scores[0])
        assert tuple(by_bot) == rec.scores
        assert res.game.game_over


def test_cli_autoplay_json_is_reproducible(capsys):
    outs = []
    for _ in range(2):
        assert main(["autoplay", "--games", "10", "--seed", "7", "--threads", "2", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        data.pop("seconds")
        data.pop("games_per_second")
        outs.append(data)
    assert outs[0] == outs[1]
    assert set(outs[0]) >= {"games", "wins", "draws", "mean_score", "bingos_per_game", "turns_per_game"}


@needs_nwl20
def test_nwl20_bots_play_sensible_games(registry):
    b1, b2 = _bots(registry, "NWL20")
    s = run_autoplay(b1, b2, 20, seed=1, threads=2)
    assert 350 < sum(s.mean_score) / 2 < 500       # static bots average about 420-440 points
    assert 15 < s.turns_per_game < 35
    assert 1.0 < sum(s.bingos_per_game) / 2 < 3.0


def test_cli_commit_and_load_errors(capsys, tmp_path):
    empty = "/".join(["15"] * 15)
    assert main(["commit", f"{empty} AEINQST/ 0/0 0", "8G QI", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["score"] == 22 and data["scores"] == [0, 22] and len(data["dealt_racks"][1]) == 7
    # honest: the opponent's rack was unknown and stays so; the mover's new tiles are hidden from them
    assert data["racks"] == ["", ""] and data["cgp"].split()[1] == "/"
    assert main(["commit", f"{empty} AEINQST/ 0/0 0", "8A QI"]) == 1
    assert "centre square" in capsys.readouterr().err
    assert main(["commit", f"{empty} AEINQST/ 0/0 0", "8G QIS"]) == 1
    assert "QIS is not a word" in capsys.readouterr().err
    assert main(["commit", f"{empty} AEINQST/ 0/0 0", "8G QZ"]) == 1
    assert "does not hold" in capsys.readouterr().err
    assert main(["load", str(tmp_path / "none.gcg")]) == 1
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.gcg"
    bad.write_text("#player1 a A\n#player2 b B\n>a: QI 8G QI +99 99\n")
    assert main(["load", str(bad)]) == 1
    assert "scores 22, the file says 99" in capsys.readouterr().err
