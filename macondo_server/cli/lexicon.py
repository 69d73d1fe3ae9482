"""`macondo lexicon`: build word graphs and leave files, check words, list the lexica.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from engine_cy.alphabet import LetterDistribution
from macondo_server.cli.common import CliError, add_data_dir, distribution_arg, registry, usage
from macondo_server.engine.lexicon import build_kwg_from_file


def distribution_for_file(args: argparse.Namespace, output: Path) -> LetterDistribution:
    """--distribution, else the distribution the output's name implies (FRA20.kwg: french), else english."""
    catalog = registry(args).catalog
    return catalog.resolve(explicit=(("--distribution", distribution_arg(args)),), lexicon=output.stem)


def cmd_lexicon_build(args: argparse.Namespace) -> int:
    src = Path(args.words)
    if not src.is_file():
        raise CliError(f"word list {src} does not exist")
    t0 = time.perf_counter()
    ld = distribution_for_file(args, Path(args.output))
    data = build_kwg_from_file(src, ld)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    from engine_cy.kwg import Kwg

    kwg = Kwg(data)
    print(
        f"wrote {out}: {kwg.word_count()} words, {kwg.n_nodes} nodes, "
        f"{len(data)} bytes in {time.perf_counter() - t0:.2f} s ({ld.name} letter distribution)"
    )
    return 0


def cmd_lexicon_leaves(args: argparse.Namespace) -> int:
    from engine_cy.klv import Klv
    from macondo_server.engine.lexicon import klv2_from_csv

    src = Path(args.csv)
    if not src.is_file():
        raise CliError(f"leave CSV {src} does not exist")
    ld = distribution_for_file(args, Path(args.output))
    data = klv2_from_csv(src.read_text(encoding="utf-8"), ld, source=str(src))
    Path(args.output).write_bytes(data)
    print(f"wrote {args.output}: {Klv(data).n_values} leaves, {len(data)} bytes ({ld.name} letter distribution)")
    return 0


def cmd_lexicon_check(args: argparse.Namespace) -> int:
    lex = registry(args).get(args.lexicon, distribution_arg(args))
    for word in args.words:
        print(f"{word.upper()} {'valid' if lex.is_word(word) else 'invalid'}")
    return 0


def cmd_lexicon_list(args: argparse.Namespace) -> int:
    reg = registry(args)
    for name in reg.available():
        print(name)
    return 0


def cmd_lexicon_distributions(args: argparse.Namespace) -> int:
    reg = registry(args)
    catalog = reg.catalog
    for name in catalog.distribution_names():
        ld = catalog.distribution(name)
        multi = f", multi-letter tiles {' '.join(ld.multi)}" if ld.multi else ""
        print(f"{name}: {ld.size - 1} letters, {ld.total_tiles()} tiles ({ld.count(0)} blanks){multi}")
    for name in catalog.layout_names():
        board = catalog.board(name)
        print(f"layout {name}: {board.dim}x{board.dim}, start square {board.start_row + 1}"
              f"{chr(ord('A') + board.start_col)}")
    for name in reg.available():
        print(f"lexicon {name}: {reg.distribution_of(name)}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this group's commands to the `macondo` parser."""
    lex = sub.add_parser("lexicon", help="build and query lexica (KWG word graphs)")
    lsub = lex.add_subparsers(dest="lexicon_command", metavar="ACTION")
    b = lsub.add_parser("build", help="compile a word list into a KWG (DAWG + GADDAG)")
    b.add_argument("words", help="word list, one word per line")
    b.add_argument("-o", "--output", required=True,
                   help="output .kwg file (its name implies the letter distribution unless --distribution names it: "
                        "FRA20.kwg is french)")
    add_data_dir(b)
    b.set_defaults(func=cmd_lexicon_build)
    lv = lsub.add_parser("leaves", help="write a KLV2 leave file from a 'leave,value' CSV")
    lv.add_argument("csv")
    lv.add_argument("-o", "--output", required=True,
                    help="output .klv2 file (its name implies the letter distribution, as for build)")
    add_data_dir(lv)
    lv.set_defaults(func=cmd_lexicon_leaves)
    c = lsub.add_parser("check", help="print each word with valid/invalid")
    c.add_argument("--lexicon", help="lexicon name (default: the bundled SCOWL70)")
    c.add_argument("words", nargs="+")
    add_data_dir(c)
    c.set_defaults(func=cmd_lexicon_check)
    ls = lsub.add_parser("list", help="list the lexica found in the data directories")
    add_data_dir(ls, distribution=False)
    ls.set_defaults(func=cmd_lexicon_list)
    ds = lsub.add_parser("distributions", help="list the letter distributions, the board layouts and each "
                                               "lexicon's distribution")
    add_data_dir(ds, distribution=False)
    ds.set_defaults(func=cmd_lexicon_distributions)
    lex.set_defaults(func=lambda a: usage(lex))
