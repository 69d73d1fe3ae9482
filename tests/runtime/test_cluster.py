"""Pre-endgames and self-play on a Dask LocalCluster of two worker processes: the same verdicts, tallies and
ranking as the in-process solve, with a worker killed mid-solve, after a stop and a resume from the checkpoint;
clear errors for an unreachable scheduler and a version mismatch. Skipped without dask (the `cluster` extra)."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import time

import pytest

pytest.importorskip("distributed")

from macondo_server.analysis.peg import task as peg_task
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.model.cgp import parse_cgp
from macondo_server.runtime import cluster as cluster_mod
from macondo_server.runtime.checkpoint import CheckpointError, CheckpointStore
from macondo_server.runtime.cluster import Cluster, ClusterError, parse_cluster_spec

from conftest import load_cases, needs_cases, needs_nwl20

CASES = {c["id"]: c for c in load_cases("peg")}
# the 1-in-the-bag case: a handful of its plays (the whole list takes minutes on a busy machine)
ONYX_PLAYS = ["13L ONYX", "13L OXY", "13J EXON", "N1 XYST", "14D ENS", "14F ST(E)Y"]


def _onyx_opts(**kw) -> PegOptions:
    return PegOptions(**{"endgame_plies": 2, "threads": 2, "only_solve": ONYX_PLAYS, **kw})


def _axe_opts(**kw) -> PegOptions:
    return PegOptions(**{"endgame_plies": 2, "threads": 2, "only_solve": ["6F .X."], **kw})


def summary(res) -> list:
    """Everything the result reports per play, in ranking order: play, tallies, every draw's verdict, the
    tiebreak spread, cut-off."""
    return [(p.text, p.wins, p.draws, p.losses, p.unresolved, p.cut_off, p.spread,
             sorted((g.label, g.weight, g.outcome, g.quick) for g in p.groups)) for p in res.plays]


@pytest.fixture(scope="module")
def cluster(engine):
    with Cluster("local:2", data_dirs=[str(d) for d in engine.settings.data_dirs]) as cl:
        yield cl


@pytest.fixture(scope="module")
def reference(engine):
    """In-process results, solved once per module."""
    out = {}

    def get(name: str):
        if name not in out:
            c = CASES[name]
            opts = _onyx_opts() if name == "peg-onyx-nwl20" else _axe_opts()
            out[name] = PegJob(engine, parse_cgp(c["cgp"]), opts).run()
        return out[name]

    return get


def _worker_pids(cl: Cluster) -> dict:
    return cl.client.run(os.getpid)


@needs_cases
def test_one_in_bag_identical_to_in_process(engine, cluster, reference):
    c = CASES["peg-onyx-nwl20"]
    ref = reference("peg-onyx-nwl20")
    res = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), cluster=cluster).run()
    assert res.finished and res.complete and res.cluster_workers == 2 and res.cluster_tasks > 1
    assert summary(res) == summary(ref)
    assert res.winner.text == ref.winner.text and res.total_permutations == 8
    assert res.endgames == ref.endgames   # the same work, counted on the workers
    # the lexicon was loaded once per worker process, not once per task
    stats = cluster.client.run(cluster_mod.worker_stats)
    assert all(s["lexicon_loads"] == 1 for s in stats.values()), stats


@needs_cases
def test_two_in_bag_identical_to_in_process(engine, cluster, reference):
    c = CASES["peg-axe-2bag-csw21"]
    ref = reference("peg-axe-2bag-csw21")
    res = PegJob(engine, parse_cgp(c["cgp"]), _axe_opts(), cluster=cluster).run()
    (play,) = res.plays
    assert play.points == 70 and res.total_permutations == 72   # the case's known answer
    assert summary(res) == summary(ref)


@needs_cases
def test_worker_killed_mid_solve_gives_the_same_result(engine, cluster, reference):
    c = CASES["peg-onyx-nwl20"]
    ref = reference("peg-onyx-nwl20")
    before = _worker_pids(cluster)
    victim = sorted(before.values())[0]
    killed = []
    job = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), cluster=cluster)

    def progress(r) -> None:
        if not killed and r.done_jobs + r.quick_done_jobs >= 3:
            os.kill(victim, signal.SIGKILL)   # the worker process dies with its tasks; the nanny restarts it
            killed.append((r.done_jobs, r.quick_done_jobs))

    res = job.run(progress, interval=0.05)
    assert killed, "the solve ended before the kill"
    assert killed[0][0] < res.done_jobs   # killed mid-solve: the full pass went on after it
    assert summary(res) == summary(ref)
    cluster.client.wait_for_workers(2, timeout=60)
    assert victim not in _worker_pids(cluster).values()


@needs_cases
def test_stop_halfway_and_resume_gives_the_same_result(engine, cluster, reference, tmp_path):
    c = CASES["peg-onyx-nwl20"]
    ref = reference("peg-onyx-nwl20")
    path = tmp_path / "peg.sqlite"
    store = CheckpointStore(path)
    job = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), cluster=cluster, checkpoint=store)
    half = job.total_jobs // 2

    def progress(r) -> None:
        if r.phase == "full" and r.done_jobs >= half:
            job.stop()

    first = job.run(progress, interval=0.02)
    assert not first.finished and first.done_jobs >= half
    finished_at_stop = first.done_jobs + first.quick_done_jobs + first.quick2_done_jobs
    assert first.checkpointed == finished_at_stop   # every verdict known at the stop is recorded
    store.close()
    # a new process would open the same file: resume from it (the in-process solver and the cluster agree)
    store = CheckpointStore(path)
    resumed = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), cluster=cluster, checkpoint=store, resume=True).run()
    assert resumed.reused >= finished_at_stop >= job.total_jobs // 2
    assert resumed.finished
    assert summary(resumed) == summary(ref)
    # resuming a finished solve solves nothing again
    again = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), checkpoint=store, resume=True).run()
    assert again.endgames == 0 and summary(again) == summary(ref)
    # other options that change verdicts use another key: nothing is reused
    other = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=1, only_solve=ONYX_PLAYS[:1], threads=1),
                   checkpoint=store, resume=True).run()
    assert other.reused == 0
    store.close()


@needs_cases
def test_in_process_checkpoint_resume(engine, reference, tmp_path):
    """The checkpoint works without a cluster too: stopped in-process, resumed in-process."""
    c = CASES["peg-onyx-nwl20"]
    ref = reference("peg-onyx-nwl20")
    store = CheckpointStore(tmp_path / "p.sqlite")
    job = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), checkpoint=store)

    def progress(r) -> None:
        if r.phase == "full" and r.done_jobs >= 4:
            job.stop()

    first = job.run(progress, interval=0.0)
    res = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), checkpoint=store, resume=True).run()
    assert res.reused >= first.done_jobs + first.quick_done_jobs + first.quick2_done_jobs
    assert summary(res) == summary(ref)


def test_unreachable_scheduler_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]   # nothing listens there once closed
    t0 = time.monotonic()
    with pytest.raises(ClusterError, match=f"cannot reach the Dask scheduler at 127.0.0.1:{port}"):
        Cluster(f"127.0.0.1:{port}", timeout=2)
    assert time.monotonic() - t0 < 30


def test_version_mismatch_is_a_clear_error(cluster, monkeypatch):
    monkeypatch.setattr(cluster_mod, "PROTOCOL", 999)   # this side only: the workers keep theirs
    with pytest.raises(ClusterError, match=r"version mismatch: worker .*task protocol 1\), this machine .*protocol 999"):
        cluster.check_versions()
    monkeypatch.setattr(cluster_mod, "PROTOCOL", 1)
    monkeypatch.setattr(cluster_mod, "__version__", "0.0.1")   # another package version, the same protocol
    with pytest.raises(ClusterError, match=r"version mismatch: worker .* runs macondo .*this machine 0\.0\.1") as err:
        cluster.check_versions()
    assert err.value.precondition and "\n" not in str(err.value)


@pytest.mark.parametrize("spec", ["local:0", "local:x", "local:9999", "foo bar", "", "http://x:1/path"])
def test_bad_cluster_specs(spec):
    with pytest.raises(ClusterError):
        parse_cluster_spec(spec)


def test_cluster_specs():
    assert parse_cluster_spec("local:2") == ("local", 2)
    assert parse_cluster_spec("tcp://10.0.0.5:8786") == ("address", "tcp://10.0.0.5:8786")
    assert parse_cluster_spec("scheduler.example:8786") == ("address", "scheduler.example:8786")


def test_checkpoint_store_errors(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(CheckpointError, match="not a usable SQLite file"):
        CheckpointStore(bad)
    with pytest.raises(CheckpointError, match="is a directory"):
        CheckpointStore(tmp_path)
    with pytest.raises(CheckpointError, match="does not exist"):
        CheckpointStore(tmp_path / "no" / "such.sqlite")
    store = CheckpointStore(tmp_path / "ok.sqlite")
    store.put("k", [("full", "8D ONYX", "[Y]", 0, None)])
    assert store.begin("k", "x", resume=True) == {("full", "8D ONYX", "[Y]"): (0, None)}
    assert store.begin("k", "x", resume=False) == {}   # a fresh start drops the old verdicts
    store.close()
    with sqlite3.connect(tmp_path / "ok.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0


@needs_cases
def test_checkpoint_key_covers_the_options(engine):
    c = CASES["peg-onyx-nwl20"]
    pos = parse_cgp(c["cgp"])
    key = PegJob(engine, pos, _onyx_opts()).checkpoint_key()
    assert key == PegJob(engine, pos, _onyx_opts(early_cutoff=True, max_time=5)).checkpoint_key()
    for changed in (dict(endgame_plies=3), dict(opponent_model="solver"), dict(endgame_leaf="static"),
                    dict(max_nested_depth=2), dict(opp_rack="A")):
        opts = _onyx_opts(**changed)
        assert PegJob(engine, pos, opts).checkpoint_key() != key, changed


def test_autoplay_on_the_cluster_plays_the_same_games(engine, cluster, tmp_path):
    """Self-play split across the workers: game for game the in-process games of the seed (GCG included)."""
    from macondo_server.analysis.selfplay import bot_sources, bots_from_options, run_autoplay

    bot1, bot2 = bots_from_options(engine, None, None, None, None)
    here = run_autoplay(bot1, bot2, 24, seed=11, threads=2, pairs=True, gcg_dir=str(tmp_path / "here"))
    there = run_autoplay(bot1, bot2, 24, seed=11, pairs=True, gcg_dir=str(tmp_path / "there"), cluster=cluster,
                         sources=bot_sources(engine, None, None, None, None))
    assert there.records == here.records and there.wins == here.wins
    files = sorted(p.name for p in (tmp_path / "here").iterdir())
    assert len(files) == 24 and files == sorted(p.name for p in (tmp_path / "there").iterdir())
    for name in files:
        assert (tmp_path / "here" / name).read_text() == (tmp_path / "there" / name).read_text()


# ---------------------------------------------------------------------------------------- over gRPC


@pytest.fixture(scope="module")
def grpc_server(cluster, tmp_path_factory):
    """A server whose requests may use the module's cluster and a checkpoint folder (serve --cluster
    --checkpoint-dir), and a plain one that has neither."""
    import grpc

    from macondo_server.api.grpc_server import create_server
    from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

    from conftest import shared_settings

    store = CheckpointStore(tmp_path_factory.mktemp("ckpt") / "peg.sqlite")
    with_cluster = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=3)
    with_cluster.servicer.attach_cluster(cluster, store)
    plain = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=3)
    channels = [grpc.insecure_channel(f"127.0.0.1:{s.port}") for s in (with_cluster, plain)]
    yield [pb_grpc.EngineStub(ch) for ch in channels]
    for ch in channels:
        ch.close()
    with_cluster.servicer.attach_cluster(None, None)   # the module's cluster is closed by its own fixture
    with_cluster.stop(1)
    plain.stop(1)
    store.close()


def _pb_summary(msg) -> list:
    return [(p.move.description if hasattr(p.move, "description") else str(p.move), p.wins, p.cut_off,
             sorted((o.draw, o.result, o.weight) for o in p.outcomes)) for p in msg.plays]


@needs_cases
def test_grpc_cluster_checkpoint_and_resume(grpc_server):
    import grpc

    from macondo_server.pb.macondo.v1 import engine_pb2 as pb

    stub, plain = grpc_server
    c = CASES["peg-onyx-nwl20"]

    def req(**kw):
        return pb.SolvePreEndgameRequest(position=pb.Position(cgp=c["cgp"]), endgame_plies=2,
                                         only_solve=ONYX_PLAYS, threads=2, **kw)

    here = list(stub.SolvePreEndgame(req(), timeout=300))[-1]
    there = list(stub.SolvePreEndgame(req(use_cluster=True, checkpoint=True), timeout=300))[-1]
    assert there.cluster_workers == 2 and there.cluster_tasks > 0 and here.cluster_workers == 0
    assert there.finished and _pb_summary(there) == _pb_summary(here) and there.winner == here.winner
    # every verdict, quick and full, and the tiebreak's exact spreads (the six plays all win every draw)
    assert there.checkpointed_verdicts > there.draws_done + there.quick_draws_done
    again = list(stub.SolvePreEndgame(req(resume=True), timeout=300))[-1]
    assert again.reused_verdicts == there.checkpointed_verdicts and again.endgames == 0
    assert _pb_summary(again) == _pb_summary(here)
    # a server without a cluster or checkpoint folder refuses the opt-ins with FAILED_PRECONDITION
    for kw, text in ((dict(use_cluster=True), "without --cluster"), (dict(resume=True), "without --checkpoint-dir")):
        with pytest.raises(grpc.RpcError) as err:
            list(plain.SolvePreEndgame(req(**kw), timeout=60))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION and text in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        list(plain.Autoplay(pb.AutoplayRequest(games=2, use_cluster=True), timeout=60))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_grpc_autoplay_on_the_cluster(grpc_server):
    from macondo_server.pb.macondo.v1 import engine_pb2 as pb

    stub, _ = grpc_server
    a = list(stub.Autoplay(pb.AutoplayRequest(games=12, seed=5, threads=1), timeout=120))[-1]
    b = list(stub.Autoplay(pb.AutoplayRequest(games=12, seed=5, use_cluster=True), timeout=120))[-1]
    assert a.games_done == b.games_done == 12
    assert list(a.wins) == list(b.wins) and list(a.mean_score) == list(b.mean_score)


def test_scheduler_without_workers_is_a_clear_error():
    import distributed

    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as empty:
        with pytest.raises(ClusterError, match="has no workers"):
            Cluster(empty.scheduler_address, timeout=2)


# ---------------------------------------------------------------------------------------- all workers lost


@needs_cases
def test_all_workers_lost_mid_solve_is_a_clear_error(engine, monkeypatch):
    """Every worker process dies mid-solve and none comes back (workers without a nanny): the solve ends with
    a one-line ClusterError within a bounded time, never a hang."""
    import subprocess
    import sys

    import distributed

    monkeypatch.setattr(cluster_mod, "NO_WORKERS_SECONDS", 3.0)
    c = CASES["peg-onyx-nwl20"]
    env = dict(os.environ, MACONDO_DATA_DIR=os.pathsep.join(str(d) for d in engine.settings.data_dirs))
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0", silence_logs=50) as sched:
        workers = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", sched.scheduler_address,
                                     "--no-nanny", "--nthreads", "1", "--no-dashboard"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
        try:
            with Cluster(sched.scheduler_address, timeout=60) as cl:
                cl.client.wait_for_workers(2, timeout=60)
                job = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), cluster=cl)
                killed_at: list[float] = []

                def progress(r) -> None:
                    if not killed_at and r.done_jobs + r.quick_done_jobs >= 2:
                        for w in workers:
                            w.kill()
                        killed_at.append(time.monotonic())

                with pytest.raises(ClusterError) as err:
                    job.run(progress, interval=0.05)
                assert killed_at, "the solve ended before the kill"
                assert time.monotonic() - killed_at[0] < 45
                text = str(err.value)
                assert "\n" not in text and ("no workers" in text or "failed on the cluster" in text), text
                if job._dispatch is not None:   # the dead workers' table file is removed by the client
                    assert not os.path.exists(os.path.join(peg_task.SHM_DIR,
                                                           peg_task.shm_prefix() + job._dispatch.run))
        finally:
            for w in workers:
                w.kill()
                w.wait(10)


# ---------------------------------------------------------------------------------------- the shared table


def test_shared_table_points_a_table_at_one_mapping(tmp_path):
    """Two tables (as in two worker processes) mapped on one file see each other's entries; detached, each
    has its own entries back and the file's are untouched."""
    from engine_cy.endgame import TranspositionTable
    from engine_cy.sharedtt import SharedTable, table_bytes

    size = table_bytes(1)
    path = tmp_path / "tt"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.posix_fallocate(fd, 0, size)
    a, b = TranspositionTable(1), TranspositionTable(1)
    sa, sb = SharedTable(a, fd, size), SharedTable(b, fd, size)
    os.close(fd)
    assert a.n_entries == b.n_entries == size // 24 and sa.attached
    a.clear()   # writes through the mapping: every byte of the file zero
    with open(path, "r+b") as fh:
        fh.write(b"\x01" * 24)
    with open(path, "rb") as fh:
        assert fh.read(24) == b"\x01" * 24
    b.clear()   # b's clear is a's too: the same memory
    with open(path, "rb") as fh:
        assert fh.read(24) == bytes(24)
    sa.detach()
    sb.detach()
    assert not sa.attached and a.megabytes <= 1
    with pytest.raises(ValueError):
        SharedTable(a, 0, 100)


@needs_cases
def test_workers_share_one_table_and_remove_it(engine, cluster, reference):
    """During a solve both worker processes map the run's one table file in /dev/shm; after it the file is
    gone; verdicts are the in-process ones. A stale file that no process locks is swept."""
    if not os.path.isdir(peg_task.SHM_DIR):
        pytest.skip("no /dev/shm")
    stale = os.path.join(peg_task.SHM_DIR, peg_task.shm_prefix() + "0" * 32)
    with open(stale, "wb") as fh:
        fh.write(b"x")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    c = CASES["peg-onyx-nwl20"]
    seen = []
    job = PegJob(engine, parse_cgp(c["cgp"]), _onyx_opts(), cluster=cluster)

    def progress(r) -> None:
        if not seen and r.done_jobs + r.quick_done_jobs >= 4:
            seen.append(cluster.client.run(peg_task.worker_stats))
            seen.append(sorted(n for n in os.listdir(peg_task.SHM_DIR) if n.startswith(peg_task.shm_prefix())))

    res = job.run(progress, interval=0.05)
    assert summary(res) == summary(reference("peg-onyx-nwl20"))
    assert seen, "the solve ended before the check"
    stats, files = seen
    assert sum(s["shared_tables"] for s in stats.values()) >= 1, stats
    run = job._dispatch.run if job._dispatch else ""
    mine = peg_task.shm_prefix() + run
    assert mine in files   # (other solves of this user may be running on this machine, each with its file)
    assert not os.path.exists(stale)   # swept: no process held it
    assert not os.path.exists(os.path.join(peg_task.SHM_DIR, mine))   # removed at the end


# ---------------------------------------------------------------------------------------- the bots harness


@needs_nwl20
def test_bots_on_the_cluster_play_the_same_games(cluster, tmp_path):
    """The bots harness's games played by the cluster's workers (talking to this process's server): game for
    game the in-process ones of the seed, GCG included, results in game order."""
    from macondo_client.bots import Bot, run_bots

    from macondo_server.api.inprocess import connect

    from conftest import shared_settings

    data_dir = os.pathsep.join(str(d) for d in shared_settings().data_dirs)
    with connect(None, data_dir) as server:
        bots = (Bot("bot1", server, "static"), Bot("bot2", server, "static"))
        here, s_here = run_bots(server, bots, 6, seed=7, lexicon="NWL20", gcg_dir=str(tmp_path / "here"))
        arrived = []
        there, s_there = run_bots(server, bots, 6, seed=7, lexicon="NWL20", gcg_dir=str(tmp_path / "there"),
                                  on_game=lambda r: arrived.append(r.index), cluster=cluster)
    assert [r.index for r in there] == list(range(6)) and sorted(arrived) == list(range(6))
    assert [(r.first, r.scores, r.turns, r.end_reason, r.moves, r.gcg) for r in there] == \
        [(r.first, r.scores, r.turns, r.end_reason, r.moves, r.gcg) for r in here]
    assert s_here.wins == s_there.wins and s_here.mean_score == s_there.mean_score
    for name in sorted(p.name for p in (tmp_path / "here").iterdir()):
        assert (tmp_path / "here" / name).read_text() == (tmp_path / "there" / name).read_text()


def test_bots_server_refusal_comes_back_as_its_error(cluster):
    """A strategy the server refuses, on the cluster: the server's own error (its status and message), not a
    cluster failure."""
    from macondo_client import MacondoError
    from macondo_client.bots import Bot, run_bots

    from macondo_server.api.inprocess import connect

    with connect(None) as server:
        bots = (Bot("bot1", server, "nosuchstrategy"), Bot("bot2", server, "static"))
        with pytest.raises(MacondoError) as here:
            run_bots(server, bots, 2, seed=1)
        with pytest.raises(MacondoError) as there:
            run_bots(server, bots, 2, seed=1, cluster=cluster)
    assert there.value.code == here.value.code and there.value.message == here.value.message


def test_bots_cli_cluster_needs_a_reachable_server(capsys):
    from macondo_server.cli import main

    assert main(["bots", "--cluster", "127.0.0.1:1", "--games", "1"]) == 1
    err = capsys.readouterr().err
    assert "needs --server" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bots_client_without_dask_is_a_clear_error():
    """The client package imports without Dask; --cluster without it is a one-line error naming the extra."""
    import subprocess
    import sys

    code = ("import sys, types; sys.modules['distributed'] = None\n"
            "import macondo_client.bots as b\n"
            "ns = types.SimpleNamespace(address='127.0.0.1:1')\n"
            "bots = (b.Bot('a', ns, 'static'), b.Bot('b', ns, 'static'))\n"
            "try:\n    b.run_bots(ns, bots, 2, 1, cluster=object())\n"
            "except b.ClusterUnavailable as exc:\n    print('ERR', exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR --cluster needs Dask") and "distributed" in out.stdout
