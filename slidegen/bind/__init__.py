"""Binding: a parsed Deck given its numbers and its citations, every problem at its file, line and column.

:mod:`.numbers` resolves ``{{ key | filter }}`` against results.md (stale rows warned); :mod:`.cite` turns
``[@key]`` into formatted citations and each deck's references slide, from the bibliography
(:mod:`.bibliography`, ``references.bib``), the cited numbers beside it (:mod:`.cited`) and a CSL style
(:mod:`.citestyle`), all loaded once per build (:mod:`.library`).
"""
