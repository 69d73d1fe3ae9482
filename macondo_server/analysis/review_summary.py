"""The summary of many reviewed games (a tournament, a folder of one's games): per player, by name, the turns
analysed, the win probability and equity lost, mistakes by size and the mistake index, missed bingos,
phonies and the biggest mistakes across all the games (`macondo analyze --summary`, the ReviewGames RPC).

Players are told apart by the name the records give them (`#player1 nick Real Name`: the real name, else the
nickname), so one player's games under several nicknames add up. Definitions (docs/review.md):

- mistakes are the per-turn sizes of review.py (Woogles' bands: by win-probability loss on simulated and
  pre-endgame turns, by spread loss in the endgame); the mistake index of a game is 0.2 x small + 0.5 x medium +
  1.0 x large, the summary gives its total over the player's games and its mean per game;
- win% lost per turn: the win-probability loss summed over the turns that have one (simulation, pre-endgame),
  divided by their number;
- bingos missed: turns where the engine's best move was a bingo and the played move was not (besides the
  per-game figure: a bingo was available and none was played);
- phonies: plays the record shows challenged off, and plays forming a word outside the lexicon.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from macondo_server.analysis.review import MISTAKE_WEIGHTS, GameAnalysis, TurnAnalysis

DEFAULT_TOP = 5
MAX_TOP = 100
_SIZE_ORDER = {"large": 3, "medium": 2, "small": 1, "none": 0}


@dataclass
class MistakeRef:
    """One mistake of the summary's biggest: where it was, what was played instead of what, what it cost."""
    game: str
    event: int
    line: int
    nick: str
    phase: str
    played: str
    best: str
    size: str
    win_loss: float | None = None      # percentage points (simulation, pre-endgame)
    spread_loss: int | None = None     # endgame
    equity_loss: float | None = None
    loss_is_bound: bool = False
    complete: bool = True


@dataclass
class PlayerReview:
    name: str                          # the real name of the records, else the nickname
    nicks: list[str] = field(default_factory=list)
    games: int = 0
    turns: int = 0                     # analysed (not skipped)
    optimal: int = 0
    equity_lost: float = 0.0
    win_lost: float = 0.0              # percentage points, summed
    win_turns: int = 0                 # turns with a win-probability loss (simulation, pre-endgame)
    spread_lost: int = 0
    small: int = 0
    medium: int = 0
    large: int = 0
    best_bingos_missed: int = 0        # the engine's best was a bingo, the played move was not
    bingos_available: int = 0
    bingos_missed: int = 0             # a bingo was available, none was played
    phonies: int = 0                   # challenged off by the record, or a word outside the lexicon
    phonies_challenged: int = 0
    challenges_missed: int = 0
    blown_endgames: int = 0
    biggest: list[MistakeRef] = field(default_factory=list)

    @property
    def mistake_index(self) -> float:
        """The per-game mistake index summed over the player's games."""
        w = MISTAKE_WEIGHTS
        return self.small * w["small"] + self.medium * w["medium"] + self.large * w["large"]

    @property
    def mistake_index_per_game(self) -> float:
        return self.mistake_index / self.games if self.games else 0.0

    @property
    def win_lost_per_turn(self) -> float:
        return self.win_lost / self.win_turns if self.win_turns else 0.0


@dataclass
class ReviewSummary:
    games: int                         # games summarised
    analysed: int                      # of them analysed in this run
    reused: int                        # of them taken from the store
    failed: int                        # games that could not be read or analysed (not summarised)
    players: list[PlayerReview]
    stopped: bool = False              # a stop came before every game was done


def player_name(nick: str, real: str) -> str:
    return real.strip() or nick


def _mistake_ref(game: str, t: TurnAnalysis) -> MistakeRef:
    return MistakeRef(game=game, event=t.event, line=t.line, nick=t.nick, phase=t.phase, played=t.played.move,
                      best=t.best.move if t.best is not None else "", size=t.mistake, win_loss=t.win_loss,
                      spread_loss=t.spread_loss, equity_loss=t.equity_loss, loss_is_bound=t.loss_is_bound,
                      complete=t.complete)


def mistake_order(m: MistakeRef) -> tuple[int, float, float, str, int]:
    """Biggest first: by size, then win-probability loss, then equity (or spread) loss."""
    return (-_SIZE_ORDER.get(m.size, 0), -(m.win_loss or 0.0), -(m.equity_loss or 0.0), m.game, m.event)


def summarize(games: Iterable[GameAnalysis], top: int = DEFAULT_TOP, failed: int = 0,
              stopped: bool = False) -> ReviewSummary:
    """The per-player summary of `games` (each a GameAnalysis; its `reused` says whether it came from the
    store), with each player's `top` biggest mistakes; players by mistake index per game (lowest first), then
    by name."""
    if not 0 <= top <= MAX_TOP:
        raise ValueError(f"top must be 0 to {MAX_TOP}, got {top}")
    players: dict[str, PlayerReview] = {}
    mistakes: dict[str, list[MistakeRef]] = {}
    count = analysed = reused = 0
    for g in games:
        count += 1
        reused += g.reused
        analysed += not g.reused
        names = [player_name(nick, real) for nick, real in g.players]
        for s in g.summaries:
            name = names[s.player]
            r = players.setdefault(name, PlayerReview(name))
            if s.nick not in r.nicks:
                r.nicks.append(s.nick)
            r.games += 1
        for t in g.turns:
            name = names[t.player]
            r = players.setdefault(name, PlayerReview(name, [t.nick]))
            r.phonies_challenged += t.withdrawn
            if t.skipped:
                r.phonies += t.withdrawn
                continue
            r.turns += 1
            r.optimal += t.rank == 1
            r.equity_lost += t.equity_loss or 0.0
            if t.win_loss is not None and t.phase != "endgame":
                r.win_lost += t.win_loss
                r.win_turns += 1
            r.spread_lost += t.spread_loss or 0
            if t.mistake in MISTAKE_WEIGHTS:
                setattr(r, t.mistake, getattr(r, t.mistake) + 1)
                mistakes.setdefault(name, []).append(_mistake_ref(g.name, t))
            r.best_bingos_missed += t.best_bingo and not t.played_bingo
            r.bingos_available += t.bingo_available
            r.bingos_missed += t.missed_bingo
            r.phonies += t.phony or t.withdrawn
            r.challenges_missed += t.missed_challenge
            r.blown_endgames += t.blown_endgame
    for name, r in players.items():
        r.biggest = sorted(mistakes.get(name, []), key=mistake_order)[:top]
    ordered = sorted(players.values(), key=lambda r: (round(r.mistake_index_per_game, 6), r.name))
    return ReviewSummary(games=count, analysed=analysed, reused=reused, failed=failed, players=ordered,
                         stopped=stopped)
