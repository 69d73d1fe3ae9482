from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Direction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HORIZONTAL: _ClassVar[Direction]
    VERTICAL: _ClassVar[Direction]

class MoveType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TILE_PLACEMENT: _ClassVar[MoveType]
    EXCHANGE: _ClassVar[MoveType]
    PASS: _ClassVar[MoveType]

class SortBy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SORT_EQUITY: _ClassVar[SortBy]
    SORT_SCORE: _ClassVar[SortBy]
HORIZONTAL: Direction
VERTICAL: Direction
TILE_PLACEMENT: MoveType
EXCHANGE: MoveType
PASS: MoveType
SORT_EQUITY: SortBy
SORT_SCORE: SortBy

class Position(_message.Message):
    __slots__ = ("cgp", "lexicon")
    CGP_FIELD_NUMBER: _ClassVar[int]
    LEXICON_FIELD_NUMBER: _ClassVar[int]
    cgp: str
    lexicon: str
    def __init__(self, cgp: _Optional[str] = ..., lexicon: _Optional[str] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("notation", "type", "row", "column", "direction", "tiles", "score", "equity", "leave", "tiles_played", "display")
    NOTATION_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    TILES_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    EQUITY_FIELD_NUMBER: _ClassVar[int]
    LEAVE_FIELD_NUMBER: _ClassVar[int]
    TILES_PLAYED_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_FIELD_NUMBER: _ClassVar[int]
    notation: str
    type: MoveType
    row: int
    column: int
    direction: Direction
    tiles: str
    score: int
    equity: float
    leave: str
    tiles_played: int
    display: str
    def __init__(self, notation: _Optional[str] = ..., type: _Optional[_Union[MoveType, str]] = ..., row: _Optional[int] = ..., column: _Optional[int] = ..., direction: _Optional[_Union[Direction, str]] = ..., tiles: _Optional[str] = ..., score: _Optional[int] = ..., equity: _Optional[float] = ..., leave: _Optional[str] = ..., tiles_played: _Optional[int] = ..., display: _Optional[str] = ...) -> None: ...

class LexiconInfo(_message.Message):
    __slots__ = ("name", "has_leaves", "source")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HAS_LEAVES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    name: str
    has_leaves: bool
    source: str
    def __init__(self, name: _Optional[str] = ..., has_leaves: _Optional[bool] = ..., source: _Optional[str] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("max_jobs", "max_message_bytes", "max_autoplay_games")
    MAX_JOBS_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_AUTOPLAY_GAMES_FIELD_NUMBER: _ClassVar[int]
    max_jobs: int
    max_message_bytes: int
    max_autoplay_games: int
    def __init__(self, max_jobs: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., max_autoplay_games: _Optional[int] = ...) -> None: ...

class GetServerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ServerInfo(_message.Message):
    __slots__ = ("version", "api_version", "lexica", "default_lexicon", "limits", "running_jobs")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    LEXICA_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_LEXICON_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_JOBS_FIELD_NUMBER: _ClassVar[int]
    version: str
    api_version: str
    lexica: _containers.RepeatedCompositeFieldContainer[LexiconInfo]
    default_lexicon: str
    limits: Limits
    running_jobs: int
    def __init__(self, version: _Optional[str] = ..., api_version: _Optional[str] = ..., lexica: _Optional[_Iterable[_Union[LexiconInfo, _Mapping]]] = ..., default_lexicon: _Optional[str] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ..., running_jobs: _Optional[int] = ...) -> None: ...

class GenerateMovesRequest(_message.Message):
    __slots__ = ("position", "leaves", "num_plays", "all", "sort")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    LEAVES_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYS_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    SORT_FIELD_NUMBER: _ClassVar[int]
    position: Position
    leaves: str
    num_plays: int
    all: bool
    sort: SortBy
    def __init__(self, position: _Optional[_Union[Position, _Mapping]] = ..., leaves: _Optional[str] = ..., num_plays: _Optional[int] = ..., all: _Optional[bool] = ..., sort: _Optional[_Union[SortBy, str]] = ...) -> None: ...

class MoveCounts(_message.Message):
    __slots__ = ("placements", "exchanges", "passes")
    PLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    EXCHANGES_FIELD_NUMBER: _ClassVar[int]
    PASSES_FIELD_NUMBER: _ClassVar[int]
    placements: int
    exchanges: int
    passes: int
    def __init__(self, placements: _Optional[int] = ..., exchanges: _Optional[int] = ..., passes: _Optional[int] = ...) -> None: ...

class GenerateMovesResponse(_message.Message):
    __slots__ = ("moves", "counts", "lexicon")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    LEXICON_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[Move]
    counts: MoveCounts
    lexicon: str
    def __init__(self, moves: _Optional[_Iterable[_Union[Move, _Mapping]]] = ..., counts: _Optional[_Union[MoveCounts, _Mapping]] = ..., lexicon: _Optional[str] = ...) -> None: ...

class AutoplayRequest(_message.Message):
    __slots__ = ("games", "lexicon", "leaves", "lexicon2", "leaves2", "seed", "threads", "pairs")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    LEXICON_FIELD_NUMBER: _ClassVar[int]
    LEAVES_FIELD_NUMBER: _ClassVar[int]
    LEXICON2_FIELD_NUMBER: _ClassVar[int]
    LEAVES2_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    games: int
    lexicon: str
    leaves: str
    lexicon2: str
    leaves2: str
    seed: int
    threads: int
    pairs: bool
    def __init__(self, games: _Optional[int] = ..., lexicon: _Optional[str] = ..., leaves: _Optional[str] = ..., lexicon2: _Optional[str] = ..., leaves2: _Optional[str] = ..., seed: _Optional[int] = ..., threads: _Optional[int] = ..., pairs: _Optional[bool] = ...) -> None: ...

class AutoplayProgress(_message.Message):
    __slots__ = ("job_id", "games_done", "games_total", "wins", "draws", "mean_score", "bingos_per_game", "turns_per_game", "games_per_second", "elapsed_seconds", "win_rate", "win_rate_ci95", "mean_spread", "final", "stopped")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    GAMES_DONE_FIELD_NUMBER: _ClassVar[int]
    GAMES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    BINGOS_PER_GAME_FIELD_NUMBER: _ClassVar[int]
    TURNS_PER_GAME_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    WIN_RATE_FIELD_NUMBER: _ClassVar[int]
    WIN_RATE_CI95_FIELD_NUMBER: _ClassVar[int]
    MEAN_SPREAD_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    games_done: int
    games_total: int
    wins: _containers.RepeatedScalarFieldContainer[int]
    draws: int
    mean_score: _containers.RepeatedScalarFieldContainer[float]
    bingos_per_game: _containers.RepeatedScalarFieldContainer[float]
    turns_per_game: float
    games_per_second: float
    elapsed_seconds: float
    win_rate: float
    win_rate_ci95: float
    mean_spread: float
    final: bool
    stopped: bool
    def __init__(self, job_id: _Optional[str] = ..., games_done: _Optional[int] = ..., games_total: _Optional[int] = ..., wins: _Optional[_Iterable[int]] = ..., draws: _Optional[int] = ..., mean_score: _Optional[_Iterable[float]] = ..., bingos_per_game: _Optional[_Iterable[float]] = ..., turns_per_game: _Optional[float] = ..., games_per_second: _Optional[float] = ..., elapsed_seconds: _Optional[float] = ..., win_rate: _Optional[float] = ..., win_rate_ci95: _Optional[float] = ..., mean_spread: _Optional[float] = ..., final: _Optional[bool] = ..., stopped: _Optional[bool] = ...) -> None: ...

class StopJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class StopJobResponse(_message.Message):
    __slots__ = ("found",)
    FOUND_FIELD_NUMBER: _ClassVar[int]
    found: bool
    def __init__(self, found: _Optional[bool] = ...) -> None: ...

class CreateGameRequest(_message.Message):
    __slots__ = ("lexicon", "seed", "players", "bingo_bonus")
    LEXICON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    BINGO_BONUS_FIELD_NUMBER: _ClassVar[int]
    lexicon: str
    seed: int
    players: _containers.RepeatedScalarFieldContainer[str]
    bingo_bonus: int
    def __init__(self, lexicon: _Optional[str] = ..., seed: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., bingo_bonus: _Optional[int] = ...) -> None: ...

class PlayedMove(_message.Message):
    __slots__ = ("player", "move", "rack")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    RACK_FIELD_NUMBER: _ClassVar[int]
    player: int
    move: Move
    rack: str
    def __init__(self, player: _Optional[int] = ..., move: _Optional[_Union[Move, _Mapping]] = ..., rack: _Optional[str] = ...) -> None: ...

class GameState(_message.Message):
    __slots__ = ("game_id", "cgp", "scores", "on_turn", "players", "bag_count", "game_over", "end_reason", "history", "lexicon")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    CGP_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ON_TURN_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    BAG_COUNT_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    LEXICON_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    cgp: str
    scores: _containers.RepeatedScalarFieldContainer[int]
    on_turn: int
    players: _containers.RepeatedScalarFieldContainer[str]
    bag_count: int
    game_over: bool
    end_reason: str
    history: _containers.RepeatedCompositeFieldContainer[PlayedMove]
    lexicon: str
    def __init__(self, game_id: _Optional[str] = ..., cgp: _Optional[str] = ..., scores: _Optional[_Iterable[int]] = ..., on_turn: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., bag_count: _Optional[int] = ..., game_over: _Optional[bool] = ..., end_reason: _Optional[str] = ..., history: _Optional[_Iterable[_Union[PlayedMove, _Mapping]]] = ..., lexicon: _Optional[str] = ...) -> None: ...

class GetGameRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class PlayMoveRequest(_message.Message):
    __slots__ = ("game_id", "move")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    move: str
    def __init__(self, game_id: _Optional[str] = ..., move: _Optional[str] = ...) -> None: ...

class EngineMoveRequest(_message.Message):
    __slots__ = ("game_id", "strategy")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    strategy: str
    def __init__(self, game_id: _Optional[str] = ..., strategy: _Optional[str] = ...) -> None: ...

class EngineMoveResponse(_message.Message):
    __slots__ = ("move", "game")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    move: Move
    game: GameState
    def __init__(self, move: _Optional[_Union[Move, _Mapping]] = ..., game: _Optional[_Union[GameState, _Mapping]] = ...) -> None: ...

class DeleteGameRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class DeleteGameResponse(_message.Message):
    __slots__ = ("found",)
    FOUND_FIELD_NUMBER: _ClassVar[int]
    found: bool
    def __init__(self, found: _Optional[bool] = ...) -> None: ...
