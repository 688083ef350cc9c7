"""The experiments' record: which experiments a project has, what they recorded and whether it is current.

:mod:`.loader` imports the project's own code (``model/``, ``figures/``), :mod:`.contracts` checks what
an experiment registry and a run hand back, :mod:`.discover` lists the experiments and fingerprints them
by what their code reaches (:mod:`.reach`), :mod:`.stale` tells which results rows were made by code that
changed since. :mod:`.results` reads and writes ``results/results.md`` byte for byte, :mod:`.runstore`
the run records ``results/runs/*.json`` behind the figures. Running experiments is :mod:`slidegen.run`.
"""
