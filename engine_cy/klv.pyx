# KLV2 leave files (reference §3): u32 K, K KWG nodes (DAWG of sorted leaves), u32 L, L f32 values.
# Values are converted once at load to integer millipoints; v1 files (i16/256) are read too.
import struct

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint32_t
from engine_cy.kwg cimport Kwg
from engine_cy.kwg import build_kwg as _build_kwg

cnp.import_array()


cdef class Klv:
    """Leave values in millipoints, looked up by the rank of the sorted leave in the leave graph."""

    def __init__(self, data):
        data = bytes(data)
        if len(data) < 8:
            raise ValueError(f"KLV data is too short ({len(data)} bytes)")
        (k,) = struct.unpack_from("<I", data, 0)
        if 4 + 4 * k + 4 > len(data):
            raise ValueError(f"KLV header says {k} graph nodes but the file has {len(data)} bytes")
        self.kwg = Kwg(data[4:4 + 4 * k])
        (l,) = struct.unpack_from("<I", data, 4 + 4 * k)
        off = 8 + 4 * k
        if len(data) >= off + 4 * l:
            raw = np.frombuffer(data, dtype="<f4", count=l, offset=off).astype(np.float64)
        elif len(data) >= off + 2 * l:
            raw = np.frombuffer(data, dtype="<i2", count=l, offset=off).astype(np.float64) / 256.0
        else:
            raise ValueError(f"KLV says {l} values but only {len(data) - off} bytes follow")
        arr = np.round(raw * 1000.0).astype(np.int32)
        self.values_array = arr
        self.values = <const int32_t*> cnp.PyArray_DATA(arr)
        self.n_values = l
        self.kwg.ensure_counts()
        if self.kwg.dawg_root != 0 and self.kwg.word_count() != l:
            raise ValueError(f"KLV graph holds {self.kwg.word_count()} leaves but {l} values are given")

    @classmethod
    def from_file(cls, path):
        with open(path, "rb") as fh:
            return cls(fh.read())

    cdef int32_t leave_value_ml(self, const unsigned char* sorted_leave, int n) noexcept nogil:
        cdef int64_t idx
        if n == 0:
            return 0
        idx = self.kwg.index_of_ml(sorted_leave, n)
        if idx < 0 or idx >= self.n_values:
            return 0
        return self.values[idx]

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
