"""`macondo serve`, `shell`, `bots` and `proto-path`: the server and its clients.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from macondo_server.cli.common import CliError, add_data_dir, int_in, seconds_in, seed_arg
from macondo_server.engine.settings import Settings


def cmd_serve(args: argparse.Namespace) -> int:
    from macondo_server.api.auth import (
        AuthConfigError,
        Security,
        TlsFiles,
        Tokens,
        exposure_lines,
        is_loopback,
    )
    from macondo_server.api.grpc_server import ServerStartError, serve
    from macondo_server.runtime.limits import LimitError, Limits, parse_assignments

    try:
        limits = Limits.load(parse_assignments(args.limit or []), max_jobs=args.max_jobs)
    except LimitError as exc:
        raise CliError(str(exc)) from None
    if bool(args.tls_cert) != bool(args.tls_key) or (args.tls_client_ca and not args.tls_cert):
        raise CliError("TLS needs both --tls-cert and --tls-key (and --tls-client-ca only with them)")
    try:
        # tokens from a file or the environment (a token on the command line shows in process listings)
        tokens = Tokens.load(args.token_file, args.http_token)
    except AuthConfigError as exc:
        raise CliError(str(exc)) from None
    tls = TlsFiles(Path(args.tls_cert), Path(args.tls_key),
                   Path(args.tls_client_ca) if args.tls_client_ca else None) if args.tls_cert else None
    security = Security(tokens=tokens, tls=tls, allow_open=args.allow_open)
    http = None
    if args.http_port is not None or args.web:
        from macondo_server.api.connect import HttpOptions
        port = args.http_port if args.http_port is not None else 8080
        http = HttpOptions(host=args.http_host, port=port, cors_origins=tuple(args.cors_origin or ()), web=args.web,
                           allowed_hosts=tuple(args.allow_host or ()))
    if args.print_limits:
        for name, value in limits.as_dict().items():
            print(f"{name} = {value}")
        print()
        ports = [("gRPC", args.host, args.port)] + ([("HTTP", http.host, http.port)] if http else [])
        for line in exposure_lines(ports, security):
            print(line)
        if not tokens and not args.allow_open:
            for name, host, _ in ports:
                if not is_loopback(host):
                    print(f"(refused at start: the {name} port would leave loopback without tokens)")
        if http is not None:
            from macondo_server.api.connect import allowed_host_names

            names = allowed_host_names(http)
            print("HTTP Host names answered: " + ("any" if names is None else ", ".join(sorted(names))))
        return 0
    try:
        return serve(Settings.load(args.data_dir), args.host, args.port, limits, http=http, cluster=args.cluster,
                     checkpoint_dir=args.checkpoint_dir, security=security, review_store=args.review_store)
    except ServerStartError as exc:
        raise CliError(str(exc)) from None


def cmd_proto_path(args: argparse.Namespace) -> int:
    """The .proto files ship in the macondo-client distribution: protoc -I "$(macondo proto-path)" ..."""
    from macondo_client import proto_path

    path = Path(proto_path())
    if not (path / "macondo" / "v1" / "engine.proto").is_file():
        raise CliError(f"the .proto files are missing from {path} (reinstall macondo-client)")
    print(path)
    return 0


def client_token(token_file: str | None) -> str | None:
    """The bearer token a client sends: the file's token (its first non-empty line; in a server's
    `NAME TOKEN` line, the token), else MACONDO_TOKEN, else none."""
    if token_file:
        try:
            text = Path(token_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"--token-file {token_file}: {exc.strerror if isinstance(exc, OSError) else exc}") \
                from None
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            raise CliError(f"--token-file {token_file}: no token in it")
        return lines[0].split()[-1]
    return os.environ.get("MACONDO_TOKEN") or None


def _client_options(p: argparse.ArgumentParser, suffix: str = "", which: str = "") -> None:
    p.add_argument(f"--token-file{suffix}", metavar="FILE",
                   help=f"bearer token for the {which}server (its first line; default: MACONDO_TOKEN)")
    p.add_argument(f"--ca-file{suffix}", metavar="FILE",
                   help=f"CA certificate(s) to verify the {which}server's TLS certificate (connects with TLS)")


def cmd_shell(args: argparse.Namespace) -> int:
    from macondo_client import MacondoError
    from macondo_client.shell import run_shell

    from macondo_server.api.inprocess import connect

    if (args.token_file or args.ca_file) and not args.server:
        raise CliError("--token-file and --ca-file are for a server given with --server")
    try:
        with connect(args.server, args.data_dir, token=client_token(args.token_file),
                     ca_file=args.ca_file) as client:
            return run_shell(client)
    except MacondoError as exc:
        raise CliError(exc.message) from None


def cmd_bots(args: argparse.Namespace) -> int:

    from macondo_client import MacondoError
    from macondo_client.bots import ArenaOptions, main_bots

    from macondo_server.analysis.player import parse_strategy
    from macondo_server.api.inprocess import connect

    commands = (args.command1 or "", args.command2 or "")
    for k, text in enumerate((args.strategy1, args.strategy2)):
        if commands[k] and text != "static":
            raise CliError(f"bot {k + 1} is either a strategy (--strategy{k + 1}) or an adapter (--command{k + 1})")
        try:
            parse_strategy(text)
        except ValueError as exc:
            raise CliError(f"--strategy{k + 1}: {exc}") from None
    if args.first_game + args.games > 100_000_000:
        raise CliError("--first-game plus --games must be at most 100000000")
    positions = read_positions(args.positions) if args.positions else []
    if positions and args.cluster:
        raise CliError("--positions games are played in this process, not on a cluster")
    if args.parallel > 1 and args.cluster:
        raise CliError("--parallel plays games in this process; with --cluster the workers play them")
    if args.cluster:
        from macondo_server.runtime.cluster import parse_cluster_spec

        if parse_cluster_spec(args.cluster)[0] == "address" and not args.server:
            raise CliError("bots --cluster ADDRESS needs --server (an engine server its workers can reach; "
                           "without one, a server of this process on 127.0.0.1 serves local:N only)")
    try:
        with contextlib.ExitStack() as stack:
            first = stack.enter_context(connect(args.server, args.data_dir, token=client_token(args.token_file),
                                                ca_file=args.ca_file))
            second = stack.enter_context(connect(
                args.server2, token=client_token(args.token_file2 or args.token_file),
                ca_file=args.ca_file2 or args.ca_file)) if args.server2 else first
            cluster = None
            if args.cluster:
                from macondo_server.runtime.cluster import Cluster

                cluster = stack.enter_context(Cluster(args.cluster))
            opts = ArenaOptions(args.games, args.seed, args.lexicon or "", args.clock, args.move_time, args.parallel,
                                args.first_game, commands, positions, args.log or "", args.adapter_retries)
            return main_bots(first, second, args.strategy1, args.strategy2, opts, args.gcg_dir, args.json,
                             cluster=cluster)
    except MacondoError as exc:
        raise CliError(exc.message) from None


MAX_POSITIONS = 100_000


def read_positions(path: str) -> list[str]:
    """The CGPs of a positions file: one a line, blank lines and '#' comments skipped; each is checked when its
    game is created (a bad one ends the run with the server's message)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [line.strip() for _, line in zip(range(MAX_POSITIONS + 1), fh, strict=False)]
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"--positions {path}: {exc}") from None
    out = [line for line in lines if line and not line.startswith("#")]
    if len(lines) > MAX_POSITIONS:
        raise CliError(f"--positions {path}: more than {MAX_POSITIONS} lines")
    if not out:
        raise CliError(f"--positions {path}: no position in the file")
    return out


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this group's commands to the `macondo` parser."""
    sv = sub.add_parser("serve", help="run the gRPC engine server")
    sv.add_argument("--host", default="127.0.0.1",
                    help="address of the gRPC port (default 127.0.0.1; off loopback it needs tokens or --allow-open)")
    sv.add_argument("--port", type=int_in(0, 65535), default=50051)
    sv.add_argument("--max-jobs", type=int_in(1, 1_000_000), default=None,
                    help="concurrent long-running jobs (default: 4 x cores, at least 4)")
    sv.add_argument("--limit", action="append", metavar="NAME=VALUE",
                    help="override a limit (see --print-limits; also MACONDO_LIMIT_NAME=VALUE)")
    sv.add_argument("--print-limits", action="store_true",
                    help="print the limits in force and what the server would expose (ports, TLS, tokens), and exit")
    sv.add_argument("--http-port", type=int_in(0, 65535), default=None,
                    help="also serve Connect and gRPC-Web (browsers, Node) on this HTTP port (default with --web: 8080)")
    sv.add_argument("--http-host", default="127.0.0.1", help="address of the HTTP port (default 127.0.0.1)")
    sv.add_argument("--token-file", metavar="FILE",
                    help="bearer tokens both ports require, one 'NAME TOKEN' per line (also MACONDO_TOKEN_FILE; "
                         "MACONDO_TOKENS='NAME:TOKEN,...' adds more); needed off loopback")
    sv.add_argument("--http-token", default=None,
                    help="one bearer token, named 'http', both ports require (also MACONDO_HTTP_TOKEN; it shows "
                         "in process listings: prefer --token-file)")
    sv.add_argument("--tls-cert", metavar="PEM", help="serve both ports over TLS with this certificate chain")
    sv.add_argument("--tls-key", metavar="PEM", help="the private key of --tls-cert")
    sv.add_argument("--tls-client-ca", metavar="PEM",
                    help="require client certificates signed by this CA (with --tls-cert)")
    sv.add_argument("--allow-open", action="store_true",
                    help="serve off loopback without tokens: anyone who reaches the ports may use the server")
    sv.add_argument("--allow-host", action="append", metavar="NAME",
                    help="a name the HTTP port answers to in the Host header, besides the loopback names and its "
                         "address (repeatable; '*' for any)")
    sv.add_argument("--cors-origin", action="append", metavar="ORIGIN",
                    help="let pages from this origin call the HTTP port (repeatable; '*' for any; default none)")
    sv.add_argument("--web", action="store_true", help="serve the web analysis board on the HTTP port")
    sv.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="a Dask scheduler (host:port) or a local cluster of N worker processes for requests that "
                         "set use_cluster (pre-endgames, autoplay)")
    sv.add_argument("--checkpoint-dir", metavar="DIR",
                    help="record pre-endgame verdicts in DIR/peg.sqlite for requests that set checkpoint or resume")
    sv.add_argument("--review-store", metavar="DIR",
                    help="keep every game review (AnalyzeGame, ReviewGames) in the existing folder DIR, keyed by the "
                    "game, lexicon, settings and engine version, and answer a game reviewed before from it")
    add_data_dir(sv, distribution=False)
    sv.set_defaults(func=cmd_serve)

    sh = sub.add_parser("shell", help="interactive shell over gRPC (starts a local server without --server)")
    sh.add_argument("--server", help="engine server address HOST:PORT (default: a server in this process)")
    _client_options(sh)
    add_data_dir(sh, distribution=False)
    sh.set_defaults(func=cmd_shell)

    bt = sub.add_parser("bots", help="bot-vs-bot games through the game-session API of one or two servers")
    bt.add_argument("--server", help="referee and bot 1 server HOST:PORT (default: a server in this process)")
    bt.add_argument("--server2", help="bot 2 server (default: the first)")
    _client_options(bt)
    _client_options(bt, "2", "second ")
    bt.add_argument("--strategy1", default="static",
                    help="static, sim[:key=value,...], best[:key=value,...], or a level: beginner, novice, club, "
                         "expert, champion (docs/bots.md)")
    bt.add_argument("--strategy2", default="static")
    bt.add_argument("--command1", metavar="COMMAND",
                    help="bot 1 is another engine through this adapter command (docs/bots.md: the protocol)")
    bt.add_argument("--command2", metavar="COMMAND", help="bot 2 through an adapter command")
    bt.add_argument("--adapter-retries", type=int_in(0, 100), default=2, metavar="N",
                    help="an adapter that fails a move is restarted and asked again, up to N times a move "
                         "(default 2)")
    bt.add_argument("--clock", type=seconds_in(86_400), default=0.0, metavar="SECONDS",
                    help="each player's game clock; time over costs 10 points a minute (default: untimed)")
    bt.add_argument("--move-time", type=seconds_in(86_400), default=0.0, metavar="SECONDS",
                    help="a fixed budget a move for both bots (sent as max_time; adapters get it as seconds)")
    bt.add_argument("--parallel", type=int_in(1, 64), default=1, help="games played at once in this process")
    bt.add_argument("--first-game", type=int_in(0, 100_000_000), default=0,
                    help="the number of the first game (0-based), to split a run over processes")
    bt.add_argument("--positions", metavar="FILE",
                    help="start game pair k at the k-th CGP of FILE (one a line, both racks given; '#' comments)")
    bt.add_argument("--games", type=int_in(1, 100_000_000), default=20)
    bt.add_argument("--seed", type=seed_arg, default=1)
    bt.add_argument("--lexicon", help="lexicon of the games (default: the server's)")
    bt.add_argument("--gcg-dir", help="write each game as GCG into this directory")
    bt.add_argument("--log", metavar="FILE",
                    help="append each game to FILE as a JSON line as soon as it ends (result, moves, phases, times)")
    bt.add_argument("--json", action="store_true")
    bt.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="play the games on a Dask scheduler's workers or N local worker processes (the same "
                         "games as without; needs the cluster extra)")
    add_data_dir(bt, distribution=False)
    bt.set_defaults(func=cmd_bots)

    pp = sub.add_parser("proto-path", help="print the include directory of the installed macondo.v1 .proto files")
    pp.set_defaults(func=cmd_proto_path)
