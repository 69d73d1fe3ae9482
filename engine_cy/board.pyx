# The one board: tiles in both orientations, premium layout as data, anchors.
# It knows no lexicon; cross-sets are filled by engine_cy.cross_set.
from libc.stdint cimport uint32_t
from libc.string cimport memset
from engine_cy.common cimport ml_t, MAX_BOARD_DIM

cdef enum:
    OPENING_PENALTY_STEP = 350   # millipoints per premium step beside the start lane (DL or DW: one step)

# Premium characters (MAGPIE/Macondo layout files): = TWS, - DWS, " TLS, ' DLS, ~ QWS, ^ QLS, space plain.
_PREMIUMS = {"=": (1, 3), "-": (1, 2), '"': (3, 1), "'": (2, 1), "~": (1, 4), "^": (4, 1), " ": (1, 1), ".": (1, 1)}


def _standard15():
    cols = "ABCDEFGHIJKLMNO"
    grid = [[" "] * 15 for _ in range(15)]
    table = {
        "=": "A1 H1 O1 A8 O8 A15 H15 O15",
        "-": "B2 N2 C3 M3 D4 L4 E5 K5 H8 E11 K11 D12 L12 C13 M13 B14 N14",
        '"': "F2 J2 B6 F6 J6 N6 B10 F10 J10 N10 F14 J14",
        "'": "D1 L1 G3 I3 A4 H4 O4 C7 G7 I7 M7 D8 L8 C9 G9 I9 M9 A12 H12 O12 G13 I13 D15 L15",
    }
    for ch, squares in table.items():
        for sq in squares.split():
            grid[int(sq[1:]) - 1][cols.index(sq[0])] = ch
    return "7, 7\n" + "\n".join("".join(r) for r in grid) + "\n"


STANDARD15 = _standard15()


cdef class Board:
    """A square board with premium squares. Tiles: 0 empty, ml, ml|0x80 blank."""

    def __init__(self, str layout=STANDARD15, str name="CrosswordGame"):
        cdef int r, c, dim, d, i, lm, wm
        lines = [ln.rstrip("\r\n") for ln in layout.splitlines()]
        while lines and not lines[len(lines) - 1]:
            lines.pop()           # blank lines at the end (a row of plain squares is spaces, not nothing)
        if not lines:
            raise ValueError(f"board layout {name!r} is empty")
        head = lines[0].replace(" ", "").split(",")
        if len(head) != 2 or not all(h.isascii() and h.isdigit() and len(h) <= 3 for h in head):
            raise ValueError(f"board layout {name!r}: first line must be 'row, col' of the start square "
                             "(counted from 0)")
        rows = lines[1:]
        dim = len(rows)
        if dim < 3 or dim > MAX_BOARD_DIM:
            raise ValueError(f"board layout {name!r}: {dim} rows; 3 to {MAX_BOARD_DIM} are supported")
        self.dim = dim
        self.layout_name = name
        self.start_row, self.start_col = int(head[0]), int(head[1])
        if not (0 <= self.start_row < dim and 0 <= self.start_col < dim):
            raise ValueError(f"board layout {name!r}: start square ({self.start_row}, {self.start_col}) is off the "
                             f"board ({dim}x{dim}, squares counted from 0)")
        memset(self.tiles, 0, sizeof(self.tiles))
        memset(self.occ, 0, sizeof(self.occ))
        for r in range(dim):
            row = rows[r].ljust(dim)
            if len(row) != dim:
                raise ValueError(f"board layout {name!r}: row {r + 1} has {len(row)} squares; the board has "
                                 f"{dim} rows, so each row has {dim} squares")
            for c in range(dim):
                ch = row[c]
                if ch not in _PREMIUMS:
                    raise ValueError(f"board layout {name!r}: unknown premium {ch!r} at row {r + 1}, column {c + 1} "
                                     "(= TW, - DW, \" TL, ' DL, ~ 4W, ^ 4L, space or . plain)")
                lm, wm = _PREMIUMS[ch]
                self.letter_mult[0][r * dim + c] = lm
                self.letter_mult[1][c * dim + r] = lm
                self.word_mult[0][r * dim + c] = wm
                self.word_mult[1][c * dim + r] = wm
        # the opening plays: both directions unless the layout is the same seen across and down
        self.open_down = self.start_row != self.start_col or \
            any(self.letter_mult[0][i] != self.letter_mult[1][i] or self.word_mult[0][i] != self.word_mult[1][i]
                for i in range(dim * dim))
        # the opening's vowel penalty per square of the start lane: half a point per premium step of each
        # square beside it (a vowel there opens the premium to the reply)
        memset(self.opening_pen, 0, sizeof(self.opening_pen))
        for d in range(2):
            lane = self.start_row if d == 0 else self.start_col
            for side in (lane - 1, lane + 1):
                if 0 <= side < dim:
                    for i in range(dim):
                        self.opening_pen[d * MAX_BOARD_DIM + i] += OPENING_PENALTY_STEP * (
                            self.letter_mult[d][side * dim + i] - 1 + self.word_mult[d][side * dim + i] - 1)
        self.n_tiles = 0
        self.cross_valid = False

    def layout_text(self):
        """The layout in the file format it was read from: 'row, col' of the start square, then the rows."""
        marks = {v: k for k, v in _PREMIUMS.items() if k != "."}
        rows = ["".join(marks[(self.letter_mult[0][r * self.dim + c], self.word_mult[0][r * self.dim + c])]
                        for c in range(self.dim)) for r in range(self.dim)]
        return f"{self.start_row}, {self.start_col}\n" + "\n".join(rows) + "\n"

    def opening_penalty(self, int direction, int index):
        """Millipoints taken from an opening play's equity for a vowel on square `index` of the start lane
        (direction 0: the start row, 1: the start column)."""
        if not 0 <= index < self.dim or direction not in (0, 1):
            raise IndexError("no such square of the start lane")
        return self.opening_pen[direction * MAX_BOARD_DIM + index]

    cdef void put(self, int row, int col, ml_t ml) noexcept nogil:
        cdef ml_t old = self.tiles[0][row * self.dim + col]
        if old == 0 and ml != 0:
            self.n_tiles += 1
        elif old != 0 and ml == 0:
            self.n_tiles -= 1
        self.tiles[0][row * self.dim + col] = ml
        self.tiles[1][col * self.dim + row] = ml
        if ml != 0:
            self.occ[0][row] |= (<uint32_t> 1) << col
            self.occ[1][col] |= (<uint32_t> 1) << row
        else:
            self.occ[0][row] &= ~((<uint32_t> 1) << col)
            self.occ[1][col] &= ~((<uint32_t> 1) << row)
        self.cross_valid = False

    def _check(self, int row, int col):
        if not (0 <= row < self.dim and 0 <= col < self.dim):
            raise IndexError(f"square ({row}, {col}) is off the {self.dim}x{self.dim} board")

    def set_tile(self, int row, int col, int ml):
        self._check(row, col)
        self.put(row, col, <ml_t> ml)

    def tile(self, int row, int col):
        self._check(row, col)
        return self.get(row, col)

    def clear(self):
        memset(self.tiles, 0, sizeof(self.tiles))
        memset(self.occ, 0, sizeof(self.occ))
        self.n_tiles = 0
        self.cross_valid = False

    def is_empty(self):
        return self.n_tiles == 0

    def premium(self, int row, int col):
        """(letter multiplier, word multiplier) of a square."""
        self._check(row, col)
        return (self.letter_mult[0][row * self.dim + col], self.word_mult[0][row * self.dim + col])

    def is_anchor(self, int row, int col):
        """An empty square next to a tile, or the start square on an empty board."""
        self._check(row, col)
        if self.get(row, col) != 0:
            return False
        if self.n_tiles == 0:
            return row == self.start_row and col == self.start_col
        return ((row > 0 and self.get(row - 1, col) != 0) or (row < self.dim - 1 and self.get(row + 1, col) != 0)
                or (col > 0 and self.get(row, col - 1) != 0) or (col < self.dim - 1 and self.get(row, col + 1) != 0))

    def get_cross_set(self, int row, int col, int direction):
        """Allowed-letter bits for a play along direction (0 across, 1 down) placing a tile here."""
        self._check(row, col)
        if direction == 0:
            return self.cross_set[0][row * self.dim + col]
        return self.cross_set[1][col * self.dim + row]

    def get_cross_score(self, int row, int col, int direction):
        self._check(row, col)
        if direction == 0:
            return self.cross_score[0][row * self.dim + col]
        return self.cross_score[1][col * self.dim + row]

    def tiles_list(self):
        """Rows of machine letters."""
        return [[self.get(r, c) for c in range(self.dim)] for r in range(self.dim)]

    def copy(self):
        cdef Board b = Board.__new__(Board)
        b.dim = self.dim
        b.start_row = self.start_row
        b.start_col = self.start_col
        b.layout_name = self.layout_name
        b.open_down = self.open_down
        b.opening_pen = self.opening_pen
        b.n_tiles = self.n_tiles
        b.tiles = self.tiles
        b.occ = self.occ
        b.letter_mult = self.letter_mult
        b.word_mult = self.word_mult
        b.cross_set = self.cross_set
        b.cross_score = self.cross_score
        b.cross_valid = self.cross_valid
        return b

    def invalidate_cross_sets(self):
        """Forget the cross-sets, so the next generation computes them again (with its own word graph: a
        generator of a smaller vocabulary than the game's must not use the game's cross-sets)."""
        self.cross_valid = False

    def __eq__(self, other):
        if not isinstance(other, Board):
            return NotImplemented
        return self.dim == other.dim and self.tiles_list() == other.tiles_list()
