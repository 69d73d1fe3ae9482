"""CGP: a position as one line of text, parsed with validation and written back.
"""

from __future__ import annotations

import re

from engine_cy.alphabet import LetterDistribution
from macondo_server.model.languages import (
    DEFAULT_DISTRIBUTION,
    DEFAULT_LAYOUT,
    LAYOUT_ALIASES,
    SUPER_LAYOUT,
    Catalog,
    LanguageError,
    environment_catalog,
)
from macondo_server.model.position import _OP_INTS, Position, op_int, parse_clock
from macondo_server.model.text import (
    MAX_CGP_CHARS,
    MAX_NAME_CHARS,
    MAX_SCORE,
    MAX_TILES_CHARS,
    FormatError,
    check_text,
    excerpt,
    parse_int,
)
from macondo_server.model.tiles import (
    RACK_SIZE,
    VARIANTS,
    board_tile,
    count_excess,
    rack_tiles,
    split_labels,
)

_OP_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.+-]{{0,{MAX_NAME_CHARS - 1}}}")


_ROW_TOKEN = re.compile(r"[0-9]+|\[[^\[\]]*\]|.", re.DOTALL)
_ROW_RUN = re.compile(r"[0-9]+|[^0-9]+", re.DOTALL)


def _row_tokens(row: str, r: int, ld: LetterDistribution) -> list[str]:
    """A board row's runs of empty squares (digits) and tiles; a distribution with multi-letter tiles read
    without brackets (Catalan QU) groups them as one tile."""
    if not ld.multi:
        return _ROW_TOKEN.findall(row)
    out: list[str] = []
    for run in _ROW_RUN.findall(row):
        if run[0] in "0123456789":
            out.append(run)
        else:
            out.extend(split_labels(run, f"CGP board row {r + 1}", ld))
    return out


def parse_cgp(text: str, check_counts: bool = True, *, catalog: Catalog | None = None, lexicon: str | None = None,
              distribution: str | None = None, layout: str | None = None) -> Position:
    """Parse a CGP line with validation; opcodes lex, ld, bdn, var, mcnz, bb, bagorder are
    checked, others kept as written.

    The board's layout is `layout` (the command line's) or the bdn op's (they must agree), else the standard
    one of its size (15 or 21 rows). Its letter distribution is `distribution` (a request's or the command
    line's) or the ld op's (they must agree), else that of the lexicon (`lexicon`, else the lex op: declared
    beside it or implied by its name, its `_super` form on the 21x21 board), else english. Names are looked up
    in `catalog` (default: MACONDO_DATA_DIR's tables and the package's).

    check_counts=False admits boards with more tiles of a kind than the distribution holds (test
    boards built to probe cross-sets); positions for play are always checked."""
    text = check_text(text, "CGP", MAX_CGP_CHARS)
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise FormatError("CGP is empty")
    fields = text.strip().split(None, 4)
    if len(fields) < 4:
        raise FormatError(
            f"CGP has {len(fields)} fields; expected 'BOARD RACKS SCORES ZEROS [OPS]'"
            " (e.g. '15/.../15 AEINRST/ 0/0 0')"
        )
    board_s, racks_s, scores_s, zeros_s = fields[:4]
    ops = _parse_ops(fields[4] if len(fields) > 4 else "")
    catalog = catalog or environment_catalog()
    rows = board_s.split("/")
    named = catalog.layout_name(ops["bdn"]) if "bdn" in ops else None
    if layout is not None:
        layout = catalog.layout_name(layout)
        if named is not None and named != layout:
            raise LanguageError(f"the request names the board layout {layout} but CGP op bdn names {named}")
    else:
        layout = named or catalog.layout_for_dim(len(rows)) or DEFAULT_LAYOUT
    ld = catalog.resolve(explicit=(("the request", distribution), ("CGP op ld", ops.get("ld"))),
                         lexicon=lexicon or ops.get("lex"), layout=layout)
    board = catalog.board(layout)
    dim = board.dim
    if len(rows) != dim:
        raise FormatError(f"CGP board has {len(rows)} rows; expected {dim}")
    for r, row in enumerate(rows):
        c = 0
        for tok in _row_tokens(row, r, ld):
            if tok[0] in "0123456789":  # the pattern took ASCII digits only
                digits = tok.lstrip("0") or "0"
                n = int(digits) if len(digits) <= 3 else 1000
                if n == 0:
                    raise FormatError(f"CGP board row {r + 1}: a run of {excerpt(tok)} empty squares")
                if c + n > dim:
                    raise FormatError(f"CGP board row {r + 1} has {c + n} squares or more; expected {dim}")
                c += n
                continue
            if c >= dim:
                raise FormatError(f"CGP board row {r + 1} is wider than {dim} squares")
            board.set_tile(r, c, board_tile(ld, tok, f"CGP board row {r + 1}"))
            c += 1
        if c != dim:
            raise FormatError(f"CGP board row {r + 1} has {c} squares; expected {dim}")
    if racks_s.count("/") != 1:
        raise FormatError(f"CGP racks {excerpt(racks_s)}: expected 'ONTURN/OTHER' with one '/'")
    racks: list[list[int]] = []
    for i, part in enumerate(racks_s.split("/")):
        rack = rack_tiles(ld, part, f"CGP rack {i + 1}")
        if len(rack) > RACK_SIZE:
            raise FormatError(f"CGP rack {i + 1} {excerpt(part)} has {len(rack)} tiles; at most {RACK_SIZE}")
        racks.append(rack)
    if scores_s.count("/") != 1:
        raise FormatError(f"CGP scores {excerpt(scores_s)}: expected 'ONTURN/OTHER'")
    s1, s2 = (
        parse_int(x, f"CGP scores {excerpt(scores_s)}: the {('first', 'second')[i]} score",
                  -MAX_SCORE, MAX_SCORE, "minus")
        for i, x in enumerate(scores_s.split("/"))
    )
    mcnz = op_int(ops, "mcnz")
    zeros = parse_int(zeros_s, "CGP consecutive zero turns", -MAX_SCORE, MAX_SCORE, "minus")
    if zeros < 0:
        raise FormatError(f"CGP consecutive zero turns {zeros}: must not be negative")
    if zeros > mcnz:
        raise FormatError(
            f"CGP consecutive zero turns {zeros}: more than the limit of {mcnz} that ends the game (op mcnz)"
        )
    pos = Position(board=board, racks=(racks[0], racks[1]), scores=(s1, s2), zeros=zeros, ops=ops, ld=ld)
    counts = pos.bag_counts()
    if check_counts:
        count_excess(ld, counts, "CGP has")
    order = rack_tiles(ld, ops["bagorder"], "CGP op bagorder") if "bagorder" in ops else None
    if order is not None and check_counts:
        need = [0] * ld.size
        for t in order:
            need[t] += 1
        unseen = pos.unseen_counts(0) if not racks[1] else counts
        short = [ld.label(i) for i in range(ld.size) if need[i] > unseen[i]]
        if short:
            raise FormatError(
                f"CGP op bagorder {excerpt(ops['bagorder'])}: more {', '.join(short)} than are unseen"
            )
    return pos


def _parse_ops(text: str) -> dict[str, str]:
    """`name value; name; ...`: names are lowercased (a MAGPIE-style leading '-' is dropped), each given
    once; values are printable; the ops this engine reads are checked, others kept as written."""
    ops: dict[str, str] = {}
    text = text.strip()
    if not text:
        return ops
    if not text.endswith(";"):
        raise FormatError(f"CGP operations {excerpt(text)}: each must end with ';'")
    for raw in text[:-1].split(";"):
        raw = raw.strip()
        if not raw:
            raise FormatError("CGP operations: empty operation")
        parts = raw.split(None, 1)
        name = parts[0].lstrip("-").lower()
        if not _OP_NAME.fullmatch(name):
            raise FormatError(f"CGP operation {excerpt(parts[0])}: not an operation name")
        if name in ops:
            raise FormatError(f"CGP operation {name} is given twice")
        value = parts[1].strip() if len(parts) > 1 else ""
        if not value.isprintable():
            raise FormatError(f"CGP operation {name} {excerpt(value)}: control or unprintable characters")
        if name in ("lex", "ld", "bdn", "var") and not _NAME.fullmatch(value):
            raise FormatError(f"CGP operation {name} {excerpt(value)}: not a name")
        if name == "var" and value.lower() not in VARIANTS:
            known = ", ".join(VARIANTS)
            raise FormatError(f"CGP operation var {excerpt(value)}: unsupported variant (known: {known})")
        if name == "tmr":
            a, b = parse_clock(value)
            value = f"{a}/{b}"
        if name in _OP_INTS:
            lo, hi, _ = _OP_INTS[name]
            value = str(parse_int(value, f"CGP op {name}", lo, hi))
        if name == "bagorder" and len(value) > MAX_TILES_CHARS:
            raise FormatError(f"CGP op bagorder {excerpt(value)}: at most {MAX_TILES_CHARS} characters")
        ops[name] = value
    return ops


def write_cgp(pos: Position) -> str:
    """The position as one CGP line; a distribution other than english and a layout other than the standard
    ones are written as ld and bdn ops when the position's ops do not name them."""
    ld = pos.ld
    board = pos.board
    rows = []
    for r in range(board.dim):
        out = []
        run = 0
        for c in range(board.dim):
            t = board.tile(r, c)
            if t == 0:
                run += 1
                continue
            if run:
                out.append(str(run))
                run = 0
            out.append(ld.label(t))
        if run:
            out.append(str(run))
        rows.append("".join(out))
    racks = "/".join(ld.rack_str(r) for r in pos.racks)
    text = f"{'/'.join(rows)} {racks} {pos.scores[0]}/{pos.scores[1]} {pos.zeros}"
    ops = dict(pos.ops)
    if "ld" not in ops and ld.name.lower() != DEFAULT_DISTRIBUTION:
        ops["ld"] = ld.name
    layout = LAYOUT_ALIASES.get(board.layout_name.lower(), board.layout_name.lower())
    if "bdn" not in ops and layout not in (DEFAULT_LAYOUT, SUPER_LAYOUT):
        ops["bdn"] = board.layout_name
    if ops:
        text += " " + " ".join(f"{k} {v};" if v else f"{k};" for k, v in ops.items())
    return text
