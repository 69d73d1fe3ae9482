# Word map: every word of at least min_len letters filed under its letter multiset, so that the words a
# rack (plus the tiles a span plays through) can form are one hash lookup away instead of a GADDAG search.
# The move generator uses it for 7-tile plays (bingos), which dominate the search when the rack holds a
# blank. A key holds one 4-bit count per letter (machine letters 1..32), in two 64-bit words.
cimport cython
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy

from engine_cy.common cimport MAX_BOARD_DIM, RACK_SIZE
from engine_cy.kwg cimport Kwg
from engine_cy.kwg_node cimport kwg_tile, kwg_accepts, kwg_dfs_next


cdef inline uint64_t _hash(uint64_t k0, uint64_t k1) noexcept nogil:
    cdef uint64_t z = k0 * 0x9E3779B97F4A7C15ULL ^ (k1 + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 29)) * 0x94D049BB133111EBULL
    return z ^ (z >> 32)


cdef inline uint64_t _filter_bits(uint64_t h) noexcept nogil:
    """The key's two bits in its filter word (from hash bits the word's index does not use)."""
    return ((<uint64_t> 1) << ((h >> 52) & 63)) | ((<uint64_t> 1) << ((h >> 58) & 63))


cdef inline uint32_t _key_length(uint64_t k0, uint64_t k1) noexcept nogil:
    cdef uint32_t n = 0
    while k0:
        n += k0 & 15
        k0 >>= 4
    while k1:
        n += k1 & 15
        k1 >>= 4
    return n


cdef void _walk(WordMap wm, Kwg kwg, int stage, long* n_words, long* n_letters, bint* fits) noexcept nogil:
    """Depth-first walk of the DAWG over the words of min_len..max_len letters. Stage 0 counts them (and
    checks that the keys can hold them), stage 1 counts each class's words, stage 2 copies the words."""
    cdef uint32_t stack_p[64]
    cdef uint8_t buf[64]
    cdef uint64_t key0[65]
    cdef uint64_t key1[65]
    cdef bint bad[65]                     # a letter outside 1..32 or a count above 15 on the path
    cdef int depth = 0, ml, length, shift
    cdef uint32_t p
    cdef uint64_t k0, k1, h
    cdef WmSlot* slot
    stack_p[0] = kwg.dawg_root
    key0[0] = 0
    key1[0] = 0
    bad[0] = False
    if stage == 0:
        n_words[0] = 0
        n_letters[0] = 0
    while depth >= 0:
        p = stack_p[depth]
        ml = kwg_tile(kwg.nodes, p)
        buf[depth] = <uint8_t> ml
        length = depth + 1
        # the key of the path so far, extended by this letter (the keys of the shorter prefixes stay below)
        k0 = key0[depth]
        k1 = key1[depth]
        bad[length] = bad[depth] or ml < 1 or ml > 32
        if not bad[length]:
            shift = 4 * ((ml - 1) & 15)
            if (((k0 if ml <= 16 else k1) >> shift) & 15) == 15:
                bad[length] = True
            else:
                wm_add(&k0, &k1, ml)
        key0[length] = k0
        key1[length] = k1
        if kwg_accepts(kwg.nodes, p) and wm.min_len <= length <= wm.max_len:
            if stage == 0:
                n_words[0] += 1
                n_letters[0] += length
                if bad[length]:
                    fits[0] = False
            else:
                h = _hash(k0, k1) & wm.mask
                while True:
                    slot = &wm.slots[h]
                    if slot.count == 0 and stage == 1 and slot.k0 == 0 and slot.k1 == 0:
                        slot.k0 = k0
                        slot.k1 = k1
                        break
                    if slot.k0 == k0 and slot.k1 == k1:
                        break
                    h = (h + 1) & wm.mask
                if stage == 2:
                    memcpy(&wm.letters[slot.start + slot.count * length], buf, length)
                slot.count += 1
        depth = kwg_dfs_next(kwg.nodes, stack_p, depth, wm.max_len - 1)


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
        self.filt = NULL
        self.filt_mask = 0

    def __init__(self, Kwg kwg, int min_len=RACK_SIZE, int max_len=MAX_BOARD_DIM):
        cdef long n = 0, total = 0, cap, fcap
        cdef uint32_t out_off = 0, i
        cdef uint64_t h
        cdef bint fits = True
        self.min_len = min_len
        self.max_len = max_len
        if kwg.dawg_root == 0:
            return
        # three walks of the DAWG: count the words; file each under its multiset (class sizes); then copy
        # each word into its class's block (DAWG order, so a class lists its words alphabetically)
        with nogil:
            _walk(self, kwg, 0, &n, &total, &fits)
        self.n_words = n
        if not fits:
            return
        cap = 16
        while cap < 2 * n + 2:
            cap *= 2
        self.slots = <WmSlot*> calloc(cap, sizeof(WmSlot))
        self.letters = <uint8_t*> malloc(total + 1)
        if self.slots == NULL or self.letters == NULL:
            raise MemoryError()
        self.mask = <uint64_t> (cap - 1)
        with nogil:
            _walk(self, kwg, 1, &n, &total, &fits)
            for i in range(cap):
                if self.slots[i].count != 0:
                    self.n_classes += 1
                    self.slots[i].start = out_off
                    out_off += self.slots[i].count * _key_length(self.slots[i].k0, self.slots[i].k1)
                    self.slots[i].count = 0   # refilled by the copying walk
            _walk(self, kwg, 2, &n, &total, &fits)
        # a filter of the keys, one 64-bit word per 4 classes (16 bits a class, 2 of them set): most lookups
        # (a rack and the tiles a span plays through) are of multisets that are no word's, and the filter,
        # a small fraction of the map, turns most of those away from fast memory (with 2-4 classes a word,
        # 2 bits each, about 0.4-1.4% of them get through to the table)
        fcap = 1
        while fcap * 4 < self.n_classes:
            fcap *= 2
        self.filt = <uint64_t*> calloc(fcap, sizeof(uint64_t))
        if self.filt == NULL:
            raise MemoryError()
        self.filt_mask = <uint64_t> (fcap - 1)
        with nogil:
            for i in range(cap):
                if self.slots[i].count != 0:
                    h = _hash(self.slots[i].k0, self.slots[i].k1)
                    self.filt[h & self.filt_mask] |= _filter_bits(h)
        self.usable = True

    def __dealloc__(self):
        free(self.slots)
        free(self.letters)
        free(self.filt)

    cdef const WmSlot* find(self, uint64_t k0, uint64_t k1) noexcept nogil:
        """The class of this multiset, or NULL."""
        cdef uint64_t h, bits
        if self.filt == NULL:
            return NULL           # (built last: NULL when the map is unusable or its construction failed)
        h = _hash(k0, k1)
        bits = _filter_bits(h)
        if (self.filt[h & self.filt_mask] & bits) != bits:
            return NULL
        h &= self.mask
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


# Short word maps (2..RACK_SIZE letters, for empty-board generation), one per KWG, kept for the few most
# recent KWGs (each entry holds its KWG, so an id is never reused while its entry lives).
_SHORT_MAPS = {}
_SHORT_MAPS_KEEP = 8


def short_word_map(Kwg kwg):
    """The word map of kwg's words of 2..RACK_SIZE letters (shared by every generator on that KWG)."""
    entry = _SHORT_MAPS.get(id(kwg))
    if entry is not None and entry[0] is kwg:
        return entry[1]
    wm = WordMap(kwg, 2, RACK_SIZE)
    if len(_SHORT_MAPS) >= _SHORT_MAPS_KEEP:
        _SHORT_MAPS.pop(next(iter(_SHORT_MAPS)))
    _SHORT_MAPS[id(kwg)] = (kwg, wm)
    return wm
