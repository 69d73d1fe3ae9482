"""Independent slow references used by the tests (pure Python, no engine code)."""

from __future__ import annotations


def enc(word: str) -> bytes:
    return bytes(ord(c) - 64 for c in word)


def dec(data: bytes) -> str:
    return "".join("@" if b == 0 else chr(b + 64) for b in data)


def gaddag_strings(word: bytes) -> set[bytes]:
    """reverse(w), and reverse(w[:k]) + sep + w[k:] for k = 1..n-1 (reference §2.3)."""
    n = len(word)
    out = {word[::-1]}
    for k in range(1, n):
        out.add(word[:k][::-1] + b"\x00" + word[k:])
    return out
