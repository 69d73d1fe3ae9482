"""The pre-endgame's options: outcome codes, the quick pass's settings, PegOptions and its validation."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from macondo_server.model.text import excerpt

WIN, DRAW, UNRESOLVED, LOSS = 0, 1, 2, 3
OUTCOME_NAMES = ("win", "draw", "unresolved", "loss")
# a flag on a full-depth verdict (outcome | CAPPED): a continuation past the nesting cap took part in it, so
# without the cap it could differ (engine_cy.peg: last_capped); OUTCOME_MASK takes the outcome back
CAPPED = 4
OUTCOME_MASK = 3
# what a continuation past the nesting cap counts as: "skip" (it is skipped, so it cannot refute a win: the
# reference engines' semantics, slightly optimistic) or "unresolved" (the draw is marked unresolved and
# counted as a non-win)
NESTING_CAP_MODES = ("skip", "unresolved")

# The quick pass: every candidate on every draw at low fidelity, before the full solve, so that a complete
# ranking exists from the first seconds on. Its endgames are searched QUICK_PLIES deep and each decision
# (opponent replies, our nested candidates) looks at its QUICK_REPLIES best moves only, so a quick "win" is a
# win against those replies: a preview, never a bound on the full solve.
QUICK_PLIES = 1
QUICK_REPLIES = 8
# Its second level: the same with endgames QUICK2_PLIES deep, on the plays the first level cannot separate from
# the top (see PegJob._quick2_pass). One-ply endgames miss what the opponent does with the last move, so they
# often give every play the same count; two plies tell them apart at a few times the cost.
QUICK2_PLIES = 2
QUICK2_REPLIES = 8
OPPONENT_MODELS = ("pessimistic", "solver")
LEAF_MODES = {"static": 0, "playout": 1, "auto": 2}
RISK_MOVES = 2


@dataclass
class PegOptions:
    endgame_plies: int = 4
    only_solve: list[str] = field(default_factory=list)
    max_tiles_left: int = 1
    max_nested_depth: int = 1
    nesting_cap: str = "skip"
    skip_deep_pass: bool = True
    early_cutoff: bool = False
    skip_tiebreaker: bool = False
    opp_rack: str | None = None
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    max_time: float = 0.0
    tt_megabytes: int = 256
    lexicon: str | None = None
    endgame_heuristics: bool = False   # a greedy playout at every endgame leaf (Macondo's choice; ~7x slower)
    # endgame leaves: "auto" = a greedy playout in the endgames where a tile is stuck or at risk at the root
    # (RISK_MOVES plays or fewer use it), the spread elsewhere; "playout" = everywhere; "static" = nowhere
    endgame_leaf: str = "auto"
    opponent_model: str = "pessimistic"  # or "solver": the opponent solves their own pre-endgame (see PegWorker)
    quick_pass: bool = True              # a complete low-fidelity pass first (anytime ranking)
    # search in the lexicon pruned to the board (engine_cy.prune): the same results, less work per node
    prune_lexicon: bool = True

    def validate(self) -> None:
        if not 1 <= self.endgame_plies <= 30:
            raise ValueError(f"endgame plies must be 1 to 30, got {self.endgame_plies}")
        if self.max_tiles_left < -1 or self.max_tiles_left > 6:
            raise ValueError(f"max tiles left must be -1 to 6, got {self.max_tiles_left}")
        if self.max_nested_depth < -1:
            raise ValueError(f"max nested depth must be -1 (unlimited) or more, got {self.max_nested_depth}")
        if self.nesting_cap not in NESTING_CAP_MODES:
            raise ValueError(f"nesting cap must be one of {', '.join(NESTING_CAP_MODES)}, "
                             f"got {excerpt(self.nesting_cap)}")
        if not 1 <= self.threads <= 256:
            raise ValueError(f"threads must be 1 to 256, got {self.threads}")
        if self.max_time < 0:
            raise ValueError(f"max time must not be negative, got {self.max_time}")
        if self.endgame_leaf not in LEAF_MODES:
            raise ValueError(f"endgame leaf must be one of {', '.join(LEAF_MODES)}, got {excerpt(self.endgame_leaf)}")
        if self.opponent_model not in OPPONENT_MODELS:
            raise ValueError(f"opponent model must be one of {', '.join(OPPONENT_MODELS)}, "
                             f"got {excerpt(self.opponent_model)}")
        if not 1 <= self.tt_megabytes <= 65536:
            raise ValueError(f"transposition table size must be 1 to 65536 MB, got {self.tt_megabytes}")

