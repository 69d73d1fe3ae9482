"""The pre-endgame's eventuality explanation (`--eventuality`): one draw order solved for each candidate play,
every verdict explained (racks and bag before and after, the replies checked and the decisive one, the
opponent's own solve, the nested solve with each sub-draw's verdict)."""

from __future__ import annotations

import dataclasses

from engine_cy.alphabet import LetterDistribution
from macondo_server.analysis.endgame import EndgameJob, EndgameOptions
from macondo_server.analysis.peg.draws import counts_str, draw_label
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import DRAW, LOSS, OUTCOME_NAMES, UNRESOLVED, WIN
from macondo_server.analysis.peg.result import points_text
from macondo_server.analysis.peg.task import MoveTuple
from macondo_server.engine.replay import commit
from macondo_server.model.move import Move, format_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError, check_text, excerpt
from macondo_server.model.tiles import rack_tiles

EVENTUALITY_TT_MB = 64   # the table of the endgames an eventuality explanation solves

_VERB = {WIN: "win", DRAW: "draw", UNRESOLVED: "cannot tell (unresolved)", LOSS: "lose"}

# what engine_cy.peg's PegWorker reports (see its stub): a sub-draw (draw, weight, verdict); the opponent's
# own solve (twice the fewest expected losses, orderings, the tied plays: (play, our verdict, sub-draws));
# a nested solve (outcome, the play chosen or None, sub-draws, the actual sub-draw's index)
SubDraw = tuple[tuple[int, ...], int, int]
OpponentChoice = tuple[int, int, list[tuple[MoveTuple, int, list[SubDraw]]]]
NestedTrace = tuple[int, MoveTuple | None, list[SubDraw], int]


def parse_order(job: PegJob, letters: str) -> tuple[int, ...]:
    """A draw order (first drawn first) of exactly the bag's size, from the possible bag tiles."""
    ld = job.pos.ld
    check_text(letters, "eventuality", 64)
    seq = tuple(rack_tiles(ld, letters, "eventuality", fold_case=True))
    if len(seq) != job.k:
        raise FormatError(f"eventuality {excerpt(letters)} has {len(seq)} tiles; the bag holds {job.k}")
    left = list(job.pool)
    for t in seq:
        if left[t] <= 0:
            raise FormatError(f"eventuality {excerpt(letters)}: no {ld.label(t)} can be in the bag "
                              f"(possible bag tiles: {counts_str(ld, job.pool)})")
        left[t] -= 1
    return seq


def eventuality(job: PegJob, letters: str) -> str:
    """Solve one draw order for each candidate play and explain every verdict: racks and bag before
    and after, the replies checked and the decisive one, and the nested solve with each sub-draw's
    verdict (the actual one marked)."""
    seq = parse_order(job, letters)
    ld, pos, opts = job.pos.ld, job.pos, job.opts
    w = job.workers[0]
    opp = job.opp_counts(seq)
    bag_txt = "".join(ld.label(t) for t in seq)
    blocks = []
    for p in job.plays:
        if job.stopped():
            break
        mt = job.move_tuple(p)
        t = min(p.tiles_played, job.k)
        ours_after = list(pos.racks[0])
        for tile in p.move.rack_tiles():
            ours_after.remove(tile)
        ours_after += list(seq[:t])
        lines = [f"Eventuality {bag_txt} (first drawn first) for {p.table} ({p.score}):",
                 f"  before: we hold {ld.rack_str(pos.racks[0])}; the bag is {bag_txt}; the opponent holds "
                 f"{counts_str(ld, opp)}",
                 f"  after {p.table}: we draw {ld.rack_str(list(seq[:t])) or 'nothing'} and hold "
                 f"{ld.rack_str(ours_after) or '(nothing)'}; the bag is "
                 f"{''.join(ld.label(x) for x in seq[t:]) or 'empty'}; the opponent is to move"]
        after_pos = commit(pos, job.lex, p.text, tileorder=bag_txt).position
        # in solver mode with tiles left in the bag the opponent's own solve decides (their every reply
        # need not be judged)
        choice = w.opponent_choice(mt, seq, opp) if opts.opponent_model == "solver" and t < job.k else None
        if choice is not None and not choice[2]:
            choice = None   # no play of theirs to choose from: every reply is judged, as the solver does
        replied = None if choice is not None else w.reply_outcomes(mt, seq, opp)
        if replied is not None and replied[0] == "endgame":
            outcome = replied[1]
            line, final = _endgame_line(job, after_pos)
            lines.append(f"  the bag is empty: an endgame with the opponent to move, {opts.endgame_plies} "
                         f"plies: best line {line}; final spread for us {-final:+d}")
        elif choice is not None:
            lines += _choice_lines(choice, after_pos, ld)
            outcome = max((o for _, o, _ in choice[2]), default=WIN)
        elif replied is not None and replied[0] == "replies":
            replies = replied[1]
            tally = {WIN: 0, DRAW: 0, UNRESOLVED: 0, LOSS: 0}
            for _, o in replies:
                tally[o] += 1
            outcome = max((o for _, o in replies), default=WIN)
            decisive = next((r for r, o in replies if o == outcome), None)
            lines.append(f"  replies checked: {len(replies)} ({tally[WIN]} we win against, {tally[DRAW]} draw, "
                         f"{tally[LOSS]} we lose to, {tally[UNRESOLVED]} unresolved)")
            if decisive is not None:
                dmove = Move(decisive[0], decisive[1], decisive[2], decisive[3], tuple(decisive[4]))
                dtext = format_move(dmove, ld, after_pos.board, style="table").strip()
                lines.append(f"  the decisive reply: {dtext} ({decisive[5]}), after which we "
                             f"{_VERB[outcome]}")
                trace = w.nested_trace(mt, seq, opp, decisive)
                if trace is not None:
                    lines += _nested_lines(job, trace, after_pos, dmove, ld)
                elif dmove.kind == "place" and outcome != UNRESOLVED:
                    # the reply emptied the bag: the endgame that decides it, with us to move
                    staged = dataclasses.replace(after_pos, ops=dict(after_pos.ops))
                    staged.ops["bagorder"] = "".join(ld.label(x) for x in seq[t:])
                    then = commit(staged, job.lex, format_move(dmove, ld, after_pos.board)).position
                    if not then.racks[0] or not then.racks[1]:
                        lines.append(f"    the game ends: final spread for us {then.scores[0] - then.scores[1]:+d}")
                    else:
                        line, final = _endgame_line(job, then)
                        lines.append(f"    then the bag is empty and we move first in the endgame: best line "
                                     f"{line}; final spread for us {final:+d}")
        lines.append(f"  verdict: {OUTCOME_NAMES[outcome].upper()}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _choice_lines(choice: OpponentChoice, after_pos: Position, ld: LetterDistribution) -> list[str]:
    """The opponent's own nested solve (opponent model "solver"), shown as ours is."""
    best2, total, tied = choice
    out = [f"  the opponent solves their own pre-endgame (they cannot see our rack or the bag): "
           f"{len(tied)} play{'s' if len(tied) != 1 else ''} tie with the fewest expected losses "
           f"({points_text(best2 / 2)} of {total} orderings of what they cannot see, a draw counting half); "
           "ties go against us"]
    if not tied:
        out.append("    no play of theirs could be fully examined: every reply is checked instead")
        return out
    for reply, ours, verdicts in tied[:5]:
        dmove = Move(reply[0], reply[1], reply[2], reply[3], tuple(reply[4]))
        text = format_move(dmove, ld, after_pos.board, style="table").strip()
        t = dmove.tiles_played if dmove.kind == "place" else 0
        groups: dict[str, list[int]] = {}   # label -> [weight, verdict]
        for sub, weight, verdict in verdicts:
            g = groups.setdefault(draw_label(ld, sub, t), [0, verdict])
            g[0] += weight
        by = ", ".join(f"{lab} {OUTCOME_NAMES[LOSS - v] if v in (WIN, LOSS) else OUTCOME_NAMES[v]}"
                       for lab, (_, v) in list(groups.items())[:12])
        more = f" (+{len(groups) - 12} more)" if len(groups) > 12 else ""
        out.append(f"    {text} ({reply[5]}): for us on the actual bag: {OUTCOME_NAMES[ours]}; by what they "
                   f"think is in the bag (our result): {by}{more}")
    if len(tied) > 5:
        out.append(f"    ... {len(tied) - 5} more tied plays")
    return out


def _endgame_line(job: PegJob, pos: Position) -> tuple[str, int]:
    """The best line (text) and final spread (for the player on turn) of an endgame at the PEG's depth."""
    eg = EndgameJob(job.engine, pos, EndgameOptions(
        plies=job.opts.endgame_plies, threads=1, heuristics=job.opts.endgame_heuristics,
        tt_megabytes=EVENTUALITY_TT_MB, lexicon=job.lex.name)).run()
    line = " ".join(("~" if m.estimated else "") + f"{m.table.strip()} ({m.score})" for m in eg.line)
    return line or "(none)", eg.final_spread


def _nested_lines(job: PegJob, trace: NestedTrace, after_pos: Position, reply: Move,
                  ld: LetterDistribution) -> list[str]:
    outcome, chosen, subs, actual = trace
    out = ["  our turn again with tiles in the bag: a nested solve over what we cannot see"]
    if chosen is None:
        out.append("    no play could be fully examined (time limit or nesting cap): unresolved")
        return out
    board = commit(after_pos, job.lex, format_move(reply, ld, after_pos.board)).position.board
    cmove = Move(chosen[0], chosen[1], chosen[2], chosen[3], tuple(chosen[4]))
    ct = cmove.tiles_played if cmove.kind == "place" else 0
    out.append(f"    we would play {format_move(cmove, ld, board, style='table').strip()} ({chosen[5]}), "
               "the fewest expected losses (worst case over tied plays); by sub-draw:")
    groups: dict[str, list[int]] = {}   # label -> [weight, verdict, the actual bag (bool)]
    for qi, (sub, weight, verdict) in enumerate(subs):
        label = draw_label(ld, sub, ct)
        g = groups.setdefault(label, [0, verdict, False])
        g[0] += weight
        g[2] = g[2] or qi == actual
    for label, (weight, verdict, is_actual) in groups.items():
        mark = "   <- the actual bag" if is_actual else ""
        out.append(f"      {label:<10} {OUTCOME_NAMES[verdict]:<10} weight {weight}{mark}")
    return out
