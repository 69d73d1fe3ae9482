"""What every command shares: the error type, numeric argument types with their ranges, Ctrl-C handling
and the lexicon registry and engine of a command's settings.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.settings import Settings

if TYPE_CHECKING:
    from macondo_server.engine.facade import Engine
    from macondo_server.model.gcg import GcgGame
    from macondo_server.model.languages import Catalog
    from macondo_server.model.position import Position


class CliError(Exception):
    """A user-facing error: printed as 'macondo: error: ...' with exit status 1."""


DATA_DIR_HELP = ("lexicon directories, os.pathsep-separated (default: MACONDO_DATA_DIR, and always the bundled "
                 "lexicon); their letterdistributions/ and layouts/ folders add letter distributions and boards")
DISTRIBUTION_HELP = ("letter distribution (english, english_super, french, german, catalan, dutch, polish, "
                     "norwegian, spanish, slovene, swedish, or one added as data; default: the CGP's ld op, else the "
                     "lexicon's own)")
LAYOUT_HELP = ("board layout: standard15, standard21 (or CrosswordGame, SuperCrosswordGame), one added as data, or "
               "the path of a layout file (default: the CGP's bdn op, the GCG's #board-layout, else the board of the "
               "CGP's size or of the letter distribution)")


def add_data_dir(parser: argparse.ArgumentParser, distribution: bool = True, layout: bool = False) -> None:
    """Accept --data-dir and --distribution (and --layout, for a command that makes a position or a game)
    after the command too (`macondo gen CGP --data-dir X`), as before it. Every command that loads a lexicon or
    reads a position calls this; not given there, the global option (or its default) stands."""
    parser.add_argument("--data-dir", default=argparse.SUPPRESS, metavar="DIR",
                        help=DATA_DIR_HELP + "; also accepted before the command")
    if distribution:
        parser.add_argument("--distribution", default=argparse.SUPPRESS, metavar="NAME",
                            help=DISTRIBUTION_HELP + "; also accepted before the command")
    if layout:
        parser.add_argument("--layout", default=argparse.SUPPRESS, metavar="NAME|FILE",
                            help=LAYOUT_HELP + "; also accepted before the command")
        parser.set_defaults(takes_layout=True)


def registry(args: argparse.Namespace) -> LexiconRegistry:
    return LexiconRegistry(Settings.load(getattr(args, "data_dir", None)))


def distribution_arg(args: argparse.Namespace) -> str | None:
    """The --distribution given before or after the command, or None."""
    return getattr(args, "distribution", None) or None


def layout_arg(args: argparse.Namespace, catalog: Catalog) -> str | None:
    """The --layout given before or after the command as a layout name of `catalog`, or None (see
    layout_choice)."""
    choice = layout_choice(args, catalog)
    return None if choice is None else choice[0]


def layout_choice(args: argparse.Namespace, catalog: Catalog) -> tuple[str, bool] | None:
    """The --layout given before or after the command: (a layout name of `catalog`, whether it is a file the
    user named), or None. A name is a layout of the data directories or the package (or an alias), else a file
    of that name; a value that is not a name or ends in `.txt` is a file. A file is read now and made known to
    `catalog` by its file name (a cluster's workers, reading layouts by name, do not have it)."""
    from macondo_server.model.languages import LAYOUT_SUFFIX, NAME_RE, LanguageError

    value = getattr(args, "layout", None)
    if not value:
        return None
    path = Path(value).expanduser()
    try:
        if NAME_RE.fullmatch(value) and not value.lower().endswith(LAYOUT_SUFFIX):
            try:
                return catalog.layout_name(value), False
            except LanguageError as exc:
                if not path.is_file():
                    raise CliError(f"--layout: {exc}; or give the path of a layout file") from None
        return catalog.add_layout_file(path), True
    except LanguageError as exc:
        raise CliError(f"--layout: {exc}") from None


def read_cgp(args: argparse.Namespace, reg: LexiconRegistry, text: str | None = None) -> Position:
    """The command's CGP (`text`, else args.cgp) read with its data directories' distributions and boards, its
    --lexicon, --distribution and --layout (see parse_cgp)."""
    from macondo_server.model.cgp import parse_cgp

    return parse_cgp(args.cgp if text is None else text, catalog=reg.catalog,
                     lexicon=getattr(args, "lexicon", None) or None, distribution=distribution_arg(args),
                     layout=layout_arg(args, reg.catalog))


T = TypeVar("T")

EXIT_INTERRUPTED = 130            # 128 + SIGINT, as a shell reports a Ctrl-C'd command

_stopped_by_ctrl_c = threading.Event()


def stopped_by_ctrl_c() -> bool:
    """Whether a Ctrl-C stopped a job of this command (it printed its best result so far, and the command
    exits EXIT_INTERRUPTED rather than 0: a script must not take the partial result for a finished run)."""
    return _stopped_by_ctrl_c.is_set()


def forget_ctrl_c() -> None:
    """A new command starts: no job of it was stopped yet."""
    _stopped_by_ctrl_c.clear()


def run_interruptible(run: Callable[[], T], stop: Callable[[], None], name: str = "job") -> T:
    """Run a long job in a worker thread and return its result. The first Ctrl-C asks the job to stop (it
    then returns its best result so far, which the caller prints; the command then exits 130, see
    stopped_by_ctrl_c); a second one abandons it
    (KeyboardInterrupt). The main thread only waits, so the signal is handled at once even while the
    engine runs without the GIL."""
    if threading.current_thread() is not threading.main_thread():
        return run()
    result: list[T] = []               # what run() returned, or
    error: list[BaseException] = []    # what it raised

    def work() -> None:
        try:
            result.append(run())
        except BaseException as exc:  # noqa: BLE001 (re-raised in the main thread)
            error.append(exc)

    interrupts = 0

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:
            raise KeyboardInterrupt
        _stopped_by_ctrl_c.set()
        print(f"macondo: stopping the {name}; its best result so far follows (Ctrl-C again to abandon it)",
              file=sys.stderr, flush=True)
        stop()

    worker = threading.Thread(target=work, name=f"macondo-{name}", daemon=True)
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        if sys.stderr.isatty():
            print(f"macondo: {name} running; Ctrl-C stops it and prints the best result so far",
                  file=sys.stderr, flush=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
    finally:
        signal.signal(signal.SIGINT, previous)
    if error:
        raise error[0]
    return result[0]


def warn(text: str) -> None:
    print(f"macondo: warning: {text}", file=sys.stderr, flush=True)


def check_record_distribution(record: GcgGame, distribution: str | None, label: str = "") -> None:
    """A --distribution must agree with the record's #tile-distribution."""
    named = (record.pragma("tile-distribution") or "").strip()
    if distribution and named and named.lower() != distribution.lower():
        raise CliError(f"{label + ': ' if label else ''}the GCG's #tile-distribution is {named} but --distribution "
                       f"names {distribution}")


def check_record_layout(record: GcgGame, layout: str | None, catalog: Catalog, label: str = "") -> None:
    """A --layout (a name of `catalog`, see layout_arg) must agree with the record's #board-layout; the record
    is then replayed on it."""
    from macondo_server.model.languages import LanguageError
    from macondo_server.model.text import FormatError

    if not layout:
        return
    named = (record.pragma("board-layout") or "").strip()
    if named:
        try:
            own = catalog.layout_name(named)
        except (LanguageError, FormatError):
            own = None                  # a layout not at hand here: not the one --layout names
        if own != layout:
            raise CliError(f"{label + ': ' if label else ''}the GCG's #board-layout is {named} but --layout names "
                           f"{layout}")
        return
    record.pragmas.append(("board-layout", layout))


def record_lexicon(record: GcgGame, registry: LexiconRegistry, requested: str | None, label: str = "",
                   distribution: str | None = None) -> str:
    """The lexicon to read a GCG record with (see lexicon_for_record); its warnings (no #lexicon line, a
    lexicon not at hand) go to stderr at once, one line each, before the work starts. A --distribution must
    agree with the record's #tile-distribution."""
    from macondo_server.engine.replay import lexicon_for_record

    check_record_distribution(record, distribution, label)
    name, warnings = lexicon_for_record(record, registry.available(), registry.settings.default_lexicon, requested,
                                        registry.distribution_of)
    for w in warnings:
        warn(f"{label}: {w}" if label else w)
    return name


def engine_for(args: argparse.Namespace) -> Engine:
    from macondo_server.engine.facade import Engine

    return Engine(Settings.load(args.data_dir))


@contextlib.contextmanager
def children_ignore_ctrl_c() -> Iterator[None]:
    """Processes started inside (a local cluster's workers) ignore SIGINT: a Ctrl-C at the terminal reaches
    the whole process group, and the stop is this process's to make (it cancels their tasks); without this
    the workers die with a traceback each. Ctrl-C is ignored here meanwhile (the cluster's start)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def tolerance_points(text: str) -> float:
    """An argparse type: points of equity from 0 to 1000 (digits and one point; no exponent)."""
    if _DECIMAL_TEXT.fullmatch(text) is not None and float(text) <= 1000:
        return float(text)
    raise argparse.ArgumentTypeError(f"must be a number of points from 0 to 1000, got {_shown(text)}")


def bool_text(text: str) -> bool:
    low = text.lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {text!r} (true or false)")


MAX_SEED = 2**64 - 1              # seeds are unsigned 64-bit in the engine


MAX_THREADS = 256


MAX_SECONDS = 1_000_000.0


MAX_TT_MB = 65536


EG_MAX_PLIES = 60                 # endgame.MAX_PLIES (kept here so that parsing imports no engine)


SIM_MAX_ITERATIONS = 10_000_000   # sim.MAX_ITERATIONS


_INT_TEXT = re.compile(r"-?[0-9]{1,20}", re.ASCII)


_DECIMAL_TEXT = re.compile(r"[0-9]{1,12}(?:\.[0-9]{0,12})?|\.[0-9]{1,12}", re.ASCII)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:24] + "...")


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number from lo to hi."""
    def parse(text: str) -> int:
        if _INT_TEXT.fullmatch(text) is not None:
            v = int(text)
            if lo <= v <= hi:
                return v
        raise argparse.ArgumentTypeError(f"must be a whole number from {lo} to {hi}, got {_shown(text)}")

    parse.__name__ = f"integer {lo}..{hi}"
    return parse


def int_choice(*values: int) -> Callable[[str], int]:
    """An argparse type: one of a few whole numbers."""
    names = ", ".join(str(v) for v in values[:-1]) + f" or {values[-1]}"

    def parse(text: str) -> int:
        if _INT_TEXT.fullmatch(text) is not None and int(text) in values:
            return int(text)
        raise argparse.ArgumentTypeError(f"must be {names}, got {_shown(text)}")

    parse.__name__ = f"one of {names}"
    return parse


def seconds_in(hi: float) -> Callable[[str], float]:
    """An argparse type: a decimal number of seconds from 0 to hi (digits and one point; no exponent)."""
    def parse(text: str) -> float:
        if _DECIMAL_TEXT.fullmatch(text) is not None:
            v = float(text)
            if 0 <= v <= hi:
                return v
        raise argparse.ArgumentTypeError(f"must be a number of seconds from 0 to {hi:.0f}, "
                                         f"got {_shown(text)}")

    parse.__name__ = "seconds"
    return parse


def decimal_in(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: a decimal number from lo to hi (digits and one point; no exponent)."""
    def parse(text: str) -> float:
        if _DECIMAL_TEXT.fullmatch(text) is not None:
            v = float(text)
            if lo <= v <= hi:
                return v
        raise argparse.ArgumentTypeError(f"must be a number from {lo:g} to {hi:g}, got {_shown(text)}")

    parse.__name__ = "number"
    return parse


seed_arg = int_in(0, MAX_SEED)


threads_arg = int_in(1, MAX_THREADS)


seconds_arg = seconds_in(MAX_SECONDS)


tt_mb_arg = int_in(1, MAX_TT_MB)


class Parser(argparse.ArgumentParser):
    """Usage errors are one line on stderr and exit status 1, like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"{self.prog}: error: {message}\n")


def usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2
