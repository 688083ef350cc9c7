"""Shared set-up of the model tests: one torch thread per test (the CPU is shared,
and the numbers do not depend on it), set and restored around each test rather
than at import; the helper modules beside the tests (``eager``) import by name."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
