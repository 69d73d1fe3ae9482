"""Conversion between protobuf messages and engine results: the only module that knows both."""

from __future__ import annotations

from .autoplay import AutoplaySummary
from .engine import GeneratedMove
from .formats import Position, format_move
from .pb.macondo.v1 import engine_pb2 as pb

_KIND = {"place": pb.TILE_PLACEMENT, "exchange": pb.EXCHANGE, "pass": pb.PASS}


def move_to_pb(m: GeneratedMove, pos: Position) -> pb.Move:
    ld = pos.ld
    mv = m.move
    if mv.kind == "place":
        tiles = ld.word_str(list(mv.tiles))
    elif mv.kind == "exchange":
        tiles = ld.rack_str(list(mv.tiles))
    else:
        tiles = ""
    return pb.Move(
        notation=format_move(mv, ld, pos.board),
        type=_KIND[mv.kind],
        row=mv.row,
        column=mv.col,
        direction=pb.VERTICAL if mv.vertical else pb.HORIZONTAL,
        tiles=tiles,
        score=m.score,
        equity=m.equity,
        leave=ld.rack_str(list(m.leave)),
        tiles_played=m.tiles_played,
        display=format_move(mv, ld, pos.board, style="table"),
    )


def autoplay_to_pb(summary: AutoplaySummary, job_id: str, total: int, final: bool, stopped: bool) -> pb.AutoplayProgress:
    return pb.AutoplayProgress(
        job_id=job_id,
        games_done=summary.games,
        games_total=total,
        wins=summary.wins,
        draws=summary.draws,
        mean_score=summary.mean_score,
        bingos_per_game=summary.bingos_per_game,
        turns_per_game=summary.turns_per_game,
        games_per_second=summary.games_per_second,
        elapsed_seconds=summary.seconds,
        win_rate=summary.win_rate,
        win_rate_ci95=summary.win_rate_ci95,
        mean_spread=summary.mean_spread,
        final=final,
        stopped=stopped,
    )
