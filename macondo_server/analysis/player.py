"""The engine as a player: one strategy, by name and options, that every caller who lets the engine move uses
(EngineMove, the shell's engine move, the `bots` arena, review's engine choice).

Strategies:
- `static`: the best play by static equity (score + leave value), at once.
- `sim`: a simulation while tiles are in the bag, an endgame search (4 plies by default) once it is empty.
- `best`: phase-aware: the simulation while the bag is large, the pre-endgame's anytime answer with 1 to
  `peg` tiles in the bag (DEFAULT_PEG_TILES; up to 6), the exact endgame once it is empty.
- the levels, weakest first (LEVELS): beginner, novice and club know part of the lexicon (vocabulary.py) and
  choose with noise; expert is `static`; champion is `best`.

Time: a per-move budget comes from `max_time`, else from the player's game clock (plan_budget: the time
left shared over the turns the player can expect, weighted by phase, with a reserve), else from the phase's
default. The simulation stops by best-arm identification once it knows the best play (less time where the
decision is clear) and may run to twice the budget where it does not; the pre-endgame and the endgame stop at
the budget with their best answer so far."""

from __future__ import annotations

import math
import random
import re
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.analysis.vocabulary import Vocabulary, vocabulary_kwg
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import Lexicon
from macondo_server.engine.replay import position_from_game
from macondo_server.model.move import Move
from macondo_server.model.text import excerpt

if TYPE_CHECKING:
    from macondo_server.analysis.infer import LastPlay
    from macondo_server.analysis.peg.result import PegResult

PHASES = ("static", "sim", "pre-endgame", "endgame")
# relative weights of a turn's thinking time by phase: a pre-endgame decides more and costs more
PHASE_WEIGHT = {"sim": 1.0, "pre-endgame": 3.0, "endgame": 1.5}
# the per-move budget without a clock or max_time
DEFAULT_SECONDS = {"sim": 2.0, "pre-endgame": 8.0, "endgame": 4.0}
TILES_PER_ROUND = 8.0          # tiles both players draw in a round, on average (about 4 each)
RESERVE_FRACTION = 0.05        # of the clock, never planned for
RESERVE_SECONDS = 1.0
PANIC_SECONDS = 2.0            # below this on the clock: the static play, at once
SIM_OVERRUN = 2.0              # an undecided simulation may run to this multiple of its budget
PEG_MIN_SECONDS = 2.0          # a pre-endgame budget below this: the simulation plays the turn
ENGINE_MOVE_TT_MB = 64
# the pre-endgame's default reach: with 1 or 2 tiles in the bag it names a play within a few seconds; with
# more, setting up its draws alone can take longer than a move's budget (docs/bots.md), so the simulation
# plays those turns unless `peg` says otherwise
DEFAULT_PEG_TILES = 2


@dataclass(frozen=True)
class Strategy:
    """How the engine chooses a move. `kind`: static, sim, best, or a level (LEVELS)."""
    kind: str = "static"
    # the simulation
    iterations: int | None = None    # a cap on iterations (None: the budget and the stopping rule decide)
    plies: int = 2
    num_plays: int = 10
    stop_rule: str = "bai"           # bai (best-arm identification), z (the z-test) or none (the budget only)
    confidence: float = 0.95
    infer: bool = False              # draw the opponent's rack from inference on their last play
    # the pre-endgame, with 1 to `peg` tiles in the bag (0: never)
    peg: int = 0
    # the endgame
    endgame_plies: int | None = 4    # None: as deep as the budget allows
    endgame_time: float = 5.0        # the endgame's budget without a clock or max_time
    # time and threads
    max_time: float = 0.0            # a fixed budget per move (seconds); 0: from the clock, else the defaults
    threads: int = 1
    # the weaker levels
    vocabulary: Vocabulary | None = None   # the words known (None: the whole lexicon)
    leaves: bool = True              # value leaves (False: score only)
    noise: float = 0.0               # softmax temperature, in points, over the top plays (0: the best)
    level: str = ""                  # the level this strategy is, when it is one

    @property
    def needs_job(self) -> bool:
        """It searches or simulates (a long job), rather than answering at once."""
        return self.kind in ("sim", "best")

    @property
    def name(self) -> str:
        return self.level or self.kind


# ------------------------------------------------------------------------------------------- levels

BEGINNER_WORDS = Vocabulary("beginner", ((2, 0.6), (3, 0.4), (4, 0.3), (5, 0.2), (6, 0.05)))
NOVICE_WORDS = Vocabulary("novice", ((2, 0.9), (3, 0.65), (4, 0.5), (5, 0.35), (6, 0.2), (7, 0.1), (8, 0.03)))
CLUB_WORDS = Vocabulary("club", ((2, 1.0), (3, 0.95), (4, 0.8), (5, 0.65), (6, 0.5), (7, 0.4), (8, 0.3),
                                 (9, 0.1)))

LEVELS: dict[str, Strategy] = {
    "beginner": Strategy("static", vocabulary=BEGINNER_WORDS, leaves=False, noise=6.0, level="beginner"),
    "novice": Strategy("static", vocabulary=NOVICE_WORDS, leaves=False, noise=3.0, level="novice"),
    "club": Strategy("static", vocabulary=CLUB_WORDS, noise=1.5, level="club"),
    "expert": Strategy("static", level="expert"),
    "champion": Strategy("best", peg=DEFAULT_PEG_TILES, endgame_plies=None, level="champion"),
}
LEVEL_NAMES = tuple(LEVELS)

# ------------------------------------------------------------------------------------------- parsing

# key -> (type, lowest, highest); str keys list their choices
OPTION_KEYS: dict[str, tuple[type, float, float]] = {
    "iterations": (int, 1, 2**31 - 1), "plies": (int, 0, 15), "num_plays": (int, 1, 500),
    "threads": (int, 1, 256), "max_time": (float, 0, 86_400), "endgame_plies": (int, 1, 25),
    "endgame_time": (float, 0, 86_400), "peg": (int, 0, 6), "confidence": (float, 0.5, 0.9999),
    "infer": (int, 0, 1),
}
TEXT_KEYS = {"stop": ("bai", "z", "none")}
KINDS = ("static", "sim", "best")
CHOICES = "static, sim[:key=value,...], best[:key=value,...], or a level: " + ", ".join(LEVEL_NAMES)
_INT_TEXT = re.compile(r"[0-9]{1,12}")
_FLOAT_TEXT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9})?")


def parse_strategy(text: str) -> Strategy:
    """'static', 'sim', 'best' or a level, with 'kind:key=value,...' options for sim and best; numbers in ASCII
    digits within their ranges. A bad string is a ValueError naming the choices."""
    text = (text or "static").strip()
    if len(text) > 256:
        raise ValueError(f"strategy {excerpt(text)} is longer than 256 characters")
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind in LEVELS:
        if rest:
            raise ValueError(f"the level {kind} takes no options (it is {describe(LEVELS[kind])})")
        return LEVELS[kind]
    if kind not in KINDS:
        raise ValueError(f"unknown strategy {excerpt(kind)} (available: {CHOICES})")
    base = Strategy(kind)
    if kind == "best":
        base = Strategy("best", peg=DEFAULT_PEG_TILES, endgame_plies=None)
    if not rest:
        return base
    if kind == "static":
        raise ValueError("the static strategy takes no options")
    params: dict[str, object] = {}
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or (key not in OPTION_KEYS and key not in TEXT_KEYS):
            raise ValueError(f"strategy option {excerpt(item)}: expected one of "
                             f"{', '.join(sorted([*OPTION_KEYS, *TEXT_KEYS]))} as key=value")
        if key in params or (key == "stop" and "stop_rule" in params):
            raise ValueError(f"strategy option {key} is given twice")
        if key in TEXT_KEYS:
            if value.lower() not in TEXT_KEYS[key]:
                raise ValueError(f"strategy option {key}: {excerpt(value)} is not one of {', '.join(TEXT_KEYS[key])}")
            params["stop_rule"] = value.lower()
            continue
        typ, lo, hi = OPTION_KEYS[key]
        pattern = _INT_TEXT if typ is int else _FLOAT_TEXT
        if not pattern.fullmatch(value):
            what = "a whole number" if typ is int else "a number"
            raise ValueError(f"strategy option {key}: {excerpt(value)} is not {what}")
        number = typ(value)
        if not lo <= number <= hi:
            raise ValueError(f"strategy option {key} must be {lo:g} to {hi:g}, got {number:g}")
        params[key] = bool(number) if key == "infer" else number
    if kind == "sim" and params.get("peg"):
        raise ValueError("the sim strategy simulates in every phase with tiles in the bag: use best:peg=N for "
                         "a pre-endgame")
    return replace(base, **params)  # type: ignore[arg-type]


def describe(st: Strategy) -> str:
    """The strategy in words, for listings and errors."""
    if st.kind == "static":
        if st.vocabulary is None and st.leaves and not st.noise:
            return "the best play by static equity"
        words = "a part of the lexicon" if st.vocabulary is not None else "the whole lexicon"
        value = "equity" if st.leaves else "score"
        return f"{words}, chooses by {value} with noise {st.noise:g}"
    peg = f", a pre-endgame with 1 to {st.peg} in the bag" if st.peg else ""
    end = "an exact endgame" if st.endgame_plies is None else f"a {st.endgame_plies}-ply endgame"
    return f"simulation ({st.plies} plies, stop {st.stop_rule}){peg}, {end}"


# ------------------------------------------------------------------------------------------- time


@dataclass(frozen=True)
class Budget:
    """The thinking time of one move: `seconds` planned, `limit` the most it may take."""
    seconds: float
    limit: float
    source: str          # "max_time", "clock" or "default"


def phase_of(st: Strategy, bag: int) -> str:
    if st.kind == "static":
        return "static"
    if bag == 0:
        return "endgame"
    if bag <= st.peg:
        return "pre-endgame"
    return "sim"


def expected_turns(bag: int, peg: int) -> dict[str, float]:
    """The turns the player on turn can expect in each phase from here: about 8 tiles leave the bag per round
    while it lasts; one turn at the pre-endgame (when the strategy plays one); about two in the endgame."""
    sim_bag = bag - peg if bag > peg else 0
    return {"sim": math.ceil(sim_bag / TILES_PER_ROUND) if sim_bag > 0 else 0,
            "pre-endgame": 1 if peg and bag > 0 else 0, "endgame": 2}


def plan_budget(st: Strategy, phase: str, bag: int, clock: float | None) -> Budget:
    """This move's budget: a fixed max_time; else the clock (seconds left) less a reserve, shared over the
    expected turns by phase weight; else the phase's default."""
    if st.max_time > 0:
        # a fixed time a move is a cap (equal-time matches): the stopping rule may only shorten it
        limit = st.max_time if clock is None else min(st.max_time, max(0.0, clock - RESERVE_SECONDS))
        return Budget(limit, limit, "max_time")
    if clock is not None:
        usable = max(0.0, clock * (1 - RESERVE_FRACTION) - RESERVE_SECONDS)
        turns = expected_turns(bag, st.peg)
        weight = sum(PHASE_WEIGHT[k] * n for k, n in turns.items())
        share = usable * PHASE_WEIGHT[phase] / max(weight, PHASE_WEIGHT[phase])
        limit = min(share * SIM_OVERRUN, usable / 2) if phase == "sim" and st.stop_rule != "none" else share
        return Budget(share, max(limit, share), "clock")
    seconds = st.endgame_time if phase == "endgame" else DEFAULT_SECONDS[phase]
    limit = seconds * SIM_OVERRUN if phase == "sim" and st.stop_rule != "none" else seconds
    return Budget(seconds, limit, "default")


# ------------------------------------------------------------------------------------------- choosing


@dataclass
class Choice:
    move: Move
    phase: str                 # static, sim, pre-endgame or endgame
    budget: float = 0.0        # seconds planned
    seconds: float = 0.0       # seconds taken
    detail: str = ""           # what the phase's engine found (one line)


@dataclass(frozen=True)
class Turn:
    """What the player on turn knows besides the position: their clock and the opponent's last play."""
    clock: float | None = None          # seconds left (None: untimed)
    last_play: str | None = None        # the opponent's last play as it stands on the board (for inference)
    last_withdrawn: bool = False
    # the opponent's turns before last_play, oldest first (infer.history_from_record), weighed with it
    history: tuple[LastPlay, ...] = ()


def choose(engine: Engine, game: Game, lex: Lexicon, st: Strategy, turn: Turn | None = None,
           stop: threading.Event | None = None, threads: int | None = None) -> Choice:
    """The strategy's move for the player on turn of `game` (which it does not change). The game holds the
    opponent's rack, but only an empty-bag endgame (where the unseen tiles are that rack) looks at it."""
    turn = turn or Turn()
    t0 = time.monotonic()
    threads = threads or st.threads
    phase = phase_of(st, game.bag_size)
    if phase != "static" and turn.clock is not None and turn.clock < PANIC_SECONDS:
        choice = _static(engine, game, lex, LEVELS["expert"])
        choice.detail = f"{turn.clock:.1f} s left on the clock: the static play"
    elif phase == "static":
        choice = _static(engine, game, lex, st)
    else:
        budget = plan_budget(st, phase, game.bag_size, turn.clock)
        if phase == "pre-endgame" and budget.limit < PEG_MIN_SECONDS:
            # too little time for the pre-endgame to name a play from its draws: the simulation plays the turn
            phase = "sim"
            budget = plan_budget(st, phase, game.bag_size, turn.clock)
        if phase == "endgame":
            choice = _endgame(engine, game, lex, st, budget, stop, threads)
        elif phase == "pre-endgame":
            choice = _peg(engine, game, lex, st, budget, stop, threads)
        else:
            choice = _sim(engine, game, lex, st, budget, turn, stop, threads)
        choice.budget = budget.seconds
    choice.seconds = time.monotonic() - t0
    return choice


def _movegen(engine: Engine, lex: Lexicon, st: Strategy) -> tuple[MoveGen, bool]:
    """The generator of the strategy's words and leave values, and whether it must compute its own
    cross-sets (a vocabulary's graph differs from the game's)."""
    klv = lex.klv if st.leaves else None
    if st.vocabulary is None:
        return engine.movegen(lex, klv), False
    kwg = vocabulary_kwg(lex, st.vocabulary)
    cache = getattr(_LOCAL, "gens", None)
    if cache is None:
        cache = _LOCAL.gens = {}
    key = (id(kwg), id(klv), lex.ld.name)
    gen = cache.get(key)
    if gen is None:
        gen = cache[key] = MoveGen(kwg, lex.ld, klv)
    return gen, True


_LOCAL = threading.local()     # this thread's generators of the levels' vocabularies


def _static(engine: Engine, game: Game, lex: Lexicon, st: Strategy) -> Choice:
    p = game.on_turn
    gen, own_cross = _movegen(engine, lex, st)
    board = game.board
    if own_cross:
        board = board.copy()
        board.invalidate_cross_sets()
    opp = list(game.rack(1 - p)) if game.bag_size == 0 else None
    if st.noise > 0:
        gen.generate(board, list(game.rack(p)), game.bag_size, opp, mode="top", n=NOISE_TOP)
        moves = gen.moves()
    else:
        gen.generate(board, list(game.rack(p)), game.bag_size, opp, mode="best")
        moves = gen.moves(1)
    if not moves:       # (a generator always offers a pass; kept for safety of the index below)
        return Choice(Move("pass", 0, 0, False, ()), "static", detail="no play")
    pick = 0
    if st.noise > 0 and len(moves) > 1:
        rng = random.Random(game.hash_key)
        best = moves[0][6]
        weights = [math.exp((m[6] - best) / (1000.0 * st.noise)) for m in moves]
        pick = rng.choices(range(len(moves)), weights=weights)[0]
    kind, row, col, vertical, tiles = moves[pick][:5]
    value = moves[pick][6] / 1000.0
    what = "equity" if st.leaves else "score"
    detail = f"{what} {value:.1f}" + (f", pick {pick + 1} of the top {len(moves)}" if st.noise > 0 else "")
    return Choice(Move(kind, row, col, vertical, tuple(tiles)), "static", detail=detail)


NOISE_TOP = 20


def _endgame(engine: Engine, game: Game, lex: Lexicon, st: Strategy, budget: Budget,
             stop: threading.Event | None, threads: int) -> Choice:
    from macondo_server.analysis.endgame import EndgameJob, EndgameOptions

    full = position_from_game(game, {"lex": lex.name}, show_opponent=True)
    eg = EndgameJob(engine, full, EndgameOptions(plies=st.endgame_plies, max_time=budget.limit, threads=threads,
                                                 tt_megabytes=ENGINE_MOVE_TT_MB))
    res = eg.run(stop=stop)
    best = res.best_move
    if best is None:
        return _fallback(engine, game, lex, "endgame", "the endgame found no line in time")
    exact = "exact" if res.solved else f"depth {res.depth}"
    detail = f"spread {res.value:+d} ({exact}; {res.stop_reason or 'done'})"
    return Choice(best.move, "endgame", detail=detail)


def _peg(engine: Engine, game: Game, lex: Lexicon, st: Strategy, budget: Budget,
         stop: threading.Event | None, threads: int) -> Choice:
    from macondo_server.analysis.peg.job import PegJob
    from macondo_server.analysis.peg.options import PegOptions

    pos = position_from_game(game, {"lex": lex.name}, show_opponent=False)
    opts = PegOptions(threads=threads, max_time=budget.limit, early_cutoff=True, max_tiles_left=-1,
                      tt_megabytes=ENGINE_MOVE_TT_MB)
    job = PegJob(engine, pos, opts, stop=stop)
    res = job.run(stop=stop)
    lead = res.leader
    if lead is None:
        partial = _best_judged(res, [p.text for p in job.plays])
        if partial is not None:
            return partial
        why = res.no_leader_reason or "no leader"
        return _fallback(engine, game, lex, "pre-endgame", f"the pre-endgame named no play ({why})")
    detail = f"{lead.text}: {res.leader_reason}" if res.leader_reason else lead.text
    if res.stop_reason:
        detail += f" ({res.stop_reason})"
    return Choice(lead.move, "pre-endgame", detail=detail)


def _best_judged(res: PegResult, static_order: list[str]) -> Choice | None:
    """When the budget ends the pre-endgame before its quick pass has judged every play (with 3 or more in
    the bag there can be hundreds of thousands of draw groups): the play with the most quick-pass points among
    those it judged on every draw. The pass takes the plays in static-equity order, so these are the best by
    static equity, now ranked over every draw; ties go to the better static equity. None when it judged no
    play completely (the static play is then made)."""
    from macondo_server.analysis.peg.result import points_text

    index = {text: i for i, text in enumerate(static_order)}
    judged = [p for p in res.plays if p.quick_complete and not p.cut_off]
    if not judged:
        return None
    best = max(judged, key=lambda p: (p.quick_points, -index.get(p.text, len(index))))
    total = res.total_permutations
    which = "the play" if len(judged) == 1 else f"the {len(judged)} plays"
    detail = (f"{best.text}: best at the quick pass of {which} it judged on every draw (of "
              f"{len(res.plays)}, in static-equity order), {points_text(best.quick_points)} of {total}")
    if res.stop_reason:
        detail += f" ({res.stop_reason})"
    return Choice(best.move, "pre-endgame", detail=detail)


def _sim(engine: Engine, game: Game, lex: Lexicon, st: Strategy, budget: Budget, turn: Turn,
         stop: threading.Event | None, threads: int) -> Choice:
    from macondo_server.analysis.sim import SimJob, SimOptions

    pos = position_from_game(game, {"lex": lex.name}, show_opponent=False)
    rule = "z" if st.stop_rule == "none" else st.stop_rule
    opts = SimOptions(plies=st.plies, num_plays=st.num_plays, threads=threads, lexicon=lex.name,
                      seed=game.hash_key & 0x7FFFFFFFFFFFFFFF, max_time=budget.limit, iterations=st.iterations,
                      stop_rule=rule)
    if st.stop_rule == "bai":
        opts.confidence = st.confidence
    elif st.stop_rule == "z":
        opts.stop = 99 if st.confidence >= 0.99 else 98 if st.confidence >= 0.98 else 95
    if budget.source == "default" and st.kind == "sim":
        # `sim` without a clock or a time: a fixed amount of work, so the same game gives the same moves
        opts.iterations = st.iterations or LEGACY_SIM_ITERATIONS
        opts.max_time = 0.0
    if st.infer and turn.last_play:
        opts.infer_play = turn.last_play
        opts.infer_withdrawn = turn.last_withdrawn
        opts.infer_history = list(turn.history)
    job = SimJob(engine, pos, opts, stop=stop)
    if stop is not None and stop.is_set():
        return _fallback(engine, game, lex, "sim", "stopped before the simulation began")
    res = job.run(stop=stop)
    if not res.plays:
        return _fallback(engine, game, lex, "sim", "the simulation kept no play")
    top = res.plays[0]
    detail = f"{top.text}: equity {top.equity:+.1f} over {top.n} playouts"
    if res.stop_text:
        detail += f" ({res.stop_text})"
    return Choice(top.gen.move, "sim", detail=detail)


LEGACY_SIM_ITERATIONS = 200


def _fallback(engine: Engine, game: Game, lex: Lexicon, phase: str, why: str) -> Choice:
    choice = _static(engine, game, lex, LEVELS["expert"])
    choice.phase = phase
    choice.detail = f"{why}: the static play"
    return choice
