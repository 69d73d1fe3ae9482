# Word map: every word of at least min_len letters filed under its letter multiset, so that the words a
# rack (plus the tiles a span plays through) can form are one hash lookup away instead of a GADDAG search.
# The move generator uses it for 7-tile plays (bingos), which dominate the search when the rack holds a
# blank. A key holds one 4-bit count per letter (machine letters 1..32), in two 64-bit words.
cimport cython
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memcpy

from engine_cy.common cimport MAX_BOARD_DIM, RACK_SIZE
from engine_cy.kwg cimport Kwg, kwg_tile, kwg_accepts, kwg_arc, kwg_is_end


cdef struct WmRec:
    uint64_t k0, k1
    uint32_t offset           # into the scratch letters
    uint32_t length


cdef inline uint64_t _hash(uint64_t k0, uint64_t k1) noexcept nogil:
    cdef uint64_t z = k0 * 0x9E3779B97F4A7C15ULL ^ (k1 + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 29)) * 0x94D049BB133111EBULL
    return z ^ (z >> 32)


cdef int _rec_cmp(const void* a, const void* b) noexcept nogil:
    cdef const WmRec* x = <const WmRec*> a
    cdef const WmRec* y = <const WmRec*> b
    if x.k0 != y.k0:
        return -1 if x.k0 < y.k0 else 1
    if x.k1 != y.k1:
        return -1 if x.k1 < y.k1 else 1
    return -1 if x.offset < y.offset else (1 if x.offset > y.offset else 0)


@cython.final
cdef class WordMap:
    """Words of min_len..max_len letters of a KWG's DAWG, by letter multiset."""

    def __cinit__(self):
        self.slots = NULL
        self.letters = NULL
        self.mask = 0
        self.usable = False
        self.n_words = 0
        self.n_classes = 0

    def __init__(self, Kwg kwg, int min_len=RACK_SIZE, int max_len=MAX_BOARD_DIM):
        cdef uint32_t stack_p[64]
        cdef uint8_t buf[64]
        cdef uint8_t counts[64]
        cdef int depth, i, ml, pass_no
        cdef uint32_t p
        cdef long n = 0, total = 0, k, cap
        cdef WmRec* recs = NULL
        cdef uint8_t* scratch = NULL
        cdef uint64_t h
        cdef bint fits = True
        cdef uint32_t out_off = 0
        cdef WmSlot* slot
        self.min_len = min_len
        self.max_len = max_len
        if kwg.dawg_root == 0:
            return
        # two DFS passes over the DAWG: count, then collect
        for pass_no in range(2):
            n = 0
            total = 0
            with nogil:
                depth = 0
                stack_p[0] = kwg.dawg_root
                while depth >= 0:
                    p = stack_p[depth]
                    buf[depth] = <uint8_t> kwg_tile(kwg.nodes, p)
                    if kwg_accepts(kwg.nodes, p) and min_len <= depth + 1 <= max_len:
                        if pass_no == 1:
                            recs[n].k0 = 0
                            recs[n].k1 = 0
                            recs[n].offset = <uint32_t> total
                            recs[n].length = <uint32_t> (depth + 1)
                            for i in range(64):
                                counts[i] = 0
                            for i in range(depth + 1):
                                ml = buf[i]
                                scratch[total + i] = <uint8_t> ml
                                if ml < 1 or ml > 32:
                                    fits = False
                                    continue
                                counts[ml] += 1
                                if counts[ml] > 15:
                                    fits = False
                                wm_add(&recs[n].k0, &recs[n].k1, ml)
                        n += 1
                        total += depth + 1
                    if kwg_arc(kwg.nodes, p) != 0 and depth < max_len - 1:
                        depth += 1
                        stack_p[depth] = kwg_arc(kwg.nodes, p)
                        continue
                    while depth >= 0:
                        p = stack_p[depth]
                        if kwg_is_end(kwg.nodes, p):
                            depth -= 1
                        else:
                            stack_p[depth] = p + 1
                            break
            if pass_no == 0:
                recs = <WmRec*> malloc((n + 1) * sizeof(WmRec))
                scratch = <uint8_t*> malloc(total + 1)
                self.letters = <uint8_t*> malloc(total + 1)
                if recs == NULL or scratch == NULL or self.letters == NULL:
                    free(recs)
                    free(scratch)
                    raise MemoryError()
        self.n_words = n
        if not fits:
            free(recs)
            free(scratch)
            return
        cap = 16
        while cap < 2 * n + 2:
            cap *= 2
        self.slots = <WmSlot*> calloc(cap, sizeof(WmSlot))
        if self.slots == NULL:
            free(recs)
            free(scratch)
            raise MemoryError()
        self.mask = <uint64_t> (cap - 1)
        with nogil:
            qsort(recs, n, sizeof(WmRec), _rec_cmp)
            k = 0
            slot = NULL
            while k < n:
                if slot == NULL or recs[k].k0 != slot.k0 or recs[k].k1 != slot.k1:
                    h = _hash(recs[k].k0, recs[k].k1) & self.mask
                    while self.slots[h].k0 != 0 or self.slots[h].k1 != 0:
                        h = (h + 1) & self.mask
                    slot = &self.slots[h]
                    slot.k0 = recs[k].k0
                    slot.k1 = recs[k].k1
                    slot.start = out_off
                    slot.count = 0
                    self.n_classes += 1
                memcpy(&self.letters[out_off], &scratch[recs[k].offset], recs[k].length)
                out_off += recs[k].length
                slot.count += 1
                k += 1
        free(recs)
        free(scratch)
        self.usable = True

    def __dealloc__(self):
        free(self.slots)
        free(self.letters)

    cdef const WmSlot* find(self, uint64_t k0, uint64_t k1) noexcept nogil:
        """The class of this multiset, or NULL."""
        cdef uint64_t h
        if self.slots == NULL:
            return NULL
        h = _hash(k0, k1) & self.mask
        while True:
            if self.slots[h].k0 == k0 and self.slots[h].k1 == k1:
                return &self.slots[h]
            if self.slots[h].k0 == 0 and self.slots[h].k1 == 0:
                return NULL
            h = (h + 1) & self.mask

    def anagrams(self, letters):
        """Words (machine letters) with exactly these letters (no blanks), as a sorted list of bytes."""
        cdef uint64_t k0 = 0, k1 = 0
        cdef const WmSlot* s
        cdef uint32_t i, length = len(letters)
        for ml in letters:
            if ml < 1 or ml > 32:
                raise ValueError(f"letter {ml} is outside the word map's alphabet")
            wm_add(&k0, &k1, ml)
        s = self.find(k0, k1)
        if s == NULL:
            return []
        return sorted(bytes(self.letters[s.start + i * length:s.start + (i + 1) * length])
                      for i in range(s.count))
