# Cross-sets and cross-scores: for an empty square and a play direction, the letters
# that form a valid perpendicular word with the tiles before/after it, and those tiles' face values.
from libc.stdint cimport uint32_t, uint64_t, int32_t
from engine_cy.common cimport ml_t
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.kwg_node cimport kwg_seek, kwg_arc, kwg_letter_set, kwg_accepts, kwg_is_end, kwg_tile
from engine_cy.alphabet cimport LetterDistribution


cdef void cross_set_square(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                           const int32_t* scores, uint64_t all_letters, int d, int lane, int idx,
                           CrossCacheEntry* cache=NULL) noexcept nogil:
    # The perpendicular line is lane `idx` in orientation 1-d; our square sits at position `lane` in it.
    # cache (NULL: none): 1 << CROSS_CACHE_BITS entries that remember the letter set of a run of tiles with
    # a hole, keyed by the whole run (so a hit is exact); one cache serves one lexicon and one alphabet.
    cdef int dim = b.dim
    cdef const ml_t* line = &b.tiles[1 - d][idx * dim]
    cdef int pos = lane, start = lane, end = lane, i
    cdef int sq = lane * dim + idx
    cdef int32_t score = 0
    cdef uint32_t p, q, node
    cdef uint64_t bits = 0, k0 = 0, k1 = 0, h
    cdef CrossCacheEntry* e = NULL
    cdef ml_t t
    if line[pos] != 0:
        b.cross_set[d][sq] = 0
        b.cross_score[d][sq] = 0
        return
    while start > 0 and line[start - 1] != 0:
        start -= 1
    while end < dim - 1 and line[end + 1] != 0:
        end += 1
    if start == pos and end == pos:
        b.cross_set[d][sq] = all_letters
        b.cross_score[d][sq] = 0
        return
    for i in range(start, end + 1):
        t = line[i]
        if t != 0 and not (t & 0x80):
            score += scores[t]
    b.cross_score[d][sq] = score
    if cache != NULL and end - start < CROSS_CACHE_MAX_RUN:
        for i in range(start, end + 1):
            t = 0 if i == pos else (line[i] & 0x3F)
            if i - start < 9:
                k0 = (k0 << 6) | t
            else:
                k1 = (k1 << 6) | t
        k0 = (k0 << 5) | <uint64_t> (end - start + 1)
        h = (k0 * <uint64_t> 0x9E3779B97F4A7C15) ^ (k1 * <uint64_t> 0xC2B2AE3D27D4EB4F)
        e = &cache[h >> (64 - CROSS_CACHE_BITS)]
        if e.k0 == k0 and e.k1 == k1:
            b.cross_set[d][sq] = e.bits
            return
    if end == pos:
        # tiles only before: follow them in the DAWG, candidate letter completes the word
        p = dawg_root
        for i in range(start, pos):
            p = kwg_seek(nodes, p, line[i] & 0x7F)
            if p == 0:
                break
            p = kwg_arc(nodes, p)
        bits = kwg_letter_set(nodes, p) if p != 0 else 0
    elif start == pos:
        # tiles only after: reverse(S) in the GADDAG, candidate letter last (no separator)
        p = gaddag_root
        i = end
        while i > pos:
            p = kwg_seek(nodes, p, line[i] & 0x7F)
            if p == 0:
                break
            p = kwg_arc(nodes, p)
            i -= 1
        bits = kwg_letter_set(nodes, p) if p != 0 else 0
    else:
        # both sides: follow P in the DAWG, then for each candidate follow S
        p = dawg_root
        for i in range(start, pos):
            p = kwg_seek(nodes, p, line[i] & 0x7F)
            if p == 0:
                break
            p = kwg_arc(nodes, p)
        if p != 0:
            while True:
                node = p
                q = kwg_arc(nodes, node)
                i = pos + 1
                while i <= end and q != 0:
                    q = kwg_seek(nodes, q, line[i] & 0x7F)
                    if q == 0:
                        break
                    if i == end:
                        if kwg_accepts(nodes, q):
                            bits |= (<uint64_t> 1) << kwg_tile(nodes, node)
                        break
                    q = kwg_arc(nodes, q)
                    i += 1
                if kwg_is_end(nodes, node):
                    break
                p += 1
    b.cross_set[d][sq] = bits & all_letters
    if e != NULL:
        e.k0 = k0
        e.k1 = k1
        e.bits = bits & all_letters


cdef void cross_set_lane(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                         const int32_t* scores, uint64_t all_letters, int d, int lane) noexcept nogil:
    cdef int idx
    for idx in range(b.dim):
        cross_set_square(b, nodes, dawg_root, gaddag_root, scores, all_letters, d, lane, idx)


def all_letters_mask(LetterDistribution ld):
    return ((<uint64_t> 1 << ld.size) - 1) & ~(<uint64_t> 1)


cdef void cross_set_all(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                        const int32_t* scores, uint64_t all_letters) noexcept nogil:
    cdef int d, lane
    for d in range(2):
        for lane in range(b.dim):
            cross_set_lane(b, nodes, dawg_root, gaddag_root, scores, all_letters, d, lane)
    b.cross_valid = True


def compute_all(Board b, Kwg kwg, LetterDistribution ld):
    """Fill every square's cross-set and cross-score, both directions."""
    cdef uint64_t mask = all_letters_mask(ld)
    if kwg.gaddag_root == 0:
        raise ValueError("cross-sets need a KWG with a GADDAG")
    with nogil:
        cross_set_all(b, kwg.nodes, kwg.dawg_root, kwg.gaddag_root, &ld.scores[0], mask)


cdef void cross_set_after_change(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                                 const int32_t* scores, uint64_t all_letters, int d, int lane, int first,
                                 int last) noexcept nogil:
    """Refresh what tiles put on (or taken from) line `lane` of orientation d, squares first..last, change:
    perpendicular-play cross-sets along that line, and same-direction cross-sets in each crossed line."""
    cdef int idx, k
    for idx in range(b.dim):
        cross_set_square(b, nodes, dawg_root, gaddag_root, scores, all_letters, 1 - d, idx, lane)
    for idx in range(first, last + 1):
        for k in range(b.dim):
            cross_set_square(b, nodes, dawg_root, gaddag_root, scores, all_letters, d, k, idx)
