"""Conversion between protobuf messages and engine results: the only module that knows both."""

from __future__ import annotations

from macondo_server.analysis.selfplay import AutoplaySummary
from macondo_server.api.sessions import Session
from macondo_server.engine.facade import GeneratedMove
from macondo_server.engine.replay import position_from_game
from macondo_server.model.cgp import write_cgp
from macondo_server.model.gcg import GcgEvent, write_gcg
from macondo_server.model.move import Move, format_move
from macondo_server.model.position import Position
from macondo_server.model.render import render_position
from macondo_server.pb.macondo.v1 import engine_pb2 as pb

_KIND = {"place": pb.TILE_PLACEMENT, "exchange": pb.EXCHANGE, "pass": pb.PASS}


def move_to_pb(m: GeneratedMove, pos: Position) -> pb.Move:
    return plain_move_to_pb(m.move, pos, m.score, m.equity, list(m.leave), m.tiles_played)


def plain_move_to_pb(mv: Move, pos: Position, score: int, equity: float = 0.0, leave: list[int] | None = None,
                     tiles_played: int | None = None) -> pb.Move:
    ld = pos.ld
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
        score=score,
        equity=equity,
        leave=ld.rack_str(leave or []),
        tiles_played=mv.tiles_played if tiles_played is None else tiles_played,
        display=format_move(mv, ld, pos.board, style="table"),
    )


def game_to_pb(session: Session) -> pb.GameState:
    """The game as the player on turn sees it; the opponent's rack shows once the bag is empty (it is then
    the unseen tiles) or the game is over."""
    game = session.game
    ld = session.lexicon.ld
    pos = position_from_game(game, {"lex": session.lexicon.name},
                             show_opponent=game.game_over or game.bag_size == 0)
    if session.view is not None:
        pos = session.view       # as the player on turn knows it (an unknown rack stays unknown)
    history = []
    for player, kind, row, col, vertical, tiles, score, rack in game.history():
        mv = Move(kind, row, col, vertical, tuple(tiles))
        history.append(pb.PlayedMove(player=player, move=plain_move_to_pb(mv, pos, score),
                                     rack=ld.rack_str(rack)))
    p = game.on_turn
    names = (session.players[p], session.players[1 - p])
    counts = pos.unseen_counts(0)
    gcg = ""
    if session.from_start:
        gcg = write_gcg(session.record)
    events = [pb.GameEvent(number=n, player=session.player_of(ev), nick=ev.nick, type=ev.type, rack=ev.rack,
                           move=event_text(ev), score=ev.score, cumulative=ev.cumulative, note=ev.note)
              for n, ev in enumerate(session.record.events, 1)]
    return pb.GameState(
        game_id=session.game_id,
        cgp=write_cgp(pos),
        scores=list(game.scores),
        on_turn=p,
        players=session.players,
        bag_count=game.bag_size,
        game_over=game.game_over,
        end_reason=game.end_reason_name,
        history=history,
        lexicon=session.lexicon.name,
        display=render_position(pos, names, game.bag_size) + ("\ngame over (" + game.end_reason_name + ")" if game.game_over else ""),
        rack=ld.rack_str(pos.racks[0]),
        unseen="".join(ld.label(m) * counts[m] for m in range(ld.size)),
        gcg=gcg,
        warnings=session.warnings,
        turn=session.cursor,
        num_events=len(session.record.events),
        events=events,
        challenge_rule=session.rule,
        known_opp=ld.rack_str(pos.racks[1]),
    )


def event_text(ev: GcgEvent) -> str:
    """A GCG event's move as the list shows it: '8D WAITED', 'exch ABC', 'pass', '(challenge)', '(EFV)'."""
    if ev.type == "play":
        return f"{ev.position} {ev.word}"
    if ev.type == "exchange":
        return f"exch {ev.exchanged}"
    if ev.type == "pass":
        return "pass"
    if ev.type == "phony_returned":
        return "(phony withdrawn)"
    if ev.type == "challenge_bonus":
        return "(challenge)"
    if ev.type == "time_penalty":
        return "(time)"
    return f"({ev.exchanged})"


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


def sim_to_pb(res, job_id: str, stopped: bool) -> pb.SimulateProgress:
    plays = []
    for p in res.plays:
        g = p.gen
        plays.append(pb.SimmedPlayInfo(
            move=plain_move_to_pb(g.move, p.pos, g.score, g.equity, list(g.leave), g.tiles_played),
            win_pct=p.win_pct, win_pct_stderr=p.win_pct_stderr, equity=p.equity, equity_stderr=p.equity_stderr,
            pruned=p.pruned, iterations=p.n,
            ply_stats=[pb.PlyStats(mean_score=s, bingo_pct=b) for s, b in zip(p.ply_scores, p.ply_bingo_pct,
                                                                                strict=True)],
        ))
    out = pb.SimulateProgress(job_id=job_id, plays=plays, iterations=res.iterations, elapsed_seconds=res.seconds,
                              final=res.final, stopped=stopped, stop_reason=res.stopped_reason)
    inf = getattr(res, "inference", None)
    if inf is not None:
        out.inference.CopyFrom(pb.InferenceSummary(
            play=inf["play"], method=inf["method"], racks_judged=inf["racks_judged"],
            racks_consistent=inf["racks_consistent"], leaves=inf["leaves"], tolerance=inf["tolerance"],
            top=[pb.InferredLeave(leave=v["leave"], posterior=v["posterior"], prior=v["prior"]) for v in inf["top"]],
            drawn_from_inference=inf["drawn_from_inference"]))
    return out


def endgame_to_pb(res, pos: Position, job_id: str, final: bool, stopped: bool) -> pb.EndgameProgress:
    line = []
    board_pos = pos
    if res is None:
        return pb.EndgameProgress(job_id=job_id, final=final, stopped=stopped)
    for m in res.line:
        pm = plain_move_to_pb(m.move, board_pos, m.score)
        pm.notation = m.text
        pm.display = m.table
        line.append(pb.EndgameMove(move=pm, estimated=m.estimated))
    return pb.EndgameProgress(job_id=job_id, value=res.value, final_spread=res.final_spread, best_line=line,
                              depth=res.depth, nodes=res.nodes, elapsed_seconds=res.seconds, final=final,
                              stopped=stopped, complete=res.complete)


def peg_to_pb(res, pos: Position, job_id: str, stopped: bool, summary_only: bool = False) -> pb.PreEndgameProgress:
    from macondo_server.analysis.peg.options import OUTCOME_NAMES
    from macondo_server.analysis.peg.result import outcome_counts

    tot = res.total_permutations
    plays = []
    for p in res.plays:
        info = pb.PEGPlayInfo(
            move=plain_move_to_pb(p.move, pos, p.score), wins=p.points,
            win_pct=100 * p.points / tot if tot else 0.0, cut_off=p.cut_off, unresolved=p.unresolved,
            outcomes=[] if summary_only else [
                pb.PEGOutcomeInfo(draw=g.label, result=OUTCOME_NAMES[g.outcome], weight=g.weight)
                for g in p.groups if g.outcome is not None],
            outcomes_all=[] if summary_only else [
                pb.PEGOutcomeInfo(draw=g.label, weight=g.weight,
                                  result="pending" if g.outcome is None else OUTCOME_NAMES[g.outcome],
                                  quick="" if g.quick is None else OUTCOME_NAMES[g.quick])
                for g in p.groups],
            complete_at=p.complete_at, quick_wins=p.quick_points, quick_draws_done=p.quick_done,
            estimate=p.estimate,
            lower_wins=p.lower, upper_wins=p.upper, draws_done=p.groups_done, draws_total=p.groups_total,
            pending_weight=p.pending,
            outcome_counts=[pb.PEGOutcomeCount(result=name, draws=c["draws"], weight=c["weight"])
                            for name, c in outcome_counts(p).items()],
        )
        if p.spread is not None:
            info.spread = p.spread
        plays.append(info)
    lead = res.leader
    eta = res.eta_seconds
    return pb.PreEndgameProgress(
        job_id=job_id, plays=plays, total_permutations=tot, draws_done=res.done_jobs, draws_total=res.total_jobs,
        endgames=res.endgames, nested_calls=res.nested_calls, nested_cache_hits=res.nested_hits,
        elapsed_seconds=res.seconds, final=res.final,
        stopped=stopped, complete=res.complete, winner=lead.text if lead else "",
        leader_reason=res.leader_reason, no_leader_reason=res.no_leader_reason,
        leader_lower=lead.lower if lead else 0.0, leader_upper=lead.upper if lead else 0.0,
        best_lower=res.best_lower, best_upper=res.best_upper, endgames_per_second=res.endgames_per_second,
        draw_groups_left=res.groups_left, endgames_left=res.endgames_left, eta_seconds=eta or 0.0,
        finished=res.finished, phase=res.phase, leader_depth=res.leader_depth,
        quick_draws_done=res.quick_done_jobs, endgame_plies=res.endgame_plies, opponent_model=res.opponent_model,
        opponent_solves=res.opp_solves,
        reused_verdicts=res.reused, checkpointed_verdicts=res.checkpointed, cluster_workers=res.cluster_workers,
        cluster_tasks=res.cluster_tasks,
    )
