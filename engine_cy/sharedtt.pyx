# cython: language_level=3, boundscheck=False, wraparound=False
"""A transposition table shared by the processes of one machine (cluster workers of one solve).

In-process, the threads of a pre-endgame share one table, and much of a solve's work is shared through it:
the endgames after different draws run into the same positions a few plies down (2 in the bag, `6F .X.` at 3
plies: half of the draws solved alone cost as much CPU as all of them with one table). Worker processes with
a table each redo that work. `SharedTable` points an existing TranspositionTable at a file mapping
(MAP_SHARED, e.g. in /dev/shm) that every worker process of the solve on this machine maps, so they share
entries as threads do. The entries verify themselves (a torn write from another process is a miss, as from
another thread), so nothing else changes: verdicts do not depend on what the table holds.

The table object keeps its own (small) allocation, restored by `detach()`: call it only when no search
uses the table (the owner counts its searches), never while one runs."""

from libc.stdint cimport uint64_t
from posix.mman cimport mmap, munmap, PROT_READ, PROT_WRITE, MAP_SHARED, MAP_FAILED

from engine_cy.endgame cimport TranspositionTable, TTEntry


def table_bytes(int megabytes):
    """The bytes of a table of `megabytes` (the power-of-two entry count TranspositionTable chooses)."""
    cdef uint64_t n = 1
    while n * 2 * sizeof(TTEntry) <= <uint64_t> megabytes * 1024 * 1024:
        n *= 2
    return n * sizeof(TTEntry)


cdef class SharedTable:
    cdef TranspositionTable tt
    cdef TTEntry* own_entries
    cdef uint64_t own_mask
    cdef uint64_t own_max_mask
    cdef uint64_t own_n
    cdef void* addr
    cdef size_t size

    def __cinit__(self):
        self.addr = NULL
        self.tt = None

    def __init__(self, TranspositionTable tt, int fd, size_t size):
        """Map `size` bytes (table_bytes of the solve's size; the file already that long) of the open file
        `fd` shared and point `tt` at them (no search may use `tt` during this call)."""
        cdef uint64_t n = size // sizeof(TTEntry)
        cdef void* p
        if n == 0 or (n & (n - 1)) != 0 or n * sizeof(TTEntry) != size:
            raise ValueError(f"a shared table needs a power-of-two number of entries, not {size} bytes")
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        if p == MAP_FAILED:
            raise OSError("cannot map the shared transposition table")
        self.addr = p
        self.size = size
        self.tt = tt
        self.own_entries = tt.entries
        self.own_mask = tt.mask
        self.own_max_mask = tt.max_mask
        self.own_n = tt.n_entries
        tt.entries = <TTEntry*> p
        tt.mask = n - 1          # the whole mapping from the start: the processes cannot agree on growth
        tt.max_mask = n - 1
        tt.n_entries = n

    @property
    def attached(self):
        return self.addr != NULL

    def detach(self):
        """Give the table its own entries back and unmap the shared ones (no search may use the table)."""
        if self.addr == NULL:
            return
        self.tt.entries = self.own_entries
        self.tt.mask = self.own_mask
        self.tt.max_mask = self.own_max_mask
        self.tt.n_entries = self.own_n
        munmap(self.addr, self.size)
        self.addr = NULL
        self.tt = None

    def __dealloc__(self):
        # attached only if the owner never detached (an error path): the table gets its own entries back (its
        # own deallocation frees those, never the mapping), and the mapping stays until the process exits, as
        # a search still running could be reading it
        if self.addr != NULL and self.tt is not None:
            self.tt.entries = self.own_entries
            self.tt.mask = self.own_mask
            self.tt.max_mask = self.own_max_mask
            self.tt.n_entries = self.own_n
