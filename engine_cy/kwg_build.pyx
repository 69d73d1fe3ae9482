# Building word graphs: a KWG from a word list (build_kwg), and the breadth-first relayout of a loaded
# GADDAG that the move generator reads (kwg_relayout, for Kwg.ensure_mnodes).
#
# The builder is an incremental minimising construction over sorted strings with one interning table shared
# by the DAWG and the GADDAG, so GADDAG lists after a separator coincide with DAWG lists. Each distinct
# sibling list is stored once and contiguously, which is exactly the KWG layout, so no separate layout pass
# is needed. The GADDAG holds, for each word c1..cn, its reversal and rev(c1..ck) + separator + c(k+1)..cn
# for k = 1..n-1 (tile 0 is the separator).
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, realloc, free, calloc, qsort
from libc.string cimport memcmp, memset, memcpy

from engine_cy.kwg_node cimport KWG_ACCEPTS, KWG_IS_END, KWG_ARC_MASK, kwg_arc, kwg_is_end

import numpy as np

cdef enum:
    REC = 24          # bytes per string record in the builder (tiles stored +1, zero padded)
    MAX_LIST = 66     # arcs in one sibling list: 63 tiles + separator, with room
    MAX_DEPTH = 26


cdef int _rec_cmp(const void* a, const void* b) noexcept nogil:
    return memcmp(a, b, REC)


cdef struct Builder:
    uint32_t* out          # KWG nodes being written
    uint32_t* out_len      # list length, at the index of each list's first node
    uint32_t n_out
    uint32_t cap_out
    uint32_t* table        # hash table of list start indexes (0 = empty slot)
    uint32_t table_mask
    uint32_t n_lists


cdef inline uint64_t _hash_list(const uint32_t* nodes, uint32_t n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef uint32_t i
    for i in range(n):
        h ^= nodes[i]
        h *= 1099511628211ULL
        h ^= h >> 29
    return h


cdef int _grow_table(Builder* b) noexcept nogil:
    cdef uint32_t old_size = b.table_mask + 1
    cdef uint32_t new_size = old_size * 2
    cdef uint32_t* nt = <uint32_t*> calloc(new_size, sizeof(uint32_t))
    cdef uint32_t i, s, slot
    if nt == NULL:
        return -1
    for i in range(old_size):
        s = b.table[i]
        if s != 0:
            slot = <uint32_t> (_hash_list(b.out + s, b.out_len[s]) & (new_size - 1))
            while nt[slot] != 0:
                slot = (slot + 1) & (new_size - 1)
            nt[slot] = s
    free(b.table)
    b.table = nt
    b.table_mask = new_size - 1
    return 0


cdef int64_t _intern(Builder* b, uint32_t* nodes, uint32_t n) noexcept nogil:
    """Store the list (is_end set on its last node) once; return its start index (0 if empty, -1 on error)."""
    cdef uint64_t h
    cdef uint32_t slot, s, new_cap
    if n == 0:
        return 0
    nodes[n - 1] |= KWG_IS_END
    h = _hash_list(nodes, n)
    slot = <uint32_t> (h & b.table_mask)
    while b.table[slot] != 0:
        s = b.table[slot]
        if b.out_len[s] == n and memcmp(b.out + s, nodes, n * sizeof(uint32_t)) == 0:
            return s
        slot = (slot + 1) & b.table_mask
    if b.n_out + n > KWG_ARC_MASK + 1:
        return -1
    if b.n_out + n > b.cap_out:
        new_cap = b.cap_out * 2
        while new_cap < b.n_out + n:
            new_cap *= 2
        b.out = <uint32_t*> realloc(b.out, new_cap * sizeof(uint32_t))
        b.out_len = <uint32_t*> realloc(b.out_len, new_cap * sizeof(uint32_t))
        if b.out == NULL or b.out_len == NULL:
            return -1
        b.cap_out = new_cap
    s = b.n_out
    memcpy(b.out + s, nodes, n * sizeof(uint32_t))
    b.out_len[s] = n
    b.n_out += n
    b.table[slot] = s
    b.n_lists += 1
    if b.n_lists * 2 > b.table_mask:
        if _grow_table(b) != 0:
            return -1
    return s


cdef int64_t _build_trie(Builder* b, const uint8_t* recs, Py_ssize_t n_recs) noexcept nogil:
    """Incrementally build the minimal graph of the sorted, distinct records; return the root list."""
    cdef uint32_t pending[MAX_DEPTH][MAX_LIST]
    cdef uint32_t n_pending[MAX_DEPTH]
    cdef int prev_len = 0, cur_len, cp, d
    cdef Py_ssize_t r
    cdef const uint8_t* s
    cdef const uint8_t* prev = NULL
    cdef int64_t child
    memset(n_pending, 0, sizeof(n_pending))
    for r in range(n_recs):
        s = recs + r * REC
        cur_len = 0
        while cur_len < REC and s[cur_len] != 0:
            cur_len += 1
        cp = 0
        if prev != NULL:
            while cp < cur_len and cp < prev_len and s[cp] == prev[cp]:
                cp += 1
        # close the lists below the common prefix, deepest first
        d = prev_len
        while d > cp:
            child = _intern(b, &pending[d][0], n_pending[d])
            if child < 0:
                return -1
            n_pending[d] = 0
            pending[d - 1][n_pending[d - 1] - 1] |= <uint32_t> child
            d -= 1
        for d in range(cp, cur_len):
            if n_pending[d] >= MAX_LIST:
                return -1
            pending[d][n_pending[d]] = (<uint32_t> (s[d] - 1)) << 24
            if d == cur_len - 1:
                pending[d][n_pending[d]] |= KWG_ACCEPTS
            n_pending[d] += 1
        prev = s
        prev_len = cur_len
    d = prev_len
    while d > 0:
        child = _intern(b, &pending[d][0], n_pending[d])
        if child < 0:
            return -1
        n_pending[d] = 0
        pending[d - 1][n_pending[d - 1] - 1] |= <uint32_t> child
        d -= 1
    return _intern(b, &pending[0][0], n_pending[0])


cdef enum:
    RADIX_SMALL = 24  # runs shorter than this are sorted by insertion


cdef bint _radix_sort(uint8_t* a, uint8_t* tmp, Py_ssize_t n, int d) noexcept nogil:
    """Sort n records in memcmp order, all equal before byte d, by their bytes from d on: a counting pass per
    byte (most significant first) into tmp and back, then each run of one byte value the same way; short runs
    by insertion. False when a byte is above 63 (the caller sorts another way)."""
    cdef Py_ssize_t cnt[64]
    cdef Py_ssize_t pos[64]
    cdef Py_ssize_t i, j, start
    cdef uint8_t rec[REC]
    cdef int b
    if d >= REC or n < 2:
        return True
    if n < RADIX_SMALL:
        for i in range(1, n):
            memcpy(rec, a + i * REC, REC)
            j = i
            while j > 0 and memcmp(a + (j - 1) * REC + d, rec + d, REC - d) > 0:
                memcpy(a + j * REC, a + (j - 1) * REC, REC)
                j -= 1
            memcpy(a + j * REC, rec, REC)
        return True
    memset(cnt, 0, sizeof(cnt))
    for i in range(n):
        b = a[i * REC + d]
        if b >= 64:
            return False
        cnt[b] += 1
    start = 0
    for b in range(64):
        pos[b] = start
        start += cnt[b]
    for i in range(n):
        b = a[i * REC + d]
        memcpy(tmp + pos[b] * REC, a + i * REC, REC)
        pos[b] += 1
    memcpy(a, tmp, n * REC)
    # byte value 0 is the padding after the last tile: those records are equal to the end
    start = cnt[0]
    for b in range(1, 64):
        if cnt[b] > 1 and not _radix_sort(a + start * REC, tmp, cnt[b], d + 1):
            return False
        start += cnt[b]
    return True


cdef Py_ssize_t _sort_unique(uint8_t* recs, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, w = 0
    cdef uint8_t* tmp
    if n == 0:
        return 0
    tmp = <uint8_t*> malloc(n * REC)
    if tmp == NULL or not _radix_sort(recs, tmp, n, 0):
        qsort(recs, n, REC, _rec_cmp)
    free(tmp)
    for i in range(n):
        if w == 0 or memcmp(recs + (w - 1) * REC, recs + i * REC, REC) != 0:
            if w != i:
                memcpy(recs + w * REC, recs + i * REC, REC)
            w += 1
    return w


def build_kwg(words, bint gaddag=True):
    """Build KWG bytes from machine-letter words (bytes-like; tile 0 only in DAWG-only graphs).

    With gaddag=True the file holds the DAWG at node 0 and the GADDAG at node 1."""
    cdef Py_ssize_t n_words = len(words), n_d = 0, n_g = 0, i, k, j, L
    cdef Py_ssize_t total_g = 0
    cdef uint8_t* drecs
    cdef uint8_t* grecs = NULL
    cdef uint8_t* rec
    cdef const unsigned char* w
    cdef bytes bw
    cdef Builder b
    cdef int64_t droot, groot = 0
    cdef list encoded = []
    cdef int max_len = REC - 2 if gaddag else REC - 1
    for word in words:
        bw = bytes(word)
        L = len(bw)
        if L < 1 or (gaddag and L < 2):
            continue
        if L > max_len:
            raise ValueError(f"word of length {L} is longer than the builder supports ({max_len})")
        for j in range(L):
            if bw[j] > 62 or (gaddag and bw[j] == 0):
                raise ValueError(f"invalid machine letter {bw[j]} in word")
        encoded.append(bw)
        total_g += L
    n_words = len(encoded)
    drecs = <uint8_t*> calloc(max(n_words, 1), REC)
    if gaddag:
        grecs = <uint8_t*> calloc(max(total_g, 1), REC)
    if drecs == NULL or (gaddag and grecs == NULL):
        free(drecs); free(grecs)
        raise MemoryError()
    for i in range(n_words):
        bw = encoded[i]
        w = bw
        L = len(bw)
        rec = drecs + i * REC
        for j in range(L):
            rec[j] = w[j] + 1
        if gaddag:
            # reverse(w), then reverse(w[:k]) + sep + w[k:] for k = 1..L-1
            rec = grecs + n_g * REC
            for j in range(L):
                rec[j] = w[L - 1 - j] + 1
            n_g += 1
            for k in range(1, L):
                rec = grecs + n_g * REC
                for j in range(k):
                    rec[j] = w[k - 1 - j] + 1
                rec[k] = 1            # separator, tile 0
                for j in range(k, L):
                    rec[j + 1] = w[j] + 1
                n_g += 1
    memset(&b, 0, sizeof(Builder))
    b.cap_out = 1 << 16
    b.out = <uint32_t*> malloc(b.cap_out * sizeof(uint32_t))
    b.out_len = <uint32_t*> malloc(b.cap_out * sizeof(uint32_t))
    b.table = <uint32_t*> calloc(1 << 16, sizeof(uint32_t))
    b.table_mask = (1 << 16) - 1
    b.n_out = 2 if gaddag else 1
    if b.out == NULL or b.out_len == NULL or b.table == NULL:
        free(drecs); free(grecs); free(b.out); free(b.out_len); free(b.table)
        raise MemoryError()
    with nogil:
        n_d = _sort_unique(drecs, n_words)
        droot = _build_trie(&b, drecs, n_d)
        if gaddag and droot >= 0:
            n_g = _sort_unique(grecs, n_g)
            groot = _build_trie(&b, grecs, n_g)
    free(drecs)
    free(grecs)
    free(b.table)
    free(b.out_len)
    if droot < 0 or groot < 0:
        free(b.out)
        raise ValueError("KWG build failed: the graph exceeds 2^22 nodes or a list is too long")
    b.out[0] = KWG_IS_END | <uint32_t> droot
    if gaddag:
        b.out[1] = KWG_IS_END | <uint32_t> groot
    arr = np.empty(b.n_out, dtype="<u4")
    cdef uint32_t[::1] view = arr
    memcpy(&view[0], b.out, b.n_out * sizeof(uint32_t))
    free(b.out)
    return arr.tobytes()


# ---------------------------------------------------------------- relayout

cdef inline uint32_t _list_len(const uint32_t* nodes, uint32_t p) noexcept nogil:
    """Entries in the sibling list starting at p (to its end flag)."""
    cdef uint32_t n = 1
    while not kwg_is_end(nodes, p + n - 1):
        n += 1
    return n


cdef int64_t kwg_relayout(const uint32_t* nodes, const uint64_t* masks, uint32_t root, uint32_t* pos,
                          uint32_t* queue, uint64_t* out) noexcept nogil:
    """The GADDAG's sibling lists reachable from list `root`, laid out breadth first from index 1 (0 stays
    the "no list" arc): the lists the move generator reads most (near the root) are packed together, and
    the lists one list's letters lead to lie side by side. pos (zeroed) maps an old list start to its new
    one; queue holds the lists in their new order. out NULL: only counts. Returns the entries used (+1),
    or -1 when they would not fit the 22-bit arcs."""
    cdef int64_t head = 0, tail = 1, nxt, j
    cdef uint32_t p, e, c
    pos[root] = 1
    queue[0] = root
    nxt = 1 + _list_len(nodes, root)
    while head < tail:
        p = queue[head]
        head += 1
        e = p
        while True:
            c = kwg_arc(nodes, e)
            if c != 0 and pos[c] == 0:
                if nxt > KWG_ARC_MASK:
                    return -1
                pos[c] = <uint32_t> nxt
                queue[tail] = c
                tail += 1
                nxt += _list_len(nodes, c)
            if kwg_is_end(nodes, e):
                break
            e += 1
    if out != NULL:
        for j in range(tail):
            p = queue[j]
            e = p
            while True:
                c = kwg_arc(nodes, e)
                out[pos[p] + (e - p)] = (<uint64_t> ((nodes[e] & ~(<uint32_t> KWG_ARC_MASK)) |
                                                     (pos[c] if c != 0 else 0))) | (masks[e] << 32)
                if kwg_is_end(nodes, e):
                    break
                e += 1
    return nxt
