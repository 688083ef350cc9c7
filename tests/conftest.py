"""Shared set-up: the helper modules beside the tests (``html_sample_deck``, ``fake_project``,
``needs``...) import by name, although pytest imports the tests themselves by path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
