"""``slidegen run``: the experiments run, in parallel processes, and results.md rewritten.

:mod:`.runner` runs what is stale (:mod:`slidegen.record.stale`) in worker processes (:mod:`.worker`,
one experiment each, its measurements and series sent back) and writes results.md and the run records;
:mod:`.results_diff` compares results.md with a git revision and names the slides citing each moved key.
"""
