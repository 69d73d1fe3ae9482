"""The simulation's best-arm identification stopping rule (--stop-rule bai): its statistics against independent
computations, its error rate on arms of known means, and the rule in a simulation, the CLI, the API and the
shell."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from macondo_client.render import sim_json, sim_table

from macondo_server.analysis import bai
from macondo_server.analysis.sim import SIMILAR_PRUNE_AFTER, SimJob, SimOptions
from macondo_server.api.convert import sim_to_pb
from macondo_server.model.cgp import parse_cgp

# the bundled lexicon: these tests need no shared data
CAT = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15 AEINRST/ 10/0 0 lex SCOWL70;"


# ------------------------------------------------------------------ the statistics


def test_glr_is_the_least_likelihood_ratio_over_the_alternatives():
    # Z is the least, over the alternatives where the mean difference is 0 or less, of the Gaussian log-likelihood
    # ratio n (m - mu)^2 / (2 v): found here on a grid of mu, independently of the closed form
    rng = np.random.default_rng(4)
    for _ in range(50):
        p = bai.Pair(int(rng.integers(2, 500)), float(rng.normal(0, 0.05)), float(rng.uniform(0.001, 0.1)))
        mu = np.linspace(-1, 0, 200_001)
        want = (p.n * (p.mean - mu) ** 2 / (2 * p.var)).min()
        assert bai.glr(p) == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_pairs_threshold_leader_and_challenger():
    # the sums of the differences give their mean and sample variance, floored
    d = np.array([0.1, -0.05, 0.2, 0.0, 0.15])
    (p,) = bai.pairs_from_sums([(len(d), float(d.sum()), float((d * d).sum()))], 1e-6)
    assert p.n == 5 and p.mean == pytest.approx(d.mean()) and p.var == pytest.approx(d.var(ddof=1))
    assert bai.pairs_from_sums([(3, 0.3, 0.03)], 0.5)[0].var == 0.5
    assert bai.variance_floor([0.0, 0.04, 0.09]) == pytest.approx(0.01 * 0.09)
    assert bai.threshold(100, 2, 0.05) == pytest.approx(math.log((1 + math.log(100)) / 0.05))
    assert bai.threshold(100, 8, 0.05) > bai.threshold(100, 2, 0.05)          # the union over K - 1 plays
    assert bai.threshold(10_000, 8, 0.05) > bai.threshold(100, 8, 0.05)
    assert bai.threshold(100, 8, 0.01) > bai.threshold(100, 8, 0.05)
    assert bai.leader_of([0.5, 0.6, 0.6, 0.3], [10, 10, 20, 10]) == 2           # a tie: the better known
    pairs = [bai.Pair(100, 0.1, 0.01), bai.Pair(0, 0.0, 1.0), bai.Pair(100, 0.01, 0.01), bai.Pair(400, 0.01, 0.01)]
    assert bai.challenger_of(pairs, 1) == 2                      # the closest, the less known of the two closest
    assert bai.challenger_of(pairs, 1, excluded=[2]) == 3
    settled, least, beta = bai.separated(pairs, 1, 1000, 0.05)
    assert not settled and least == pytest.approx(bai.glr(pairs[2])) and beta == bai.threshold(1000, 4, 0.05)
    assert bai.separated([bai.Pair(400, 0.1, 0.01), bai.Pair(0, 0, 1)], 1, 800, 0.05)[0]


def _identify(means, sd, rho, delta, rng, cap=200_000):
    """The rule of SimJob._run_bai on Gaussian plays whose samples on a common draw correlate at rho: every play on
    the first draws, then rounds of draws each simulating the leader and its challenger."""
    k = len(means)
    samples: list[dict[int, float]] = [{} for _ in range(k)]
    drawn = 0

    def simulate(plays, n):
        nonlocal drawn
        common = rng.normal(0, 1, n)
        for i in plays:
            own = rng.normal(0, 1, n)
            for j in range(n):
                samples[i][drawn + j] = means[i] + sd * (math.sqrt(rho) * common[j] + math.sqrt(1 - rho) * own[j])
        drawn += n

    simulate(range(k), bai.INITIAL_SAMPLES)
    while drawn < cap:
        mean = [float(np.mean(list(x.values()))) for x in samples]
        lead = bai.leader_of(mean, [len(x) for x in samples])
        sums = []
        for b in range(k):
            diffs = [samples[lead][j] - v for j, v in samples[b].items() if j in samples[lead]] if b != lead else []
            sums.append((len(diffs), sum(diffs), sum(x * x for x in diffs)))
        pairs = bai.pairs_from_sums(sums, bai.variance_floor([float(np.var(list(x.values()))) for x in samples]))
        if bai.separated(pairs, lead, sum(len(x) for x in samples), delta)[0]:
            return lead, sum(len(x) for x in samples)
        simulate([lead, bai.challenger_of(pairs, lead)], bai.BATCH)
    return -1, cap


def test_error_rate_within_delta_on_known_plays():
    # hard instances (the best a fifth of a standard deviation ahead of the runner-up, samples correlated as a
    # simulation's are): the rule names the best at least as often as 1 - delta asks, in a finite time, and
    # far sooner than sampling every play on every draw would need
    rng = np.random.default_rng(11)
    delta = 0.2
    means = [0.50, 0.46, 0.45, 0.40, 0.30]
    named = [_identify(means, 0.2, 0.6, delta, rng) for _ in range(200)]
    wrong = sum(lead != 0 for lead, _ in named)
    assert all(lead >= 0 for lead, _ in named)
    assert wrong <= delta * 200, wrong
    assert np.median([n for _, n in named]) < 2000


# ------------------------------------------------------------------ in a simulation


def _run(engine, **kw):
    job = SimJob(engine, parse_cgp(CAT), SimOptions(plies=1, num_plays=6, seed=5, **kw))
    return job.run()


def test_bai_simulation_stops_names_the_leader_and_ignores_the_thread_count(engine):
    one = _run(engine, stop_rule="bai", confidence=0.95, threads=1, iterations=20_000)
    two = _run(engine, stop_rule="bai", confidence=0.95, threads=2, iterations=20_000)
    assert one.stopped_reason == "95% confidence (best-arm identification)"
    assert one.stop_rule == "bai" and one.confidence == 0.95
    # the same draws for the same plays (the sums differ only by their order of addition)
    figures = [[(p.text, p.n, round(p.win_pct, 9), round(p.equity, 9)) for p in r.plays] for r in (one, two)]
    assert figures[0] == figures[1] and one.iterations == two.iterations and one.samples == two.samples
    assert one.samples == sum(p.n for p in one.plays)
    # every play had its first draws; each later draw simulated a leader and a challenger
    assert all(p.n >= bai.INITIAL_SAMPLES for p in one.plays)
    assert one.samples == bai.INITIAL_SAMPLES * 6 + 2 * (one.iterations - bai.INITIAL_SAMPLES)
    # the leader named is separated at the threshold from every other play but its anagrams on the same squares
    # (the same tiles in another order: settled once the leader has SIMILAR_PRUNE_AFTER samples, as the z-test
    # prunes them): checked here from the pairs' sums the workers kept
    job = SimJob(engine, parse_cgp(CAT), SimOptions(plies=1, num_plays=6, seed=5, stop_rule="bai", confidence=0.95,
                                                    threads=2, iterations=20_000))
    res = job.run()
    lead = next(i for i, p in enumerate(job.plays) if p.text == res.plays[0].text)
    pairs = job._bai_pairs(lead)
    anagrams = [i for i, p in enumerate(job.plays) if i != lead and SimJob._similar(p, job.plays[lead])]
    assert bai.separated(pairs, lead, res.samples, 0.05, anagrams)[0]
    assert not anagrams or job.plays[lead].n > SIMILAR_PRUNE_AFTER
    # the pairs' sums are those of the differences on common draws: the initial draws are common to all
    assert all(p.n >= bai.INITIAL_SAMPLES for b, p in enumerate(pairs) if b != lead)


def test_bai_caps_time_and_the_z_test_is_unchanged(engine):
    capped = _run(engine, stop_rule="bai", confidence=0.9999, threads=1, iterations=120)
    assert capped.stopped_reason == "iterations" and capped.iterations == 120
    z = _run(engine, stop=95, threads=1, iterations=2000)
    same = _run(engine, stop_rule="z", confidence=0.95, threads=1, iterations=2000)
    assert [(p.text, p.n, p.win_pct) for p in z.plays] == [(p.text, p.n, p.win_pct) for p in same.plays]
    assert z.stop_rule == "z" and z.samples == sum(p.n for p in z.plays)
    timed = _run(engine, stop_rule="bai", confidence=0.9999, threads=1, max_time=0.5)
    assert timed.stopped_reason in ("time limit", "99.99% confidence (best-arm identification)")


@pytest.mark.parametrize("bad,needle", [
    (dict(stop_rule="fast"), "stop rule must be z or bai"),
    (dict(stop_rule="bai", confidence=0.3), "confidence must be 0.5 to 0.9999"),
    (dict(confidence=0.97), "z-test's confidence must be 0.95, 0.98 or 0.99"),
    (dict(stop=95, confidence=0.99), "disagree"),
    (dict(stop_rule="bai", stop=95, confidence=0.99), "disagree"),
])
def test_bad_options(bad, needle):
    with pytest.raises(ValueError, match=needle):
        SimOptions(**bad).validate()


def test_options_resolve_the_rule_and_its_level():
    assert SimOptions(stop_rule="bai").bai_confidence() == 0.95
    assert SimOptions(stop_rule="bai", stop=99).bai_confidence() == 0.99
    assert SimOptions(stop_rule="bai").z_stop() is None
    assert SimOptions(confidence=0.98).z_stop() == 98 and SimOptions(stop=95).z_stop() == 95
    assert SimOptions().z_stop() is None and SimOptions().bai_confidence() is None


def test_render_and_cli(engine):
    res = _run(engine, stop_rule="bai", confidence=0.9, threads=1, iterations=20_000)
    msg = sim_to_pb(res, "", False)
    assert msg.stop_rule == "bai" and msg.samples == res.samples and msg.confidence == pytest.approx(0.9)
    assert f"Best-arm identification at 90% confidence: {res.samples} playouts" in sim_table(msg)
    d = sim_json(msg)
    assert d["stop_rule"] == "bai" and d["samples"] == res.samples and d["confidence"] == pytest.approx(0.9)
    run = [sys.executable, "-m", "macondo_server", "sim", CAT, "--plies", "1", "--num-plays", "6", "--seed", "5",
           "--threads", "1", "--iterations", "20000"]
    out = json.loads(subprocess.run(run + ["--stop-rule", "bai", "--confidence", "0.9", "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    assert out["stopped_reason"] == "90% confidence (best-arm identification)"
    assert [p["move"] for p in out["plays"]] == [p["move"] for p in d["plays"]] and out["samples"] == res.samples
    for args, needle in ((["--stop-rule", "fast"], "invalid choice"), (["--confidence", "2"], "0.5 to 0.9999"),
                         (["--confidence", "0.97"], "z-test's confidence"),
                         (["--stop-rule", "bai", "--stop", "95", "--confidence", "0.99"], "disagree")):
        bad = subprocess.run(run + args, capture_output=True, text=True)
        lines = bad.stderr.strip().splitlines()
        assert bad.returncode == 1 and len(lines) == 1 and needle in lines[0], (args, bad.stderr)


def test_api_and_shell(client):
    from macondo_client import pb
    from macondo_client.client import InvalidArgument
    from macondo_client.shell import run_shell

    final = client.simulate(CAT, plies=1, num_plays=6, seed=5, threads=1, iterations=20_000, stop_rule="bai",
                            confidence=0.9).result()
    assert final.stop_rule == "bai" and final.stop_reason == "90% confidence (best-arm identification)"
    assert final.samples == sum(p.iterations for p in final.plays)
    for fields, needle in ((dict(stop_rule="fast"), "stop rule"), (dict(stop_rule="bai", confidence=0.2), "0.5"),
                           (dict(confidence=0.9), "z-test's confidence")):
        with pytest.raises(InvalidArgument, match=needle):          # INVALID_ARGUMENT, as the client names it
            client.simulate(CAT, plies=1, num_plays=2, iterations=10, **fields).result()
    assert pb.SimulateRequest.DESCRIPTOR.fields_by_name["stop_rule"].number == 15
    out = io.StringIO()
    run_shell(client, stdin=io.StringIO(f"load cgp {CAT}\nsim -plies 1 -num-plays 6 -seed 5 -threads 1 "
                                        "-stop-rule bai -confidence 0.9 -fg\nquit\n"), stdout=out)
    text = out.getvalue()
    assert "Traceback" not in text and "90% confidence (best-arm identification)" in text, text
    assert f"Best-arm identification at 90% confidence: {final.samples} playouts" in text
