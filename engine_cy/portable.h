/* Portable bit tricks for the Cython core: one name per operation, whatever the compiler.
 *
 *   macondo_popcount64(x)  number of set bits in a 64-bit word
 *   macondo_ctz64(x)       index of the lowest set bit (x must not be 0, as with __builtin_ctzll)
 *   macondo_prefetch(p)    hint that *p is read soon (no effect where the compiler has no hint)
 *   macondo_now()          a monotonic clock in seconds (QueryPerformanceCounter on Windows,
 *                          clock_gettime(CLOCK_MONOTONIC) elsewhere)
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
