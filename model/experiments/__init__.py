"""The experiments behind every measured number: one module per chapter, ``chNN_*.py``.

Each module registers plain functions with :func:`model.experiments.registry.experiment`;
``slidegen run`` finds the modules, runs what changed and writes ``results/``.
"""
