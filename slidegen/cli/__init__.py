"""The command line: ``slidegen init|run|build|check|serve|inspect|list|results``, thin over the stages.

:mod:`.main` parses the arguments and maps every expected failure to its exit code (0 fine, 1 problems
found, 2 usage, 70 a bug); then one module per command: :mod:`.init` (the starter project), :mod:`.run`,
:mod:`.build`, :mod:`.check`, :mod:`.serve`, :mod:`.inspect`, :mod:`.listing` (``list``) and
:mod:`.results` (``results diff``). :mod:`.decknames` is how a deck is named on the command line.
"""

from slidegen.cli.main import main

__all__ = ["main"]
