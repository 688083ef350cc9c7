"""``slidegen run``: the experiments run, in parallel processes, and results.md rewritten.

:mod:`.runner` runs what is stale (:mod:`slidegen.record.stale`) in worker processes (:mod:`.worker`,
one experiment each, its measurements and series sent back) and writes results.md and the run records;
:mod:`.moved` brings results.md's cited rows in line with ``results/cited.yaml`` and names the slides
citing each moved key (every deck read once); :mod:`.results_diff` compares results.md with a git
revision and names the slides citing each moved key.
"""
