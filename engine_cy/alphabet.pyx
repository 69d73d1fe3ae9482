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


cdef class LetterDistribution:
    """Machine letters 0..size-1: 0 is the blank (rack) / empty (board); 1.. are letters in row order."""

    def __init__(self, str csv_text, str name="english"):
        cdef int ml
        self.name = name
        self.labels = []
        self._index = {}
        rows = [ln.strip() for ln in csv_text.strip().splitlines() if ln.strip()]
        if rows and rows[0].lower().startswith("letter"):
            rows = rows[1:]
        if not rows:
            raise ValueError("letter distribution has no rows")
        if len(rows) > 63:
            raise ValueError(f"letter distribution has {len(rows)} letters; at most 63 are supported")
        for ml, row in enumerate(rows):
            parts = [p.strip() for p in row.split(",")]
            if len(parts) != 4:
                raise ValueError(f"letter distribution row {ml + 1} {row!r}: expected letter,count,score,is_vowel")
            label = parts[0][1:-1] if parts[0].startswith("[") and parts[0].endswith("]") else parts[0]
            if not label:
                raise ValueError(f"letter distribution row {ml + 1}: empty letter")
            try:
                count, score, vowel = int(parts[1]), int(parts[2]), int(parts[3])
            except ValueError:
                raise ValueError(f"letter distribution row {ml + 1} {row!r}: count, score and is_vowel must be integers") from None
            if ml == 0 and label != "?":
                raise ValueError("letter distribution must list the blank '?' first")
            if ml > 0 and (label == "?" or label in self._index):
                raise ValueError(f"letter distribution row {ml + 1}: duplicate or reserved label {label!r}")
            if count < 0 or score < 0:
                raise ValueError(f"letter distribution row {ml + 1}: negative count or score")
            self.labels.append(label.upper())
            self._index[label.upper()] = ml
            self.counts[ml] = count
            self.scores[ml] = score
            self.vowels[ml] = vowel != 0
        self.size = len(rows)

    @classmethod
    def english(cls):
        return cls(ENGLISH_CSV, "english")

    @classmethod
    def from_file(cls, path, name=None):
        import os
        with open(path, encoding="utf-8") as fh:
            return cls(fh.read(), name or os.path.splitext(os.path.basename(path))[0])

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

    def letter_ml(self, str label):
        """Machine letter of an uppercase label, or raise TileParseError."""
        ml = self._index.get(label)
        if ml is None:
            raise TileParseError(f"unknown letter {_short(label)}")
        return ml

    def _split(self, str text):
        """Split a tile string into labels, honouring [XY] multi-character tiles."""
        out = []
        i = 0
        n = len(text)
        while i < n:
            ch = text[i]
            if ch == "[":
                j = text.find("]", i)
                if j < 0:
                    raise TileParseError(f"unclosed '[' in {_short(text)}")
                out.append(text[i + 1:j])
                i = j + 1
            else:
                out.append(ch)
                i += 1
        return out

    def parse_rack(self, str text):
        """Rack string ('?' blank, uppercase letters) -> list of machine letters."""
        out = []
        for lab in self._split(text):
            if lab == "?":
                out.append(0)
            elif lab != lab.upper() or lab not in self._index:
                raise TileParseError(f"unknown rack tile {_short(lab)} in {_short(text)}")
            else:
                out.append(self._index[lab])
        return out

    def parse_board_tile(self, str lab):
        """Board tile label: uppercase letter, or lowercase for a blank (ml | 0x80)."""
        up = lab.upper()
        # a blank is the label's own lowercase form: 'ı' or 'ß' upper-case to letters but are not blanks of them
        if up == "?" or up not in self._index or (lab != up and up.lower() != lab):
            raise TileParseError(f"unknown tile {_short(lab)}")
        ml = self._index[up]
        if lab != up:
            return ml | 0x80
        return ml

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
        """Board label: uppercase, lowercase for a blank-as-letter, '?' for an undesignated blank."""
        base = ml & 0x7F
        if base == 0:
            return "?"
        lab = self.labels[base]
        if ml & 0x80:
            lab = lab.lower()
        return lab if len(lab) == 1 else f"[{lab}]"

    def rack_str(self, mls):
        """Rack written with blanks first ('?'), then letters in machine-letter order."""
        return "".join(self.label(m) for m in sorted(mls))

    def word_str(self, mls, str through="."):
        return "".join(through if m == 0 else self.label(m) for m in mls)
