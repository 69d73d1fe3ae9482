"""The solvers and analyses: simulation, endgame, pre-endgame, inference, game review, self-play and leave
training, each with its own cluster task."""
