# Word map: the lexicon's long words grouped by letter multiset (anagram classes), for bingo generation.
from libc.stdint cimport uint8_t, uint32_t, uint64_t

cdef struct WmSlot:
    uint64_t k0, k1           # letter counts, one nibble per letter (see wm_add); 0, 0 = empty slot
    uint32_t start            # byte offset of the class's first word in letters
    uint32_t count            # words in the class, stored back to back (length = letters in the key)

cdef inline void wm_add(uint64_t* k0, uint64_t* k1, int ml) noexcept nogil:
    """Add one machine letter (1..32) to a multiset key."""
    if ml <= 16:
        k0[0] += (<uint64_t> 1) << (4 * (ml - 1))
    else:
        k1[0] += (<uint64_t> 1) << (4 * (ml - 17))

cdef class WordMap:
    cdef WmSlot* slots
    cdef uint64_t mask
    cdef uint8_t* letters
    cdef readonly int min_len
    cdef readonly int max_len
    cdef readonly bint usable         # False when the alphabet or a word's letter counts do not fit the keys
    cdef readonly long n_words
    cdef readonly long n_classes
    cdef uint64_t* filt               # blocked Bloom filter of the keys (2 bits in one word per key)
    cdef uint64_t filt_mask
    cdef const WmSlot* find(self, uint64_t k0, uint64_t k1) noexcept nogil
