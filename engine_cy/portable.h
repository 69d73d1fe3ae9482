/* Portable bit tricks for the Cython core: one name per operation, whatever the compiler.
 *
 *   macondo_popcount64(x)  number of set bits in a 64-bit word
 *   macondo_ctz64(x)       index of the lowest set bit (x must not be 0, as with __builtin_ctzll)
 *   macondo_prefetch(p)    hint that *p is read soon (no effect where the compiler has no hint)
 *   macondo_now()          a monotonic clock in seconds (QueryPerformanceCounter on Windows,
 *                          clock_gettime(CLOCK_MONOTONIC) elsewhere)
 *   macondo_huge_alloc()   zeroed memory for large random-access tables (huge pages where Linux has them)
 *   macondo_huge_free()
 *   macondo_prefault()     fault a range of such a table in at once, before it is first used
 *   macondo_try_lock()     take a flag from 0 to 1 atomically (1 if taken), macondo_unlock() back to 0
 *                          (MACONDO_ATOMIC_LOCK: 1 where that is truly atomic)
 *
 * GCC and Clang (Linux, macOS, MinGW) use their builtins; MSVC its intrinsics (x64: POPCNT, BSF and
 * _mm_prefetch; ARM64: the ARM intrinsics); anything else a plain C fallback.
 * Used with `cdef extern from "portable.h"` in kwg.pyx, movegen.pyx and endgame.pyx.
 */
#ifndef MACONDO_PORTABLE_H
#define MACONDO_PORTABLE_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)

static inline int macondo_popcount64(uint64_t x) { return __builtin_popcountll(x); }
static inline int macondo_ctz64(uint64_t x) { return __builtin_ctzll(x); }
#define macondo_prefetch(p) __builtin_prefetch((const void *)(p))

#elif defined(_MSC_VER)

#include <intrin.h>
#if defined(_M_X64) || defined(_M_AMD64)
#include <xmmintrin.h>
static __forceinline int macondo_popcount64(uint64_t x) { return (int)__popcnt64(x); }
#define macondo_prefetch(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#elif defined(_M_ARM64)
static __forceinline int macondo_popcount64(uint64_t x) { return (int)_CountOneBits64(x); }
#define macondo_prefetch(p) __prefetch((const void *)(p))
#else
static __forceinline int macondo_popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}
static __forceinline int macondo_ctz64(uint64_t x) {
    int n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
}
#define macondo_prefetch(p) ((void)(p))
#endif
#if defined(_M_X64) || defined(_M_AMD64) || defined(_M_ARM64)
static __forceinline int macondo_ctz64(uint64_t x) {
    unsigned long index;
    _BitScanForward64(&index, x);
    return (int)index;
}
#endif

#else /* any other C99 compiler */

static inline int macondo_popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}
static inline int macondo_ctz64(uint64_t x) {
    int n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
}
#define macondo_prefetch(p) ((void)(p))

#endif

/* macondo_try_lock(&flag): set an int flag from 0 to 1 atomically; 1 if this call did, 0 if it was already
 * 1. macondo_unlock(&flag) sets it back to 0 (a full barrier before, so writes made under the flag are seen
 * first). Users: the transposition table's growth, and the pre-endgame's nested-verdict cache that a job's
 * threads share. A compiler with neither builtin nor intrinsic uses C11 atomics; one without those gets plain
 * reads and writes, and a job then runs its pre-endgame threads without sharing that cache
 * (MACONDO_ATOMIC_LOCK is 0). */
#if defined(__GNUC__) || defined(__clang__)
static inline int macondo_try_lock(volatile int *flag) { return __sync_bool_compare_and_swap(flag, 0, 1); }
static inline void macondo_unlock(volatile int *flag) { __sync_synchronize(); *flag = 0; }
#elif defined(_MSC_VER)
static __forceinline int macondo_try_lock(volatile int *flag) {
    return _InterlockedCompareExchange((volatile long *)flag, 1, 0) == 0;
}
static __forceinline void macondo_unlock(volatile int *flag) { _InterlockedExchange((volatile long *)flag, 0); }
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
static inline int macondo_try_lock(volatile int *flag) {
    int expected = 0;
    return atomic_compare_exchange_strong((volatile _Atomic int *)flag, &expected, 1);
}
static inline void macondo_unlock(volatile int *flag) { atomic_store((volatile _Atomic int *)flag, 0); }
#else
#define MACONDO_ATOMIC_LOCK 0
static inline int macondo_try_lock(volatile int *flag) {
    if (*flag) return 0;
    *flag = 1;
    return 1;
}
static inline void macondo_unlock(volatile int *flag) { *flag = 0; }
#endif
#ifndef MACONDO_ATOMIC_LOCK
#define MACONDO_ATOMIC_LOCK 1
#endif

/* macondo_huge_alloc(n, &base, &len): n zeroed bytes for a large table read at random (a transposition
 * table, the move generator's word graph). On Linux, a block of 2 MB or more is mapped on its own, aligned
 * to 2 MB and marked MADV_HUGEPAGE, so that the kernel may back it with huge pages: fewer TLB misses on
 * every random read, and one page fault per 2 MB instead of per 4 KB when it is first touched. Elsewhere,
 * or when the mapping fails, calloc. Release with macondo_huge_free(base, len); NULL when out of memory. */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
static inline void *macondo_huge_alloc(size_t n, void **base, size_t *len) {
    void *p;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (n >= huge) {
        size_t size = (n + huge - 1) & ~(huge - 1);
        size_t total = size + huge;
        void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            uintptr_t a = ((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1);
            madvise((void *)a, size, MADV_HUGEPAGE);   /* a hint: without it the block still works */
            *base = m;
            *len = total;
            return (void *)a;
        }
    }
#endif
    p = calloc(1, n ? n : 1);
    *base = p;
    *len = 0;
    return p;
}

static inline void macondo_huge_free(void *base, size_t len) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (len != 0) {
        munmap(base, len);
        return;
    }
#endif
    free(base);
}

/* macondo_prefault(p, n): fault in the n bytes at p (page-aligned, inside a macondo_huge_alloc block) with
 * one call, before they are first written: Linux's MADV_POPULATE_WRITE (5.14 and later) zeroes the pages in
 * bulk, about four times faster here than as many first-touch faults. Elsewhere, or when the call fails (an
 * older kernel, a calloc block), nothing: the pages are then faulted in as they are touched. */
static inline void macondo_prefault(void *p, size_t n) {
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    (void)madvise(p, n, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

/* macondo_now(): a monotonic clock in seconds (search deadlines) */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
static inline double macondo_now(void) {
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}
#else
#include <time.h>
static inline double macondo_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif

#endif /* MACONDO_PORTABLE_H */
