# KWG (Kurnia Word Graph, "Node22") reader and builder.
#
# Layout (reference §2): a flat array of little-endian uint32 nodes,
#   bits 31..24 tile | bit 23 accepts | bit 22 is_end | bits 21..0 arc index.
# nodes[0] points at the DAWG root list, nodes[1] (when present) at the GADDAG root list.
# Tile 0 is the GADDAG separator (and the blank inside a KLV leave graph).
#
# Loading validates the whole graph once (Kwg._validate: linear sweeps in array order, then an iterative
# depth-first walk from the roots for the rest, O(nodes), no recursion), so that every walk in the engine can
# run without checks: see the list of rules in Kwg._validate. Bytes that break a rule raise LexiconFormatError (a ValueError) naming the node.
# Then, for a DAWG + GADDAG file, _check_gaddag proves that the GADDAG holds exactly the strings a GADDAG
# built from the DAWG's words would (reference §2.3), so the move generator cannot offer a word the DAWG lacks.
#
# The builder is an incremental minimising construction over sorted strings with one
# interning table shared by the DAWG and the GADDAG, so GADDAG lists after a separator
# coincide with DAWG lists. Each distinct sibling list is stored once and contiguously,
# which is exactly the KWG layout, so no separate layout pass is needed.
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, realloc, free, calloc, qsort
from libc.string cimport memcmp, memset, memcpy

from engine_cy.common cimport MAX_ALPHABET, MAX_WORD_LEN

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from "portable.h":
    int popcount64 "macondo_popcount64"(uint64_t) nogil
    void prefetch "macondo_prefetch"(const void*) nogil
    void* macondo_huge_alloc(size_t n, void** base, size_t* length) noexcept nogil
    void macondo_huge_free(void* base, size_t length) noexcept nogil

cdef enum:
    REC = 24          # bytes per string record in the builder (tiles stored +1, zero padded)
    MAX_LIST = 66     # arcs in one sibling list: 63 tiles + separator, with room
    MAX_DEPTH = 26

# Limits the validator enforces (see Kwg._validate).
KWG_MAX_NODES = KWG_ARC_MASK + 1        # arcs are 22 bits
KWG_MAX_TILE = MAX_ALPHABET - 1         # letter sets are uint64 bit masks indexed by tile
KWG_MAX_WORD_LEN = MAX_WORD_LEN         # Kwg.words / wordmap / movegen buffers hold a board line
KWG_MAX_WORDS = 1 << 22                 # DAWG words: bounds the word map's memory and build time
KWG_MAX_COUNT = 1 << 30                 # strings below any node (GADDAG: sum of the DAWG word lengths)

cdef enum:
    _MAX_TILE = MAX_ALPHABET - 1
    _MAX_WORDS = 1 << 22
    _MAX_COUNT = 1 << 30
    # validator node states
    ST_GREY = 1       # expanded, descendants in progress
    ST_BLACK = 2      # done: counts and height final
    ST_ZERO = 4       # a tile 0 lies on some path from this node's sibling-list suffix
    # graph kinds
    KIND_GADDAG = 0   # DAWG at node 0, GADDAG at node 1; tile 0 only as the GADDAG separator
    KIND_DAWG = 1     # DAWG only; tile 0 allowed (a blank)
    KIND_LEAVES = 2   # DAWG only, tiles along every path in ascending order (sorted KLV leaves)
    # validator errors
    E_OK = 0
    E_TILE = 1
    E_ARC_RANGE = 2
    E_ARC_RESERVED = 3
    E_RUNS_PAST = 4
    E_ORDER = 5
    E_DEAD_END = 6
    E_CYCLE = 7
    E_TOO_LONG = 8
    E_TOO_MANY = 9
    E_SEPARATOR = 10
    E_TWO_SEPARATORS = 11
    E_LEAVE_ORDER = 12


class LexiconFormatError(ValueError):
    """A KWG or KLV file breaks the format (or the limits the engine relies on); the message names the defect
    and, where there is one, the node."""


cdef struct VErr:
    int code
    uint32_t node
    int64_t a
    int64_t b


cdef inline int _fail(VErr* err, int code, uint32_t node, int64_t a, int64_t b) noexcept nogil:
    err.code = code
    err.node = node
    err.a = a
    err.b = b
    return code


cdef struct VInfo:
    uint32_t cnt      # strings accepted from the node's sibling-list suffix
    uint32_t lsum     # their total length, saturating at 0xFFFFFFFF (compared with a count <= 2^30)
    uint8_t state     # ST_GREY / ST_BLACK / ST_ZERO
    uint8_t height    # longest such string, in tiles


cdef inline bint _finish(const uint32_t* nodes, uint32_t q, uint32_t a, uint32_t nx, int kind, VInfo* info,
                         VErr* err) noexcept nogil:
    """Post-order step for node q, whose arc list a and next sibling nx (0: none) are done (info[0] holds
    zeros and stands for "none"). False (and err set) when a limit is broken."""
    cdef uint32_t node = nodes[q], t = node >> 24
    cdef uint64_t c = (1 if node & KWG_ACCEPTS else 0) + <uint64_t> info[a].cnt
    cdef uint64_t ls = c + info[a].lsum + info[nx].lsum
    cdef unsigned int h = info[a].height + 1u
    c += info[nx].cnt
    if c > _MAX_COUNT:
        _fail(err, E_TOO_MANY, q, c, _MAX_COUNT)
        return False
    if info[nx].height > h:
        h = info[nx].height
    if h > MAX_WORD_LEN + 1:
        _fail(err, E_TOO_LONG, q, h, MAX_WORD_LEN + 1)
        return False
    if kind == KIND_GADDAG and t == 0 and info[a].state & ST_ZERO:
        _fail(err, E_TWO_SEPARATORS, q, a, 0)
        return False
    info[q].cnt = <uint32_t> c
    info[q].lsum = <uint32_t> ls if ls < 0xFFFFFFFFu else 0xFFFFFFFFu
    info[q].height = <uint8_t> h
    info[q].state = ST_BLACK | ((info[a].state | info[nx].state) & ST_ZERO) | (ST_ZERO if t == 0 else 0)
    return True


cdef inline int _check_node(const uint32_t* nodes, uint32_t n, uint32_t first, uint32_t q, int kind,
                            VErr* err) noexcept nogil:
    """The rules of node q on its own (and its next sibling's tile): E_OK or the error (err set)."""
    cdef uint32_t node = nodes[q], t = node >> 24, a = node & KWG_ARC_MASK
    cdef uint32_t nx = 0 if node & KWG_IS_END else q + 1
    if t > _MAX_TILE:
        return _fail(err, E_TILE, q, t, 0)
    if a >= n:
        return _fail(err, E_ARC_RANGE, q, a, n)
    if a != 0 and a < first:
        return _fail(err, E_ARC_RESERVED, q, a, 0)
    if a == 0 and not (node & KWG_ACCEPTS):
        return _fail(err, E_DEAD_END, q, 0, 0)
    if nx != 0:
        if nx >= n:
            return _fail(err, E_RUNS_PAST, q, n, 0)
        if (nodes[nx] >> 24) <= t:
            return _fail(err, E_ORDER, q, t, nodes[nx] >> 24)
    if kind == KIND_GADDAG and t == 0 and (a == 0 or node & KWG_ACCEPTS):
        return _fail(err, E_SEPARATOR, q, 0, 0)
    if kind == KIND_LEAVES and a != 0 and (nodes[a] >> 24) < t:
        return _fail(err, E_LEAVE_ORDER, q, t, nodes[a] >> 24)
    return E_OK


cdef inline bint _sweep_one(const uint32_t* nodes, uint32_t n, uint32_t first, uint32_t q, int kind,
                            VInfo* info, VErr* scratch) noexcept nogil:
    """Finish node q now if it passes its rules and its arc list and next sibling are finished already."""
    cdef uint32_t node, a, nx
    if info[q].state & ST_BLACK:
        return True
    if _check_node(nodes, n, first, q, kind, scratch) != E_OK:
        return False
    node = nodes[q]
    a = node & KWG_ARC_MASK
    nx = 0 if node & KWG_IS_END else q + 1
    if (a != 0 and not (info[a].state & ST_BLACK)) or (nx != 0 and not (info[nx].state & ST_BLACK)):
        return False
    return _finish(nodes, q, a, nx, kind, info, scratch)


cdef uint32_t _sweep(const uint32_t* nodes, uint32_t n, uint32_t first, int kind, VInfo* info,
                     bint by_lists) noexcept nogil:
    """A linear pre-pass that finishes, in array order, every node whose dependencies come before it in that
    order: lists in ascending order, each from its end (arcs to earlier lists: our builder's layout), or all
    nodes from the end (arcs forward: breadth-first layouts). Sequential, so much cheaper than the
    depth-first walk, which then only has the rest to do (and finds the errors: a node that breaks a rule,
    or depends on one that does, or on a cycle, is left unfinished here). Returns the nodes finished."""
    cdef VErr scratch
    cdef uint32_t s, e, q, done = 0
    if by_lists:
        s = first
        while s < n:
            e = s
            while e < n - 1 and not (nodes[e] & KWG_IS_END):
                e += 1
            q = e + 1
            while q > s:
                q -= 1
                done += _sweep_one(nodes, n, first, q, kind, info, &scratch)
            s = e + 1
    else:
        q = n
        while q > first:
            q -= 1
            done += _sweep_one(nodes, n, first, q, kind, info, &scratch)
    return done


cdef int _walk_from(const uint32_t* nodes, uint32_t n, uint32_t first, uint32_t root, int kind,
                    VInfo* info, uint32_t* stack, VErr* err) noexcept nogil:
    """Iterative depth-first walk of the node graph below root (edges: node -> its arc's list, and node ->
    next sibling while not is_end), checking each node on first visit and filling its VInfo in post-order.
    Finished (black) nodes are not entered again. A grey node met again closes a cycle. Each node is
    expanded once and pushes at most two entries, so the stack never holds more than 2 * n + 1."""
    cdef Py_ssize_t sp = 0
    cdef uint32_t q, a, nx, node
    cdef bint pushed
    cdef int rc
    if root == 0 or info[root].state & ST_BLACK:
        return E_OK
    stack[sp] = root
    sp += 1
    while sp > 0:
        q = stack[sp - 1]
        if info[q].state & ST_BLACK:
            sp -= 1
            continue
        node = nodes[q]
        a = node & KWG_ARC_MASK
        nx = 0 if node & KWG_IS_END else q + 1
        if info[q].state & ST_GREY:
            # second visit: the children are done
            if not _finish(nodes, q, a, nx, kind, info, err):
                return err.code
            sp -= 1
            continue
        # first visit: the node's own rules, then descend
        rc = _check_node(nodes, n, first, q, kind, err)
        if rc != E_OK:
            return rc
        info[q].state |= ST_GREY
        pushed = False
        if a != 0 and not (info[a].state & ST_BLACK):
            if info[a].state & ST_GREY:
                return _fail(err, E_CYCLE, q, a, 0)
            stack[sp] = a
            sp += 1
            pushed = True
        if nx != 0 and not (info[nx].state & ST_BLACK):
            if info[nx].state & ST_GREY:
                return _fail(err, E_CYCLE, q, nx, 0)
            stack[sp] = nx
            sp += 1
            pushed = True
        if not pushed:
            # children already done: finish now rather than on a second visit
            if not _finish(nodes, q, a, nx, kind, info, err):
                return err.code
            sp -= 1
    return E_OK


cdef str _message(VErr* err):
    cdef uint32_t q = err.node
    cdef int code = err.code
    if code == E_TILE:
        return f"KWG node {q}: tile {err.a} is above the highest supported tile ({_MAX_TILE})"
    if code == E_ARC_RANGE:
        return f"KWG node {q}: arc {err.a} points past the end ({err.b} nodes)"
    if code == E_ARC_RESERVED:
        return f"KWG node {q}: arc {err.a} points at a reserved root node"
    if code == E_RUNS_PAST:
        return f"KWG node {q}: sibling list runs past the end ({err.a} nodes) without an end-of-list flag"
    if code == E_ORDER:
        return f"KWG node {q}: sibling tiles are not strictly ascending ({err.a} then {err.b})"
    if code == E_DEAD_END:
        return f"KWG node {q}: dead end (no children and not the end of a word)"
    if code == E_CYCLE:
        return f"KWG node {q}: edge to node {err.a} closes a cycle"
    if code == E_TOO_LONG:
        return f"KWG node {q}: a path below it is longer than {err.b} tiles"
    if code == E_TOO_MANY:
        return f"KWG node {q}: more than {err.b} strings below it"
    if code == E_SEPARATOR:
        return f"KWG node {q}: tile 0 (GADDAG separator) accepts or has no continuation"
    if code == E_TWO_SEPARATORS:
        return f"KWG node {q}: a GADDAG path holds two separators (tile 0)"
    if code == E_LEAVE_ORDER:
        return f"KWG node {q}: leave tiles out of ascending order ({err.a} then {err.b})"
    return f"KWG node {q}: invalid (code {code})"


# ---------------------------------------------------------------- GADDAG against DAWG
#
# After the structural rules and the count check (the GADDAG holds exactly as many strings as the DAWG's
# words have letters), _check_gaddag proves that the GADDAG accepts every string the builder (reference
# §2.3) makes from the DAWG's words: for each word w = c1..cn, rev(c1..cn) and rev(c1..ck) + [0] + c(k+1)..cn
# for k = 1..n-1. Sorted lists with strictly ascending tiles make both graphs deterministic, so the GADDAG's
# count is its number of distinct strings; "same count + every expected string accepted" is equality.
#
# The strings are grouped by prefix P = c1..ck of some word (one per path from the DAWG root, visited by an
# iterative depth-first walk): the GADDAG must accept rev(P) exactly when P is a word, and after rev(P) and a
# separator it must accept exactly the DAWG's continuations of P, i.e. the language of the DAWG list under P.
# That list is usually the very same node list (a builder that interns DAWG and GADDAG lists in one table
# shares them, as ours and wolges do); otherwise the two lists are compared by canonical ids (below), which
# are equal exactly when the languages are. Cost: one GADDAG walk of |P| steps per prefix.

cdef enum:
    G_OK = 0
    G_LACKS = 1          # the GADDAG lacks a form of the word in the buffer
    G_EXTRA = 2          # the GADDAG accepts the string in the buffer, which no DAWG word forms
    G_MEMORY = 3
    G_BUF = MAX_WORD_LEN + 4
    G_BATCH = 32         # prefixes whose GADDAG walks run interleaved


cdef int _canonical_ids(const uint32_t* nodes, uint32_t n, uint32_t r0, uint32_t r1,
                        uint32_t* cid) noexcept nogil:
    """cid[q] for every node reachable from the lists r0, r1: equal ids exactly when the sibling-list suffixes
    from the two nodes accept the same strings. The graph is a validated DAG of sorted lists without dead ends,
    so such a suffix's language determines its nodes' tiles, accept flags and (recursively) their arcs'
    languages; hash-consing the key (tile, accepts, cid(arc), cid(next sibling)), with exact keys, gives each
    language one id. Iterative post-order; 0 on success, -1 when out of memory."""
    cdef size_t size = 1, mask, slot
    cdef uint64_t* keys
    cdef uint32_t* vals
    cdef uint32_t* stack
    cdef Py_ssize_t sp = 0
    cdef uint32_t q, node, a, nx, next_id = 1
    cdef uint32_t roots[2]
    cdef uint64_t key, h
    cdef int r
    while size < 2 * <size_t> n + 2:
        size <<= 1
    mask = size - 1
    keys = <uint64_t*> calloc(size, sizeof(uint64_t))
    vals = <uint32_t*> malloc(size * sizeof(uint32_t))
    stack = <uint32_t*> malloc((2 * <size_t> n + 2) * sizeof(uint32_t))
    if keys == NULL or vals == NULL or stack == NULL:
        free(keys)
        free(vals)
        free(stack)
        return -1
    memset(cid, 0, n * sizeof(uint32_t))
    roots[0] = r0
    roots[1] = r1
    for r in range(2):
        if roots[r] == 0 or cid[roots[r]] != 0:
            continue
        stack[0] = roots[r]
        sp = 1
        while sp > 0:
            q = stack[sp - 1]
            if cid[q] != 0:
                sp -= 1
                continue
            node = nodes[q]
            a = node & KWG_ARC_MASK
            nx = 0 if node & KWG_IS_END else q + 1
            if (a != 0 and cid[a] == 0) or (nx != 0 and cid[nx] == 0):
                if a != 0 and cid[a] == 0:
                    stack[sp] = a
                    sp += 1
                if nx != 0 and cid[nx] == 0:
                    stack[sp] = nx
                    sp += 1
                continue
            key = ((<uint64_t> 1) << 63) | (node >> 24) | ((<uint64_t> 1 if node & KWG_ACCEPTS else 0) << 6)
            key |= (<uint64_t> (cid[a] if a != 0 else 0)) << 7
            key |= (<uint64_t> (cid[nx] if nx != 0 else 0)) << 30
            h = key * 0x9E3779B97F4A7C15ULL
            slot = <size_t> (h >> 32) & mask
            while keys[slot] != 0 and keys[slot] != key:
                slot = (slot + 1) & mask
            if keys[slot] == 0:
                keys[slot] = key
                vals[slot] = next_id
                next_id += 1
            cid[q] = vals[slot]
            sp -= 1
    free(keys)
    free(vals)
    free(stack)
    return 0


cdef int _complete(const uint32_t* nodes, uint32_t p, uint8_t* buf, int length) noexcept nogil:
    """Append to buf the tiles of the first string accepted from list p (first nodes until one accepts)."""
    while p != 0 and length < G_BUF:
        buf[length] = <uint8_t> (nodes[p] >> 24)
        length += 1
        if nodes[p] & KWG_ACCEPTS:
            break
        p = nodes[p] & KWG_ARC_MASK
    return length


cdef int _list_diff(const uint32_t* nodes, uint32_t a, uint32_t b, const uint32_t* cid, uint8_t* buf,
                    int* length) noexcept nogil:
    """Lists a (the DAWG's continuations of the word prefix in buf) and b (the GADDAG's, after the prefix's
    reversal and a separator) accept different strings (cid[a] != cid[b]): find one string on one side only.
    G_LACKS: buf holds a DAWG word whose form the GADDAG lacks; G_EXTRA: buf holds the prefix and the
    continuation the GADDAG accepts beyond it."""
    cdef uint32_t ta, tb, xa, xb
    cdef int k = length[0]
    while True:
        if a == 0 and b == 0:
            return G_EXTRA   # not reached when the ids differ
        if b == 0:
            length[0] = _complete(nodes, a, buf, k)
            return G_LACKS
        if a == 0:
            length[0] = _complete(nodes, b, buf, k)
            return G_EXTRA
        ta = nodes[a] >> 24
        tb = nodes[b] >> 24
        if ta != tb:
            if ta < tb:
                length[0] = _complete(nodes, a, buf, k)
                return G_LACKS
            length[0] = _complete(nodes, b, buf, k)
            return G_EXTRA
        if (nodes[a] ^ nodes[b]) & KWG_ACCEPTS:
            buf[k] = <uint8_t> ta
            length[0] = k + 1
            return G_LACKS if nodes[a] & KWG_ACCEPTS else G_EXTRA
        xa = nodes[a] & KWG_ARC_MASK
        xb = nodes[b] & KWG_ARC_MASK
        if (xa == 0) != (xb == 0) or (xa != 0 and cid[xa] != cid[xb]):
            if k >= G_BUF - 1:
                return G_EXTRA
            buf[k] = <uint8_t> ta
            k += 1
            a = xa
            b = xb
            continue
        # the same from this node down: the difference is further along both lists
        a = 0 if nodes[a] & KWG_IS_END else a + 1
        b = 0 if nodes[b] & KWG_IS_END else b + 1


cdef struct GWalk:
    uint32_t x        # the DAWG node of the prefix's last tile
    uint32_t p        # the GADDAG list to read the next tile from (0: none)
    uint32_t q        # the GADDAG node of the last tile read
    int j             # index of the next prefix tile to read (backwards), -1 when rev(prefix) is read
    int length        # prefix length
    uint8_t tiles[G_BUF]


cdef int _prefix_verdict(const uint32_t* nodes, uint32_t n, uint32_t droot, uint32_t groot, GWalk* w,
                         uint32_t** cid, uint8_t* buf, int* length, int* plen) noexcept nogil:
    """The checks for one prefix P = w.tiles[:w.length] whose reversal the GADDAG has read up to node w.q
    (w.p its arc): rev(P) accepted exactly when P is a word; after a separator, the DAWG's continuations of P.
    On a defect, buf/length/plen name it (see _check_gaddag)."""
    cdef uint32_t x = w.x, q = w.q, ax, sep, s
    memcpy(buf, w.tiles, w.length)
    length[0] = w.length
    plen[0] = w.length
    if w.j >= 0:
        # the walk broke off: the GADDAG lacks rev(P) and everything after it
        length[0] = _complete(nodes, nodes[x] & KWG_ARC_MASK if not (nodes[x] & KWG_ACCEPTS) else 0, buf,
                              w.length)
        return G_LACKS
    if (nodes[q] ^ nodes[x]) & KWG_ACCEPTS:
        return G_LACKS if nodes[x] & KWG_ACCEPTS else G_EXTRA
    ax = nodes[x] & KWG_ARC_MASK
    sep = w.p
    if sep != 0 and (nodes[sep] >> 24) != 0:
        sep = 0   # a separator sorts first in its list
    s = nodes[sep] & KWG_ARC_MASK if sep != 0 else 0
    if s == ax:
        return G_OK
    if ax == 0 or s == 0:
        length[0] = _complete(nodes, ax if ax != 0 else s, buf, w.length)
        return G_LACKS if ax != 0 else G_EXTRA
    if cid[0] == NULL:
        cid[0] = <uint32_t*> malloc(<size_t> n * sizeof(uint32_t))
        if cid[0] == NULL or _canonical_ids(nodes, n, droot, groot, cid[0]) != 0:
            return G_MEMORY
    if cid[0][s] == cid[0][ax]:
        return G_OK
    return _list_diff(nodes, ax, s, cid[0], buf, length)


cdef int _run_batch(const uint32_t* nodes, uint32_t n, uint32_t droot, uint32_t groot, const uint64_t* masks,
                    GWalk* walks, int nb, uint32_t** cid, uint8_t* buf, int* length, int* plen) noexcept nogil:
    """Read the reversals of nb prefixes in the GADDAG, one step of each in turn, prefetching each walk's next
    list: the walks are independent, so their memory latencies overlap (one walk at a time waits on a cache
    miss at almost every step). Then the per-prefix checks, in batch order."""
    cdef int i, active = nb, rc
    cdef uint32_t p, q, t
    cdef uint64_t m
    cdef GWalk* w
    while active > 0:
        active = 0
        for i in range(nb):
            w = &walks[i]
            if w.j < 0:
                continue
            p = w.p
            if p == 0:
                continue   # broken off; reported below
            m = masks[p]
            t = w.tiles[w.j]
            if not ((m >> t) & 1):
                w.p = 0
                continue
            q = p + <uint32_t> popcount64(m & (((<uint64_t> 1) << t) - 1))
            w.q = q
            p = nodes[q] & KWG_ARC_MASK
            w.p = p
            w.j -= 1
            if p != 0:
                prefetch(&nodes[p])
                if w.j >= 0:
                    prefetch(&masks[p])
                    active += 1
    for i in range(nb):
        rc = _prefix_verdict(nodes, n, droot, groot, &walks[i], cid, buf, length, plen)
        if rc != G_OK:
            return rc
    return G_OK


cdef int _check_gaddag(const uint32_t* nodes, uint32_t n, uint32_t droot, uint32_t groot,
                       const uint64_t* masks, uint8_t* buf, int* length, int* plen) noexcept nogil:
    """G_OK when every string the builder forms from the DAWG's words is accepted by the GADDAG (see above),
    else the defect and a string naming it in buf[:length[0]] (the DAWG depth is validated <= MAX_WORD_LEN):
    G_LACKS, a DAWG word; G_EXTRA, a word prefix buf[:plen[0]] and what the GADDAG accepts after its
    reversal (and a separator, when there is more). masks: _fill_child_masks of the validated nodes."""
    cdef uint32_t stack_p[G_BUF]
    cdef uint8_t tiles[G_BUF]
    cdef GWalk* walks
    cdef uint32_t* cid = NULL
    cdef int depth, nb = 0, rc = G_OK
    length[0] = 0
    plen[0] = 0
    if droot == 0:
        return G_OK
    walks = <GWalk*> malloc(G_BATCH * sizeof(GWalk))
    if walks == NULL:
        return G_MEMORY
    depth = 0
    stack_p[0] = droot
    while depth >= 0:
        tiles[depth] = <uint8_t> (nodes[stack_p[depth]] >> 24)
        walks[nb].x = stack_p[depth]
        walks[nb].p = groot
        walks[nb].q = 0
        walks[nb].j = depth
        walks[nb].length = depth + 1
        memcpy(walks[nb].tiles, tiles, depth + 1)
        nb += 1
        if nb == G_BATCH:
            rc = _run_batch(nodes, n, droot, groot, masks, walks, nb, &cid, buf, length, plen)
            nb = 0
            if rc != G_OK:
                break
        depth = kwg_dfs_next(nodes, stack_p, depth, G_BUF - 2)
    if rc == G_OK and nb > 0:
        rc = _run_batch(nodes, n, droot, groot, masks, walks, nb, &cid, buf, length, plen)
    free(walks)
    free(cid)
    return rc


cdef str _tiles_text(list tiles):
    """A tile string for a message: letters when every tile is in 0..26 (A = 1, '@' the separator), else the
    tile numbers."""
    if all(t <= 26 for t in tiles):
        return "'" + "".join("@" if t == 0 else chr(64 + t) for t in tiles) + "'"
    return "tiles " + ".".join(str(t) for t in tiles)


cdef str _gaddag_message(int rc, const uint8_t* buf, int length, int plen):
    cdef list tiles = [buf[i] for i in range(length)]
    cdef list s
    if rc == G_LACKS:
        return f"KWG: the GADDAG does not match the DAWG (the GADDAG lacks a form of word {_tiles_text(tiles)})"
    s = tiles[:plen][::-1]
    if length > plen:
        s += [0] + tiles[plen:]
    return (f"KWG: the GADDAG does not match the DAWG (it accepts {_tiles_text(s)}, which is not a form of "
            f"any DAWG word)")

cdef void _fill_child_masks(const uint32_t* nodes, uint32_t n, const uint8_t* reach, uint64_t* m) noexcept nogil:
    """m[p] = bit t for every tile t in the sibling list from node p to its end, for the nodes reach marks
    (m zeroed by the caller: other nodes stay 0)."""
    cdef int64_t p = <int64_t> n - 1
    while p >= 0:
        if reach[p]:
            m[p] = (<uint64_t> 1) << kwg_tile(nodes, <uint32_t> p)
            if not kwg_is_end(nodes, <uint32_t> p):
                m[p] |= m[p + 1]
        p -= 1


cdef inline uint32_t _list_len(const uint32_t* nodes, uint32_t p) noexcept nogil:
    """Entries in the sibling list starting at p (to its end flag)."""
    cdef uint32_t n = 1
    while not kwg_is_end(nodes, p + n - 1):
        n += 1
    return n


cdef int64_t _relayout(const uint32_t* nodes, const uint64_t* masks, uint32_t root, uint32_t* pos,
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


cdef class Kwg:
    """A KWG held as one contiguous uint32 array (no per-node Python objects), validated at load."""

    def __cinit__(self):
        self.nodes = NULL
        self.n_nodes = 0
        self.counts = NULL
        self._counts = None
        self.reach = NULL
        self._reach = None
        self.child_masks = NULL
        self._child_masks = None
        self._word_map = None
        self.mnodes = NULL
        self.mnodes_base = NULL
        self.mnodes_len = 0
        self.kind = "dawg"

    def __dealloc__(self):
        if self.mnodes_base != NULL:
            macondo_huge_free(self.mnodes_base, self.mnodes_len)

    def __init__(self, data, kind="auto"):
        """data: bytes-like KWG file contents (little-endian uint32 nodes).

        kind: "gaddag" (node 1 must be the GADDAG root pointer), "dawg" (DAWG only, node 1 is an ordinary
        node), "leaves" (DAWG only, each path's tiles ascending: a KLV leave graph), or "auto": "gaddag" when
        node 1 has the shape of a root pointer (tile 0, no accept flag, end of list), else "dawg".
        Raises LexiconFormatError (a ValueError) when the bytes break the format."""
        cdef cnp.ndarray arr
        cdef uint32_t n
        cdef int k
        if self.nodes != NULL:
            raise TypeError("Kwg is already initialised")
        if not isinstance(data, bytes):
            data = bytes(data)   # lengths below are in bytes (a numpy array's len() is not)
        if len(data) > 4 * (KWG_ARC_MASK + 1):
            raise LexiconFormatError("KWG has more than 2^22 nodes")
        if len(data) % 4 != 0 or len(data) < 4:
            raise LexiconFormatError(f"KWG data size {len(data)} is not a positive multiple of 4 bytes")
        arr = np.frombuffer(data, dtype="<u4").astype(np.uint32, copy=True)
        arr.flags.writeable = False
        n = <uint32_t> arr.shape[0]
        if kind == "auto":
            kind = "gaddag" if n >= 2 and (arr[1] & 0xFFC00000) == KWG_IS_END else "dawg"
        if kind == "gaddag":
            k = KIND_GADDAG
        elif kind == "dawg":
            k = KIND_DAWG
        elif kind == "leaves":
            k = KIND_LEAVES
        else:
            raise ValueError(f"unknown KWG kind {kind!r}")
        self._validate(arr, k)
        self.kind = kind
        self.array = arr
        self.n_nodes = n
        self.nodes = <const uint32_t*> cnp.PyArray_DATA(arr)

    cdef int _validate(self, object array, int kind) except -1:
        """Check the whole graph (rules below) and keep the word counts and the reachable-node map.

        Rules, each one an assumption of some walker:
        - node 0 (and node 1 for "gaddag") is a root pointer: tile 0, no accept flag, end of list, its arc
          0 (empty) or an ordinary node; every other arc is < the node count and not a reserved node.
        - For every node reachable from the roots (through arcs and next siblings): tile <= 63 (uint64 letter
          sets); a node without end flag has a next node with a strictly greater tile (sorted, terminated
          lists: seek's early exit, the move generator's popcount child index); arc 0 only on a node that
          accepts (no dead ends, so walks do work proportional to the words); no cycles (the graph is a DAG:
          counts, words() and every depth-first walk terminate).
        - Strings from the DAWG root have at most MAX_WORD_LEN tiles, from the GADDAG root one more (the
          separator): the fixed buffers of words(), the word map and the move generator's strips.
        - At most 2^22 DAWG words and 2^30 strings below any node (uint32 counts; bounded memory and time
          for the word map); the GADDAG holds exactly as many strings as the DAWG's words have letters, and
          it accepts every string a GADDAG built from the DAWG's words holds (so exactly those: _check_gaddag).
        - "gaddag": tile 0 never in the DAWG nor first in the GADDAG; a separator does not accept, has a
          continuation, and at most one is on any path; no one-letter words (root lists do not accept).
          "leaves": tiles ascend along every path."""
        cdef cnp.ndarray arr = array
        cdef const uint32_t* nodes = <const uint32_t*> cnp.PyArray_DATA(arr)
        cdef uint32_t n = <uint32_t> arr.shape[0]
        cdef uint32_t first = 2 if kind == KIND_GADDAG else 1
        cdef uint32_t droot, groot = 0, i, p
        cdef cnp.ndarray cnt_arr = np.empty(n, dtype=np.uint32)
        cdef cnp.ndarray reach_arr = np.empty(n, dtype=np.uint8)
        cdef uint32_t* cnt = <uint32_t*> cnp.PyArray_DATA(cnt_arr)
        cdef uint8_t* reach = <uint8_t*> cnp.PyArray_DATA(reach_arr)
        cdef VInfo* info = NULL
        cdef uint32_t* stack = NULL
        cdef VErr err
        cdef int rc = E_OK
        cdef uint8_t dstate = 0, dheight = 0
        cdef uint32_t letters = 0, gcount = 0, top
        cdef uint8_t gbuf[G_BUF]
        cdef cnp.ndarray masks_arr = None
        cdef uint64_t* masks = NULL
        cdef int glen = 0, gplen = 0
        for i in range(first):
            if n <= i or (nodes[i] & 0xFFC00000) != KWG_IS_END:
                raise LexiconFormatError(f"KWG node {i} is not a root pointer (tile 0, no accept flag, "
                                         f"end of list)")
        droot = nodes[0] & KWG_ARC_MASK
        if kind == KIND_GADDAG:
            groot = nodes[1] & KWG_ARC_MASK
        for i in range(first):
            if (nodes[i] & KWG_ARC_MASK) >= n:
                raise LexiconFormatError(f"KWG node {i}: arc {nodes[i] & KWG_ARC_MASK} points past the end "
                                         f"({n} nodes)")
            if 0 < (nodes[i] & KWG_ARC_MASK) < first:
                raise LexiconFormatError(f"KWG node {i}: arc {nodes[i] & KWG_ARC_MASK} points at a reserved "
                                         f"root node")
        info = <VInfo*> calloc(n, sizeof(VInfo))
        stack = <uint32_t*> malloc((2 * <size_t> n + 2) * sizeof(uint32_t))
        if info == NULL or stack == NULL:
            free(info)
            free(stack)
            raise MemoryError()
        err.code = E_OK
        with nogil:
            # pre-passes in array order, then the depth-first walk for whatever they left (and the errors)
            if n > first and _sweep(nodes, n, first, kind, info, True) < (n - first) // 2:
                _sweep(nodes, n, first, kind, info, False)
            rc = _walk_from(nodes, n, first, droot, kind, info, stack, &err)
            if rc == E_OK:
                rc = _walk_from(nodes, n, first, groot, kind, info, stack, &err)
            if rc == E_OK:
                dstate = info[droot].state
                dheight = info[droot].height
                letters = info[droot].lsum
                gcount = info[groot].cnt
                # the list starts the public methods accept: every node reachable from the roots, and any
                # other one whose sub-graph passed (no bigger than a root's)
                top = info[droot].cnt if info[droot].cnt > gcount else gcount
                for i in range(n):
                    cnt[i] = info[i].cnt
                    reach[i] = (info[i].state & ST_BLACK) != 0 and info[i].cnt <= top
        free(info)
        free(stack)
        if rc != E_OK:
            raise LexiconFormatError(_message(&err))
        if dheight > MAX_WORD_LEN:
            raise LexiconFormatError(f"KWG DAWG holds a string of {dheight} tiles (at most {MAX_WORD_LEN})")
        if droot != 0 and cnt[droot] > _MAX_WORDS:
            raise LexiconFormatError(f"KWG DAWG holds {cnt[droot]} words (at most {_MAX_WORDS})")
        if kind == KIND_GADDAG:
            if dstate & ST_ZERO:
                raise LexiconFormatError("KWG DAWG holds tile 0 (the GADDAG separator)")
            # one-letter words: no play can form one, and the move generator would offer them as plays
            for i in range(2):
                p = droot if i == 0 else groot
                while p != 0:
                    if nodes[p] & KWG_ACCEPTS:
                        raise LexiconFormatError(f"KWG node {p}: a one-letter word in the "
                                                 f"{'DAWG' if i == 0 else 'GADDAG'} (words have 2+ letters)")
                    p = 0 if nodes[p] & KWG_IS_END else p + 1
            if groot != 0 and (nodes[groot] >> 24) == 0:
                raise LexiconFormatError(f"KWG GADDAG root list (node {groot}) starts with a separator")
            if gcount != letters:
                raise LexiconFormatError(f"KWG GADDAG holds {gcount} strings but the DAWG's words have "
                                         f"{letters} letters (one GADDAG string per letter)")
            if groot != 0:
                masks_arr = np.zeros(n + 1, dtype=np.uint64)
                masks = <uint64_t*> cnp.PyArray_DATA(masks_arr)
                with nogil:
                    _fill_child_masks(nodes, n, reach, masks)
                    rc = _check_gaddag(nodes, n, droot, groot, masks, gbuf, &glen, &gplen)
                if rc == G_MEMORY:
                    raise MemoryError()
                if rc != G_OK:
                    raise LexiconFormatError(_gaddag_message(rc, gbuf, glen, gplen))
        cnt_arr.flags.writeable = False
        reach_arr.flags.writeable = False
        self._reach = reach_arr
        self.reach = <const uint8_t*> reach
        self._counts = cnt_arr
        self.counts = <const uint32_t*> cnt
        self.dawg_root = droot
        self.gaddag_root = groot
        if masks_arr is not None:
            # the move generator's child masks (ensure_child_masks) come with the load
            self._child_masks = masks_arr
            self.child_masks = masks
        return 0

    @classmethod
    def from_file(cls, path, kind="auto"):
        with open(path, "rb") as fh:
            data = fh.read(4 * (KWG_ARC_MASK + 1) + 1)
        return cls(data, kind)

    def to_bytes(self):
        return self.array.astype("<u4").tobytes()

    cdef int check_list(self, uint32_t p) except -1:
        """Raise IndexError unless p is 0 (no list) or a node the validator passed as a list start."""
        if p != 0 and (p >= self.n_nodes or not self.reach[p]):
            raise IndexError(f"node {p} is not in a sibling list of this graph ({self.n_nodes} nodes)")
        return 0

    def node(self, uint32_t i):
        """(tile, accepts, is_end, arc) of node i, for tests and tools."""
        if i >= self.n_nodes:
            raise IndexError(i)
        return (kwg_tile(self.nodes, i), kwg_accepts(self.nodes, i), kwg_is_end(self.nodes, i),
                kwg_arc(self.nodes, i))

    cdef bint contains_ml(self, const unsigned char* word, int n) noexcept nogil:
        cdef uint32_t p = self.dawg_root
        cdef uint32_t last = 0
        cdef int i
        if n == 0:
            return False
        for i in range(n):
            if p == 0:
                return False
            last = kwg_seek(self.nodes, p, word[i])
            if last == 0:
                return False
            p = kwg_arc(self.nodes, last)
        return kwg_accepts(self.nodes, last)

    def contains(self, const unsigned char[:] word):
        """True when the machine-letter word is in the DAWG."""
        if word.shape[0] == 0:
            return False
        return self.contains_ml(&word[0], <int> word.shape[0])

    def accepts_path(self, uint32_t root, const unsigned char[:] seq):
        """True when the tile sequence is accepted starting from the list at root (e.g. the GADDAG root)."""
        cdef uint32_t p = root, last = 0
        cdef Py_ssize_t i
        self.check_list(root)
        if seq.shape[0] == 0:
            return False
        for i in range(seq.shape[0]):
            if p == 0:
                return False
            last = kwg_seek(self.nodes, p, seq[i])
            if last == 0:
                return False
            p = kwg_arc(self.nodes, last)
        return kwg_accepts(self.nodes, last)

    def letter_set(self, uint32_t p):
        self.check_list(p)
        return kwg_letter_set(self.nodes, p)

    def seek(self, uint32_t p, uint32_t t):
        self.check_list(p)
        return kwg_seek(self.nodes, p, t)

    cdef void ensure_counts(self) except *:
        """count[p] = words in the suffix of the sibling list starting at p (reference §2.4). The validator
        computes them at load; an instance that was never initialised gets an empty table."""
        if self._counts is None:
            self._counts = np.zeros(max(self.n_nodes, 1), dtype=np.uint32)
            self.counts = <const uint32_t*> cnp.PyArray_DATA(self._counts)

    cdef void ensure_child_masks(self) except *:
        """mask[p] = bit t for every tile t in the sibling list from node p to its end. The move generator
        finds a child in O(1): p + popcount(mask[p] & ((1 << t) - 1)), instead of scanning the list.
        Only reachable nodes get a mask (others, which no walk visits, stay 0)."""
        cdef cnp.ndarray arr
        cdef uint64_t* m
        if self._child_masks is not None:
            return
        arr = np.zeros(self.n_nodes + 1, dtype=np.uint64)
        m = <uint64_t*> cnp.PyArray_DATA(arr)
        with nogil:
            _fill_child_masks(self.nodes, self.n_nodes, self.reach, m)
        self._child_masks = arr
        self.child_masks = m

    cdef bint ensure_mnodes(self) except *:
        """The move generator's copy of the GADDAG: each node and the tiles of its sibling-list suffix in one
        uint64 (node | mask << 32), so a child lookup (mask, then the child's node a few entries on) reads one
        cache line where the separate arrays take two; and the lists reachable from the GADDAG root laid out
        breadth first (_relayout), from mnodes_root = 1, so that the hot lists near the root share cache
        lines and a list's children lie side by side. Arcs in mnodes are indices into mnodes. Only when every
        tile is below 32 and the lists fit 22-bit arcs (returns False otherwise, and mnodes stays NULL)."""
        cdef cnp.ndarray pos, queue
        cdef uint64_t* m
        cdef uint32_t i
        cdef int64_t used
        if self.mnodes != NULL:
            return True
        self.ensure_child_masks()
        for i in range(self.n_nodes):
            if self.child_masks[i] >> 32:
                return False
        if self.gaddag_root == 0:
            return False
        pos = np.zeros(self.n_nodes + 1, dtype=np.uint32)
        queue = np.zeros(self.n_nodes + 1, dtype=np.uint32)
        with nogil:
            used = _relayout(self.nodes, self.child_masks, self.gaddag_root, <uint32_t*> cnp.PyArray_DATA(pos),
                             <uint32_t*> cnp.PyArray_DATA(queue), NULL)
        if used < 0:
            return False
        # huge pages where the system has them (the generator's reads are random over the whole graph)
        m = <uint64_t*> macondo_huge_alloc((used + 1) * sizeof(uint64_t), &self.mnodes_base, &self.mnodes_len)
        if m == NULL:
            raise MemoryError()
        pos[:] = 0
        with nogil:
            _relayout(self.nodes, self.child_masks, self.gaddag_root, <uint32_t*> cnp.PyArray_DATA(pos),
                      <uint32_t*> cnp.PyArray_DATA(queue), m)
        self.mnodes = m
        self.mnodes_root = 1
        return True

    def word_map(self):
        """The words of 7+ letters by letter multiset (built on first use, then shared)."""
        from engine_cy.wordmap import WordMap
        if self._word_map is None:
            self._word_map = WordMap(self)
        return self._word_map

    def word_count(self, uint32_t root=0xFFFFFFFF):
        """Number of strings accepted from a root list (default: the DAWG root)."""
        if root == 0xFFFFFFFF:
            root = self.dawg_root
        self.check_list(root)
        if root == 0:
            return 0
        return int(self.counts[root])

    cdef int64_t index_of_ml(self, const unsigned char* word, int n) noexcept nogil:
        """Rank of the word in machine-letter lexicographic order, or -1 (counts must exist)."""
        cdef uint32_t p = self.dawg_root
        cdef int64_t idx = 0
        cdef int i
        if n == 0:
            return -1
        for i in range(n):
            if p == 0:
                return -1
            idx += self.counts[p]
            while kwg_tile(self.nodes, p) != word[i]:
                if kwg_is_end(self.nodes, p):
                    return -1
                p += 1
            idx -= self.counts[p]
            if i == n - 1:
                return idx if kwg_accepts(self.nodes, p) else -1
            if kwg_accepts(self.nodes, p):
                idx += 1
            p = kwg_arc(self.nodes, p)
        return -1

    def index_of(self, const unsigned char[:] word):
        self.ensure_counts()
        if word.shape[0] == 0:
            return -1
        return self.index_of_ml(&word[0], <int> word.shape[0])

    def words(self, uint32_t root=0xFFFFFFFF):
        """Every accepted string from root (default DAWG), as bytes of machine letters, in order."""
        cdef list out = []
        cdef uint32_t p
        cdef uint32_t stack_p[64]
        cdef unsigned char buf[64]
        cdef int depth
        if root == 0xFFFFFFFF:
            root = self.dawg_root
        self.check_list(root)
        if root == 0:
            return out
        # iterative DFS: stack_p[d] = current node index in the list at depth d (the validator bounds the
        # depth by MAX_WORD_LEN + 1 < 64)
        depth = 0
        stack_p[0] = root
        while depth >= 0:
            p = stack_p[depth]
            buf[depth] = <unsigned char> kwg_tile(self.nodes, p)
            if kwg_accepts(self.nodes, p):
                out.append(bytes(buf[:depth + 1]))
            depth = kwg_dfs_next(self.nodes, stack_p, depth, 62)
        return out


# ---------------------------------------------------------------- builder

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


cdef Py_ssize_t _sort_unique(uint8_t* recs, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, w = 0
    if n == 0:
        return 0
    qsort(recs, n, REC, _rec_cmp)
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
