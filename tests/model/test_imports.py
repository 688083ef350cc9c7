"""No model test module changes torch's global state when it is imported."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def test_importing_the_test_modules_leaves_torch_threads_alone():
    modules = sorted(p.stem for p in HERE.glob("test_*.py"))
    code = (
        "import sys, importlib, torch\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "torch.set_num_threads(2)\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "    assert torch.get_num_threads() == 2, name\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE.parents[1])
    assert done.returncode == 0, done.stderr
