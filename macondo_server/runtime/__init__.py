"""The runtime of long jobs: the job registry, resource limits, checkpoints and the cluster executor.

It knows no solver: solvers hand it tasks through its public API.
"""
