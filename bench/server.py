"""GenerateMoves throughput and latency over gRPC on localhost, from 1 and 8 concurrent clients.

Run: .venv/bin/python bench/server.py [--requests 400] [--token]   (starts its own server on a free port)
--token: the server requires a bearer token and the clients send it (the cost of checking it on every call).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import grpc

from macondo_server.api.auth import Security, Tokens
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

from _shared import shared_lexica

CGP = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
       "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=400, help="requests per client")
    ap.add_argument("--token", action="store_true", help="require a bearer token and send it")
    args = ap.parse_args()
    token = "bench-token-0123456789abcdef"
    security = Security(tokens=Tokens({"bench": token})) if args.token else None
    metadata = [("authorization", f"Bearer {token}")] if args.token else None
    running = create_server(Settings.load(shared_lexica()), "127.0.0.1", 0, max_jobs=2, security=security)
    req = pb.GenerateMovesRequest(position=pb.Position(cgp=CGP), num_plays=15)
    try:
        for clients in (1, 8):
            latencies: list[float] = []
            lock = threading.Lock()

            def client(latencies=latencies, lock=lock) -> None:
                with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
                    stub = pb_grpc.EngineStub(ch)
                    stub.GenerateMoves(req, timeout=30, metadata=metadata)
                    mine = []
                    for _ in range(args.requests):
                        t0 = time.perf_counter()
                        stub.GenerateMoves(req, timeout=30, metadata=metadata)
                        mine.append(time.perf_counter() - t0)
                    with lock:
                        latencies.extend(mine)

            threads = [threading.Thread(target=client) for _ in range(clients)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            print(f"{'token ' if args.token else ''}clients={clients} requests={len(latencies)} "
                  f"rps={len(latencies) / wall:.0f} "
                  f"median_ms={1000 * statistics.median(latencies):.2f}")
    finally:
        running.stop(1)


if __name__ == "__main__":
    main()
