"""Game review: every turn of a GCG record analysed by the engine that fits its phase, as the player on turn
could know it, and a per-game summary (equity lost, mistakes sized as Woogles' BestBot sizes them, missed
bingos, phonies, missed challenges). One implementation for the CLI (`macondo analyze`) and the streaming
RPC (AnalyzeGame).

Phases (tiles in the bag as the player on turn counts them):
- more than 6: Monte Carlo simulation (sim.py) of the top plays by static equity plus the played move;
- 1 to 6: the pre-endgame solver (peg.py) over the top plays plus the played move, with early cut-off and a
  time limit; when it names no leader in time the turn falls back to simulation (the turn says so);
- 0: the exact endgame (endgame.py) of the position, one solve that also values the played move and each of the
  top static plays exactly (also-solve: the same search, so the played move's loss is exact at the depth reached;
  their values rank the played move).

Mistake sizes (Woogles' "Mistake Index", BestBot analysis; see docs/review.md):
- simulation and pre-endgame turns, by win-probability loss rounded to whole percentage points:
  0 none, 1-3 small, 4-7 medium, 8+ large;
- endgame turns (and pre-endgame turns decided by the spread tiebreak), by spread loss in points:
  0 none, 1-7 small, 8-15 medium, 16+ large; a won endgame turned into a tie or a loss is large;
- mistake index = 0.2 x small + 0.5 x medium + 1.0 x large (lower is better; 0 is a perfect game).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine_cy.board import Board
from engine_cy.rules import formed_words
from macondo_server.analysis.endgame import EndgameJob, EndgameOptions
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.analysis.peg.result import PegPlay
from macondo_server.analysis.sim import SimJob, SimOptions
from macondo_server.engine.facade import Engine, GeneratedMove
from macondo_server.engine.lexicon import Lexicon
from macondo_server.engine.replay import (
    ReplayResult,
    game_from_position,
    lexicon_for_record,
    play_move,
    position_from_game,
    record_setup,
    replay_gcg,
)
from macondo_server.engine.settings import DEFAULT_ENDGAME_CAP, DEFAULT_PEG_CAP, DEFAULT_SIM_CAP
from macondo_server.model.gcg import GcgEvent, GcgGame, write_gcg
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError, excerpt
from macondo_server.model.tiles import RACK_SIZE, rack_tiles

MISTAKE_WEIGHTS = {"small": 0.2, "medium": 0.5, "large": 1.0}
MAX_TURN_SECONDS = 3600.0
MAX_SEED = 2**64 - 1


def size_by_win_loss(loss_pct: float | None) -> str:
    """Mistake size from a win-probability loss in percentage points (Woogles' bands: <=3, 4-7, >7)."""
    if loss_pct is None:
        return "none"
    r = round(loss_pct)
    if r <= 0:
        return "none"
    if r <= 3:
        return "small"
    if r <= 7:
        return "medium"
    return "large"


def size_by_spread_loss(loss: int | float | None, blown: bool = False) -> str:
    """Mistake size from a spread loss in points (Woogles' bands: 1-7, 8-15, 16+; a blown win is large)."""
    if blown:
        return "large"
    if loss is None:
        return "none"
    r = round(loss)
    if r <= 0:
        return "none"
    if r <= 7:
        return "small"
    if r <= 15:
        return "medium"
    return "large"


def _n(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass
class AnalyzeOptions:
    player: str | None = None          # nickname, real name, "1" or "2"; None: both players
    sim_plies: int = 2
    sim_plays: int = 12                # candidates by static equity (the played move is added)
    # The budgets that bind are work (iterations, plies, plays, tiles in the bag), so a seed gives the same
    # analysis on any machine; the time limits are safety caps set well above what these budgets need, and a
    # turn where one bound says so (complete false, a note), since its result then depends on the machine.
    sim_iterations: int = 600          # per turn
    sim_max_time: float = DEFAULT_SIM_CAP        # per turn, a safety cap (0: none)
    peg_max_bag: int = 1               # the pre-endgame solver for 1 to this many tiles in the bag (0: never)
    peg_plays: int = 8
    peg_endgame_plies: int = 4
    peg_max_time: float = DEFAULT_PEG_CAP        # per turn, a safety cap (0: none)
    endgame_plies: int = 6
    endgame_max_time: float = DEFAULT_ENDGAME_CAP  # per solve, a safety cap (0: none)
    endgame_candidates: int = 4        # top static plays valued besides the best and the played move
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    seed: int = 0
    lexicon: str | None = None
    tt_megabytes: int = 256
    distribution: str | None = None    # the letter distribution (default: the record's, else the lexicon's)

    def validate(self) -> None:
        def check(name: str, lo: float, hi: float) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                raise ValueError(f"{name.replace('_', ' ')} must be {_n(lo)} to {_n(hi)}, got {excerpt(str(v))}")

        check("sim_plies", 0, 10)
        check("sim_plays", 1, 100)
        check("sim_iterations", 1, 1_000_000)
        check("sim_max_time", 0, MAX_TURN_SECONDS)
        check("peg_max_bag", 0, 6)
        check("peg_plays", 1, 50)
        check("peg_endgame_plies", 1, 20)
        check("peg_max_time", 0, MAX_TURN_SECONDS)
        check("endgame_plies", 1, 30)
        check("endgame_max_time", 0, MAX_TURN_SECONDS)
        check("endgame_candidates", 0, 50)
        check("threads", 1, 256)
        check("seed", 0, MAX_SEED)
        check("tt_megabytes", 1, 65536)


@dataclass
class Candidate:
    move: str
    score: int
    equity: float | None = None       # simulated equity (points)
    win_pct: float | None = None      # 0..100
    value: int | None = None          # endgame: spread change under best play
    spread: float | None = None       # pre-endgame tiebreak spread


@dataclass
class TurnAnalysis:
    event: int                  # 1-based event number in the record
    line: int                   # line in the file (0 when not read from a file)
    player: int                 # 0 or 1 (the record's #player1 / #player2)
    nick: str
    rack: str
    bag: int                    # tiles in the bag as the player on turn counts them
    phase: str                  # sim, peg or endgame ("" when skipped)
    played: Candidate
    best: Candidate | None = None
    rank: int | None = None     # of the played move among `candidates` analysed plays (1 = best)
    candidates: int = 0
    equity_loss: float | None = None   # simulated equity (sim), spread (endgame; pre-endgame tiebreak)
    win_loss: float | None = None      # percentage points (sim, pre-endgame)
    spread_loss: int | None = None     # endgame
    loss_is_bound: bool = False        # the played move was cut off: the loss is at least this
    mistake: str = "none"
    blown_endgame: bool = False
    bingo_available: bool = False
    played_bingo: bool = False
    missed_bingo: bool = False
    phony: bool = False                # the play formed a word outside the lexicon
    phony_words: list[str] = field(default_factory=list)
    phony_challenged: bool = False
    missed_challenge: bool = False     # the opponent's previous play was a phony left standing
    withdrawn: bool = False            # the record shows this play challenged off
    best_bingo: bool = False           # the engine's best move plays all seven tiles
    # the mover's win probability in percent after the move played and after the engine's best (win_best),
    # from `win_source`: sim or peg (the played move's simulated or pre-endgame figure), endgame (the solved
    # outcome: 100 won, 50 tied, 0 lost), table (a turn without an engine figure: the win table's estimate of
    # the position after the move, by spread and unseen tiles; win_best is then None)
    win_after: float | None = None
    win_best: float | None = None
    win_source: str = ""
    complete: bool = True              # the budget was reached (not a stop or a time cut before it)
    skipped: str = ""                  # why the turn was not analysed
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0               # not in the JSON (it would vary between runs)


@dataclass
class PlayerSummary:
    player: int
    nick: str
    turns: int = 0                 # analysed
    optimal: int = 0               # rank 1
    equity_lost: float = 0.0
    win_lost: float = 0.0          # percentage points, summed
    spread_lost: int = 0
    small: int = 0
    medium: int = 0
    large: int = 0
    bingos_available: int = 0
    bingos_missed: int = 0
    phonies: int = 0
    phonies_challenged: int = 0
    challenges_missed: int = 0
    biggest: list[int] = field(default_factory=list)   # event numbers of the biggest mistakes

    @property
    def mistake_index(self) -> float:
        w = MISTAKE_WEIGHTS
        return self.small * w["small"] + self.medium * w["medium"] + self.large * w["large"]


@dataclass
class GameAnalysis:
    name: str
    lexicon: str
    players: list[tuple[str, str]]
    turns: list[TurnAnalysis]
    summaries: list[PlayerSummary]
    turns_total: int
    stopped: bool
    warnings: list[str]
    options: AnalyzeOptions
    seconds: float = 0.0
    reused: bool = False       # taken from a review store (review_store.py), not analysed in this run


# ------------------------------------------------------------------ loading


def resolve_player(record: GcgGame, player: str | None) -> int | None:
    """None (both), or 0/1 from '1', '2', a nickname or a real name."""
    if player is None or player == "":
        return None
    p = player.strip()
    if p in ("1", "2"):
        return int(p) - 1
    for i, (nick, real) in enumerate(record.players):
        if p == nick or p == real:
            return i
    names = ", ".join(excerpt(n, 20) for n, _ in record.players)
    raise FormatError(f"player {excerpt(player)} is not in the game (players: {names}; or 1, 2)")


def lexicon_of(engine: Engine, record: GcgGame, requested: str | None,
               distribution: str | None = None) -> tuple[Lexicon, list[str]]:
    """The lexicon a record is analysed with, played with its distribution (`distribution` when given: it must
    agree with the record's #tile-distribution), and the warnings lexicon_for_record gives."""
    reg = engine.registry
    named = (record.pragma("tile-distribution") or "").strip()
    if distribution and named and named.lower() != distribution.lower():
        raise FormatError(f"the GCG's #tile-distribution is {named} but the request names {distribution}")
    name, warnings = lexicon_for_record(record, reg.available(), engine.settings.default_lexicon, requested,
                                        reg.distribution_of)
    lex, _ = record_setup(record, reg.get(name, distribution))
    return lex, warnings


# ------------------------------------------------------------------ one turn


def _turn_seed(seed: int, event: int) -> int:
    return (seed * 1_000_003 + event * 7919) % (MAX_SEED + 1)


def _phony_words(lex: Lexicon, board: Board, move: Move) -> list[str]:
    if move.kind != "place":
        return []
    try:
        words = formed_words(board, move.row, move.col, move.vertical, list(move.tiles))
    except ValueError:
        return []
    ld = lex.ld
    return ["".join(ld.label(t) for t in w) for w in words if not lex.kwg.contains(w)]


class _Analyzer:
    def __init__(self, engine: Engine, lex: Lexicon, opts: AnalyzeOptions, stop: threading.Event) -> None:
        self.engine = engine
        self.lex = lex
        self.opts = opts
        self.stop = stop

    # -- phases

    def sim(self, pos: Position, played: str | None, t: TurnAnalysis, seed: int) -> None:
        o = self.opts
        # the opponent's tiles the player on turn knows of (a withdrawn phony's), passed explicitly
        opp = pos.ld.rack_str(list(pos.racks[1])) if pos.racks[1] else None
        job = SimJob(self.engine, pos, SimOptions(
            plies=o.sim_plies, num_plays=o.sim_plays, plays=[played] if played else [],
            iterations=o.sim_iterations, max_time=o.sim_max_time, threads=o.threads, seed=seed,
            opp_rack=opp, lexicon=self.lex.name), stop=self.stop)
        res = job.run(stop=self.stop)
        t.phase = t.phase or "sim"
        t.complete = t.complete and res.stopped_reason == "iterations"
        if res.stopped_reason not in ("iterations", ""):
            cap = " (the safety cap on time bound: this result depends on the machine)" \
                if res.stopped_reason == "time limit" else ""
            t.notes.append(f"simulation ended early ({res.stopped_reason}) after {res.iterations} of "
                           f"{o.sim_iterations} iterations{cap}")
        ranked = res.plays
        if not ranked:
            t.skipped = "no candidate plays"
            return
        best = ranked[0]
        t.best = Candidate(best.text, best.score, best.equity, best.win_pct)
        t.candidates = len(ranked)
        if played is None:
            return
        for i, p in enumerate(ranked):
            if p.text == played:
                t.rank = i + 1
                t.played.equity, t.played.win_pct = p.equity, p.win_pct
                t.equity_loss = max(0.0, best.equity - p.equity) if i else 0.0
                t.win_loss = max(0.0, best.win_pct - p.win_pct) if i else 0.0
                break
        t.mistake = size_by_win_loss(t.win_loss)

    def peg(self, pos: Position, played: str | None, gen: list[GeneratedMove], t: TurnAnalysis,
            seed: int) -> None:
        o = self.opts
        ld = pos.ld
        texts: list[str] = []
        for m in gen:
            if len(texts) >= o.peg_plays:
                break
            if m.move.kind == "exchange":
                continue
            texts.append(format_move(m.move, ld, pos.board))
        if played and played not in texts:
            texts.append(played)
        opp = ld.rack_str(list(pos.racks[1])) if pos.racks[1] else None
        tt = min(o.tt_megabytes, 256)
        job = PegJob(self.engine, pos, PegOptions(
            endgame_plies=o.peg_endgame_plies, only_solve=texts, early_cutoff=True, opp_rack=opp,
            threads=o.threads, max_time=o.peg_max_time, tt_megabytes=tt, lexicon=self.lex.name),
            stop=self.stop)
        res = job.run(stop=self.stop, interval=3600)
        t.phase = "peg"
        if res.leader is None:
            if self.stop.is_set():
                t.complete = False
                t.notes.append("stopped during the pre-endgame solve")
                return
            why = res.no_leader_reason or "no leader"
            t.complete = False
            t.notes.append(f"the pre-endgame solver named no leader within the {o.peg_max_time:g} s cap ({why}); "
                           "fell back to simulation (this result depends on the machine)")
            t.phase = "peg>sim"
            self.sim(pos, played, t, seed)
            return
        tot = res.total_permutations or 1
        ranked = res.plays
        win = res.leader   # the best play once known, else the best estimate (the notes say which)
        exact = bool(res.complete)

        def value(p: PegPlay) -> float:
            """Points (wins + draws/2 over the draws): exact once the solve is complete, else the solver's best
            knowledge so far (full verdicts where it has them, the quick pass's elsewhere)."""
            return float(p.points if exact else getattr(p, "estimate", p.points))

        t.best = Candidate(win.text, getattr(win, "score", 0), win_pct=100 * value(win) / tot,
                           spread=getattr(win, "spread", None))
        t.candidates = len(ranked)
        if not exact:
            t.complete = False
            why = getattr(res, "leader_reason", "") or "not complete"
            t.notes.append(f"pre-endgame not complete within the {o.peg_max_time:g} s cap ({why}): ranked by the "
                           "best knowledge so far (this result depends on the machine)")
        if played is None:
            return
        mine = next((p for p in ranked if p.text == played), None)
        if mine is None:
            return
        t.played.win_pct = 100 * value(mine) / tot
        t.played.spread = getattr(mine, "spread", None)
        if mine.text == win.text:
            t.rank, t.win_loss = 1, 0.0
        else:
            # ties share a rank; the spread tiebreak orders plays with equal points where it was run
            def key(p: PegPlay) -> tuple[float, float]:
                sp = getattr(p, "spread", None)
                return value(p), sp if sp is not None else float("-inf")

            t.rank = 1 + sum(1 for p in ranked if key(p) > key(mine))
            if exact and getattr(mine, "cut_off", False):
                # cut off: its total is unknown but below the winner's; the loss is at least this much
                t.win_loss = max(0.0, 100 * (value(win) - getattr(mine, "upper", value(mine))) / tot)
                t.loss_is_bound = True
            else:
                t.win_loss = max(0.0, 100 * (value(win) - value(mine)) / tot)
        if t.rank > 1 and round(t.win_loss or 0) == 0 and t.best.spread is not None \
                and t.played.spread is not None:
            t.equity_loss = max(0.0, t.best.spread - t.played.spread)
            t.mistake = size_by_spread_loss(t.equity_loss)
        else:
            t.mistake = size_by_win_loss(t.win_loss)

    def _endgame_value(self, pos: Position, move: Move, plies: int) -> tuple[int, bool]:
        """Spread change for the player on turn of `pos` when it plays `move`, then both play best for
        `plies - 1` more plies (exact when the solve completes)."""
        game = game_from_position(pos, self.lex)
        before = game.scores[0] - game.scores[1]
        play_move(game, move)
        after = game.scores[0] - game.scores[1]
        if game.game_over:
            return after - before, True
        nxt = position_from_game(game, pos.ops, show_opponent=True)
        if plies <= 1:
            return after - before, False
        o = self.opts
        job = EndgameJob(self.engine, nxt, EndgameOptions(
            plies=plies - 1, max_time=o.endgame_max_time, threads=o.threads,
            tt_megabytes=min(o.tt_megabytes, 256), lexicon=self.lex.name))
        res = job.run(stop=self.stop)
        return after - before - res.value, res.complete

    def endgame(self, pos: Position, played_move: Move | None, played: str | None,
                gen: list[GeneratedMove], t: TurnAnalysis) -> None:
        o = self.opts
        ld = pos.ld
        t.phase = "endgame"
        static = [(format_move(m.move, ld, pos.board), m) for m in gen[: o.endgame_candidates]]
        legal = {format_move(m.move, ld, pos.board) for m in gen}
        # the top static plays and the played move, valued exactly in the same search as the best
        also: list[str] = []
        for text, _ in static:
            if text not in also:
                also.append(text)
        if played is not None and played in legal and played not in also:
            also.append(played)
        job = EndgameJob(self.engine, pos, EndgameOptions(
            plies=o.endgame_plies, max_time=o.endgame_max_time, threads=o.threads,
            tt_megabytes=min(o.tt_megabytes, 256), lexicon=self.lex.name, also_solve=also))
        res = job.run(stop=self.stop)
        if not res.complete:
            t.complete = False
            t.notes.append(f"endgame: deepest completed depth {res.depth} of {o.endgame_plies} within the "
                           f"{o.endgame_max_time:g} s cap (this result depends on the machine)")
        best = res.best_move
        if best is None:
            t.skipped = "the endgame solver found no move"
            return
        best_text = format_move(best.move, ld, pos.board)
        values: dict[str, int] = {best_text: res.value}
        for r in res.also:
            if r.value is None:
                t.complete = False         # a stop came before this move was searched
            else:
                values[r.requested] = r.value
        if played_move is not None and played is not None and played not in legal and not self.stop.is_set():
            # a phony left standing is no legal first move of the solver: the position after it, solved apart
            v, complete = self._endgame_value(pos, played_move, o.endgame_plies)
            values[played] = min(v, res.value) if res.complete and complete else v
            if not complete:
                t.complete = False
        # Several moves may share the best value, and which of them the solver reports can depend on its threads'
        # timing: a top static play of that value (the first in the generator's order) is shown instead.
        shown = Candidate(best_text, best.score, value=res.value)
        if res.complete:
            for text, m in static:
                if values.get(text) == res.value:
                    shown = Candidate(text, m.score, value=res.value)
                    break
        t.best = shown
        t.candidates = len(values)
        if played is None or played not in values:
            return
        vp = values[played]
        t.played.value = vp
        better = sum(1 for v in values.values() if v > vp)
        t.rank = 1 + better
        t.spread_loss = max(0, res.value - vp)
        t.equity_loss = float(t.spread_loss)
        spread = pos.scores[0] - pos.scores[1]
        t.blown_endgame = spread + res.value > 0 >= spread + vp
        if t.spread_loss == 0:
            t.rank = 1
        t.mistake = size_by_spread_loss(t.spread_loss, t.blown_endgame)

    # -- a turn

    def turn(self, pos: Position, ev: GcgEvent, event: int, player: int, t: TurnAnalysis, challenged: bool) -> None:
        ld = pos.ld
        lex = self.lex
        gen = self.engine.generate(pos, lexicon=lex.name).moves
        t.bingo_available = any(m.tiles_played == RACK_SIZE and m.move.kind == "place" for m in gen)
        played_move: Move | None = None
        if ev.type == "play":
            played_move = parse_move(f"{ev.position} {ev.word}", pos.board, ld)
        elif ev.type == "pass":
            played_move = Move("pass")
        elif ev.type == "exchange":
            if ev.exchanged[:1].isdigit():
                t.notes.append(f"an exchange of {ev.exchanged} tiles the file does not name: not evaluated")
            else:
                played_move = Move("exchange", tiles=tuple(sorted(rack_tiles(ld, ev.exchanged, "exchange",
                                                                              fold_case=True))))
        played: str | None = None
        if played_move is not None:
            played = format_move(played_move, ld, pos.board)
            t.played = Candidate(played, ev.score if ev.type == "play" else 0)
            t.phony_words = _phony_words(lex, pos.board, played_move)
            t.phony = bool(t.phony_words)
            t.played_bingo = played_move.kind == "place" and played_move.tiles_played == RACK_SIZE and not t.phony
        t.missed_bingo = t.bingo_available and not t.played_bingo
        if t.phony:
            if challenged:
                t.phony_challenged = True
                t.notes.append(f"phony {', '.join(t.phony_words)} challenged off: evaluated as a pass")
                played_move, played = Move("pass"), "pass"
            elif t.bag > 0:
                t.notes.append(f"phony {', '.join(t.phony_words)} not challenged: not a legal play in "
                               f"{lex.name}, so not ranked")
                played_move, played = None, None
        seed = _turn_seed(self.opts.seed, event)
        if t.bag == 0:
            self.endgame(pos, played_move, played, gen, t)
        elif t.bag <= self.opts.peg_max_bag:
            self.peg(pos, played, gen, t, seed)
        else:
            self.sim(pos, played, t, seed)
        if t.best is not None:
            bingos = {format_move(m.move, ld, pos.board) for m in gen
                      if m.tiles_played == RACK_SIZE and m.move.kind == "place"}
            t.best_bingo = t.best.move in bingos
        _engine_win(t, pos.scores[0] - pos.scores[1])


# ------------------------------------------------------------------ a game


ProgressFn = Callable[[int, int, TurnAnalysis | None], None]


def analyze_record(engine: Engine, record: GcgGame, opts: AnalyzeOptions, name: str = "",
                   progress: ProgressFn | None = None, stop: threading.Event | None = None) -> GameAnalysis:
    """Analyse every turn of `record` (of one player with opts.player). `progress(done, total, turn)` is called
    as each turn ends (turn None at the start); once `stop` is set the turn in flight ends at once (kept, marked
    incomplete) and no further turn starts."""
    opts.validate()
    stop = stop or threading.Event()
    t0 = time.monotonic()
    only = resolve_player(record, opts.player)
    lex, warnings = lexicon_of(engine, record, opts.lexicon, opts.distribution)
    replay: ReplayResult = replay_gcg(record, lex)
    warnings = warnings + list(replay.warnings)
    nicks = [p[0] for p in record.players]
    players = [nicks.index(ev.nick) for ev in record.events]
    befores = [replay.start] + replay.positions[:-1]
    # which events are analysable turns
    tasks: list[int] = []
    totals = [0, 0]
    file_totals: list[tuple[int, int]] = []
    for i, ev in enumerate(record.events):
        file_totals.append((totals[0], totals[1]))
        totals[players[i]] = ev.cumulative
    for i, ev in enumerate(record.events):
        if ev.type not in ("play", "pass", "exchange"):
            continue
        if only is not None and players[i] != only:
            continue
        before = befores[i]
        if ev.type == "pass" and before.tiles_in_bag() == 0 and not before.racks[1]:
            continue   # the opponent went out: the final pass (or a turn lost to a challenge) is no decision
        tasks.append(i)
    analyzer = _Analyzer(engine, lex, opts, stop)
    summaries = [PlayerSummary(p, nicks[p]) for p in (0, 1)]
    turns: list[TurnAnalysis] = []
    if progress is not None:
        progress(0, len(tasks), None)
    for n, i in enumerate(tasks):
        if stop.is_set():
            break
        ev = record.events[i]
        p = players[i]
        pos = befores[i]
        started = time.monotonic()
        t = TurnAnalysis(event=i + 1, line=ev.line, player=p, nick=nicks[p],
                         rack=ld_rack(pos), bag=pos.tiles_in_bag(), phase="", played=Candidate("", 0))
        challenged = i + 1 < len(record.events) and record.events[i + 1].type == "phony_returned"
        t.withdrawn = challenged and ev.type == "play"
        t.missed_challenge = _opponent_phony_stood(record, players, befores, lex, i)
        mine = (file_totals[i][p], file_totals[i][1 - p])
        if not pos.racks[0] or not ev.rack:
            t.skipped = "the file does not show this rack"
        elif sorted(pos.racks[0]) != sorted(_file_rack(pos, ev.rack)):
            t.skipped = f"the replayed rack {t.rack} is not the file's {excerpt(ev.rack)}"
        elif tuple(pos.scores) != mine:
            t.skipped = "the replayed position does not match this event (scores differ)"
        else:
            try:
                analyzer.turn(pos, ev, i + 1, p, t, challenged)
            except FormatError as exc:
                t.skipped = str(exc)
        if stop.is_set() and t.skipped == "":
            t.complete = False
        if t.win_after is None and i < len(replay.positions):
            t.win_after, t.win_source = _table_win(lex, replay.positions[i]), "table"
        t.seconds = time.monotonic() - started
        turns.append(t)
        if progress is not None:
            progress(n + 1, len(tasks), t)
    for t in turns:
        _add_to_summary(summaries[t.player], t)
    for s in summaries:
        bad = [t for t in turns if t.player == s.player and t.mistake != "none"]
        order = {"large": 3, "medium": 2, "small": 1}
        bad.sort(key=lambda t: (-order[t.mistake], -(t.win_loss or 0), -(t.equity_loss or 0), t.event))
        s.biggest = [t.event for t in bad[:3]]
    keep = [summaries[only]] if only is not None else summaries
    return GameAnalysis(name=name, lexicon=lex.name, players=list(record.players), turns=turns, summaries=keep,
                        turns_total=len(tasks), stopped=stop.is_set(),
                        warnings=warnings, options=opts, seconds=time.monotonic() - t0)


def _file_rack(pos: Position, text: str) -> list[int]:
    try:
        return rack_tiles(pos.ld, text, "rack", fold_case=True)
    except FormatError:
        return []


def ld_rack(pos: Position) -> str:
    return pos.ld.rack_str(list(pos.racks[0]))


def _opponent_phony_stood(record: GcgGame, players: list[int], befores: list[Position], lex: Lexicon,
                          i: int) -> bool:
    """The opponent's last move before event i was a phony play that was not withdrawn."""
    for j in range(i - 1, -1, -1):
        ev = record.events[j]
        if ev.type in ("challenge_bonus", "time_penalty"):
            continue
        if ev.type == "phony_returned" or players[j] == players[i] or ev.type != "play":
            return False
        try:
            mv = parse_move(f"{ev.position} {ev.word}", befores[j].board, befores[j].ld)
        except FormatError:
            return False
        return bool(_phony_words(lex, befores[j].board, mv))
    return False


def _outcome(spread: int) -> float:
    return 100.0 if spread > 0 else 50.0 if spread == 0 else 0.0


def _engine_win(t: TurnAnalysis, spread: int) -> None:
    """The mover's win probability after the played move and after the best, from the turn's engine: the
    simulated or pre-endgame figures, or the endgame's outcome from the spread before the move (`spread`)."""
    if t.phase == "endgame":
        if t.best is not None and t.best.value is not None:
            t.win_best = _outcome(spread + t.best.value)
        if t.played.value is not None:
            t.win_after, t.win_source = _outcome(spread + t.played.value), "endgame"
        return
    if t.best is not None and t.best.win_pct is not None:
        t.win_best = t.best.win_pct
    if t.played.win_pct is not None and t.rank is not None:
        t.win_after, t.win_source = t.played.win_pct, "peg" if t.phase == "peg" else "sim"


def _table_win(lex: Lexicon, after: Position) -> float:
    """The win table's estimate for the player who just moved, from the position after the move as the next
    player on turn knows it (their spread, the tiles unseen to them: the bag and the mover's rack)."""
    table = lex.win_table()
    off_board = sum(after.bag_counts()) + len(after.racks[0]) + len(after.racks[1])
    rack = len(after.racks[0]) or min(RACK_SIZE, off_board)
    unseen = min(max(0, off_board - rack), table.shape[1] - 1)
    spread = max(-300, min(300, after.scores[0] - after.scores[1]))
    return round(100.0 * (1.0 - float(table[300 - spread, unseen])), 2)


def _add_to_summary(s: PlayerSummary, t: TurnAnalysis) -> None:
    if t.skipped:
        return
    s.turns += 1
    if t.rank == 1:
        s.optimal += 1
    s.equity_lost += t.equity_loss or 0.0
    s.win_lost += t.win_loss or 0.0
    s.spread_lost += t.spread_loss or 0
    if t.mistake in MISTAKE_WEIGHTS:
        setattr(s, t.mistake, getattr(s, t.mistake) + 1)
    s.bingos_available += t.bingo_available
    s.bingos_missed += t.missed_bingo
    s.phonies += t.phony
    s.phonies_challenged += t.phony_challenged
    s.challenges_missed += t.missed_challenge


# ------------------------------------------------------------------ output


def turn_note(t: TurnAnalysis) -> str:
    """One line for the GCG #note of an analysed turn."""
    if t.skipped:
        return f"analysis: not analysed ({t.skipped})"
    parts = [f"analysis ({t.phase}):"]
    if t.best is not None:
        b = t.best
        stat = []
        if b.win_pct is not None:
            stat.append(f"win {b.win_pct:.1f}%")
        if b.equity is not None:
            stat.append(f"equity {b.equity:.1f}")
        if b.value is not None:
            stat.append(f"value {b.value:+d}")
        parts.append(f"best {b.move} ({', '.join(stat)})" if stat else f"best {b.move}")
    if t.rank is not None:
        loss = []
        if t.win_loss is not None:
            loss.append(f"-{t.win_loss:.1f}% win")
        if t.equity_loss is not None and t.phase != "endgame":
            loss.append(f"-{t.equity_loss:.1f} equity")
        if t.spread_loss is not None:
            loss.append(f"-{t.spread_loss} spread")
        parts.append(f"played {t.played.move} ranks {t.rank}/{t.candidates}"
                     + (f" ({', '.join(loss)})" if loss else ""))
    if t.mistake != "none":
        parts.append(f"{t.mistake} mistake")
    flags = []
    if t.missed_bingo:
        flags.append("missed bingo")
    if t.phony:
        flags.append("phony " + ",".join(t.phony_words) + (" (challenged off)" if t.phony_challenged else ""))
    if t.missed_challenge:
        flags.append("missed challenge")
    if t.blown_endgame:
        flags.append("blown endgame")
    return " ".join(parts) + ("; " + "; ".join(flags) if flags else "") + (
        "; " + "; ".join(t.notes) if t.notes else "")


def annotated_gcg(record: GcgGame, analysis: GameAnalysis) -> str:
    """The record with each analysed turn's result added to its #note."""
    by_event = {t.event: t for t in analysis.turns}
    out = GcgGame(players=list(record.players), pragmas=list(record.pragmas), events=[])
    for n, ev in enumerate(record.events, 1):
        copy = type(ev)(**{k: getattr(ev, k) for k in ev.__dataclass_fields__})
        t = by_event.get(n)
        if t is not None:
            note = turn_note(t)
            copy.note = f"{copy.note}\n{note}" if copy.note else note
        out.events.append(copy)
    return write_gcg(out)
