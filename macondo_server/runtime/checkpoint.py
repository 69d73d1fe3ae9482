"""Checkpoints of long pre-endgame solves: every finished (play, draw group) verdict recorded in SQLite under a
key that names the position and everything that changes a verdict, so that `--resume` (or the request's
resume field) continues a killed or stopped solve without solving those again.

One file holds any number of solves (one key each). Writes go in batches from the thread that runs the solve;
SQLite's write-ahead log keeps a file readable by another process while it is written."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

SCHEMA_VERSION = 1
# bump when the solver's verdicts change meaning (a new search, leaf or opponent model), so that old
# checkpoints are never reused for them
SOLVER_VERSION = 1


class CheckpointError(ValueError):
    """The checkpoint file cannot be used (one line, naming the file)."""


def solve_key(parts: Mapping[str, object]) -> str:
    """The key of a solve: SHA-256 of its identifying parts (canonical JSON)."""
    text = json.dumps(dict(parts, solver_version=SOLVER_VERSION), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class CheckpointStore:
    """Finished items of pre-endgame solves: (key, phase, play, draw) -> (outcome, spread)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        self.path = p
        if p.is_dir():
            raise CheckpointError(f"checkpoint {p} is a directory (name a file, e.g. {p / 'peg.sqlite'})")
        if not p.parent.is_dir():
            raise CheckpointError(f"checkpoint {p}: folder {p.parent} does not exist")
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(p), timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            row = self._db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                raise CheckpointError(f"checkpoint {p} has schema {row[0]!r}, this version reads {SCHEMA_VERSION}")
            self._db.execute("CREATE TABLE IF NOT EXISTS solves (key TEXT PRIMARY KEY, description TEXT, "
                             "created REAL, updated REAL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS items (key TEXT, phase TEXT, play TEXT, draw TEXT, "
                             "outcome INTEGER, spread INTEGER, PRIMARY KEY (key, phase, play, draw))")
        except sqlite3.DatabaseError as exc:
            raise CheckpointError(f"checkpoint {p} is not a usable SQLite file: {exc}") from None

    def begin(self, key: str, description: str, resume: bool) -> dict[tuple[str, str, str], tuple[int, int | None]]:
        """Open solve `key`: with resume, its finished items so far; without, it starts empty (earlier items
        of the same key are dropped)."""
        with self._lock:
            try:
                now = time.time()
                if not resume:
                    self._db.execute("DELETE FROM items WHERE key=?", (key,))
                self._db.execute("INSERT INTO solves VALUES (?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                                 "updated=excluded.updated", (key, description[:500], now, now))
                if not resume:
                    return {}
                rows = self._db.execute("SELECT phase, play, draw, outcome, spread FROM items WHERE key=?",
                                        (key,)).fetchall()
            except sqlite3.DatabaseError as exc:
                raise CheckpointError(f"checkpoint {self.path}: {exc}") from None
        out: dict[tuple[str, str, str], tuple[int, int | None]] = {}
        for phase, play, draw, outcome, spread in rows:
            # an outcome (0 to 3) with the solver's flag bit (4: the nesting cap took part in the verdict)
            if isinstance(outcome, int) and 0 <= outcome <= 7:
                out[(str(phase), str(play), str(draw))] = (outcome, spread if isinstance(spread, int) else None)
        return out

    def put(self, key: str, rows: list[tuple[str, str, str, int, int | None]]) -> None:
        """Record finished items (phase, play, draw, outcome, spread)."""
        if not rows:
            return
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO items VALUES (?, ?, ?, ?, ?, ?)",
                                     [(key, *r) for r in rows])
                self._db.execute("UPDATE solves SET updated=? WHERE key=?", (time.time(), key))
                self._db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                try:
                    self._db.execute("ROLLBACK")
                except sqlite3.DatabaseError:
                    pass
                raise CheckpointError(f"checkpoint {self.path}: {exc}") from None

    def count(self, key: str, phase: str | None = None) -> int:
        with self._lock:
            n: int
            if phase is None:
                n = self._db.execute("SELECT COUNT(*) FROM items WHERE key=?", (key,)).fetchone()[0]
            else:
                n = self._db.execute("SELECT COUNT(*) FROM items WHERE key=? AND phase=?", (key, phase)).fetchone()[0]
            return n

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            except sqlite3.DatabaseError:
                pass
