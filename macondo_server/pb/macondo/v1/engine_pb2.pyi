from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
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
HORIZONTAL: Direction
VERTICAL: Direction
TILE_PLACEMENT: MoveType
EXCHANGE: MoveType
PASS: MoveType

class Position(_message.Message):
    __slots__ = ("cgp", "lexicon")
    CGP_FIELD_NUMBER: _ClassVar[int]
    LEXICON_FIELD_NUMBER: _ClassVar[int]
    cgp: str
    lexicon: str
    def __init__(self, cgp: _Optional[str] = ..., lexicon: _Optional[str] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("notation", "type", "row", "column", "direction", "tiles", "score", "equity", "leave", "tiles_played")
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
    def __init__(self, notation: _Optional[str] = ..., type: _Optional[_Union[MoveType, str]] = ..., row: _Optional[int] = ..., column: _Optional[int] = ..., direction: _Optional[_Union[Direction, str]] = ..., tiles: _Optional[str] = ..., score: _Optional[int] = ..., equity: _Optional[float] = ..., leave: _Optional[str] = ..., tiles_played: _Optional[int] = ...) -> None: ...

class LexiconInfo(_message.Message):
    __slots__ = ("name", "has_leaves", "source")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HAS_LEAVES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    name: str
    has_leaves: bool
    source: str
    def __init__(self, name: _Optional[str] = ..., has_leaves: _Optional[bool] = ..., source: _Optional[str] = ...) -> None: ...
