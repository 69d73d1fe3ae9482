"""Leave training (macondo leaves train) and leave-file checks: valid output that round-trips, determinism per
seed and across worker counts, stop and resume without losing or redoing rounds, the same bytes on a Dask
cluster (the task function in the default run; a LocalCluster of two workers with a stop and a CLI resume in
the slow one), refused options and files, mismatched KLV2 refused everywhere it is loaded, per-lexicon win
tables."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grpc
import numpy as np
import pytest

from engine_cy.alphabet import LetterDistribution
from engine_cy.klv import Klv, write_klv2
from engine_cy.leavegen import LeaveGenWorker, accumulate, decode_rack, encode_rack
from macondo_server.analysis.leavetrain import (
    LeaveTrainer,
    TrainError,
    TrainOptions,
    all_leaves,
    fit_values,
    leave_space,
)
from macondo_server.engine.lexicon import (
    DEFAULT_WINPCT,
    LexiconError,
    LexiconRegistry,
    klv2_from_csv,
    load_klv,
    load_win_table,
)
from macondo_server.engine.settings import PACKAGE_DATA, Settings
from macondo_server.model.tiles import new_board

from conftest import ROOT

LD = LetterDistribution.english()
EMPTY = "/".join(["15"] * 15)
OPENING = f"{EMPTY} AEINQST/ 0/0 0"
TINY = dict(games=24, seed=7, forced=0.5, prior=4.0)


def ml(text: str) -> bytes:
    return bytes(LD.parse_rack(text))


@pytest.fixture(scope="module")
def scowl():
    # the bundled lexicon only (always present), loaded once for the module
    return LexiconRegistry(Settings.load()).get("SCOWL70")


def _trainer(lex, out: Path, rounds: int, workers: int = 1, resume: bool = False, **kw) -> LeaveTrainer:
    opts = TrainOptions(lexicon=lex.name, rounds=rounds, **{**TINY, **kw})
    return LeaveTrainer(lex, opts, out, workers=workers, resume=resume)


@pytest.fixture(scope="module")
def reference_run(scowl, tmp_path_factory):
    """Two tiny rounds straight through with one worker process, in-process (run once per module): the
    folder and the rounds' figures."""
    out = tmp_path_factory.mktemp("reference") / "a"
    figures = _trainer(scowl, out, rounds=2).run()
    return out, figures


# ------------------------------------------------------------------ the C parts


def test_rack_codes_and_worker_records():
    rack = ml("?AEINST")
    code = encode_rack(rack)
    assert decode_rack(code) == bytes(sorted(rack))
    assert encode_rack(reversed(rack)) == code
    lex = LexiconRegistry(Settings.load()).get("SCOWL70")
    w = LeaveGenWorker(lex.kwg, Klv(write_klv2([(ml("S"), 8.0)])), LD, new_board())
    codes, eqs, forced, turns = w.play(12345)
    assert turns > 5 and codes.shape[0] > 5 and not forced.any()
    for c in codes:
        assert len(decode_rack(int(c))) == 7
    # the same seed, the same game
    c2, e2, _f, t2 = w.play(12345)
    assert t2 == turns and np.array_equal(c2, codes) and np.array_equal(e2, eqs)
    # forced racks: rows of a rare leave then 0xFF
    rows = np.full((2, 7), 0xFF, dtype=np.uint8)
    rows[0, :2] = list(ml("QZ"))
    rows[1, :1] = list(ml("X"))
    wf = LeaveGenWorker(lex.kwg, None, LD, new_board(), rows, 1.0)
    codes, eqs, forced, _t = wf.play(99)
    assert forced.sum() > 3
    for c in codes[forced.astype(bool)]:
        tiles = decode_rack(int(c))
        assert set(ml("QZ")) <= set(tiles) or ml("X")[0] in tiles
    bad = np.full((1, 7), 0xFF, dtype=np.uint8)
    bad[0, :2] = list(ml("QQ"))
    with pytest.raises(ValueError, match="more tiles of a letter"):
        LeaveGenWorker(lex.kwg, None, LD, new_board(), bad, 1.0)
    with pytest.raises(ValueError, match="forced racks per turn"):
        LeaveGenWorker(lex.kwg, None, LD, new_board(), rows, 9.0)


def test_accumulate_matches_a_direct_count():
    """The refit's weights against a Python count of the ways to draw each rack from the leave."""
    from math import comb

    leaves = sorted({ml("A"), ml("AB"), ml("B"), ml("AA"), ml("E"), ml("ABE")})
    graph = Klv(write_klv2([(w, 0.0) for w in leaves]))
    racks = [ml("AABCDEF"), ml("ABEEEEE")]
    means = np.array([10.0, 30.0])
    codes = np.array([encode_rack(r) for r in racks], dtype=np.uint64)
    wsum, esum = np.zeros(len(leaves)), np.zeros(len(leaves))
    nobs = np.zeros(len(leaves), dtype=np.int64)
    tw, te = accumulate(graph, LD, codes, means, np.array([3, 1], dtype=np.int64), wsum, esum, nobs)
    dist = [LD.count(i) for i in range(LD.size)]

    def ways(rack: bytes, leave: bytes) -> int:
        out = 1
        for t in set(rack):
            out *= comb(dist[t] - leave.count(t), rack.count(t) - leave.count(t))
        return out

    for i, leave in enumerate(graph.kwg.words()):
        w = [ways(r, leave) if all(r.count(t) >= leave.count(t) for t in leave) else 0 for r in racks]
        assert wsum[i] == pytest.approx(sum(w))
        assert esum[i] == pytest.approx(sum(x * m for x, m in zip(w, means, strict=True)))
        assert nobs[i] == sum(c for x, c in zip(w, (3, 1), strict=True) if x)
    full = [ways(r, b"") for r in racks]
    assert tw == pytest.approx(sum(full))
    assert te == pytest.approx(sum(x * m for x, m in zip(full, means, strict=True)))


def test_fit_shrinks_rare_leaves_toward_sub_leaves():
    space = leave_space(LD)
    assert space.n == len(all_leaves(LD)) == 914_624
    idx = {w: i for i, w in enumerate(space.leaves)}
    wsum, esum, nobs = np.zeros(space.n), np.zeros(space.n), np.zeros(space.n, dtype=np.int64)
    for text, val, n in (("S", 8.0, 1000), ("E", 2.0, 1000), ("ES", 20.0, 1)):
        i = idx[ml(text)]
        wsum[i], esum[i], nobs[i] = 1.0, val, n
    v = fit_values(space, wsum, esum, nobs, 0.0, prior=9.0)
    s, e = 8.0 * 1000 / 1009, 2.0 * 1000 / 1009
    assert v[idx[ml("S")]] == pytest.approx(s)
    # one observation against a prior of 9: a tenth of the way from the sub-leave fit (S + E) to the raw 20
    assert v[idx[ml("ES")]] == pytest.approx((20.0 + 9.0 * (s + e)) / 10.0)
    # never seen: the prior alone (mean over the tiles t of v(L - t) + v(t))
    assert v[idx[ml("EES")]] == pytest.approx(((v[idx[ml("ES")]] + e) * 2 + (v[idx[ml("EE")]] + s)) / 3)


# ------------------------------------------------------------------ runs


def _check_valid_run(out: Path, figures) -> None:
    """A finished two-round tiny run: figures, a valid KLV2 that round-trips through its CSV, the state."""
    assert [f.round for f in figures] == [1, 2]
    assert figures[0].forced_racks == 0 and figures[1].forced_racks > 0   # round 2 forces round 1's rare leaves
    for f in figures:
        assert f.games == 24 and f.racks > 24 * 5 and 0 < f.leaves_seen < f.leaves == 914_624
        assert f.rare_leaves > 0 and f.change_rms > 0
    klv = load_klv(out / "SCOWL70.klv2", "", LD)
    assert klv.n_values == 914_624
    assert (out / "SCOWL70.klv2").read_bytes() == (out / "round-002.klv2").read_bytes()
    # the CSV and the KLV2 hold the same values: every row's value in the graph's order, and a sample of rows
    # read back through klv2_from_csv and looked up by name (all 914,624 that way take seconds)
    lines = (out / "SCOWL70.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "leave,value" and len(lines) == 914_625
    csv_values = np.array([float(line.rsplit(",", 1)[1]) for line in lines[1:]])
    assert np.allclose(csv_values, klv.values_array / 1000.0, atol=6e-5)
    sample = lines[1::997]
    small = Klv(klv2_from_csv("leave,value\n" + "\n".join(sample) + "\n"))
    for line in sample:
        name, value = line.rsplit(",", 1)
        tiles = ml(name)
        assert small.leave_value(tiles) == klv.leave_value(tiles) == round(float(value) * 1000)
    # the blank is worth keeping, a lone Q is not
    assert klv.leave_value(ml("?")) > 0 > klv.leave_value(ml("Q"))
    state = json.loads((out / "state.json").read_text())
    assert [r["round"] for r in state["rounds"]] == [1, 2]


def test_deterministic_and_resumable_across_stops_and_workers(scowl, reference_run, tmp_path):
    """Two rounds straight with one worker == one round, a stop in the middle of round 2, then --resume with
    two workers: round 1 is not redone and round 2 comes out byte for byte the same."""
    a, figures = reference_run
    _check_valid_run(a, figures)
    b = tmp_path / "b"
    seen = []

    def progress(r: int, done: int, total: int) -> None:
        seen.append(r)

    _trainer(scowl, b, rounds=2).run(progress, stop=lambda: 2 in seen)
    state = json.loads((b / "state.json").read_text())
    assert [r["round"] for r in state["rounds"]] == [1]
    assert not (b / "round-002.klv2").exists()
    r1 = (b / "round-001.klv2").read_bytes()
    assert r1 == (a / "round-001.klv2").read_bytes()
    mtime = (b / "round-001.klv2").stat().st_mtime_ns
    again = _trainer(scowl, b, rounds=2, workers=2, resume=True)
    assert again.rounds_done == 1
    figs = again.run()
    assert [f.round for f in figs] == [2]
    assert (b / "round-001.klv2").stat().st_mtime_ns == mtime
    assert (b / "round-002.klv2").read_bytes() == (a / "round-002.klv2").read_bytes()
    # a different seed, different leaves
    c = tmp_path / "c"
    _trainer(scowl, c, rounds=1, seed=8).run()
    assert (c / "round-001.klv2").read_bytes() != r1


def test_workers_play_each_round_with_its_own_values(tmp_path):
    """The round's values reach the worker even under the same file name (a worker kept between rounds)."""
    from macondo_server.analysis.leavetrain import _worker_games, _worker_init

    lex = LexiconRegistry(Settings.load()).get("SCOWL70")
    space = leave_space(LD)
    _worker_init(np.asarray(lex.kwg.array).tobytes(), "english", ignore_sigint=False)
    path = tmp_path / ".playing.klv2"
    means = []
    for r, bonus in enumerate((0.0, 100.0, 0.0)):
        path.write_bytes(space.klv2(np.full(space.n, bonus)))
        _codes, eqs, _f, n = _worker_games(str(path), None, 0.0, 1000 + r, 0, 3)
        assert n == 3
        means.append(eqs.mean() / 1000.0)
    assert means[1] > means[0] + 60 and means[1] > means[2] + 60


def test_refused_options_and_states(scowl, tmp_path):
    out = tmp_path / "run"
    _trainer(scowl, out, rounds=1).run()
    with pytest.raises(TrainError, match="already holds a training run"):
        _trainer(scowl, out, rounds=2)
    with pytest.raises(TrainError, match=r"options the run started with \(seed 7 -> 8\)"):
        _trainer(scowl, out, rounds=2, resume=True, seed=8)
    with pytest.raises(TrainError, match="holds no training run"):
        _trainer(scowl, tmp_path / "none", rounds=2, resume=True)
    (out / "state.json").write_text("{not json")
    with pytest.raises(TrainError, match="not a training state"):
        _trainer(scowl, out, rounds=2, resume=True)
    for bad in (dict(games=0), dict(forced=-1.0), dict(prior=float("nan")), dict(pool=0)):
        with pytest.raises(TrainError):
            _trainer(scowl, tmp_path / "x", rounds=1, **bad)


def _cli(*argv: str, env_dir: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "macondo_server", *argv], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_cli_train_and_errors(tmp_path, capsys):
    from macondo_server import cli

    out = tmp_path / "run"
    r = _cli("leaves", "train", "--out", str(out), "--games", "10", "--rounds", "1", "--workers", "1", "--json")
    assert r.returncode == 0, r.stderr
    fig = json.loads(r.stdout.splitlines()[0])
    assert fig["round"] == 1 and fig["games"] == 10
    capsys.readouterr()
    code = cli.main(["leaves", "train", "--out", str(out), "--games", "10", "--rounds", "2", "--workers", "1",
                     "--resume"])           # in this process: a second interpreter's start-up costs seconds
    text = capsys.readouterr().out
    assert code == 0 and "round 2:" in text and "round 1:" not in text and "done: 2 of 2 rounds" in text, text
    corrupt = tmp_path / "bad.klv2"
    corrupt.write_bytes((PACKAGE_DATA / "lexica" / "SCOWL70.klv2").read_bytes()[:1000]
                        if (PACKAGE_DATA / "lexica" / "SCOWL70.klv2").is_file() else b"\x05\x00\x00\x00junk")
    qq = tmp_path / "qq.klv2"
    qq.write_bytes(write_klv2([(ml("QQ"), 1.0), (ml("A"), 1.0)]))
    cases = [
        (["--out", str(tmp_path / "n"), "--games", "0"], "--games"),
        (["--out", str(tmp_path / "n"), "--forced", "9"], "--forced"),
        (["--out", str(tmp_path / "n"), "--from", str(tmp_path / "missing.klv2")], "does not exist"),
        (["--out", str(tmp_path / "n"), "--from", str(corrupt)], "starting leave file bad.klv2"),
        (["--out", str(tmp_path / "n"), "--from", str(qq)], "QQ holds 2 Q"),
        (["--out", str(tmp_path / "n"), "--lexicon", "NOPE"], "unknown lexicon"),
        (["--out", str(out), "--rounds", "3"], "already holds a training run"),
        (["--out", str(tmp_path / "none"), "--resume"], "holds no training run"),
    ]
    for argv, needle in cases:       # in this process (a process each would cost seconds)
        try:
            code = cli.main(["leaves", "train", "--workers", "1", *argv])
        except SystemExit as exc:      # the parser's errors
            code = exc.code
        err = capsys.readouterr().err
        assert code == 1, (argv, err)
        assert needle in err and len(err.strip().splitlines()) == 1, (argv, err)
        assert "Traceback" not in err


# ------------------------------------------------------------------ on a Dask cluster (--cluster)


def _spec(klv: bytes, rows: np.ndarray | None, run: str) -> dict:
    import hashlib

    from macondo_server.engine.facade import Engine
    from macondo_server.runtime.cluster import lexicon_fingerprint

    return {"lexicon": "SCOWL70", "fingerprint": lexicon_fingerprint(Engine(), "SCOWL70"),
            "klv_sha": hashlib.sha256(klv).hexdigest(),
            "forced_sha": hashlib.sha256(rows.tobytes()).hexdigest() if rows is not None else None,
            "forced": 0.5, "round_seed": 4242, "run": run}


def test_cluster_task_plays_the_same_games_as_a_local_worker(tmp_path):
    """The Dask task, run here without a cluster: it loads the lexicon by name and fingerprint, takes the
    round's values and forced leaves as data, and records the same racks and equities as the in-process
    worker for the same games, however the games are split; a stopped run's task returns nothing; damaged
    values and another lexicon are refused."""
    import uuid

    from macondo_server.analysis.leavetrain import _worker_games, _worker_init, train_games_task
    from macondo_server.runtime import cluster as cluster_mod
    from macondo_server.runtime.cluster import ClusterError

    lex = LexiconRegistry(Settings.load()).get("SCOWL70")
    space = leave_space(LD)
    klv = space.klv2(np.round(np.random.default_rng(3).normal(0, 5, space.n), 3))
    rows = np.full((2, 7), 0xFF, dtype=np.uint8)
    rows[0, :2] = list(ml("QZ"))
    rows[1, :1] = list(ml("X"))
    (tmp_path / "v.klv2").write_bytes(klv)
    np.save(tmp_path / "f.npy", rows)
    _worker_init(np.asarray(lex.kwg.array).tobytes(), "english", ignore_sigint=False)
    want = _worker_games(str(tmp_path / "v.klv2"), str(tmp_path / "f.npy"), 0.5, 4242, 3, 7)
    assert want[2].sum() > 0          # forced racks were evaluated
    spec = _spec(klv, rows, f"test-{uuid.uuid4().hex}")
    got = train_games_task(spec, klv, rows, 3, 7)
    assert got is not None and got[3] == want[3] == 4
    for x, y in zip(got[:3], want[:3], strict=True):
        assert np.array_equal(x, y)
    halves = [train_games_task(spec, klv, rows, 3, 5), train_games_task(spec, klv, rows, 5, 7)]
    for k in range(3):
        assert np.array_equal(np.concatenate([h[k] for h in halves]), want[k])   # type: ignore[index]
    with pytest.raises(TrainError, match="damaged"):
        train_games_task(dict(spec, klv_sha="0" * 64), klv, rows, 0, 1)
    with pytest.raises(ClusterError, match="lexicon mismatch"):
        train_games_task(dict(spec, fingerprint="0" * 16), klv, rows, 0, 1)
    cluster_mod.stop_run(spec["run"])
    assert train_games_task(spec, klv, rows, 0, 1) is None


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])     # nothing listens there once closed


def test_cli_cluster_errors(tmp_path, monkeypatch, capsys):
    """A bad --cluster and no Dask installed: one clear line each, exit 1, and no round written (a scheduler
    nobody runs: in the slow test, it waits for the connection timeout)."""
    from macondo_server import cli

    for spec, needle in (("local:0", "local:N needs N from 1"), ("not a host", "not a scheduler address")):
        out = tmp_path / "run"
        code = cli.main(["leaves", "train", "--out", str(out), "--games", "4", "--rounds", "1", "--cluster", spec])
        err = capsys.readouterr().err
        assert code == 1 and needle in err and len(err.strip().splitlines()) == 1, (spec, err)
        assert not (out / "state.json").exists()
    monkeypatch.setitem(sys.modules, "distributed", None)        # as without the cluster extra
    code = cli.main(["leaves", "train", "--out", str(tmp_path / "run"), "--games", "4", "--cluster", "local:2"])
    err = capsys.readouterr().err
    assert code == 1 and "--cluster needs Dask: install the optional extra" in err, err


@pytest.mark.slow
def test_cluster_training_same_as_in_process_with_stop_and_resume(scowl, reference_run, tmp_path):
    """Two tiny rounds on a LocalCluster of two worker processes, stopped in round 2, then resumed through
    the CLI on a new local cluster: round 1 is kept, and both rounds are byte for byte the in-process
    run's; both workers played, each loading the lexicon once."""
    pytest.importorskip("distributed")
    from macondo_server.engine.facade import Engine
    from macondo_server.runtime import cluster as cluster_mod
    from macondo_server.runtime.cluster import Cluster, lexicon_fingerprint

    a, figures = reference_run
    engine = Engine(Settings.load())
    b = tmp_path / "b"
    seen: list[tuple[int, int]] = []
    with Cluster("local:2", data_dirs=[str(d) for d in engine.settings.data_dirs]) as cl:
        figs = _trainer(scowl, b, rounds=2).run(lambda r, done, total: seen.append((r, done)),
                                                stop=lambda: any(r == 2 for r, _ in seen), cluster=cl,
                                                fingerprint=lexicon_fingerprint(engine, "SCOWL70"))
        stats = cl.client.run(cluster_mod.worker_stats)
    assert [f.round for f in figs] == [1]
    assert (figs[0].racks, figs[0].distinct_racks, figs[0].change_rms) == \
        (figures[0].racks, figures[0].distinct_racks, figures[0].change_rms)
    assert (b / "round-001.klv2").read_bytes() == (a / "round-001.klv2").read_bytes()
    assert not (b / "round-002.klv2").exists()
    assert max(d for r, d in seen if r == 1) == 24 and len({d for r, d in seen if r == 1}) > 3
    assert sorted(v["lexicon_loads"] for v in stats.values()) == [1, 1]
    r = _cli("leaves", "train", "--out", str(b), "--games", "24", "--rounds", "2", "--seed", "7", "--forced", "0.5",
             "--prior", "4", "--resume", "--cluster", "local:2")
    assert r.returncode == 0, r.stderr
    assert "round 2:" in r.stdout and "round 1:" not in r.stdout and "done: 2 of 2 rounds" in r.stdout
    assert (b / "round-002.klv2").read_bytes() == (a / "round-002.klv2").read_bytes()
    assert (b / "SCOWL70.csv").read_bytes() == (a / "SCOWL70.csv").read_bytes()
    port = _closed_port()
    r = _cli("leaves", "train", "--out", str(tmp_path / "c"), "--games", "4", "--cluster", f"127.0.0.1:{port}")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"cannot reach the Dask scheduler at 127.0.0.1:{port}" in r.stderr
    assert not (tmp_path / "c" / "state.json").exists()


# ------------------------------------------------------------------ leave files refused


def test_mismatched_or_corrupted_klv2_refused(tmp_path):
    cases = {
        "QQ holds 2 Q": write_klv2([(ml("QQ"), 1.0)]),
        "??? holds 3 ?": write_klv2([(ml("???"), 1.0)]),
        "outside the 27-letter alphabet": write_klv2([(bytes([30]), 1.0)]),
        "more than 6 tiles": write_klv2([(ml("AEINRST"), 1.0)]),
    }
    for needle, data in cases.items():
        p = tmp_path / "x.klv2"
        p.write_bytes(data)
        with pytest.raises(LexiconError, match=re.escape(needle)):
            load_klv(p, "", LD)
    good = write_klv2([(ml("S"), 8.0), (ml("?"), 25.0)])
    for data, needle in ((good[:-2], "should follow the graph"), (good[:6], "too short|file has"),
                         (b"\xff" * 64, "KLV")):
        p = tmp_path / "y.klv2"
        p.write_bytes(data)
        with pytest.raises(LexiconError, match=needle):
            load_klv(p, "", LD)


def test_mismatched_klv2_beside_a_lexicon_and_named_in_requests(tmp_path):
    from macondo_server.api.grpc_server import create_server
    from macondo_server.pb.macondo.v1 import engine_pb2 as pb
    from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc
    from macondo_server.runtime.limits import Limits

    d = tmp_path / "data"
    d.mkdir()
    shutil.copy(PACKAGE_DATA / "lexica" / "SCOWL70.txt", d / "MINI.txt")
    (d / "MINI.klv2").write_bytes(write_klv2([(ml("QQ"), 1.0)]))
    (d / "spanish.klv2").write_bytes(write_klv2([(bytes([29]), 1.0)]))
    with pytest.raises(LexiconError, match="lexicon MINI: MINI.klv2: KLV leave QQ"):
        LexiconRegistry(Settings.load(str(d))).get("MINI")
    r = _cli("--data-dir", str(d), "gen", OPENING, "--lexicon", "MINI")
    assert r.returncode == 1 and "QQ holds 2 Q" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    running = create_server(Settings.load(str(d)), "127.0.0.1", 0, limits=Limits.load(environ={}))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
            stub = pb_grpc.EngineStub(ch)
            with pytest.raises(grpc.RpcError) as exc:
                stub.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=OPENING), leaves="spanish"),
                                   timeout=30)
            assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "outside the 27-letter alphabet" in exc.value.details() and "/" not in exc.value.details()
            with pytest.raises(grpc.RpcError) as exc:
                stub.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=OPENING, lexicon="MINI")),
                                   timeout=30)
            assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "QQ" in exc.value.details()
    finally:
        running.stop(1)


# ------------------------------------------------------------------ shipped leaves and win tables


def test_shipped_leaves_and_win_table_for_the_bundled_lexicon():
    lex = LexiconRegistry(Settings.load()).get("SCOWL70")
    shipped = PACKAGE_DATA / "lexica" / "SCOWL70.klv2"
    if not shipped.is_file():
        pytest.skip("no shipped SCOWL70 leaves in this checkout")
    assert lex.klv is not None and lex.klv.n_values == 914_624
    assert lex.klv.leave_value(ml("?")) > 15_000 and lex.klv.leave_value(ml("S")) > 3_000
    assert lex.klv.leave_value(ml("Q")) < 0 and lex.klv.leave_value(ml("UU")) < 0
    own = PACKAGE_DATA / "lexica" / "SCOWL70.winpct.csv"
    assert lex.winpct == (own if own.is_file() else DEFAULT_WINPCT)
    t = lex.win_table()
    assert t.shape == (601, 94)
    assert t[0, 50] > 0.9 > 0.1 > t[600, 50]        # +300 wins, -300 loses
    assert np.all(np.diff(t[:, 40]) <= 1e-9)          # more spread, more wins


def test_win_table_per_lexicon_and_bad_tables(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    shutil.copy(PACKAGE_DATA / "lexica" / "SCOWL70.txt", d / "MINI.txt")
    assert LexiconRegistry(Settings.load(str(d))).get("MINI").winpct == DEFAULT_WINPCT
    table = np.loadtxt(DEFAULT_WINPCT, delimiter=",", comments="#")
    table[300, 10] = 0.123
    np.savetxt(d / "MINI.winpct.csv", table, delimiter=",", fmt="%.4f")
    lex = LexiconRegistry(Settings.load(str(d))).get("MINI")
    assert lex.winpct == d / "MINI.winpct.csv" and lex.win_table()[300, 10] == pytest.approx(0.123)
    (d / "MINI.winpct.csv").write_text("0.5,0.5\n")
    with pytest.raises(LexiconError, match="MINI.winpct.csv: 1 x 2 values"):
        LexiconRegistry(Settings.load(str(d))).get("MINI")
    (d / "MINI.winpct.csv").write_text("x,y\n")
    with pytest.raises(LexiconError, match="not a win-probability table"):
        load_win_table(str(d / "MINI.winpct.csv"))
    too_wide = np.full((601, 402), 0.5)
    np.savetxt(d / "MINI.winpct.csv", too_wide, delimiter=",", fmt="%.1f")
    with pytest.raises(LexiconError, match="601 rows of 2 to 401"):
        load_win_table(str(d / "MINI.winpct.csv"))


def test_a_distribution_of_its_own_has_its_own_leaves_and_win_table(tmp_path):
    """NAME.DISTRIBUTION.klv2 and NAME.DISTRIBUTION.winpct.csv beside a lexicon are its leaves and win table
    when it is played with that distribution (the 21x21 game's english_super); otherwise its own. A table may
    have as many columns as the game has unseen tiles (194 on the 21x21 board), and the simulation and the
    inference read past its last column as the last one."""
    from engine_cy.game import Game
    from engine_cy.sim import SimWorker

    d = tmp_path / "data"
    d.mkdir()
    shutil.copy(PACKAGE_DATA / "lexica" / "SCOWL70.txt", d / "MINI.txt")
    shutil.copy(PACKAGE_DATA / "lexica" / "SCOWL70.klv2", d / "MINI.klv2")
    wide = np.tile(np.linspace(1.0, 0.0, 601)[:, None], (1, 194))
    wide[300, 150] = 0.321
    wide[300, 193] = 0.456
    np.savetxt(d / "MINI.english_super.winpct.csv", wide, delimiter=",", fmt="%.4f")
    reg = LexiconRegistry(Settings.load(str(d)))
    base = reg.get("MINI")
    assert base.winpct == DEFAULT_WINPCT
    sup = base.for_distribution("english_super")
    assert sup.winpct == d / "MINI.english_super.winpct.csv" and sup.win_table().shape == (601, 194)
    assert sup.win_table()[300, 150] == pytest.approx(0.321)
    assert sup.klv is base.klv            # no leaves of its own for english_super: the lexicon's
    # leaves of its own: a different file, checked against the distribution
    shutil.copy(PACKAGE_DATA / "lexica" / "SCOWL70.klv2", d / "MINI.english_super.klv2")
    sup2 = LexiconRegistry(Settings.load(str(d))).get("MINI", "english_super")
    assert sup2.klv is not None and sup2.klv is not base.klv and sup2.ld.name == "english_super"
    (d / "MINI.english_super.klv2").write_bytes(b"not leaves")
    with pytest.raises(LexiconError, match="MINI.english_super.klv2"):
        LexiconRegistry(Settings.load(str(d))).get("MINI", "english_super")
    # the simulation reads the wide table; 193 or more unseen tiles read its last column
    g = Game(sup.kwg, sup.ld, sup.new_board(), 1)
    g.fill_rack(0)
    g.fill_rack(1)
    w = SimWorker(g, sup.kwg, sup.klv, sup.ld, [("pass", 0, 0, False, [], 0)], [], sup.win_table(), seed=1, plies=1)
    assert w.win_at(0, 150) == pytest.approx(0.321) and w.win_at(0, 193) == pytest.approx(0.456)
    assert w.win_at(0, 250) == pytest.approx(0.456)
    with pytest.raises(ValueError, match="601 x 2 to 401"):
        SimWorker(g, sup.kwg, sup.klv, sup.ld, [("pass", 0, 0, False, [], 0)], [], np.zeros((601, 1)), seed=1)
