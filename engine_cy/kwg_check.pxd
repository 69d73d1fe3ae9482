# The load-time check of a KWG's bytes (untrusted input): see check_kwg in kwg_check.pyx.
from libc.stdint cimport uint32_t

cdef enum:
    # graph kinds
    KIND_GADDAG = 0   # DAWG at node 0, GADDAG at node 1; tile 0 only as the GADDAG separator
    KIND_DAWG = 1     # DAWG only; tile 0 allowed (a blank)
    KIND_LEAVES = 2   # DAWG only, tiles along every path in ascending order (sorted KLV leaves)

cdef tuple check_kwg(object array, int kind)
