"""Reading: Slidev-style Markdown into a Deck (:func:`slidegen.read.parse.parse_deck`).

:mod:`.parse` cuts a file into slides (separators, frontmatter, notes) and follows ``src:`` imports
(:mod:`.imports`); markdown-it-py, configured once with slidegen's plugins (:mod:`.mdplugins`), turns
each slide into tokens, which :mod:`.convert` turns into Deck nodes (code snippets from files:
:mod:`.snippets`; ``<Toc>``: :mod:`.toc`). :mod:`.frontmatter` checks the frontmatter keys and drops
hidden slides. Nothing here knows HTML or PowerPoint; no writer imports this stage.
"""
