"""A reviewed game drawn as a chart: each player's win probability turn by turn, mistakes marked
(`macondo analyze GAME --chart out.png`). Needs matplotlib (the `chart` extra).

The win probability after each turn is the review's own (TurnAnalysis.win_after, for the player who moved; the
other player's is its complement): the played move's simulated or pre-endgame figure, the solved endgame's
outcome, or, for a turn without an engine figure (not analysed, a phony left standing), the win table's estimate
by spread and unseen tiles (drawn hollow). A mistake is a turn whose win probability fell by at least
`threshold` points between the engine's best move and the move played (win_best - win_after); it is marked on
its player's line with the drop drawn from the best move's value, and the biggest are labelled with the move
played, the best and the loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from macondo_server.analysis.review import GameAnalysis, TurnAnalysis

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

DEFAULT_THRESHOLD = 4.0     # win-probability points: Woogles' medium mistakes and above
MAX_LABELS = 8              # mistakes labelled (the biggest); the others are marked only
FORMATS = ("png", "svg", "pdf")
COLOURS = ("#1f77b4", "#d95f02")
MISTAKE_COLOUR = "#c0392b"


class ChartError(ValueError):
    """The chart cannot be drawn or written (one line)."""


@dataclass
class ChartPoint:
    event: int
    mover: int              # 0 or 1
    win: float              # player 1's win probability after the event, percent
    estimate: bool          # from the win table, not an engine
    loss: float | None      # the mover's win-probability loss against the engine's best, points
    played: str
    best: str
    phony: bool = False     # the move played formed a word outside the lexicon (challenged off: valued as a pass)


def chart_points(res: GameAnalysis) -> list[ChartPoint]:
    """A point per turn that has a win probability after it, in event order."""
    out = []
    for t in sorted(res.turns, key=lambda t: t.event):
        if t.win_after is None:
            continue
        loss = max(0.0, t.win_best - t.win_after) if t.win_best is not None and t.win_source != "table" else None
        win = t.win_after if t.player == 0 else 100.0 - t.win_after
        out.append(ChartPoint(t.event, t.player, win, t.win_source == "table", loss, t.played.move,
                              t.best.move if t.best is not None else "", t.phony or t.withdrawn))
    return out


def check_chart_path(path: str | Path) -> Path:
    """The chart's file: its folder must exist and its suffix name a format (png, svg, pdf)."""
    p = Path(path)
    fmt = p.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ChartError(f"chart {p}: the file name must end in .png, .svg or .pdf")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ChartError(f"chart {p}: folder {parent} does not exist")
    if p.is_dir():
        raise ChartError(f"chart {p} is a folder")
    return p


def require_matplotlib() -> None:
    """ChartError unless matplotlib can be imported (checked before an analysis that is to be charted)."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise ChartError("the chart needs matplotlib: pip install 'macondo-py[chart]'") from None


def _mistake_label(pt: ChartPoint) -> str:
    best = f", best {pt.best}" if pt.best and pt.best != pt.played else ""
    phony = " (phony)" if pt.phony else ""
    return f"{pt.event}: {pt.played or '?'}{phony}{best} (-{pt.loss:.1f}%)"


def _place_labels(fig: Figure, ax: Axes, points: list[ChartPoint]) -> None:
    """Label the mistakes in event order, each at the first of a few offsets (away from 50%, then towards it)
    where its box overlaps no label placed before it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    fig.draw_without_rendering()             # the layout, so that boxes are measured where they will be
    placed: list[Bbox] = []
    for pt in sorted(points, key=lambda pt: pt.event):
        after = pt.win if pt.mover == 0 else 100.0 - pt.win
        up = after < 50
        steps = [(1 if up else -1) * d for d in (22, 44, 66, 88)] + [(-1 if up else 1) * d for d in (22, 44)]
        ann = None
        for dy in steps:
            if ann is not None:
                ann.remove()
            ann = ax.annotate(
                _mistake_label(pt), (pt.event, after), xytext=(10, dy), textcoords="offset points", fontsize=8,
                color=MISTAKE_COLOUR, ha="left", va="bottom" if dy > 0 else "top",
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": MISTAKE_COLOUR, "alpha": 0.9},
                arrowprops={"arrowstyle": "-", "color": MISTAKE_COLOUR, "linewidth": 0.6}, zorder=5)
            box = ann.get_window_extent(renderer)
            if not any(box.overlaps(b) for b in placed) and fig.bbox.contains(box.x0, box.y0) \
                    and fig.bbox.contains(box.x1, box.y1):
                break
        if ann is not None:
            placed.append(ann.get_window_extent(renderer))


def _who(res: GameAnalysis, p: int) -> str:
    nick, real = res.players[p] if p < len(res.players) else (f"player {p + 1}", "")
    return real if real and real != nick else nick


def draw_chart(res: GameAnalysis, path: str | Path, threshold: float = DEFAULT_THRESHOLD) -> Path:
    """Write the chart of `res` to `path` (png, svg or pdf by its suffix); returns the path."""
    p = check_chart_path(path)
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    points = chart_points(res)
    if not points:
        raise ChartError(f"chart {p}: no turn of {res.name or 'the game'} has a win probability to draw")
    fig = Figure(figsize=(11, 5.5), dpi=110, layout="constrained")
    ax = fig.add_subplot()
    xs = [pt.event for pt in points]
    for player in (0, 1):
        ys = [pt.win if player == 0 else 100.0 - pt.win for pt in points]
        colour = COLOURS[player]
        ax.plot(xs, ys, color=colour, linewidth=1.8, zorder=2)
        for estimate in (False, True):
            shown = [(x, y) for x, y, pt in zip(xs, ys, points, strict=True) if pt.estimate == estimate]
            if not shown:
                continue
            sx, sy = [x for x, _ in shown], [y for _, y in shown]
            if estimate:
                ax.scatter(sx, sy, s=26, facecolors="white", edgecolors=colour, zorder=3)
            else:
                ax.scatter(sx, sy, s=18, color=colour, zorder=3)
    mistakes = [pt for pt in points if pt.loss is not None and pt.loss >= threshold]
    labelled = {id(pt) for pt in sorted(mistakes, key=lambda pt: -(pt.loss or 0.0))[:MAX_LABELS]}
    for pt in mistakes:
        assert pt.loss is not None
        after = pt.win if pt.mover == 0 else 100.0 - pt.win
        ax.vlines(pt.event, after, min(100.0, after + pt.loss), colors=MISTAKE_COLOUR, linestyles="dashed",
                  linewidth=1.2, zorder=2)
        ax.scatter([pt.event], [after], marker="X", s=90, color=MISTAKE_COLOUR, edgecolors="black",
                   linewidths=0.5, zorder=4)
    ax.axhline(50, color="grey", linewidth=0.8, linestyle=":", zorder=1)
    ax.set_ylim(-2, 102)
    ax.set_xlim(min(xs) - 1, max(xs) + 1)
    ax.set_xlabel("event (as the review numbers them)")
    ax.set_ylabel("win probability after the move (%)")
    ax.grid(True, alpha=0.25)
    names = [_who(res, 0), _who(res, 1)]
    ax.set_title(f"{res.name or 'game'}: {names[0]} vs {names[1]} ({res.lexicon})", fontsize=11)
    handles = [Line2D([], [], color=COLOURS[0], marker="o", markersize=4, label=names[0]),
               Line2D([], [], color=COLOURS[1], marker="o", markersize=4, label=names[1]),
               Line2D([], [], color="grey", marker="o", markersize=5, markerfacecolor="white", linestyle="",
                      label="win table estimate (no engine figure)"),
               Line2D([], [], color=MISTAKE_COLOUR, marker="X", markersize=8, linestyle="dashed",
                      label=f"mistake: {threshold:g}+ points below the best move")]
    ax.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9)
    _place_labels(fig, ax, [pt for pt in mistakes if id(pt) in labelled])
    try:
        fig.savefig(p, format=p.suffix.lower().lstrip("."))
    except OSError as exc:
        raise ChartError(f"chart {p}: cannot be written ({exc.strerror or type(exc).__name__})") from None
    return p


def mistakes_charted(res: GameAnalysis, threshold: float = DEFAULT_THRESHOLD) -> list[TurnAnalysis]:
    """The turns the chart marks as mistakes."""
    marked = {pt.event for pt in chart_points(res) if pt.loss is not None and pt.loss >= threshold}
    return [t for t in res.turns if t.event in marked]
