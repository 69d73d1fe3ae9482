"""`macondo-client` / `python -m macondo_client`: the client distribution's own small command line.

    macondo-client info --server HOST:PORT     the server's version, API version, lexica and limits
    macondo-client shell --server HOST:PORT    the interactive shell (as `macondo shell`)
    macondo-client proto-path                  the include directory of the installed .proto files
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__, proto_path


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="macondo-client", description="Client of the macondo-py engine server")
    p.add_argument("--version", action="version", version=f"macondo-client {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    info = sub.add_parser("info", help="print the server's version, API version, lexica and limits")
    info.add_argument("--server", required=True, help="engine server address HOST:PORT")
    info.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the answer")
    sh = sub.add_parser("shell", help="interactive shell over gRPC")
    sh.add_argument("--server", required=True, help="engine server address HOST:PORT")
    sub.add_parser("proto-path", help="print the directory holding macondo/v1/engine.proto")
    args = p.parse_args(argv)
    if args.command == "proto-path":
        print(proto_path())
        return 0
    if args.command not in ("info", "shell"):
        p.print_help()
        return 0
    from .client import Client, MacondoError

    try:
        with Client(args.server, timeout=getattr(args, "timeout", 600.0)) as client:
            if args.command == "shell":
                from .shell import run_shell

                return run_shell(client)
            from .render import lexicon_label

            si = client.server_info()
            lexica = ", ".join(lexicon_label(lx) for lx in si.lexica)
            print(f"server {si.version} (API {si.api_version}); lexica: {lexica}; default {si.default_lexicon}")
            return 0
    except MacondoError as exc:
        print(f"macondo-client: error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
