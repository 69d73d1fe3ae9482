"""Leave training by self-play (`macondo leaves train`).

Method (MAGPIE's leavegen idea, implemented anew; see README "Leave training"):

* A run has rounds. Round r plays `games` static-bot self-play games with the values of round r-1 (round 0:
  all zero, or a starting KLV2). Every turn whose mover holds a full rack while the bag can refill one
  records the rack and the equity of its best play (score + current leave value). A share of turns also
  evaluates a "forced" rack: a leave that was rare in the previous round, completed by random tiles.
* Refit: each distinct rack R keeps the mean of its recorded equities. The value of a leave L (1 to 6 tiles)
  is the mean over the observed racks containing L, each weighted by the number of ways to draw R - L from
  the distribution less L, less the mean over all observed racks (weighted by their number of draws): what
  keeping L is worth on the next turn compared with a fresh rack.
* Rare leaves are shrunk toward a fit from their sub-leaves: v(L) = (n raw + k prior) / (n + k), with n the
  number of recorded racks containing L, k the prior strength, and prior(L) the mean over the tiles t of L of
  v(L - t) + v(t) (sizes are fitted in increasing order). A leave never seen takes its prior.
* With pool P > 1 the refit uses the racks recorded in the latest P rounds (more data, values a little
  older).
* Each round writes round-NNN.klv2, its CSV, a counts file and state.json (written last); --resume continues
  after the last finished round. Game g of round r draws from a seed of (seed, r, g) only, so a run is the
  same for any number of worker processes, in-process or on a Dask cluster (--cluster: each round's games go
  out as tasks carrying the lexicon's name and fingerprint, the round's values as scattered bytes, and never a
  path; see macondo_server/runtime/cluster.py), and a run may be resumed on either.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from engine_cy.board import STANDARD15, Board
from macondo_server.model.tiles import get_distribution
from macondo_server.runtime.cluster import (
    Cluster,
    ClusterError,
    cancel_quietly,
    import_distributed,
    new_run_id,
    one_line,
    run_stopped,
    stop_quietly,
    worker_lexicon,
)

if TYPE_CHECKING:
    from engine_cy.alphabet import LetterDistribution
    from engine_cy.klv import Klv
    from engine_cy.leavegen import LeaveGenWorker
    from macondo_server.engine.lexicon import Lexicon

RACK_SIZE = 7
MAX_LEAVE = RACK_SIZE - 1
STATE_FILE = "state.json"
STATE_VERSION = 1
MAX_GAMES_PER_ROUND = 100_000_000
MAX_ROUNDS = 10_000
MAX_WORKERS = 256
CHUNK_GAMES = 100


class TrainError(ValueError):
    """Bad training options or an unusable output folder / state (one-line message)."""


@dataclass
class TrainOptions:
    lexicon: str
    games: int = 20_000            # games per round
    rounds: int = 6
    seed: int = 0
    forced: float = 0.25           # forced rare-rack evaluations per recorded turn
    prior: float = 16.0            # shrinkage strength k (recorded racks)
    pool: int = 1                  # refit on the racks of this many latest rounds (1: the round's own)
    start: str | None = None       # starting KLV2 (file path); None: all zero
    start_sha256: str | None = None

    def validate(self) -> None:
        if not 1 <= self.games <= MAX_GAMES_PER_ROUND:
            raise TrainError(f"games per round must be 1 to {MAX_GAMES_PER_ROUND}, got {self.games}")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise TrainError(f"rounds must be 1 to {MAX_ROUNDS}, got {self.rounds}")
        if not 0 <= self.seed < 2 ** 64:
            raise TrainError(f"seed must be 0 to 2^64-1, got {self.seed}")
        if not (math.isfinite(self.forced) and 0.0 <= self.forced <= 8.0):
            raise TrainError(f"forced racks per turn must be 0 to 8, got {self.forced}")
        if not (math.isfinite(self.prior) and 0.0 <= self.prior <= 1e6):
            raise TrainError(f"prior strength must be 0 to 1000000, got {self.prior}")
        if not 1 <= self.pool <= 100:
            raise TrainError(f"pooled rounds must be 1 to 100, got {self.pool}")

    def same_run(self) -> dict[str, Any]:
        """The options a resumed run must share with the original (rounds may grow)."""
        d = asdict(self)
        d.pop("rounds")
        d.pop("start")          # the file may have moved; its content hash must not change
        return d


@dataclass
class RoundFigures:
    round: int
    games: int
    racks: int                     # recorded racks (natural + forced)
    forced_racks: int
    distinct_racks: int
    leaves_seen: int               # leaves contained in at least one recorded rack
    rare_leaves: int               # leaves with fewer than `prior` recorded racks (their value leans on the prior)
    leaves: int
    mean_equity: float             # points: mean best-play equity of the recorded racks
    change_rms: float              # points: root mean square change of every leave value since the last round
    change_max_common: float       # points: largest change among leaves seen at least `prior` times
    seconds: float

    def line(self) -> str:
        return (f"round {self.round}: {self.games} games, {self.racks} racks ({self.forced_racks} forced, "
                f"{self.distinct_racks} distinct), leaves seen {self.leaves_seen}/{self.leaves}, rare "
                f"{self.rare_leaves}, change rms {self.change_rms:.3f} (max common {self.change_max_common:.3f}), "
                f"mean equity {self.mean_equity:.2f}, {self.seconds:.1f} s")


@dataclass
class TrainState:
    """What state.json holds (JSON): the options (TrainOptions as a dict), the letter distribution (name and
    tile counts) and the figures of every finished round (RoundFigures as dicts)."""

    version: int
    options: dict[str, Any]
    distribution: dict[str, Any]
    rounds: list[dict[str, Any]] = field(default_factory=list)


# ------------------------------------------------------------------ the leave graph


def all_leaves(ld: LetterDistribution, max_len: int = MAX_LEAVE) -> list[bytes]:
    """Every multiset of 1 to max_len tiles the distribution allows, as sorted machine letters, sorted."""
    from engine_cy.leavegen import enumerate_leaves

    tiles, lengths = enumerate_leaves(ld, max_len)
    return [bytes(row[:n]) for row, n in zip(tiles, lengths, strict=True)]


class LeaveSpace:
    """Every leave of a distribution, ranked as in the KLV2 graph, with the ranks of each leave's sub-leaves
    (one tile removed) and single tiles for the sub-leave prior."""

    def __init__(self, ld: LetterDistribution) -> None:
        from engine_cy.klv import Klv
        from engine_cy.kwg_build import build_kwg
        from engine_cy.leavegen import enumerate_leaves, sub_leave_ranks

        self.ld = ld
        self.tiles, self.lengths = enumerate_leaves(ld, MAX_LEAVE)
        self.n = int(self.lengths.shape[0])
        self.leaves = [bytes(row[:n]) for row, n in zip(self.tiles, self.lengths, strict=True)]
        nodes = build_kwg(self.leaves, gaddag=False)
        self.header = struct.pack("<I", len(nodes) // 4) + nodes + struct.pack("<I", self.n)
        self.graph = Klv(self.header + bytes(4 * self.n))
        if self.graph.n_values != self.n:
            raise TrainError("the leave graph does not hold every leave")
        self.sub, self.single = sub_leave_ranks(self.graph, self.tiles, self.lengths)
        self._names: list[str] | None = None

    def values_of(self, klv: Klv) -> np.ndarray:
        """A Klv's values (points) for every leave of the space (0 where it has none)."""
        return np.array([klv.leave_value(w) for w in self.leaves], dtype=np.float64) / 1000.0

    def klv2(self, values: np.ndarray) -> bytes:
        vals = np.asarray(values, dtype="<f4")
        if vals.shape != (self.n,) or not np.all(np.isfinite(vals)):
            raise TrainError("one finite value per leave is needed")
        return self.header + vals.tobytes()

    def csv(self, values: np.ndarray) -> str:
        if self._names is None:
            labels = [self.ld.label(i) for i in range(self.ld.size)]
            self._names = ["".join(labels[t] for t in w) for w in self.leaves]
        vals = np.asarray(values, dtype=np.float32).astype(np.float64)
        return "leave,value\n" + "".join(f"{n},{v:.4f}\n" for n, v in zip(self._names, vals, strict=True))


_SPACES: dict[tuple[str, tuple[int, ...]], LeaveSpace] = {}   # (name, tile counts) -> its space


def leave_space(ld: LetterDistribution) -> LeaveSpace:
    """The LeaveSpace of a distribution (built once per process: about a million leaves for English)."""
    key = (ld.name, tuple(ld.count(i) for i in range(ld.size)))
    if key not in _SPACES:
        _SPACES[key] = LeaveSpace(ld)
    return _SPACES[key]


def fit_values(space: LeaveSpace, wsum: np.ndarray, esum: np.ndarray, nobs: np.ndarray, mean_all: float,
               prior: float) -> np.ndarray:
    """Leave values (points) from the accumulated rack statistics, rare leaves shrunk toward the sub-leave
    prior (module docstring)."""
    raw = np.zeros(space.n)
    seen = wsum > 0
    raw[seen] = esum[seen] / wsum[seen] - mean_all
    n = nobs.astype(np.float64)
    values = np.zeros(space.n)
    for length in range(1, MAX_LEAVE + 1):
        idx = np.flatnonzero(space.lengths == length)
        if length == 1:
            pri = np.zeros(idx.shape[0])
        else:
            sub = space.sub[idx, :length]
            single = space.single[idx, :length]
            pri = (values[sub] + values[single]).mean(axis=1)
        if prior > 0:
            values[idx] = (n[idx] * raw[idx] + prior * pri) / (n[idx] + prior)
        else:
            values[idx] = np.where(seen[idx], raw[idx], pri)
    return values


# ------------------------------------------------------------------ worker processes

_WORKER: dict[str, Any] = {}


def _worker_init(kwg_bytes: bytes, ld_name: str, ignore_sigint: bool = True, ld_table: str | None = None,
                 layout_text: str | None = None) -> None:
    """A worker process's word graph, letter distribution (its table as the parent read it, else the one of
    that name) and board layout (the standard 15x15 one by default)."""
    from engine_cy.alphabet import LetterDistribution
    from engine_cy.kwg import Kwg

    if ignore_sigint:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent decides when to stop
    try:
        _WORKER["ld"] = LetterDistribution(ld_table, ld_name) if ld_table else get_distribution(ld_name)
    except ValueError as exc:
        raise TrainError(f"letter distribution {ld_name!r}: {exc}") from None
    _WORKER["kwg"] = Kwg(kwg_bytes)
    _WORKER["layout"] = layout_text or STANDARD15


def _worker_games(klv_path: str, forced_path: str | None, forced: float, round_seed: int, start: int,
                  stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    from engine_cy.autoplay import game_seed
    from engine_cy.klv import Klv
    from engine_cy.leavegen import LeaveGenWorker

    # the files keep their names from round to round: the round's seed says when they hold new values
    key = (klv_path, forced_path, forced, round_seed)
    if _WORKER.get("key") != key:
        klv = Klv.from_file(klv_path)
        fl = np.load(forced_path) if forced_path else None
        _WORKER["gen"] = LeaveGenWorker(_WORKER["kwg"], klv, _WORKER["ld"], Board(_WORKER["layout"]), fl, forced)
        _WORKER["key"] = key
    w = _WORKER["gen"]
    codes, eqs, flags = [], [], []
    for g in range(start, stop):
        c, e, f, _turns = w.play(game_seed(round_seed, g))
        codes.append(c)
        eqs.append(e)
        flags.append(f)
    return np.concatenate(codes), np.concatenate(eqs), np.concatenate(flags), stop - start


# ------------------------------------------------------------------ Dask tasks (--cluster)

# a chunk of games played: rack codes, equities, forced flags (one per recorded rack), games
ChunkResult = tuple[np.ndarray, np.ndarray, np.ndarray, int]
# what a thread's LeaveGenWorker plays: lexicon, fingerprint, values' and forced leaves' SHA-256, forced share
_GenKey = tuple[str, str, str, str | None, float]

_W_GEN: dict[int, tuple[_GenKey, LeaveGenWorker]] = {}   # worker thread -> (what it plays, its LeaveGenWorker)


class TrainSpec(TypedDict):
    """What every task of a round carries (see train_games_task)."""

    lexicon: str
    fingerprint: str
    run: str
    klv_sha: str
    forced_sha: str | None
    forced: float
    round_seed: int
    distribution: str | None      # the letter distribution the lexicon is played with (None: its own)


def train_games_task(spec: TrainSpec, klv_data: bytes, forced_rows: np.ndarray | None, start: int,
                     stop: int) -> ChunkResult | None:
    """Runs on a Dask worker: games start..stop-1 of a round, as _worker_games plays them. `spec`: the
    lexicon's name and fingerprint (loaded once per worker process, checked, by cluster.worker_lexicon), the
    SHA-256 of the round's values and forced leaves (a thread keeps its game worker while they are the same),
    forced racks per turn, the round's seed, the run id (a stopped run's tasks end at the next game and
    return None). klv_data and forced_rows arrive scattered, never as a path."""
    from engine_cy.autoplay import game_seed
    from engine_cy.klv import Klv
    from engine_cy.leavegen import LeaveGenWorker

    run = spec["run"]
    if run_stopped(run):
        return None
    lex = worker_lexicon(spec["lexicon"], spec["fingerprint"]).for_distribution(spec.get("distribution"))
    key: _GenKey = (spec["lexicon"], spec["fingerprint"], spec["klv_sha"], spec["forced_sha"], spec["forced"])
    tid = threading.get_ident()
    have = _W_GEN.get(tid)
    if have is None or have[0] != key:
        if hashlib.sha256(klv_data).hexdigest() != spec["klv_sha"]:
            raise TrainError("the round's leave values arrived damaged")
        gen = LeaveGenWorker(lex.kwg, Klv(klv_data), lex.ld, lex.new_board(), forced_rows, float(spec["forced"]))
        _W_GEN[tid] = have = (key, gen)
    w = have[1]
    codes, eqs, flags = [], [], []
    for g in range(start, stop):
        if run_stopped(run):
            return None
        c, e, f, _turns = w.play(game_seed(int(spec["round_seed"]), g))
        codes.append(c)
        eqs.append(e)
        flags.append(f)
    return np.concatenate(codes), np.concatenate(eqs), np.concatenate(flags), stop - start


# ------------------------------------------------------------------ where a round's games run

# a chunk's future: a concurrent.futures.Future (_LocalGames) or a Dask Future (_ClusterGames) of a ChunkResult
_ChunkFuture = Any


class _LocalGames:
    """A round's games on worker processes of this machine; the round's values reach them through files in
    the run's folder (the workers' key includes the round's seed: the file names do not change)."""

    def __init__(self, out: Path, kwg_bytes: bytes, ld_name: str, workers: int, ld_table: str | None = None,
                 layout_text: str | None = None) -> None:
        self.out = out
        self.workers = workers
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                                        initializer=_worker_init,
                                        initargs=(kwg_bytes, ld_name, True, ld_table, layout_text))
        self.args: tuple[str, str | None, float, int] = ("", None, 0.0, 0)

    def slots(self) -> int:
        return 3 * self.workers

    def chunk(self, games: int) -> int:
        return CHUNK_GAMES

    def begin(self, klv: bytes, forced_rows: np.ndarray | None, forced: float, round_seed: int) -> None:
        play_path = self.out / ".playing.klv2"
        _write_atomic(play_path, klv)
        forced_path = None
        if forced_rows is not None:
            forced_path = str(self.out / ".forced.npy")
            with open(forced_path + ".tmp", "wb") as fh:
                np.save(fh, forced_rows)
            os.replace(forced_path + ".tmp", forced_path)
        self.args = (str(play_path), forced_path, forced, round_seed)

    def submit(self, start: int, stop: int) -> _ChunkFuture:
        klv_path, forced_path, forced, round_seed = self.args
        return self.pool.submit(_worker_games, klv_path, forced_path, forced, round_seed, start, stop)

    def wait(self, pending: set[_ChunkFuture], timeout: float) -> tuple[set[_ChunkFuture], set[_ChunkFuture]]:
        done, rest = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
        return set(done), set(rest)

    def result(self, fut: _ChunkFuture) -> ChunkResult | None:
        res: ChunkResult = fut.result()
        return res

    def cancel(self, pending: set[_ChunkFuture]) -> None:
        for f in pending:
            f.cancel()

    def end(self) -> None:
        pass

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class _ClusterGames:
    """A round's games as tasks on a Dask cluster (macondo_server/runtime/cluster.py's Cluster): the round's values
    and forced leaves are scattered to every worker once per round; small batches so every worker thread
    has work, two per thread in flight."""

    def __init__(self, cluster: Cluster, lexicon: str, fingerprint: str, distribution: str | None = None) -> None:
        self.distributed = import_distributed()
        self.cluster = cluster
        self.client = cluster.client
        self.run = new_run_id()
        self.lexicon = lexicon
        self.fingerprint = fingerprint
        self.distribution = distribution
        self.spec: TrainSpec | None = None        # the round's (begin)
        self.data: list[Any] = []                 # the round's scattered values and forced leaves (Futures)
        self.seen = [time.monotonic(), 0.0]

    def slots(self) -> int:
        return 2 * self.cluster.nthreads()

    def chunk(self, games: int) -> int:
        return max(1, min(CHUNK_GAMES, games // (4 * self.slots())))

    def begin(self, klv: bytes, forced_rows: np.ndarray | None, forced: float, round_seed: int) -> None:
        self.spec = {"lexicon": self.lexicon, "fingerprint": self.fingerprint, "run": self.run,
                     "klv_sha": hashlib.sha256(klv).hexdigest(),
                     "forced_sha": hashlib.sha256(forced_rows.tobytes()).hexdigest()
                     if forced_rows is not None else None, "forced": forced, "round_seed": round_seed,
                     "distribution": self.distribution}
        try:
            self.data = [self.client.scatter(klv, broadcast=True, hash=False),
                         self.client.scatter(forced_rows, broadcast=True, hash=False)
                         if forced_rows is not None else None]
        except Exception as exc:  # noqa: BLE001 (a cluster gone: one line for the user)
            raise ClusterError(f"cannot send the round's leave values to the cluster: {one_line(exc)}") from None

    def submit(self, start: int, stop: int) -> _ChunkFuture:
        spec = self.spec
        assert spec is not None, "begin() comes first"
        return self.client.submit(train_games_task, spec, self.data[0], self.data[1], start, stop,
                                  pure=False, key=f"leavetrain-{self.run}-{spec['round_seed']}-{start}")

    def wait(self, pending: set[_ChunkFuture], timeout: float) -> tuple[set[_ChunkFuture], set[_ChunkFuture]]:
        self.cluster.watch_workers(self.seen)
        try:
            done = set(self.distributed.wait(list(pending), timeout=timeout, return_when="FIRST_COMPLETED").done)
        except (self.distributed.TimeoutError, TimeoutError):
            done = set()
        return done, pending - done

    def result(self, fut: _ChunkFuture) -> ChunkResult | None:
        try:
            res: ChunkResult | None = fut.result()
            return res
        except ClusterError as exc:     # a worker whose lexicon differs: a set-up problem
            raise ClusterError(str(exc), precondition=True) from None
        except Exception as exc:  # noqa: BLE001 (a task failing on every worker tried)
            raise ClusterError(f"a leave-training task failed on the cluster: {one_line(exc)}") from None

    def cancel(self, pending: set[_ChunkFuture]) -> None:
        cancel_quietly(self.client, pending)
        stop_quietly(self.client, self.run)

    def end(self) -> None:
        cancel_quietly(self.client, [d for d in self.data if d is not None])
        self.data = []

    def close(self) -> None:
        self.end()


# ------------------------------------------------------------------ the run


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(path)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _round_seed(seed: int, r: int) -> int:
    from engine_cy.autoplay import game_seed

    return int(game_seed(seed, 1_000_003 * r + 17))


class LeaveTrainer:
    """One training run in `out_dir` (see the module docstring)."""

    def __init__(self, lexicon: Lexicon, options: TrainOptions, out_dir: Path, workers: int = 1,
                 resume: bool = False, start_klv: Klv | None = None) -> None:
        options.validate()
        if not 1 <= workers <= MAX_WORKERS:
            raise TrainError(f"workers must be 1 to {MAX_WORKERS}, got {workers}")
        self.lexicon = lexicon
        self.options = options
        self.out = Path(out_dir)
        self.workers = workers
        self.start_klv = start_klv
        self.distribution: dict[str, Any] = {"name": lexicon.ld.name,
                                             "counts": [lexicon.ld.count(i) for i in range(lexicon.ld.size)]}
        state_path = self.out / STATE_FILE
        if resume:
            self.state = self._read_state(state_path)
        else:
            if state_path.exists():
                raise TrainError(f"{self.out} already holds a training run ({STATE_FILE}); use --resume to "
                                 "continue it or choose another folder")
            self.state = TrainState(STATE_VERSION, asdict(options), self.distribution)
        self.space: LeaveSpace | None = None

    def _read_state(self, path: Path) -> TrainState:
        if not path.is_file():
            raise TrainError(f"{self.out} holds no training run to resume ({STATE_FILE} is missing)")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            state = TrainState(int(raw["version"]), dict(raw["options"]), dict(raw["distribution"]),
                               list(raw["rounds"]))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise TrainError(f"{path.name} cannot be read ({type(exc).__name__}): not a training state") from None
        if state.version != STATE_VERSION:
            raise TrainError(f"{path.name} has state version {state.version}, this engine writes {STATE_VERSION}")
        if state.distribution != self.distribution:
            raise TrainError(f"{path.name} was trained for another letter distribution")
        saved = TrainOptions(**state.options).same_run()
        now = self.options.same_run()
        if saved != now:
            diff = ", ".join(f"{k} {saved.get(k)!r} -> {now.get(k)!r}" for k in sorted(now)
                             if saved.get(k) != now.get(k))
            raise TrainError(f"--resume needs the options the run started with ({diff})")
        for i, fig in enumerate(state.rounds, 1):
            if int(fig.get("round", -1)) != i or not (self.out / _round_name(i, ".klv2")).is_file():
                raise TrainError(f"{path.name}: round {i} is listed but its files are missing")
        return state

    @property
    def rounds_done(self) -> int:
        return len(self.state.rounds)

    def _space(self) -> LeaveSpace:
        if self.space is None:
            self.space = leave_space(self.lexicon.ld)
        return self.space

    def current_values(self) -> np.ndarray:
        """The values the next round plays with (points, by leave rank)."""
        from engine_cy.klv import Klv

        space = self._space()
        done = self.rounds_done
        if done > 0:
            return space.values_of(Klv.from_file(str(self.out / _round_name(done, ".klv2"))))
        if self.start_klv is not None:
            return space.values_of(self.start_klv)
        return np.zeros(space.n)

    def run(self, progress: Callable[[int, int, int], None] | None = None,
            on_round: Callable[[RoundFigures], None] | None = None,
            stop: Callable[[], bool] | None = None, cluster: Cluster | None = None,
            fingerprint: str | None = None) -> list[RoundFigures]:
        """Play the rounds not done yet. progress(round, games done, games) is called as chunks finish;
        on_round after each round is saved. stop() true ends the run after the round in progress is
        abandoned (finished rounds are kept). With `cluster` (a cluster.Cluster) the games run as Dask tasks
        on its workers, which load the lexicon by name and check its `fingerprint`
        (cluster.lexicon_fingerprint); the rounds come out the same as in-process. Returns the figures of the
        rounds this call finished."""
        if cluster is not None and not fingerprint:
            raise TrainError("training on a cluster needs the lexicon's fingerprint")
        self.out.mkdir(parents=True, exist_ok=True)
        space = self._space()
        values = self.current_values()
        finished: list[RoundFigures] = []
        games: _LocalGames | _ClusterGames
        if cluster is not None:
            games = _ClusterGames(cluster, self.lexicon.name, str(fingerprint), self.lexicon.ld.name)
        else:
            kwg_bytes = bytes(np.asarray(self.lexicon.kwg.array).tobytes())
            games = _LocalGames(self.out, kwg_bytes, self.lexicon.ld.name, self.workers, self.lexicon.ld.table(),
                                self.lexicon.new_board().layout_text())
        try:
            for r in range(self.rounds_done + 1, self.options.rounds + 1):
                fig, values = self._round(games, space, r, values, progress, stop)
                if fig is None:
                    break
                finished.append(fig)
                if on_round:
                    on_round(fig)
        finally:
            games.close()
        return finished

    def _round(self, games: _LocalGames | _ClusterGames, space: LeaveSpace, r: int, values: np.ndarray,
               progress: Callable[[int, int, int], None] | None,
               stop: Callable[[], bool] | None) -> tuple[RoundFigures | None, np.ndarray]:
        t0 = time.perf_counter()
        opts = self.options
        # the values this round plays with, and the previous round's rare leaves to force
        forced_rows = None
        if r > 1 and opts.forced > 0:
            nobs = np.load(self.out / _round_name(r - 1, ".counts.npy"))
            rare = np.flatnonzero(nobs < max(opts.prior, 1.0))
            if rare.shape[0] > 0:
                # each rare leave's tiles, then 0xFF (as enumerate_leaves pads them)
                forced_rows = np.full((rare.shape[0], RACK_SIZE), 0xFF, dtype=np.uint8)
                forced_rows[:, :MAX_LEAVE] = space.tiles[rare]
        round_seed = _round_seed(opts.seed, r)
        games.begin(space.klv2(values), forced_rows, opts.forced, round_seed)
        size = games.chunk(opts.games)
        chunks = [(s, min(s + size, opts.games)) for s in range(0, opts.games, size)]
        results: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        pending: set[_ChunkFuture] = set()
        it = iter(chunks)
        done_games = 0
        # keep a few chunks queued per worker so a stop does not wait for the whole round
        for _ in range(min(len(chunks), games.slots())):
            pending.add(games.submit(*next(it)))
        try:
            while pending:
                if stop is not None and stop():
                    games.cancel(pending)
                    return None, values
                done, pending = games.wait(pending, 0.25)
                for f in done:
                    res = games.result(f)
                    if res is None:          # a task that saw a stop of this run: only after a stop
                        raise TrainError("a leave-training task was stopped before the run was")
                    codes, eqs, flags, n = res
                    results.append((codes, eqs, flags))
                    done_games += n
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(games.submit(*nxt))
                if progress:
                    progress(r, done_games, opts.games)
        except BaseException:
            games.cancel(pending)
            raise
        finally:
            games.end()
        codes = np.concatenate([v[0] for v in results])
        eqs = np.concatenate([v[1] for v in results]).astype(np.int64)
        flags = np.concatenate([v[2] for v in results])
        order = np.lexsort((eqs, codes))          # a canonical order, whatever order the chunks finished in
        codes, eqs = codes[order], eqs[order]
        fit_codes, fit_eqs = [codes], [eqs]
        for prev in range(max(1, r - opts.pool + 1), r):
            with np.load(self.out / _round_name(prev, ".racks.npz")) as z:
                fit_codes.append(z["codes"])
                fit_eqs.append(z["equities"])
        new_values, nobs, stats = self.refit(space, np.concatenate(fit_codes), np.concatenate(fit_eqs))
        # as written to the KLV2 (f32, then millipoints at load): a resumed run plays the very same values
        new_values = np.round(new_values.astype(np.float32).astype(np.float64) * 1000.0) / 1000.0
        diff = new_values - values
        common = nobs >= max(opts.prior, 1.0)
        fig = RoundFigures(
            round=r, games=opts.games, racks=int(codes.shape[0]), forced_racks=int(flags.sum()),
            distinct_racks=stats["distinct"], leaves_seen=int((nobs > 0).sum()),
            rare_leaves=int((nobs < max(opts.prior, 1.0)).sum()), leaves=space.n,
            mean_equity=float(eqs.mean() / 1000.0) if eqs.shape[0] else 0.0, change_rms=float(np.sqrt(np.mean(diff ** 2))),
            change_max_common=float(np.abs(diff[common]).max()) if common.any() else 0.0,
            seconds=time.perf_counter() - t0)
        if opts.pool > 1:
            tmp = self.out / f".racks{os.getpid()}.npz"
            np.savez(tmp, codes=codes, equities=eqs)
            os.replace(tmp, self.out / _round_name(r, ".racks.npz"))
        self._save_round(space, r, new_values, nobs, fig)
        return fig, new_values

    def refit(self, space: LeaveSpace, codes: np.ndarray,
              eqs: np.ndarray) -> tuple[np.ndarray, np.ndarray, RefitStats]:
        from engine_cy.leavegen import accumulate

        uniq, inv, cnt = np.unique(codes, return_inverse=True, return_counts=True)
        sums = np.zeros(uniq.shape[0], dtype=np.int64)
        np.add.at(sums, inv, eqs)
        means = sums / cnt / 1000.0
        wsum = np.zeros(space.n)
        esum = np.zeros(space.n)
        nobs = np.zeros(space.n, dtype=np.int64)
        tw, te = accumulate(space.graph, self.lexicon.ld, np.ascontiguousarray(uniq, dtype=np.uint64),
                            np.ascontiguousarray(means), cnt.astype(np.int64), wsum, esum, nobs)
        mean_all = te / tw if tw > 0 else 0.0
        values = fit_values(space, wsum, esum, nobs, mean_all, self.options.prior)
        return values, nobs, {"distinct": int(uniq.shape[0]), "mean_equity": float(eqs.mean() / 1000.0)
                              if eqs.shape[0] else 0.0}

    def _save_round(self, space: LeaveSpace, r: int, values: np.ndarray, nobs: np.ndarray,
                    fig: RoundFigures) -> None:
        klv = space.klv2(values)
        csv = space.csv(values).encode()
        _write_atomic(self.out / _round_name(r, ".klv2"), klv)
        _write_atomic(self.out / _round_name(r, ".csv"), csv)
        with open(self.out / f".counts{os.getpid()}.npy", "wb") as fh:
            np.save(fh, nobs)
        os.replace(self.out / f".counts{os.getpid()}.npy", self.out / _round_name(r, ".counts.npy"))
        name = self.lexicon.name
        _write_atomic(self.out / f"{name}.klv2", klv)
        _write_atomic(self.out / f"{name}.csv", csv)
        self.state.rounds.append(asdict(fig))
        _write_atomic(self.out / STATE_FILE, json.dumps(asdict(self.state), indent=1).encode())


class RefitStats(TypedDict):
    distinct: int           # distinct racks
    mean_equity: float      # points: mean best-play equity of the racks


def _round_name(r: int, suffix: str) -> str:
    return f"round-{r:03d}{suffix}"
