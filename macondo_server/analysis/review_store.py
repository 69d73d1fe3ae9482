"""Stored game reviews: each game's analysis kept in a folder under a key of everything that decides it, so that
a second run over the same games analyses only those not stored yet (`macondo analyze --store DIR`, the
server's `serve --review-store DIR`).

The key is the SHA-256 of:
- the record as parsed and written back (line endings, blank lines, spacing and encoding do not matter) with
  its notes left out (they do not take part in the analysis);
- the lexicon it is analysed with: its name, a fingerprint of its files (word graph or word list, leaves,
  distribution), its letter distribution and its win-probability table;
- the review settings (AnalyzeOptions: player, budgets, time caps, seed, lexicon and distribution asked for;
  not the threads or table memory, which the analysis does not depend on);
- the engine's version.

One JSON file per game, `KEY.json`, written atomically; a file that cannot be read back is analysed again and
replaced. An analysis a stop cut short is not stored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from macondo_server import __version__
from macondo_server.analysis.review import (
    AnalyzeOptions,
    Candidate,
    GameAnalysis,
    PlayerSummary,
    ProgressFn,
    TurnAnalysis,
    analyze_record,
    lexicon_of,
)
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import Lexicon
from macondo_server.model.gcg import GcgGame, write_gcg
from macondo_server.runtime.cluster import lexicon_fingerprint

STORE_FORMAT = 1
# resources, not settings: the same seed gives the same analysis with any of them
_NOT_IN_KEY = ("threads", "tt_megabytes")


class ReviewStoreError(ValueError):
    """The store's folder cannot be used (one line)."""


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def normalised_gcg(record: GcgGame) -> str:
    """The record written back in the one GCG form, without its notes."""
    bare = GcgGame(players=list(record.players), pragmas=list(record.pragmas),
                   events=[dataclasses.replace(ev, note="") for ev in record.events])
    return write_gcg(bare)


def review_key(engine: Engine, record: GcgGame, opts: AnalyzeOptions, lex: Lexicon | None = None) -> str:
    """The store key of `record` analysed with `opts` (lex: the lexicon lexicon_of gives, when known)."""
    if lex is None:
        lex, _ = lexicon_of(engine, record, opts.lexicon, opts.distribution)
    settings = {k: v for k, v in dataclasses.asdict(opts).items() if k not in _NOT_IN_KEY}
    parts = {
        "format": STORE_FORMAT,
        "version": __version__,
        "gcg": normalised_gcg(record),
        "lexicon": lex.name,
        "lexicon_files": lexicon_fingerprint(engine, lex.name),
        "distribution": lex.ld.table(),
        "winpct": _file_sha(Path(lex.winpct)),
        "settings": settings,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


# ------------------------------------------------------------------ a GameAnalysis as JSON and back


def analysis_to_dict(res: GameAnalysis) -> dict[str, Any]:
    return dataclasses.asdict(res)


def analysis_from_dict(d: dict[str, Any]) -> GameAnalysis:
    """The GameAnalysis analysis_to_dict wrote (KeyError, TypeError or ValueError when it is not one)."""
    def candidate(c: dict[str, Any]) -> Candidate:
        return Candidate(**c)

    turns = []
    for t in d["turns"]:
        t = dict(t)
        t["played"] = candidate(t["played"])
        t["best"] = candidate(t["best"]) if t["best"] is not None else None
        turns.append(TurnAnalysis(**t))
    return GameAnalysis(
        name=d["name"], lexicon=d["lexicon"], players=[(str(n), str(r)) for n, r in d["players"]], turns=turns,
        summaries=[PlayerSummary(**s) for s in d["summaries"]], turns_total=d["turns_total"], stopped=d["stopped"],
        warnings=list(d["warnings"]), options=AnalyzeOptions(**d["options"]), seconds=d["seconds"],
        reused=d.get("reused", False))


class ReviewStore:
    """A folder of stored game analyses, one JSON file per key. Safe for threads and for several processes
    (each file is written whole under a temporary name, then renamed)."""

    def __init__(self, folder: str | Path, create: bool = False) -> None:
        self.folder = Path(folder)
        if create and not self.folder.exists():
            try:
                self.folder.mkdir(parents=True)
            except OSError as exc:
                raise ReviewStoreError(f"review store {self.folder}: cannot be created "
                                       f"({exc.strerror or type(exc).__name__})") from None
        if not self.folder.is_dir():
            raise ReviewStoreError(f"review store {self.folder} is not a folder")
        if not os.access(self.folder, os.W_OK | os.X_OK):
            raise ReviewStoreError(f"review store {self.folder} is not writable")
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> GameAnalysis | None:
        p = self.path(key)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            if data.get("format") != STORE_FORMAT or data.get("key") != key:
                return None
            return analysis_from_dict(data["analysis"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, res: GameAnalysis) -> None:
        data = {"format": STORE_FORMAT, "key": key, "version": __version__, "analysis": analysis_to_dict(res)}
        text = json.dumps(data, sort_keys=True)
        with self._lock:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, self.path(key))
            except OSError as exc:
                Path(tmp).unlink(missing_ok=True)
                raise ReviewStoreError(f"review store {self.folder}: cannot write "
                                       f"({exc.strerror or type(exc).__name__})") from None

    def __len__(self) -> int:
        return sum(1 for p in self.folder.glob("*.json") if not p.name.startswith("."))


def reviewed(engine: Engine, record: GcgGame, opts: AnalyzeOptions, store: ReviewStore | None, name: str = "",
             progress: ProgressFn | None = None, stop: threading.Event | None = None,
             on_store_error: Callable[[str], None] | None = None) -> GameAnalysis:
    """The analysis of `record`: from the store when it holds the game's key (marked reused, with this run's
    name, options and line numbers), else analysed (analyze_record) and stored unless a stop cut it short. A
    store that cannot be written raises ReviewStoreError, or is reported to `on_store_error` when given (the
    analysis is returned all the same)."""
    if store is None:
        return analyze_record(engine, record, opts, name=name, progress=progress, stop=stop)
    opts.validate()
    lex, _ = lexicon_of(engine, record, opts.lexicon, opts.distribution)
    key = review_key(engine, record, opts, lex)
    found = store.get(key)
    if found is not None:
        found.name, found.options, found.reused = name, opts, True
        for t in found.turns:
            if 0 < t.event <= len(record.events):
                t.line = record.events[t.event - 1].line
        if progress is not None:
            progress(len(found.turns), found.turns_total, None)
        return found
    res = analyze_record(engine, record, opts, name=name, progress=progress, stop=stop)
    if not res.stopped:
        try:
            store.put(key, res)
        except ReviewStoreError as exc:
            if on_store_error is None:
                raise
            on_store_error(str(exc))
    return res
