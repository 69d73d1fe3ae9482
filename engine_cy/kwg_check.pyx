# The load-time check of a KWG (untrusted bytes), so that every walk in the engine can run without checks.
#
# check_kwg validates the whole graph once: linear sweeps in array order, then an iterative depth-first walk
# from the roots for the rest, O(nodes), no recursion; see the list of rules in its docstring. Bytes that
# break a rule raise LexiconFormatError (a ValueError) naming the node. Then, for a DAWG + GADDAG file,
# _check_gaddag proves that the GADDAG holds exactly the strings a GADDAG built from the DAWG's words would
# (for each word, its reversal and every reversed prefix + separator + the rest), so the move generator
# cannot offer a word the DAWG lacks.
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, free, calloc
from libc.string cimport memset, memcpy

from engine_cy.common cimport MAX_ALPHABET, MAX_WORD_LEN
from engine_cy.kwg_node cimport (KWG_ACCEPTS, KWG_IS_END, KWG_ARC_MASK, kwg_dfs_next,
                                 kwg_fill_child_masks)

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from "portable.h":
    int popcount64 "macondo_popcount64"(uint64_t) nogil
    void prefetch "macondo_prefetch"(const void*) nogil

# Limits the check enforces.
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
# words have letters), _check_gaddag proves that the GADDAG accepts every string a GADDAG builder (such as
# kwg_build.build_kwg) makes from the DAWG's words: for each word w = c1..cn, rev(c1..cn) and
# rev(c1..ck) + [0] + c(k+1)..cn for k = 1..n-1. Sorted lists with strictly ascending tiles make both graphs
# deterministic, so the GADDAG's count is its number of distinct strings; "same count + every expected string
# accepted" is equality.
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
    reversal (and a separator, when there is more). masks: kwg_fill_child_masks of the validated nodes."""
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


cdef tuple check_kwg(object array, int kind):
    """Check the whole graph (rules below) of a KWG held in array (numpy uint32, read-only) of the given kind
    (KIND_*). Returns (dawg_root, gaddag_root, counts, reach, child_masks): the word counts below each node
    (numpy uint32), the map of valid list starts (numpy uint8) and, for a graph with a GADDAG, the child
    masks (numpy uint64, see kwg_fill_child_masks; None otherwise); counts and reach are read-only. Raises
    LexiconFormatError naming the first broken rule.

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
                kwg_fill_child_masks(nodes, n, reach, masks)
                rc = _check_gaddag(nodes, n, droot, groot, masks, gbuf, &glen, &gplen)
            if rc == G_MEMORY:
                raise MemoryError()
            if rc != G_OK:
                raise LexiconFormatError(_gaddag_message(rc, gbuf, glen, gplen))
    cnt_arr.flags.writeable = False
    reach_arr.flags.writeable = False
    return droot, groot, cnt_arr, reach_arr, masks_arr
