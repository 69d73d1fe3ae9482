# Leave training (macondo leaves train): the C-level parts.
#
# LeaveGenWorker plays static-bot self-play games with the current leave values and records, for every turn
# whose mover holds a full rack while the bag can refill one (bag >= 7 tiles), the rack and the equity of
# its best play (score + current leave value, millipoints). It can also evaluate "forced" racks: a rare
# leave completed by random tiles of the distribution, evaluated on the game's board without being played
# (the rare-leave forcing of MAGPIE's leavegen, written anew here). A game ends when the bag holds fewer than
# 7 tiles. Game g's tiles and forced racks come from its seed only, so a round is the same for any split
# of its games between processes.
#
# accumulate() is the refit: every distinct rack R observed (with its mean best-play equity) gives each
# leave L it contains (1 to 6 tiles) a weight: the number of ways to draw R - L from the distribution less
# L. The raw value of L is the weighted mean over those racks less the mean over all racks (weighted by
# their number of draws from the full distribution); the Python side shrinks it (leavetrain.fit_values).
cimport cython
from libc.stdint cimport uint8_t, int8_t, int32_t, int64_t, uint64_t, uint32_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from engine_cy.common cimport RACK_SIZE, MAX_ALPHABET, binom
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.game cimport Game
from engine_cy.move cimport Move, MOVE_PASS
from engine_cy.movegen cimport MoveGen, RECORD_BEST
from engine_cy.rng cimport Rng, rng_seed, rng_below

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef enum:
    MAX_TURNS = 400
    MAX_FORCED = 8
    END_MARK = 0xFF


cdef inline uint64_t rack_code(const uint8_t* counts, int size) noexcept nogil:
    """A full rack as one integer: its 7 tiles ascending, 8 bits each (tile i at bits 8i..8i+7)."""
    cdef uint64_t code = 0
    cdef int ml, k, i = 0
    for ml in range(size):
        for k in range(counts[ml]):
            if i < RACK_SIZE:
                code |= (<uint64_t> ml) << (8 * i)
            i += 1
    return code


def decode_rack(uint64_t code):
    """The machine letters of a rack code (7 tiles, ascending)."""
    return bytes([(code >> (8 * i)) & 0xFF for i in range(RACK_SIZE)])


def encode_rack(tiles):
    """The code of a full rack given as 7 machine letters (any order)."""
    t = sorted(tiles)
    if len(t) != RACK_SIZE:
        raise ValueError(f"a rack code needs {RACK_SIZE} tiles, got {len(t)}")
    cdef uint64_t code = 0
    for i, ml in enumerate(t):
        code |= (<uint64_t> ml) << (8 * i)
    return code


@cython.final
cdef class LeaveGenWorker:
    """One process's game and bot for a training round (one Klv: the round's current values)."""
    cdef Game game
    cdef MoveGen gen
    cdef LetterDistribution ld
    cdef int size
    cdef uint64_t* codes
    cdef int32_t* equities
    cdef uint8_t* is_forced
    cdef int cap
    cdef int n
    cdef uint8_t* forced_leaves       # n_forced rows of RACK_SIZE bytes: tiles ascending, END_MARK after
    cdef int n_forced
    cdef int forced_whole             # forced racks per turn: this many, and one more with probability
    cdef uint64_t forced_ppm          # forced_ppm / 1e6
    cdef object forced_ref
    cdef public bint stop

    def __cinit__(self):
        self.codes = NULL
        self.equities = NULL
        self.is_forced = NULL

    def __init__(self, Kwg kwg, Klv klv, LetterDistribution ld, Board board, forced_leaves=None,
                 double forced_per_turn=0.0, int bingo_bonus=50):
        cdef cnp.ndarray[cnp.uint8_t, ndim=2, mode="c"] fl
        if not 0.0 <= forced_per_turn <= MAX_FORCED:
            raise ValueError(f"forced racks per turn must be 0 to {MAX_FORCED}")
        self.game = Game(kwg, ld, board, 0, bingo_bonus, 6)
        self.gen = MoveGen(kwg, ld, klv, bingo_bonus)
        self.gen.bind(board)
        self.ld = ld
        self.size = ld.size
        self.cap = MAX_TURNS * (1 + MAX_FORCED)
        self.codes = <uint64_t*> malloc(self.cap * sizeof(uint64_t))
        self.equities = <int32_t*> malloc(self.cap * sizeof(int32_t))
        self.is_forced = <uint8_t*> malloc(self.cap * sizeof(uint8_t))
        if self.codes == NULL or self.equities == NULL or self.is_forced == NULL:
            raise MemoryError()
        if forced_leaves is None or len(forced_leaves) == 0:
            fl = np.full((1, RACK_SIZE), END_MARK, dtype=np.uint8)
            self.n_forced = 0
        else:
            fl = np.ascontiguousarray(forced_leaves, dtype=np.uint8)
            if fl.shape[1] != RACK_SIZE:
                raise ValueError(f"forced leaves are rows of {RACK_SIZE} bytes")
            body = fl != END_MARK
            lengths = body.sum(axis=1)
            if (lengths < 1).any() or (lengths >= RACK_SIZE).any():
                raise ValueError("a forced leave has 1 to 6 tiles")
            if ((np.cumsum(~body, axis=1)[:, :-1] > 0) & body[:, 1:]).any():
                raise ValueError("a forced leave's tiles come first, then END_MARK bytes")
            if (fl[body] >= self.size).any():
                raise ValueError("a forced leave holds a tile outside the alphabet")
            for ml in range(self.size):
                if ((fl == ml).sum(axis=1) > ld.count(ml)).any():
                    raise ValueError("a forced leave holds more tiles of a letter than the distribution")
            self.n_forced = fl.shape[0]
        self.forced_ref = fl
        self.forced_leaves = <uint8_t*> fl.data
        if self.n_forced == 0:
            forced_per_turn = 0.0
        self.forced_whole = <int> forced_per_turn
        self.forced_ppm = <uint64_t> ((forced_per_turn - self.forced_whole) * 1e6 + 0.5)
        self.stop = False

    def __dealloc__(self):
        free(self.codes)
        free(self.equities)
        free(self.is_forced)

    cdef void record(self, const uint8_t* rack, int32_t equity, uint8_t forced) noexcept nogil:
        if self.n < self.cap:
            self.codes[self.n] = rack_code(rack, self.size)
            self.equities[self.n] = equity
            self.is_forced[self.n] = forced
            self.n += 1

    cdef void forced_rack(self, Rng* rng, uint8_t* rack) noexcept nogil:
        """A random rare leave, completed to a full rack by random tiles of the distribution less it."""
        cdef uint8_t* row = &self.forced_leaves[rng_below(rng, self.n_forced) * RACK_SIZE]
        cdef int pool[MAX_ALPHABET]
        cdef int k = 0, ml, total = 0, pick
        memset(rack, 0, MAX_ALPHABET)
        for ml in range(self.size):
            pool[ml] = self.ld.counts[ml]
        while k < RACK_SIZE and row[k] != END_MARK:
            rack[row[k]] += 1
            pool[row[k]] -= 1
            k += 1
        for ml in range(self.size):
            total += pool[ml]
        while k < RACK_SIZE and total > 0:
            pick = <int> rng_below(rng, total)
            ml = 0
            while pick >= pool[ml]:
                pick -= pool[ml]
                ml += 1
            rack[ml] += 1
            pool[ml] -= 1
            total -= 1
            k += 1

    cdef int play_game_c(self, uint64_t seed) except -1 nogil:
        cdef int seat, f, n_forced, turns = 0
        cdef Move m
        cdef Rng rng
        cdef uint8_t forced[MAX_ALPHABET]
        rng_seed(&rng, seed ^ 0xD1B54A32D192ED03ULL)
        self.n = 0
        self.game.reset_c(seed)
        self.game.draw_c(0, RACK_SIZE, NULL)
        self.game.draw_c(1, RACK_SIZE, NULL)
        while not self.game.over and turns < MAX_TURNS and not self.stop and self.game.bag_n >= RACK_SIZE:
            seat = self.game.on_turn
            n_forced = self.forced_whole
            if self.forced_ppm > 0 and rng_below(&rng, 1000000) < self.forced_ppm:
                n_forced += 1
            for f in range(n_forced):
                self.forced_rack(&rng, forced)
                self.gen.gen_c(forced, self.game.bag_n, -1, RECORD_BEST, 0, False)
                m = self.gen.move_buf[0]
                if m.kind != MOVE_PASS:
                    self.record(forced, m.equity, 1)
            self.gen.gen_c(&self.game.racks[seat][0], self.game.bag_n, -1, RECORD_BEST, 0, False)
            m = self.gen.move_buf[0]
            if self.game.rack_n[seat] == RACK_SIZE and m.kind != MOVE_PASS:
                self.record(&self.game.racks[seat][0], m.equity, 0)
            self.game.play_c(&m)
            turns += 1
        return turns

    def play(self, uint64_t seed):
        """Play one game; returns (rack codes, best-play equities in millipoints, forced flags, turns)."""
        cdef int turns
        with nogil:
            turns = self.play_game_c(seed)
        n = self.n
        codes = np.empty(n, dtype=np.uint64)
        eqs = np.empty(n, dtype=np.int32)
        forced = np.empty(n, dtype=np.uint8)
        cdef uint64_t[::1] cv = codes
        cdef int32_t[::1] ev = eqs
        cdef uint8_t[::1] fv = forced
        cdef int i
        for i in range(n):
            cv[i] = self.codes[i]
            ev[i] = self.equities[i]
            fv[i] = self.is_forced[i]
        return codes, eqs, forced, turns


@cython.boundscheck(False)
@cython.wraparound(False)
def accumulate(Klv graph, LetterDistribution ld, const uint64_t[::1] codes, const double[::1] means,
               const int64_t[::1] counts, double[::1] wsum, double[::1] esum, int64_t[::1] nobs):
    """Add each distinct rack's mean equity to every leave it contains (see the module comment). `graph`
    holds every leave of the distribution (1 to 6 tiles); wsum, esum and nobs are indexed by its leave rank.
    Returns (sum of the racks' draw counts, their count-weighted sum of means) for the overall average."""
    cdef Py_ssize_t r, n_racks = codes.shape[0]
    cdef int size = ld.size, i, j, n_letters, s, carry
    cdef uint8_t rack[MAX_ALPHABET]
    cdef int letters[RACK_SIZE]
    cdef int have[RACK_SIZE]
    cdef int take[RACK_SIZE]
    cdef int dist[MAX_ALPHABET]
    cdef unsigned char leave[RACK_SIZE]
    cdef int64_t idx
    cdef double w, rack_w, total_w = 0.0, total_e = 0.0, mean
    cdef uint64_t code
    cdef int64_t cnt
    if wsum.shape[0] != graph.n_values or esum.shape[0] != graph.n_values or nobs.shape[0] != graph.n_values:
        raise ValueError("accumulator arrays must have one entry per leave of the graph")
    if means.shape[0] != n_racks or counts.shape[0] != n_racks:
        raise ValueError("one mean and one count per rack")
    for i in range(size):
        dist[i] = ld.counts[i]
    with nogil:
        for r in range(n_racks):
            code = codes[r]
            mean = means[r]
            cnt = counts[r]
            memset(rack, 0, MAX_ALPHABET)
            for i in range(RACK_SIZE):
                j = (code >> (8 * i)) & 0xFF
                if j < size:
                    rack[j] += 1
            n_letters = 0
            rack_w = 1.0
            for i in range(size):
                if rack[i] > 0:
                    letters[n_letters] = i
                    have[n_letters] = rack[i]
                    take[n_letters] = 0
                    n_letters += 1
                    rack_w *= binom(dist[i], rack[i])
            total_w += rack_w
            total_e += rack_w * mean
            # every sub-multiset by an odometer over the distinct letters
            while True:
                j = 0
                carry = 1
                while j < n_letters and carry:
                    take[j] += 1
                    if take[j] > have[j]:
                        take[j] = 0
                        j += 1
                    else:
                        carry = 0
                if carry:
                    break
                s = 0
                w = 1.0
                for i in range(n_letters):
                    for j in range(take[i]):
                        leave[s] = <unsigned char> letters[i]
                        s += 1
                    w *= binom(dist[letters[i]] - take[i], have[i] - take[i])
                if s == 0 or s >= RACK_SIZE:
                    continue
                idx = graph.kwg.index_of_ml(leave, s)
                if idx < 0 or idx >= graph.n_values:
                    continue
                wsum[idx] += w
                esum[idx] += w * mean
                nobs[idx] += cnt
    return total_w, total_e


cdef Py_ssize_t _enum_leaves(const int* dist, int size, int max_len, uint8_t* cur, int n, int start,
                             uint8_t* out, int8_t* lengths, Py_ssize_t k, bint write) noexcept nogil:
    """Preorder walk of the sorted leaves extending cur[:n] with tiles >= start (lexicographic order)."""
    cdef int t, j, used
    if n > 0:
        if write:
            for j in range(n):
                out[k * max_len + j] = cur[j]
            for j in range(n, max_len):
                out[k * max_len + j] = END_MARK
            lengths[k] = <int8_t> n
        k += 1
    if n == max_len:
        return k
    for t in range(start, size):
        used = 0
        j = n - 1
        while j >= 0 and cur[j] == t:
            used += 1
            j -= 1
        if used < dist[t]:
            cur[n] = <uint8_t> t
            k = _enum_leaves(dist, size, max_len, cur, n + 1, t, out, lengths, k, write)
    return k


def enumerate_leaves(LetterDistribution ld, int max_len=RACK_SIZE - 1):
    """Every leave of 1 to max_len tiles the distribution allows, in sorted (rank) order: (tiles as an
    n x max_len uint8 array padded with 0xFF, lengths as int8)."""
    cdef int dist[MAX_ALPHABET]
    cdef uint8_t cur[RACK_SIZE]
    cdef int i
    cdef Py_ssize_t n
    if not 1 <= max_len <= RACK_SIZE - 1:
        raise ValueError(f"leaves have 1 to {RACK_SIZE - 1} tiles")
    for i in range(ld.size):
        dist[i] = ld.counts[i]
    n = _enum_leaves(dist, ld.size, max_len, cur, 0, 0, NULL, NULL, 0, False)
    tiles = np.empty((n, max_len), dtype=np.uint8)
    lengths = np.empty(n, dtype=np.int8)
    cdef uint8_t[:, ::1] tv = tiles
    cdef int8_t[::1] lv = lengths
    if n > 0:
        _enum_leaves(dist, ld.size, max_len, cur, 0, 0, &tv[0, 0], &lv[0], 0, True)
    return tiles, lengths


@cython.boundscheck(False)
@cython.wraparound(False)
def sub_leave_ranks(Klv graph, const uint8_t[:, ::1] tiles, const int8_t[::1] lengths):
    """For each leave (rows of `tiles`), the graph ranks of the leave less its tile j and of that tile alone,
    j < length (-1 elsewhere, and for 1-tile leaves)."""
    cdef Py_ssize_t n = tiles.shape[0], i
    cdef int width = tiles.shape[1], L, j, k, s
    cdef unsigned char buf[RACK_SIZE]
    sub = np.full((n, width), -1, dtype=np.int64)
    single = np.full((n, width), -1, dtype=np.int64)
    cdef int64_t[:, ::1] sv = sub
    cdef int64_t[:, ::1] gv = single
    with nogil:
        for i in range(n):
            L = lengths[i]
            if L < 2:
                continue
            for j in range(L):
                s = 0
                for k in range(L):
                    if k != j:
                        buf[s] = tiles[i, k]
                        s += 1
                sv[i, j] = graph.kwg.index_of_ml(buf, s)
                buf[0] = tiles[i, j]
                gv[i, j] = graph.kwg.index_of_ml(buf, 1)
    return sub, single
