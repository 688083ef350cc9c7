"""slidegen: Slidev-style decks whose numbers come from the experiments that made them.

The flow, one stage per subpackage, each importing only from those above it in this list
(tests/test_architecture.py holds it)::

    deck/      the document model: Deck, Slide, typed nodes, layouts, settings, clicks
    read/      Markdown -> Deck (markdown-it-py and slidegen's plugins)
    record/    the experiments found and fingerprinted; results.md and run records; staleness
    bind/      Deck + results.md + references.bib -> bound Deck
    media/     figures, components, diagrams, pictures, bundled assets
    write/     bound Deck -> HTML, PowerPoint, Markdown, PDF, PNG
    pipeline/  slidegen build: read, bind, write every deck; incremental, staged, parallel
    run/       slidegen run: experiments in worker processes -> results.md
    check/     slidegen check: every problem at file:line:col
    serve/     slidegen serve: live preview
    cli/       the command line

Shared by all: :mod:`.errors` (diagnostics and exit codes), :mod:`.atomic` (atomic writes),
:mod:`.paths` (a file a deck names, kept inside the project), :mod:`.project` (where a project keeps
what), :mod:`.digests`, :mod:`.theme`, :mod:`.formats`, :mod:`.xmlchars`.
"""
