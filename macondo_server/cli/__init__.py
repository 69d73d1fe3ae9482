"""The `macondo` command line. Parsing and printing only; the engine does the work.

Every error is a one-line message on stderr and a non-zero exit, never a traceback. Each command group is a
module of this package with a `register(sub)` that adds its commands to the parser.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from macondo_server import __version__
from macondo_server.cli import games, lexicon, position, serve, solve
from macondo_server.cli.common import (
    DATA_DIR_HELP,
    DISTRIBUTION_HELP,
    EXIT_INTERRUPTED,
    LAYOUT_HELP,
    CliError,
    Parser,
    forget_ctrl_c,
    stopped_by_ctrl_c,
)
from macondo_server.engine.lexicon import LexiconError
from macondo_server.model.text import FormatError

# the commands that read no position or lexicon of their own: --distribution is refused there
NO_DISTRIBUTION = ("serve", "shell", "bots", "proto-path")
# the commands that make a position or a game: --layout is accepted there only
LAYOUT_COMMANDS = ("show", "gen", "commit", "load", "sim", "endgame", "peg", "infer", "analyze", "autoplay")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="macondo",
        description="Crossword board game analysis engine (move generation, simulation, endgame, pre-endgame), in "
                    "any language a letter distribution describes, on the 15x15 or 21x21 board (docs/languages.md).",
    )
    p.add_argument("--version", action="version", version=f"macondo {__version__}")
    p.add_argument("--data-dir", metavar="DIR", help=DATA_DIR_HELP + "; also accepted after the command")
    p.add_argument("--distribution", metavar="NAME", help=DISTRIBUTION_HELP + "; also accepted after the command")
    p.add_argument("--layout", metavar="NAME|FILE", help=LAYOUT_HELP + "; also accepted after the commands that "
                   "make a position or a game")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    for group in (lexicon, position, solve, games, serve):
        group.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    forget_ctrl_c()
    try:
        if getattr(args, "distribution", None) and args.command in NO_DISTRIBUTION:
            raise CliError(f"--distribution names the letter distribution of a position or a lexicon; `macondo "
                           f"{args.command}` reads none (a server's requests name their own)")
        if getattr(args, "layout", None) and not getattr(args, "takes_layout", False):
            command = " ".join(w for w in (args.command, getattr(args, "lexicon_command", None),
                                           getattr(args, "leaves_command", None)) if w)
            raise CliError(f"--layout names the board of a CGP position, a GCG record or self-play's games ("
                           f"{', '.join(LAYOUT_COMMANDS)}); `macondo {command}` takes none")
        code = int(args.func(args) or 0)
        # a run stopped by Ctrl-C printed its best result so far: still not a success
        return EXIT_INTERRUPTED if stopped_by_ctrl_c() else code
    except (CliError, FormatError, LexiconError, ValueError, OSError) as exc:
        print(f"macondo: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("macondo: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
