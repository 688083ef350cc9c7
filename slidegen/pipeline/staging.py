"""Each deck's outputs written to a staging folder first, then moved into place whole: all of them or none."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from slidegen.media.assets import MEDIA_DIR

#: Staging folders are ``out/.staging-PID-XXXX``: a build killed before it cleaned up leaves one.
STAGE_PREFIX = ".staging-"


def _remove_stale_stages(out: Path) -> None:
    """Remove the staging folders of builds that are no longer running (killed mid-deck)."""
    for stage in out.glob(f"{STAGE_PREFIX}*"):
        pid = stage.name[len(STAGE_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stage, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Stage:
    """A staging folder inside ``out`` (same file system: moving out of it is a rename), removed on exit."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def __enter__(self) -> Stage:
        self.out.mkdir(parents=True, exist_ok=True)
        _remove_stale_stages(self.out)
        self.root = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-", dir=self.out))
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def land(self, places: dict[str, Path]) -> dict[Path, Path]:
        """Move every staged file to its place (``stage/FORMAT/REST`` -> ``places[FORMAT]/REST``), pictures
        first; map each staged path to where it landed."""
        staged = sorted(
            (p for p in self.root.rglob("*") if p.is_file()), key=lambda p: (p.parent.name != MEDIA_DIR, str(p))
        )
        landed = {}
        for path in staged:
            flavor, *rest = path.relative_to(self.root).parts
            target = places[flavor].joinpath(*rest)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.replace(path, target)
            except OSError:  # another file system (PDF's temporary HTML folder): copied, then renamed there
                shutil.move(path, target)
            landed[path] = target
        return landed
