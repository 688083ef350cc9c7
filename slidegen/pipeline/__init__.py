"""``slidegen build``: read and bind every deck once, write each in every format; outputs land whole.

:mod:`.build` puts the stages in order; :mod:`.bound` reads and binds the project's decks and indexes them
(:mod:`.index`); :mod:`.decks` writes one deck at a time into a staging folder (:mod:`.staging`). Around
that, the speed machinery: :mod:`.incremental` plans what is out of date against the output folder's
manifest (:mod:`.manifest`), :mod:`.parallel` spreads the decks over processes.
"""
