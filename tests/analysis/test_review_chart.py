"""The win-probability chart of a reviewed game (analysis/review_chart.py, `macondo analyze GAME --chart out.png`):
a PNG of the expected size with a point per turn that has a win probability, mistakes marked; one-line errors
for a path it cannot write and without matplotlib."""

from __future__ import annotations

import json
import sys

import pytest

from macondo_server.analysis.review import AnalyzeOptions, analyze_record
from macondo_server.analysis.review_chart import ChartError, chart_points, draw_chart, mistakes_charted
from macondo_server.cli import main
from macondo_server.model.gcg import read_gcg_file

from conftest import GCG_DATA, LEXICA, needs_nwl20

# a game whose file leaves two racks out (turns 4 and 6: not analysed, valued by the win table)
GAME = GCG_DATA / "missing_racks.gcg"
TINY = ["--sim-iterations", "8", "--sim-plays", "2", "--sim-plies", "1", "--peg-plays", "1",
        "--peg-endgame-plies", "1", "--endgame-plies", "1", "--endgame-candidates", "0", "--threads", "2",
        "--seed", "7"]
TINY_OPTS = dict(sim_iterations=8, sim_plays=2, sim_plies=1, peg_plays=1, peg_endgame_plies=1, endgame_plies=1,
                 endgame_candidates=0, threads=2, seed=7)


@pytest.fixture(scope="module")
def analysis(engine):
    return analyze_record(engine, read_gcg_file(str(GAME)), AnalyzeOptions(**TINY_OPTS), name=GAME.name)


@needs_nwl20
def test_every_turn_has_a_win_probability(analysis):
    assert analysis.turns and all(t.win_after is not None and 0 <= t.win_after <= 100 for t in analysis.turns)
    sources = {t.event: t.win_source for t in analysis.turns}
    assert sources[4] == sources[6] == "table"                 # the turns the file gives no rack for
    assert {sources[t.event] for t in analysis.turns if not t.skipped} <= {"sim", "peg", "endgame"}
    for t in analysis.turns:
        if t.win_source in ("sim", "peg"):
            assert t.win_best is not None and t.win_best - t.win_after == pytest.approx(t.win_loss or 0.0)
        if t.win_source == "endgame":
            assert t.win_after in (0.0, 50.0, 100.0)
    points = chart_points(analysis)
    assert [p.event for p in points] == sorted(t.event for t in analysis.turns)
    # player 1's win probability: the mover's own, or its complement
    for p, t in zip(points, sorted(analysis.turns, key=lambda t: t.event), strict=True):
        assert p.win == pytest.approx(t.win_after if t.player == 0 else 100 - (t.win_after or 0))
    marked = mistakes_charted(analysis, threshold=0.0)
    assert {t.event for t in marked} == {p.event for p in points if p.loss is not None}
    assert all(t.win_source != "table" for t in marked)


@needs_nwl20
def test_chart_png_from_the_cli(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="the chart extra (matplotlib) is not installed")
    import matplotlib.image

    out = tmp_path / "chart.png"
    store = tmp_path / "store"
    assert main(["--data-dir", str(LEXICA), "review", str(GAME), *TINY, "--chart", str(out), "--store",
                 str(store)]) == 0
    assert "Summary" in capsys.readouterr().out
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000
    img = matplotlib.image.imread(str(out))
    assert img.shape[:2] == (605, 1210)
    assert img[..., :3].std() > 0.05                   # not a blank image
    # several games: a chart per game in a folder (the first one's analysis taken from the store)
    folder = tmp_path / "charts"
    folder.mkdir()
    two = [str(GAME), str(GCG_DATA / "phony_withdrawn.gcg")]
    assert main(["--data-dir", str(LEXICA), "analyze", *two, *TINY, "--chart", str(folder), "--json", "--store",
                 str(store)]) == 0
    assert json.loads(capsys.readouterr().out)["reused"] == 1
    assert (folder / "missing_racks.png").read_bytes() == data      # the same chart from the stored analysis
    assert sorted(p.name for p in folder.iterdir()) == ["missing_racks.png", "phony_withdrawn.png"]


@pytest.mark.parametrize("target, needle", [
    ("missing/dir/chart.png", "does not exist"),
    ("chart.txt", "must end in .png, .svg or .pdf"),
])
def test_bad_chart_path_is_a_one_line_error(tmp_path, capsys, target, needle):
    code = main(["--data-dir", str(LEXICA), "analyze", str(GAME), *TINY, "--chart", str(tmp_path / target)])
    assert code == 1
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_several_games_need_a_chart_folder(tmp_path, capsys):
    code = main(["--data-dir", str(LEXICA), "analyze", str(GAME), str(GCG_DATA / "phony_withdrawn.gcg"),
                 "--chart", str(tmp_path / "one.png")])
    assert code == 1
    err = capsys.readouterr().err.strip()
    assert "must be an existing folder" in err and "\n" not in err


@needs_nwl20
def test_unwritable_and_without_matplotlib(analysis, tmp_path, monkeypatch):
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(ChartError, match="is a folder"):
        draw_chart(analysis, tmp_path / "dir.png")
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ChartError, match="needs matplotlib"):
        draw_chart(analysis, tmp_path / "x.png")


def test_without_matplotlib_the_cli_refuses_before_analysing(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert main(["--data-dir", str(LEXICA), "analyze", str(GAME), "--chart", str(tmp_path / "c.png")]) == 1
    err = capsys.readouterr().err.strip()
    assert "needs matplotlib" in err and "\n" not in err
