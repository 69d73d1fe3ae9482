# Letter distributions as data: machine letters, counts, face values, vowels.
# Tile-string parsing lives here so that there is one text <-> machine-letter translator.

ENGLISH_CSV = """letter,count,score,is_vowel
?,2,0,0
A,9,1,1
B,2,3,0
C,2,3,0
D,4,2,0
E,12,1,1
F,2,4,0
G,3,2,0
H,2,4,0
I,9,1,1
J,1,8,0
K,1,5,0
L,4,1,0
M,2,3,0
N,6,1,0
O,8,1,1
P,2,3,0
Q,1,10,0
R,6,1,0
S,4,1,0
T,6,1,0
U,4,1,1
V,2,4,0
W,2,4,0
X,1,8,0
Y,2,4,0
Z,1,10,0
"""


def _short(str text, int limit=40):
    """A quoted excerpt of untrusted text for error messages (at most `limit` characters of it)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} chars)"


class TileParseError(ValueError):
    """A tile string has a letter the distribution does not know."""


MAX_TILES = 256     # tiles of a game (the bag holds at most this many)

# characters a letter cannot hold: they mean something else in tile strings, CGP and CSV
_RESERVED = "?.[]()/;,#0123456789"


def _is_int(str text):
    return text.isascii() and text.isdigit()


cdef class LetterDistribution:
    """Machine letters 0..size-1: 0 is the blank (rack) / empty (board); 1.. are letters in row order.

    The table is CSV, one row per tile, the blank '?' first (a header line is allowed):
      letter,count,score,vowel              (this project's and Macondo's columns), or
      letter,lowercase,count,score,vowel    (MAGPIE's columns; more columns after these are ignored).
    A letter is one character or several (a multi-letter tile such as Catalan L·L or Spanish CH, written with
    or without brackets); its lowercase form names a blank played as it. vowel is 1 for a vowel (any other
    number: not a vowel). Machine letters follow the row order, as in the word graphs and leave files made
    with the same table."""

    def __init__(self, str csv_text, str name="english"):
        cdef int ml
        self.name = name
        self.labels = []
        self.lower_labels = []
        self._index = {}
        self._lower_index = {}
        rows = [ln.strip() for ln in csv_text.strip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if rows and rows[0].split(",")[0].strip().lower() in ("letter", "upper", "tile"):
            rows = rows[1:]
        if not rows:
            raise ValueError("letter distribution has no rows")
        if len(rows) > MAX_ALPHABET - 1:
            raise ValueError(f"letter distribution has {len(rows)} rows; at most {MAX_ALPHABET - 1} are supported")
        for ml, row in enumerate(rows):
            parts = [p.strip() for p in row.split(",")]
            where = f"letter distribution row {ml + 1} {_short(row)}"
            if len(parts) == 4:
                label, lower, fields = parts[0], None, parts[1:4]
            elif len(parts) >= 5 and not _is_int(parts[1]):
                label, lower, fields = parts[0], parts[1], parts[2:5]
            else:
                raise ValueError(f"{where}: expected letter,count,score,vowel (or letter,lowercase,count,score,vowel)")
            if len(label) > 2 and label.startswith("[") and label.endswith("]"):
                label = label[1:len(label) - 1]
            if lower is not None and len(lower) > 2 and lower.startswith("[") and lower.endswith("]"):
                lower = lower[1:len(lower) - 1]
            if not all(_is_int(f) for f in fields):
                raise ValueError(f"{where}: count, score and vowel must be integers (0, 1, 2, ...)")
            count, score, vowel = int(fields[0]), int(fields[1]), int(fields[2])
            if ml == 0:
                if label != "?":
                    raise ValueError("letter distribution must list the blank '?' first")
                lower = "?"
            else:
                if lower is None:
                    lower = label.lower()
                for text in (label, lower):
                    bad = [ch for ch in text if not ch.isprintable() or ch.isspace() or ch in _RESERVED]
                    if not text or bad:
                        raise ValueError(f"{where}: a letter is printable characters other than {_RESERVED!r} "
                                         "and spaces")
                if label == lower or label in self._index or label in self._lower_index or \
                        lower in self._index or lower in self._lower_index:
                    raise ValueError(f"{where}: duplicate letter: {label!r} and its lowercase (blank) form {lower!r} "
                                     "must differ from each other and from every other letter's")
            if count < 0 or score < 0 or count > 1000 or score > 1000:
                raise ValueError(f"{where}: count and score must be 0 to 1000")
            self.labels.append(label)
            self.lower_labels.append(lower)
            self._index[label] = ml
            if ml > 0:
                self._lower_index[lower] = ml
            self.counts[ml] = count
            self.scores[ml] = score
            self.vowels[ml] = vowel == 1
        self.size = len(rows)
        if self.size < 2:
            raise ValueError("letter distribution has no letters besides the blank")
        if self.total_tiles() > MAX_TILES:
            raise ValueError(f"letter distribution has {self.total_tiles()} tiles; at most {MAX_TILES} are supported")
        # multi-letter tiles, longest first; those whose characters are not all tiles alone are also read
        # without brackets (Catalan QU, NY, L·L), the others only in brackets (Spanish [CH]: bare CH is C, H)
        multi = sorted((lab for lab in self.labels[1:] if len(lab) > 1), key=lambda s: (-len(s), s))
        self.multi = multi
        self._multi_forms = frozenset(multi) | frozenset(self.lower_labels[self._index[lab]] for lab in multi)
        self._bare = [(lab, self.lower_labels[self._index[lab]]) for lab in multi
                      if not all(ch in self._index for ch in lab)]

    @classmethod
    def english(cls):
        return cls(ENGLISH_CSV, "english")

    @classmethod
    def from_file(cls, path, name=None):
        import os
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read(1 << 16)
        return cls(text, name or os.path.splitext(os.path.basename(path))[0])

    def count(self, int ml):
        return self.counts[ml]

    def score(self, int ml):
        """Face value; a blank on the board (ml | 0x80) scores 0."""
        if ml & 0x80:
            return 0
        return self.scores[ml]

    def is_vowel(self, int ml):
        return bool(self.vowels[ml & 0x7F])

    def total_tiles(self):
        return sum(self.counts[i] for i in range(self.size))

    def table(self):
        """The distribution as its CSV table (letter,count,score,vowel; multi-letter tiles in brackets)."""
        rows = ["letter,count,score,vowel"]
        for ml in range(self.size):
            lab = self.labels[ml]
            rows.append(f"{lab if len(lab) == 1 else '[' + lab + ']'},{self.counts[ml]},{self.scores[ml]},"
                        f"{int(self.vowels[ml])}")
        return "\n".join(rows) + "\n"

    def letter_ml(self, str label):
        """Machine letter of an uppercase label (brackets optional for a multi-letter tile), or raise
        TileParseError."""
        if len(label) > 2 and label.startswith("[") and label.endswith("]"):
            label = label[1:len(label) - 1]
        ml = self._index.get(label)
        if ml is None:
            raise TileParseError(f"unknown letter {_short(label)}")
        return ml

    def tokens(self, str text):
        """Split a tile string into tiles as written: a multi-letter tile is `[XY]` (brackets kept, its case
        as written), also when written bare where this distribution reads it bare; every other character is
        one tile. Brackets must hold a multi-letter tile of this distribution (upper- or lowercase)."""
        out = []
        cdef Py_ssize_t i = 0, n = len(text), j
        bare = self._bare
        while i < n:
            ch = text[i]
            if ch == "[":
                j = text.find("]", i + 1)
                if j < 0:
                    raise TileParseError(f"unclosed '[' in {_short(text)}")
                inner = text[i + 1:j]
                if inner not in self._multi_forms:
                    raise TileParseError(f"{_short(text[i:j + 1])} in {_short(text)} is not a multi-letter tile "
                                         f"of the '{self.name}' distribution"
                                         + (f" ({', '.join(self.multi)})" if self.multi else ""))
                out.append(text[i:j + 1])
                i = j + 1
                continue
            if ch == "]":
                raise TileParseError(f"unbalanced ']' in {_short(text)}")
            for up, low in bare:
                if text.startswith(up, i):
                    out.append(f"[{up}]")
                    i += len(up)
                    break
                if text.startswith(low, i):
                    out.append(f"[{low}]")
                    i += len(low)
                    break
            else:
                out.append(ch)
                i += 1
        return out

    def _split(self, str text):
        """Tile labels without brackets (see tokens)."""
        return [t[1:len(t) - 1] if len(t) > 2 and t[0] == "[" else t for t in self.tokens(text)]

    def parse_rack(self, str text):
        """Rack string ('?' blank, uppercase letters) -> list of machine letters."""
        out = []
        for lab in self._split(text):
            ml = self._index.get(lab)
            if ml is None:
                raise TileParseError(f"unknown rack tile {_short(lab)} in {_short(text)}")
            out.append(ml)
        return out

    def parse_board_tile(self, str lab):
        """Board tile label: uppercase letter, or its lowercase form for a blank (ml | 0x80); brackets
        optional."""
        if len(lab) > 2 and lab.startswith("[") and lab.endswith("]"):
            lab = lab[1:len(lab) - 1]
        ml = self._index.get(lab)
        if ml is not None and ml != 0:
            return ml
        ml = self._lower_index.get(lab)
        if ml is not None:
            return ml | 0x80
        raise TileParseError(f"unknown tile {_short(lab)}")

    def parse_word(self, str text, bint allow_through=False):
        """Word of board tiles ('.' = play-through -> 0 when allowed), lowercase = blank."""
        out = []
        for lab in self._split(text):
            if lab == "." and allow_through:
                out.append(0)
            else:
                out.append(self.parse_board_tile(lab))
        return out

    def label(self, int ml):
        """Board label: uppercase, lowercase for a blank-as-letter, '?' for an undesignated blank; a
        multi-letter tile in brackets."""
        base = ml & 0x7F
        if base == 0:
            return "?"
        lab = self.lower_labels[base] if ml & 0x80 else self.labels[base]
        return lab if len(lab) == 1 else f"[{lab}]"

    def plain_label(self, int ml):
        """The label without brackets (for a board diagram's square)."""
        base = ml & 0x7F
        if base == 0:
            return "?"
        return self.lower_labels[base] if ml & 0x80 else self.labels[base]

    def rack_str(self, mls):
        """Rack written with blanks first ('?'), then letters in machine-letter order."""
        return "".join(self.label(m) for m in sorted(mls))

    def word_str(self, mls, str through="."):
        return "".join(through if m == 0 else self.label(m) for m in mls)
