"""Conversion between protobuf messages and engine types: the only module that knows both.

Requests become solver options (`*_options`); engine results become the messages the RPCs stream
(`*_to_pb`). The CLI converts its results here too and draws them with the client's renderers
(macondo_client.render), so the server, the shell and the command line show one shape of each result."""

from __future__ import annotations

from dataclasses import replace

from engine_cy.alphabet import LetterDistribution
from macondo_server.analysis.endgame import EndgameOptions, EndgameResult, LineMove, RankedLine
from macondo_server.analysis.infer import (
    DEFAULT_HISTORY,
    DEFAULT_MODEL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOLERANCE,
    InferOptions,
    InferResult,
)
from macondo_server.analysis.peg.options import (
    OUTCOME_NAMES,
    QUICK2_PLIES,
    QUICK2_REPLIES,
    QUICK_PLIES,
    QUICK_REPLIES,
    PegOptions,
)
from macondo_server.analysis.peg.result import PegPlay, PegResult
from macondo_server.analysis.review import (
    AnalyzeOptions,
    Candidate,
    GameAnalysis,
    PlayerSummary,
    TurnAnalysis,
)
from macondo_server.analysis.review_summary import MistakeRef, PlayerReview, ReviewSummary
from macondo_server.analysis.selfplay import AutoplaySummary
from macondo_server.analysis.sim import SCORE_BIN_WIDTH, SimOptions, SimPlay, SimResult
from macondo_server.api.sessions import Session
from macondo_server.engine.facade import EQUITY_SCALE, GeneratedMove, GenResult
from macondo_server.engine.replay import position_from_game
from macondo_server.engine.settings import DEFAULT_ENDGAME_CAP, DEFAULT_PEG_CAP, DEFAULT_SIM_CAP
from macondo_server.model.cgp import write_cgp
from macondo_server.model.gcg import GcgEvent, write_gcg
from macondo_server.model.move import Move, format_move
from macondo_server.model.position import Position
from macondo_server.model.render import render_position
from macondo_server.pb.macondo.v1 import engine_pb2 as pb

_KIND = {"place": pb.TILE_PLACEMENT, "exchange": pb.EXCHANGE, "pass": pb.PASS}
SIM_INFERENCE_TOP = 5          # leaves a simulation's inference summary lists


# ------------------------------------------------------------------ requests -> options


def generate_options(request: pb.GenerateMovesRequest) -> tuple[int | None, str]:
    """How many moves (None: all) and the order of a GenerateMoves request."""
    n = None if request.all else (request.num_plays or 15)
    return n, "score" if request.sort == pb.SORT_SCORE else "equity"


def sim_options(request: pb.SimulateRequest, threads: int, infer_max_racks: int) -> SimOptions:
    """A Simulate request's options (defaults filled); `infer_max_racks` is the request's, bounded by the
    server's limits. Iterations 0 is not given: with a time limit the run ends by the time or the stopping rule,
    without one it takes the default cap (SimOptions.iteration_cap)."""
    return SimOptions(
        plies=request.plies if request.HasField("plies") else 2,
        num_plays=request.num_plays or 15, plays=list(request.plays), iterations=request.iterations or None,
        stop=request.stop or None, stop_rule=request.stop_rule or "z", confidence=request.confidence or None,
        max_time=request.max_time, threads=threads,
        seed=request.seed, opp_rack=request.opp_rack or None, lexicon=request.position.lexicon or None,
        infer_play=request.infer_play or None,
        infer_withdrawn=request.infer_withdrawn,
        infer_tolerance=request.infer_tolerance if request.HasField("infer_tolerance") else 3.0,
        infer_max_racks=infer_max_racks,
        infer_model=request.infer_model or None,
        infer_temperature=request.infer_temperature if request.HasField("infer_temperature") else None,
        stats=request.stats,
    )


def endgame_options(request: pb.SolveEndgameRequest, threads: int, tt_megabytes: int) -> EndgameOptions:
    """Plies 0 is not given: with a time limit the search deepens until solved or out of time, without one it
    takes the default depth (EndgameOptions.plies_cap)."""
    return EndgameOptions(
        plies=request.plies or None, max_time=request.max_time, threads=threads,
        first_win=request.first_win, heuristics=not request.disable_heuristics,
        tt_megabytes=tt_megabytes, lexicon=request.position.lexicon or None,
        top_k=request.top_k or 1, also_solve=list(request.also_solve),
    )


def peg_options(request: pb.SolvePreEndgameRequest, threads: int, tt_megabytes: int) -> PegOptions:
    """A SolvePreEndgame request's options; an eventuality runs on one thread without the tiebreak."""
    opts = PegOptions(
        endgame_plies=request.endgame_plies or 4, only_solve=list(request.only_solve),
        max_tiles_left=request.max_tiles_left if request.HasField("max_tiles_left") else 1,
        max_nested_depth=request.max_nested_depth if request.HasField("max_nested_depth") else 1,
        nesting_cap=request.nesting_cap or "skip",
        skip_deep_pass=request.skip_deep_pass if request.HasField("skip_deep_pass") else True,
        early_cutoff=request.early_cutoff, skip_tiebreaker=request.skip_tiebreaker,
        opp_rack=request.opp_rack or None, threads=threads,
        max_time=request.max_time, endgame_heuristics=request.endgame_heuristics,
        lexicon=request.position.lexicon or None, tt_megabytes=tt_megabytes,
        opponent_model=request.opponent_model or "pessimistic",
        endgame_leaf=request.endgame_leaf or "auto",
        quick_pass=request.quick_pass if request.HasField("quick_pass") else True,
    )
    if request.eventuality:
        opts.threads, opts.skip_tiebreaker = 1, True
    return opts


def analyze_options(request: pb.AnalyzeGameRequest, threads: int, tt_megabytes: int) -> AnalyzeOptions:
    """An AnalyzeGame request's budgets (0 or unset: the defaults)."""
    return AnalyzeOptions(
        player=request.player or None, sim_iterations=request.sim_iterations or 600,
        sim_plies=request.sim_plies if request.HasField("sim_plies") else 2,
        sim_plays=request.sim_plays or 12, sim_max_time=request.sim_max_time or DEFAULT_SIM_CAP,
        peg_max_bag=request.peg_max_bag if request.HasField("peg_max_bag") else 1,
        peg_plays=request.peg_plays or 8, peg_endgame_plies=request.peg_endgame_plies or 4,
        peg_max_time=request.peg_max_time or DEFAULT_PEG_CAP, endgame_plies=request.endgame_plies or 6,
        endgame_max_time=request.endgame_max_time or DEFAULT_ENDGAME_CAP,
        endgame_candidates=request.endgame_candidates if request.HasField("endgame_candidates") else 4,
        threads=threads, seed=request.seed, lexicon=request.lexicon or None, tt_megabytes=tt_megabytes)


# ------------------------------------------------------------------ moves and games


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


def generate_to_pb(res: GenResult, pos: Position, lexicon: str) -> pb.GenerateMovesResponse:
    return pb.GenerateMovesResponse(
        moves=[move_to_pb(m, pos) for m in res.moves],
        counts=pb.MoveCounts(placements=res.placements, exchanges=res.exchanges, passes=res.passes),
        lexicon=lexicon,
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
    clocks: list[float] = []
    if session.clock is not None:
        clocks = [round(session.clock_left(k) or 0.0, 3) for k in range(2)]
        # the position carries the clocks as peers' CGP does: milliseconds, the player on turn first
        pos = replace(pos, ops={**pos.ops, "tmr": f"{round(clocks[p] * 1000)}/{round(clocks[1 - p] * 1000)}"})
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
        distribution=ld.name,
        layout=pos.board.layout_name,
        premiums=premium_rows(pos),
        clock_remaining=clocks,
        time_penalties=list(session.time_penalties) if session.clock is not None else [],
        overtime_penalty=session.overtime_penalty if session.clock is not None else 0,
    )


def premium_rows(pos: Position) -> list[str]:
    """The board's premium squares, one string per row, one character per square as in a layout file
    (= - " ' ~ ^, space for a plain square)."""
    dim = pos.board.dim
    rows = pos.board.layout_text().splitlines()[1:dim + 1]
    return [row.replace(".", " ").ljust(dim)[:dim] for row in rows]


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


# ------------------------------------------------------------------ solver results


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
        spread_stdev=summary.spread_stdev,
        final=final,
        stopped=stopped,
    )


def sim_to_pb(res: SimResult, job_id: str, stopped: bool) -> pb.SimulateProgress:
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
        if res.stats:
            _sim_play_stats(p, plays[-1])
    out = pb.SimulateProgress(job_id=job_id, plays=plays, iterations=res.iterations, elapsed_seconds=res.seconds,
                              final=res.final, stopped=stopped, stop_reason=res.stop_text, samples=res.samples,
                              stop_rule=res.stop_rule, confidence=res.confidence,
                              score_bin_width=SCORE_BIN_WIDTH if res.stats else 0)
    if res.inference is not None and res.plays:
        out.inference.CopyFrom(infer_to_pb(res.inference, res.plays[0].pos.ld, SIM_INFERENCE_TOP))
    return out


def _sim_play_stats(p: SimPlay, out: pb.SimmedPlayInfo) -> None:
    """A play's statistics (SimOptions.stats) into its message: per ply the score histogram and the heatmap, and
    the opponent's rack around their reply, every letter of the distribution."""
    for ply, hist, heat in zip(out.ply_stats, p.ply_histograms, p.ply_heatmaps, strict=False):
        ply.score_histogram.extend(hist)
        ply.heatmap.extend(heat)
    labels = p.pos.ld.labels
    out.opponent_leave.extend(pb.LeaveTileStats(tile=labels[ml], held=held, kept=kept)
                              for ml, (held, kept) in enumerate(zip(p.opp_held, p.opp_kept, strict=True)))


def infer_to_pb(res: InferResult, ld: LetterDistribution, top: int) -> pb.InferenceSummary:
    """An inference with its `top` most likely leaves and every letter the leave can hold."""
    return pb.InferenceSummary(
        play=res.play, method=res.method, racks_judged=res.racks_judged, racks_consistent=res.racks_consistent,
        leaves=len(res.leaves), tolerance=res.tolerance,
        top=[pb.InferredLeave(leave=v.text, posterior=v.posterior, prior=v.prior, racks=v.racks)
             for v in res.leaves[:top]],
        drawn_from_inference=bool(res.leaves), kind=res.kind, known=ld.rack_str(res.known),
        leave_size=res.leave_size, distinct_leaves=res.distinct_leaves, elapsed_seconds=res.seconds,
        stopped=res.stopped,
        tiles=[pb.InferredTile(tile=ld.label(i), inferred=res.tile_found[i], random=res.tile_expected[i])
               for i in range(ld.size) if res.pool[i] > 0],
        model=res.model, temperature=res.temperature, description=res.describe, history=res.history,
        history_racks=res.history_racks, effective_leaves=res.effective_leaves,
    )


def _endgame_line(moves: list[LineMove], pos: Position) -> list[pb.EndgameMove]:
    line = []
    for m in moves:
        pm = plain_move_to_pb(m.move, pos, m.score)
        pm.notation = m.text
        pm.display = m.table
        line.append(pb.EndgameMove(move=pm, estimated=m.estimated))
    return line


def _ranked_line(r: RankedLine, best: int, pos: Position) -> pb.EndgameLine:
    if r.value is None or r.final_spread is None:
        return pb.EndgameLine(requested=r.requested, searched=False)
    return pb.EndgameLine(value=r.value, final_spread=r.final_spread, line=_endgame_line(r.line, pos),
                          loss=best - r.value, requested=r.requested, searched=True)


def endgame_to_pb(res: EndgameResult | None, pos: Position, job_id: str, final: bool,
                  stopped: bool) -> pb.EndgameProgress:
    if res is None:
        return pb.EndgameProgress(job_id=job_id, final=final, stopped=stopped)
    return pb.EndgameProgress(job_id=job_id, value=res.value, final_spread=res.final_spread,
                              best_line=_endgame_line(res.line, pos),
                              depth=res.depth, nodes=res.nodes, elapsed_seconds=res.seconds, final=final,
                              stopped=stopped, complete=res.complete, stop_reason=res.stop_reason if final else "",
                              top_lines=[_ranked_line(r, res.value, pos) for r in res.top],
                              also_solved=[_ranked_line(r, res.value, pos) for r in res.also])


def _outcome_counts(p: PegPlay) -> list[pb.PEGOutcomeCount]:
    """Draw groups and their weight per verdict, plus those not solved yet ("pending")."""
    names = ("win", "draw", "loss", "unresolved", "pending")
    draws = {OUTCOME_NAMES[o]: n for o, n in p.outcome_groups.items()}
    draws["pending"] = p.groups_total - p.groups_done
    weight = {"win": p.wins, "draw": p.draws, "loss": p.losses, "unresolved": p.unresolved, "pending": p.pending}
    return [pb.PEGOutcomeCount(result=n, draws=draws.get(n, 0), weight=weight[n]) for n in names]


def peg_to_pb(res: PegResult, pos: Position, job_id: str, stopped: bool,
              summary_only: bool = False) -> pb.PreEndgameProgress:
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
                                  quick="" if g.quick is None else OUTCOME_NAMES[g.quick],
                                  quick2="" if g.quick2 is None else OUTCOME_NAMES[g.quick2])
                for g in p.groups],
            complete_at=p.complete_at, quick_wins=p.quick_points, quick_draws_done=p.quick_done,
            quick2_wins=p.quick2_points, quick2_draws_done=p.quick2_done,
            estimate=p.estimate, estimate_sd=p.est_sd,
            lower_wins=p.lower, upper_wins=p.upper, draws_done=p.groups_done, draws_total=p.groups_total,
            pending_weight=p.pending,
            outcome_counts=_outcome_counts(p),
            capped_low=p.cap_low, capped_high=p.cap_high, capped_weight=p.capped_weight,
        )
        if p.spread is not None:
            info.spread = p.spread
        plays.append(info)
    lead = res.leader
    win = res.winner
    eta = res.eta_seconds
    return pb.PreEndgameProgress(
        job_id=job_id, plays=plays, total_permutations=tot, draws_done=res.done_jobs, draws_total=res.total_jobs,
        endgames=res.endgames, nested_calls=res.nested_calls, nested_cache_hits=res.nested_hits,
        elapsed_seconds=res.seconds, final=res.final,
        stopped=stopped, complete=res.complete, winner=win.text if win else "", leader=lead.text if lead else "",
        leader_ties=[p.text for p in res.leader_ties], scope_note=res.scope_note,
        plays_out_of_scope=res.plays_out_of_scope, nesting_note=res.nesting_note, nesting_cap=res.nesting_cap,
        calibrated_on=res.calibrated_on, stop_reason=res.stop_reason,
        leader_reason=res.leader_reason, no_leader_reason=res.no_leader_reason,
        leader_lower=lead.lower if lead else 0.0, leader_upper=lead.upper if lead else 0.0,
        best_lower=res.best_lower, best_upper=res.best_upper, endgames_per_second=res.endgames_per_second,
        draw_groups_left=res.groups_left, endgames_left=res.endgames_left, eta_seconds=eta or 0.0,
        finished=res.finished, phase=res.phase, leader_depth=res.leader_depth,
        quick_draws_done=res.quick_done_jobs, endgame_plies=res.endgame_plies, opponent_model=res.opponent_model,
        opponent_solves=res.opp_solves,
        reused_verdicts=res.reused, checkpointed_verdicts=res.checkpointed, cluster_workers=res.cluster_workers,
        cluster_tasks=res.cluster_tasks, quick_endgame_plies=QUICK_PLIES, quick_replies_per_turn=QUICK_REPLIES,
        quick2_draws_done=res.quick2_done_jobs, quick2_draws_taken=res.quick2_jobs,
        quick2_endgame_plies=QUICK2_PLIES, quick2_replies_per_turn=QUICK2_REPLIES,
    )


# ------------------------------------------------------------------ game review


def _analyzed_move_to_pb(c: Candidate) -> pb.AnalyzedMove:
    return pb.AnalyzedMove(move=c.move, score=c.score, equity=c.equity, win_pct=c.win_pct, value=c.value,
                           spread=c.spread)


def turn_to_pb(t: TurnAnalysis) -> pb.TurnAnalysis:
    """review.TurnAnalysis -> pb (optional fields stay unset where the phase gives no number)."""
    return pb.TurnAnalysis(
        event=t.event, line=t.line, player=t.player + 1, nick=t.nick, rack=t.rack, bag=t.bag, phase=t.phase,
        played=_analyzed_move_to_pb(t.played), best=_analyzed_move_to_pb(t.best) if t.best else None,
        rank=t.rank or 0, candidates=t.candidates, equity_loss=t.equity_loss, win_loss=t.win_loss,
        spread_loss=t.spread_loss, loss_is_bound=t.loss_is_bound, mistake=t.mistake, blown_endgame=t.blown_endgame,
        bingo_available=t.bingo_available, missed_bingo=t.missed_bingo, phony=t.phony, phony_words=t.phony_words,
        phony_challenged=t.phony_challenged, missed_challenge=t.missed_challenge, complete=t.complete,
        skipped=t.skipped, notes=t.notes, withdrawn=t.withdrawn, best_bingo=t.best_bingo, win_after=t.win_after,
        win_best=t.win_best, win_source=t.win_source)


def _summary_to_pb(s: PlayerSummary) -> pb.PlayerAnalysisSummary:
    return pb.PlayerAnalysisSummary(
        player=s.player + 1, nick=s.nick, turns=s.turns, optimal=s.optimal, equity_lost=s.equity_lost,
        win_pct_lost=s.win_lost, spread_lost=s.spread_lost, small_mistakes=s.small, medium_mistakes=s.medium,
        large_mistakes=s.large, mistake_index=s.mistake_index, bingos_available=s.bingos_available,
        bingos_missed=s.bingos_missed, phonies=s.phonies, phonies_challenged=s.phonies_challenged,
        challenges_missed=s.challenges_missed, biggest_mistakes=s.biggest)


def analysis_to_pb(res: GameAnalysis, stopped: bool = False, annotated_gcg: str = "") -> pb.AnalyzeProgress:
    """A whole game's analysis: the final message of AnalyzeGame (without its `json`, which the servicer
    renders from this message)."""
    o = res.options
    return pb.AnalyzeProgress(
        turns_done=len(res.turns), turns_total=res.turns_total, turns=[turn_to_pb(t) for t in res.turns],
        summary=[_summary_to_pb(s) for s in res.summaries], lexicon=res.lexicon, warnings=res.warnings,
        final=True, stopped=stopped or res.stopped, annotated_gcg=annotated_gcg, game=res.name,
        players=[pb.AnalyzedPlayer(nick=n, name=r) for n, r in res.players],
        budget=pb.AnalyzeBudget(sim_plies=o.sim_plies, sim_plays=o.sim_plays, sim_iterations=o.sim_iterations,
                                peg_max_bag=o.peg_max_bag, peg_plays=o.peg_plays,
                                peg_endgame_plies=o.peg_endgame_plies, endgame_plies=o.endgame_plies,
                                endgame_candidates=o.endgame_candidates, seed=o.seed),
        elapsed_seconds=res.seconds, reused=res.reused,
    )


def _mistake_ref_to_pb(m: MistakeRef) -> pb.ReviewMistake:
    return pb.ReviewMistake(game=m.game, event=m.event, line=m.line, nick=m.nick, phase=m.phase, played=m.played,
                            best=m.best, size=m.size, win_loss=m.win_loss, spread_loss=m.spread_loss,
                            equity_loss=m.equity_loss, loss_is_bound=m.loss_is_bound, complete=m.complete)


def _player_review_to_pb(r: PlayerReview) -> pb.PlayerReview:
    return pb.PlayerReview(
        name=r.name, nicks=r.nicks, games=r.games, turns=r.turns, optimal=r.optimal, equity_lost=r.equity_lost,
        win_pct_lost=r.win_lost, win_pct_lost_per_turn=r.win_lost_per_turn, spread_lost=r.spread_lost,
        small_mistakes=r.small, medium_mistakes=r.medium, large_mistakes=r.large, mistake_index=r.mistake_index,
        mistake_index_per_game=r.mistake_index_per_game, best_bingos_missed=r.best_bingos_missed,
        bingos_available=r.bingos_available, bingos_missed=r.bingos_missed, phonies=r.phonies,
        phonies_challenged=r.phonies_challenged, challenges_missed=r.challenges_missed,
        blown_endgames=r.blown_endgames, biggest_mistakes=[_mistake_ref_to_pb(m) for m in r.biggest])


def review_summary_to_pb(s: ReviewSummary) -> pb.ReviewSummary:
    """The summary of many reviewed games (review_summary.summarize)."""
    return pb.ReviewSummary(games=s.games, analysed=s.analysed, reused=s.reused, failed=s.failed,
                            players=[_player_review_to_pb(r) for r in s.players], stopped=s.stopped)


# ------------------------------------------------------------------ inference and leave values


def infer_options(request: pb.InferRequest, threads: int, max_racks: int, lexicon: str) -> InferOptions:
    """An Infer request's options: `max_racks` is the request's, bounded by the server's limits; the model, its
    temperature and the earlier turns weighed default to the inference's, the tolerance to the classic
    rangefinder's 3 points (InferOptions.validate bounds them)."""
    return InferOptions(tolerance=request.tolerance if request.HasField("tolerance") else DEFAULT_TOLERANCE,
                        max_racks=max_racks, threads=threads, seed=request.seed, lexicon=lexicon,
                        model=request.model or DEFAULT_MODEL,
                        temperature=request.temperature if request.HasField("temperature") else DEFAULT_TEMPERATURE,
                        history=request.history_turns if request.HasField("history_turns") else DEFAULT_HISTORY)


def infer_response_to_pb(res: InferResult, ld: LetterDistribution, top: int, lexicon: str,
                         cgp: str) -> pb.InferResponse:
    """An inference with its `top` likeliest leaves, made on `cgp` (the position now, as the inferrer knows it)."""
    return pb.InferResponse(inference=infer_to_pb(res, ld, top), lexicon=lexicon, cgp=cgp)


def leave_to_pb(tiles: list[int], ld: LetterDistribution, millipoints: int, in_table: bool, lexicon: str,
                leaves: str) -> pb.EvaluateLeaveResponse:
    return pb.EvaluateLeaveResponse(leave=ld.rack_str(tiles), value=millipoints / EQUITY_SCALE,
                                    millipoints=millipoints, in_table=in_table, lexicon=lexicon, leaves=leaves)
