"""The Connect (HTTP) port against the gRPC port of the same server: GenerateMoves requests per second and
latency from 1 and 4 concurrent clients (a mid-game position, and the opening where generation is cheap and
the transport shows), and a sim stream's latency (to the first snapshot, between
snapshots, and from StopJob to the final result).

Run: .venv/bin/python bench/connect.py [--requests 300] [--json]   (starts its own server on free ports)
Clients: grpcio for gRPC, the Connect project's Python client (connectrpc, binary Protobuf) for Connect.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from collections.abc import Callable, Iterator

import grpc
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec

from macondo_server.api.connect import HttpOptions, method_info
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

OPENING = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINQST/ 0/0 0"
CGP = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
       "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0")
SERVICE = pb.DESCRIPTOR.services_by_name["Engine"]


class Caller:
    """One client connection: generate(req), simulate(req) -> iterator, stop(job_id)."""

    def __init__(self, transport: str, grpc_port: int, http_port: int) -> None:
        self.transport = transport
        if transport == "grpc":
            self.channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
            stub = pb_grpc.EngineStub(self.channel)
            self.generate: Callable = lambda r: stub.GenerateMoves(r, timeout=30)
            self.simulate: Callable[..., Iterator] = lambda r: stub.Simulate(r, timeout=60)
            self.stop: Callable = lambda j: stub.StopJob(pb.StopJobRequest(job_id=j), timeout=10)
        else:
            client = ConnectClientSync(f"http://127.0.0.1:{http_port}", codec=google_protobuf_binary_codec())
            gen, sim, stop = (method_info(SERVICE, n) for n in ("GenerateMoves", "Simulate", "StopJob"))
            self.generate = lambda r: client.execute_unary(request=r, method=gen, timeout_ms=30_000)
            self.simulate = lambda r: client.execute_server_stream(request=r, method=sim, timeout_ms=60_000)
            self.stop = lambda j: client.execute_unary(request=pb.StopJobRequest(job_id=j), method=stop)


def unary(transport: str, grpc_port: int, http_port: int, clients: int, requests: int, cgp: str) -> dict:
    req = pb.GenerateMovesRequest(position=pb.Position(cgp=cgp), num_plays=15)
    latencies: list[float] = []
    lock = threading.Lock()

    def run() -> None:
        call = Caller(transport, grpc_port, http_port)
        call.generate(req)   # connection set up before the clock
        mine = []
        for _ in range(requests):
            t0 = time.perf_counter()
            call.generate(req)
            mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    latencies.sort()
    return {"position": "opening" if cgp == OPENING else "mid-game", "transport": transport, "clients": clients,
            "requests": len(latencies),
            "rps": round(len(latencies) / wall, 1), "median_ms": round(1000 * statistics.median(latencies), 2),
            "p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 2)}


def stream(transport: str, grpc_port: int, http_port: int, seconds: float) -> dict:
    req = pb.SimulateRequest(position=pb.Position(cgp=CGP), num_plays=10, iterations=10_000_000, plies=2, seed=1,
                             threads=1)
    call = Caller(transport, grpc_port, http_port)
    t0 = time.perf_counter()
    arrivals: list[float] = []
    stop_sent = 0.0
    final_at = 0.0
    job_id = ""
    for snap in call.simulate(req):
        now = time.perf_counter()
        if snap.final:
            final_at = now
            break
        arrivals.append(now)
        job_id = snap.job_id
        if now - t0 >= seconds and not stop_sent:
            stop_sent = time.perf_counter()
            call.stop(job_id)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    return {"transport": transport, "snapshots": len(arrivals),
            "first_ms": round(1000 * (arrivals[0] - t0), 1) if arrivals else None,
            "gap_mean_ms": round(1000 * statistics.mean(gaps), 1) if gaps else None,
            "gap_max_ms": round(1000 * max(gaps), 1) if gaps else None,
            "stop_to_final_ms": round(1000 * (final_at - stop_sent), 1) if stop_sent and final_at else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=300, help="GenerateMoves requests per client")
    ap.add_argument("--stream-seconds", type=float, default=3.0, help="how long each sim stream runs before StopJob")
    ap.add_argument("--data-dir", default=None, help="lexicon directory (default: the bundled lexicon)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    running = create_server(Settings.load(args.data_dir), "127.0.0.1", 0, max_jobs=4, http=HttpOptions(port=0))
    assert running.http is not None
    ports = (running.port, running.http.port)
    out: dict = {"unary": [], "stream": []}
    try:
        for cgp in (CGP, OPENING):
            for clients in (1, 4):
                for transport in ("grpc", "connect"):
                    out["unary"].append(unary(transport, *ports, clients, args.requests, cgp))
        for transport in ("grpc", "connect"):
            out["stream"].append(stream(transport, *ports, args.stream_seconds))
    finally:
        running.stop(1)
    by = {(r["position"], r["transport"], r["clients"]): r for r in out["unary"]}
    out["connect_overhead"] = {f"{p} clients={c}": round(by[(p, "grpc", c)]["rps"] / by[(p, "connect", c)]["rps"], 2)
                               for p in ("mid-game", "opening") for c in (1, 4)}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print("GenerateMoves (15 plays)")
    for r in out["unary"]:
        print(f"  {r['position']:8} {r['transport']:8} clients={r['clients']} requests={r['requests']} rps={r['rps']:.0f} "
              f"median_ms={r['median_ms']:.2f} p95_ms={r['p95_ms']:.2f}")
    print("  gRPC rps / Connect rps: " + ", ".join(f"{k} {v}x" for k, v in out["connect_overhead"].items()))
    print(f"Simulate stream (stopped after {args.stream_seconds:g} s)")
    for r in out["stream"]:
        print(f"  {r['transport']:8} snapshots={r['snapshots']} first_ms={r['first_ms']} gap_mean_ms={r['gap_mean_ms']} "
              f"gap_max_ms={r['gap_max_ms']} stop_to_final_ms={r['stop_to_final_ms']}")


if __name__ == "__main__":
    main()
