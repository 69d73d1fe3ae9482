# KLV2 leave files: u32 K, K KWG nodes (DAWG of sorted leaves), u32 L, L f32 values.
# Values are converted once at load to integer millipoints; v1 files (i16/256) are read too.
#
# Loading validates everything the lookups rely on: the file size is exactly the declared lengths, the
# leave graph passes Kwg's "leaves" validation (in-range arcs and tiles, terminated sorted lists, no cycles,
# bounded depth and counts, tiles ascending along each path), the graph holds exactly L leaves, and every
# value is finite and small enough for int32 millipoints. Bytes that break a rule raise LexiconFormatError.
import struct

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint32_t
from engine_cy.kwg cimport Kwg
from engine_cy.kwg_node cimport kwg_tile, kwg_dfs_next
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.common cimport MAX_ALPHABET
from engine_cy.kwg_build import build_kwg as _build_kwg
from engine_cy.kwg_check import LexiconFormatError

cnp.import_array()

KLV_MAX_VALUE = 1e6     # points; |value| * 1000 must fit an int32

# The largest leave graph (2^22 nodes) with one value per leave (at most 2^22 of them), as f32.
KLV_MAX_BYTES = 8 + 4 * (1 << 22) + 4 * (1 << 22)

_EMPTY_GRAPH = struct.pack("<I", 0x400000)


cdef class Klv:
    """Leave values in millipoints, looked up by the rank of the sorted leave in the leave graph."""

    def __cinit__(self):
        # an instance that is never initialised behaves as an empty leave set
        self.kwg = Kwg(_EMPTY_GRAPH, "leaves")
        self.values_array = np.zeros(1, dtype=np.int32)
        self.values = <const int32_t*> cnp.PyArray_DATA(self.values_array)
        self.n_values = 0
        self.loaded = False

    def __init__(self, data):
        cdef cnp.ndarray arr
        if self.loaded:
            raise TypeError("Klv is already initialised")
        data = bytes(data)
        if len(data) < 8:
            raise LexiconFormatError(f"KLV data is too short ({len(data)} bytes)")
        (k,) = struct.unpack_from("<I", data, 0)
        if 4 + 4 * k + 4 > len(data):
            raise LexiconFormatError(f"KLV header says {k} graph nodes but the file has {len(data)} bytes")
        if k == 0:
            raise LexiconFormatError("KLV header says 0 graph nodes (the root pointer is missing)")
        try:
            kwg = Kwg(data[4:4 + 4 * k], "leaves")
        except LexiconFormatError as exc:
            raise LexiconFormatError(f"KLV leave graph: {exc}") from None
        (l,) = struct.unpack_from("<I", data, 4 + 4 * k)
        off = 8 + 4 * k
        rest = len(data) - off
        if rest == 4 * l:
            raw = np.frombuffer(data, dtype="<f4", count=l, offset=off).astype(np.float64)
        elif rest == 2 * l:
            raw = np.frombuffer(data, dtype="<i2", count=l, offset=off).astype(np.float64) / 256.0
        else:
            raise LexiconFormatError(f"KLV says {l} values, so {4 * l} bytes (f32) or {2 * l} bytes (i16) "
                                     f"should follow the graph, but {rest} do")
        count = kwg.word_count()
        if count != l:
            raise LexiconFormatError(f"KLV graph holds {count} leaves but {l} values are given")
        bad = np.flatnonzero(~(np.abs(raw) <= KLV_MAX_VALUE))
        if bad.shape[0] > 0:
            raise LexiconFormatError(f"KLV value {int(bad[0])} ({float(raw[bad[0]])!r}) is not a finite "
                                     f"number within +-{KLV_MAX_VALUE:g}")
        arr = np.round(raw * 1000.0).astype(np.int32)
        if arr.shape[0] == 0:
            arr = np.zeros(1, dtype=np.int32)
        arr.flags.writeable = False
        self.kwg = kwg
        self.values_array = arr[:l]
        self.values = <const int32_t*> cnp.PyArray_DATA(arr)
        self.n_values = l
        self.loaded = True

    @classmethod
    def from_file(cls, path):
        with open(path, "rb") as fh:
            data = fh.read(KLV_MAX_BYTES + 1)
        if len(data) > KLV_MAX_BYTES:
            raise LexiconFormatError(f"KLV file is larger than a leave file can be ({KLV_MAX_BYTES} bytes)")
        return cls(data)

    cdef int32_t leave_value_ml(self, const unsigned char* sorted_leave, int n) noexcept nogil:
        cdef int64_t idx
        if n == 0:
            return 0
        idx = self.kwg.index_of_ml(sorted_leave, n)
        if idx < 0 or idx >= self.n_values:
            return 0
        return self.values[idx]

    def check_distribution(self, LetterDistribution ld, int max_tiles=6):
        """Refuse leaves that cannot be kept under `ld`: a tile outside its alphabet, more tiles of a letter
        than it has, or more than `max_tiles` tiles (a file made for another alphabet or distribution).
        Raises LexiconFormatError naming the first such leave."""
        cdef const uint32_t* nodes = self.kwg.nodes
        cdef uint32_t stack_p[64]
        cdef unsigned char buf[64]
        cdef int run[64]
        cdef int depth = 0, t, size = ld.size
        cdef int32_t dist[MAX_ALPHABET]
        cdef str problem = ""
        if not self.loaded or self.kwg.dawg_root == 0:
            return
        for t in range(MAX_ALPHABET):
            dist[t] = ld.counts[t] if t < size else 0
        stack_p[0] = self.kwg.dawg_root
        while depth >= 0:
            t = kwg_tile(nodes, stack_p[depth])
            buf[depth] = <unsigned char> t
            run[depth] = run[depth - 1] + 1 if depth > 0 and buf[depth - 1] == t else 1
            if depth >= max_tiles:
                problem = f"has more than {max_tiles} tiles"
            elif t >= size:
                problem = f"holds tile {t}, outside the {size}-letter alphabet of the '{ld.name}' distribution"
            elif run[depth] > dist[t]:
                problem = (f"holds {run[depth]} {ld.labels[t]} but the '{ld.name}' distribution has "
                           f"{dist[t]}")
            if problem:
                leave = "".join(ld.labels[b] if b < size else f"[{b}]" for b in buf[:depth + 1])
                raise LexiconFormatError(f"KLV leave {leave}{'...' if depth >= max_tiles else ''} {problem}: "
                                         f"the file was made for another alphabet or letter distribution")
            depth = kwg_dfs_next(nodes, stack_p, depth, 62)

    def leave_index(self, leave):
        """Rank of the leave (machine letters, any order) in the graph, or -1."""
        b = bytes(sorted(leave))
        if not b:
            return -1
        return self.kwg.index_of(b)

    def leave_value(self, leave):
        """Value in millipoints of a leave (machine letters, any order); 0 when empty or absent."""
        cdef bytes b = bytes(sorted(leave))
        if len(b) == 0:
            return 0
        return self.leave_value_ml(b, len(b))

    def items(self):
        """(sorted leave as bytes, millipoints) in rank order."""
        words = self.kwg.words()
        return [(w, int(self.values_array[i])) for i, w in enumerate(words)]


def write_klv2(rows):
    """KLV2 bytes from (leave machine letters, value in points) rows; duplicate leaves are an error."""
    table = {}
    for leave, value in rows:
        key = bytes(sorted(leave))
        if not key:
            raise ValueError("empty leave in KLV rows")
        if key in table:
            raise ValueError(f"duplicate leave {list(key)} in KLV rows")
        table[key] = float(value)
    keys = sorted(table)
    graph = _build_kwg(keys, gaddag=False)
    k = len(graph) // 4
    vals = np.array([table[key] for key in keys], dtype="<f4")
    return struct.pack("<I", k) + graph + struct.pack("<I", len(keys)) + vals.tobytes()
