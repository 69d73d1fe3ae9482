"""The pre-endgame: every ordered draw of the bag, every reply, solved exactly.

Modules, each importing only those before it: options (PegOptions, outcome codes, the quick pass's
settings) < draws (ordered draws, draw groups, labels) < result (PegPlay, PegResult, naming a leader) <
job (PegJob: threads, passes, cluster use, checkpoints, snapshots) < explain (the
eventuality explanation); task (what a cluster worker runs) sits under job."""
