# xoshiro256** seeded with splitmix64: the engine's only random source (never Python's random).
from libc.stdint cimport uint64_t

cdef struct Rng:
    uint64_t s[4]

cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))

cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    cdef uint64_t z
    state[0] += 0x9E3779B97F4A7C15ULL
    z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    cdef uint64_t st = seed
    r.s[0] = splitmix64(&st)
    r.s[1] = splitmix64(&st)
    r.s[2] = splitmix64(&st)
    r.s[3] = splitmix64(&st)

cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    cdef uint64_t result = _rotl(r.s[1] * 5, 7) * 9
    cdef uint64_t t = r.s[1] << 17
    r.s[2] ^= r.s[0]
    r.s[3] ^= r.s[1]
    r.s[1] ^= r.s[2]
    r.s[0] ^= r.s[3]
    r.s[2] ^= t
    r.s[3] = _rotl(r.s[3], 45)
    return result

cdef inline uint64_t rng_below(Rng* r, uint64_t n) noexcept nogil:
    """Uniform integer in [0, n), unbiased (rejects the short top range)."""
    cdef uint64_t x = rng_next(r)
    cdef uint64_t threshold = (<uint64_t> 0 - n) % n
    while x < threshold:
        x = rng_next(r)
    return x % n
