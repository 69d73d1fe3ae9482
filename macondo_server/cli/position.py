"""`macondo show`, `gen`, `commit` and `load`: positions and moves.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from macondo_server.cli.common import (
    CliError,
    add_data_dir,
    check_record_distribution,
    check_record_layout,
    distribution_arg,
    int_in,
    layout_arg,
    read_cgp,
    registry,
    seed_arg,
)
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import write_cgp


def cmd_show(args: argparse.Namespace) -> int:
    from macondo_server.model.render import render_position

    pos = read_cgp(args, registry(args))
    if args.json:
        print(json.dumps({"cgp": args.cgp, "bag": pos.tiles_in_bag(), "scores": list(pos.scores)}))
    else:
        print(render_position(pos))
    return 0


def cmd_gen(args: argparse.Namespace) -> int:
    from macondo_client.render import moves_json, moves_table

    from macondo_server.api.convert import generate_to_pb
    from macondo_server.engine.facade import Engine

    engine = Engine(Settings.load(args.data_dir))
    pos = read_cgp(args, engine.registry)
    n = None if args.all else args.n
    res = engine.generate(pos, lexicon=args.lexicon, leaves_path=args.leaves, n=n, sort=args.sort)
    msg = generate_to_pb(res, pos, engine.lexicon_for(pos, args.lexicon).name)
    print(json.dumps(moves_json(msg)) if args.json else moves_table(msg))
    return 0


def cmd_commit(args: argparse.Namespace) -> int:
    from macondo_server.engine.replay import commit, honest_after_commit

    engine_settings = Settings.load(args.data_dir)
    reg = LexiconRegistry(engine_settings)
    pos = read_cgp(args, reg)
    lex = reg.get(args.lexicon or pos.lexicon or engine_settings.default_lexicon, pos.ld.name)
    res = commit(pos, lex, args.move, tileorder=args.tileorder, seed=args.seed)
    # the CGP is the honest view of the player now on turn: no rack dealt at random, none of the mover's tiles
    honest = honest_after_commit(pos, res, args.tileorder)
    cgp = write_cgp(honest)
    if args.json:
        ld = pos.ld
        print(json.dumps({
            "cgp": cgp,
            "score": res.score,
            "scores": list(res.position.scores),
            "racks": [ld.rack_str(r) for r in honest.racks],
            # what the commit dealt (the mover's new rack, and a random rack where the opponent's was unknown):
            # not known to the player now on turn
            "dealt_racks": [ld.rack_str(r) for r in res.position.racks],
            "bag": ld.word_str(res.bag),
            "game_over": res.game_over,
            "end_reason": res.end_reason,
        }))
    else:
        print(cgp)
    return 0


def cmd_load(args: argparse.Namespace) -> int:
    from macondo_server.engine.replay import lexicon_for_record, replay_gcg
    from macondo_server.model.gcg import read_gcg_file

    path = Path(args.file)
    if not path.is_file():
        raise CliError(f"GCG file {path} does not exist")
    record = read_gcg_file(str(path))
    reg = registry(args)
    check_record_distribution(record, distribution_arg(args))
    check_record_layout(record, layout_arg(args, reg.catalog), reg.catalog)
    lex_name, warnings = lexicon_for_record(record, reg.available(), reg.settings.default_lexicon, args.lexicon,
                                            reg.distribution_of)
    lex = reg.get(lex_name, distribution_arg(args))
    if args.turn is not None and not 0 <= args.turn <= len(record.events):
        raise CliError(f"--turn {args.turn} is out of range: the game has {len(record.events)} events")
    res = replay_gcg(record, lex, turn=args.turn)
    warnings += res.warnings
    game = res.game
    pos = res.positions[-1] if res.positions else res.start
    cgp = write_cgp(pos)
    scores = list(game.scores)
    on_turn = game.on_turn if res.positions else res.start_player
    if args.json:
        print(json.dumps({
            "cgp": cgp,
            "scores": scores,
            "on_turn": on_turn,
            "game_over": game.game_over,
            "end_reason": game.end_reason_name,
            "events": res.events_applied,
            "warnings": warnings,
        }))
        return 0
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    names = [p[0] for p in record.players]
    print(cgp)
    print(f"scores: {names[0]} {scores[0]}, {names[1]} {scores[1]}; on turn: {names[on_turn]}; "
          f"events replayed: {res.events_applied}/{len(record.events)}")
    if game.game_over:
        print(f"game over ({game.end_reason_name})")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this group's commands to the `macondo` parser."""
    s = sub.add_parser("show", help="draw a CGP position as text")
    s.add_argument("cgp")
    s.add_argument("--lexicon", help="the lexicon whose letter distribution the CGP is in (default: its lex op)")
    s.add_argument("--json", action="store_true")
    add_data_dir(s, layout=True)
    s.set_defaults(func=cmd_show)

    g = sub.add_parser("gen", help="generate and rank every legal move for the player on turn")
    g.add_argument("cgp", help="position as CGP (the first rack is the mover's)")
    g.add_argument("--lexicon", help="lexicon name (default: the CGP's lex opcode, else SCOWL70)")
    g.add_argument("--leaves", help="KLV2 leave file (default: NAME.klv2 beside the lexicon)")
    lim = g.add_mutually_exclusive_group()
    lim.add_argument("-n", type=int_in(1, 1_000_000), default=15,
                     help="show the top N moves (1 to 1000000; default 15)")
    lim.add_argument("--all", action="store_true", help="show every legal move")
    g.add_argument("--sort", choices=["equity", "score"], default="equity")
    g.add_argument("--json", action="store_true", help="print one JSON object")
    add_data_dir(g, layout=True)
    g.set_defaults(func=cmd_gen)

    cm = sub.add_parser("commit", help="play a move on a position and print the new position")
    cm.add_argument("cgp")
    cm.add_argument("move", help="e.g. '8G QI', '2L P.ND', 'exch ABC', 'pass'")
    cm.add_argument("--tileorder", help="bag draw order, first drawn first (length = unseen - 7)")
    cm.add_argument("--lexicon")
    cm.add_argument("--seed", type=seed_arg, default=0, help="seed for random draws without a tile order")
    cm.add_argument("--json", action="store_true")
    add_data_dir(cm, layout=True)
    cm.set_defaults(func=cmd_commit)

    ld_ = sub.add_parser("load", help="replay a GCG file and print the position")
    ld_.add_argument("file")
    ld_.add_argument("--turn", type=int_in(0, 1_000_000), help="replay this many events (default: all)")
    ld_.add_argument("--lexicon", help="default: the file's #lexicon")
    ld_.add_argument("--json", action="store_true")
    add_data_dir(ld_, layout=True)
    ld_.set_defaults(func=cmd_load)
