"""``slidegen check``: every problem of a project at its file, line and column, without writing a deck.

:mod:`.project` runs the checks over every deck and the project's code: parse and bind errors, stale
results, unknown figures and components, pictures; then one module per rule: :mod:`.cites` (citations
and cited numbers), :mod:`.outputs` (what PowerPoint cannot hold), :mod:`.type_size` (text shown under
18 pt), :mod:`.words` (words on a slide) and :mod:`.fallbacks` (what PowerPoint draws otherwise).
"""
