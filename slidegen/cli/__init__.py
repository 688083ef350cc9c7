"""The command line: ``slidegen init|run|build|check|serve|inspect|list|results``, thin over the stages.

:mod:`.main` parses the arguments and maps every expected failure to its exit code (0 fine, 1 problems
found, 2 usage); :mod:`.run` is ``slidegen run``'s command, :mod:`.scaffold` ``init``'s starter project,
:mod:`.listing` and :mod:`.inspect` what ``list`` and ``inspect`` print, :mod:`.decknames` how a deck is
named on the command line.
"""

from slidegen.cli.main import main

__all__ = ["main"]
