"""``results/runs/<id>.json``: one experiment's last run, compact and diff-friendly.

The file holds the id, fingerprint, seeds, config, duration, library versions, the
hashes of the files behind the fingerprint, the measurements at full precision and
the series behind the figures, floats rounded to 6 significant digits. Keys are
sorted; each measurement and each series sits on one line, so a rerun's diff shows
which series moved::

    {
      "config": {"lr": 0.002, "steps": 2000},
      "duration": 7.4,
      "fingerprint": "9f3c2a1e",
      ...
      "series": {
        "val_loss": [4.16717,3.91022,...]
      },
      ...
    }

Non-finite floats are written as ``null`` (JSON has no NaN).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slidegen.atomic import atomic_write

#: Top-level fields written one entry per line.
_NESTED = ("files", "measurements", "series")


@dataclass
class RunRecord:
    """The record of one experiment's run."""

    id: str
    fingerprint: str
    seeds: list[int]
    config: Any
    duration: float
    """Seconds the experiment function took."""
    versions: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)
    measurements: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Key -> ``{"value", "sd", "n", "unit", "what", "digits"}``."""
    series: dict[str, Any] = field(default_factory=dict)
    quick: bool = False

    def dumps(self) -> str:
        """The canonical text of the record."""
        data: dict[str, Any] = {
            "config": self.config,
            "duration": round(self.duration, 1),
            "files": self.files,
            "fingerprint": self.fingerprint,
            "id": self.id,
            "measurements": self.measurements,
            "seeds": list(self.seeds),
            "series": {name: compact(values) for name, values in self.series.items()},
            "versions": self.versions,
        }
        if self.quick:
            data["quick"] = True
        lines = ["{"]
        items = sorted(data.items())
        for i, (key, value) in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            if key in _NESTED and value:
                lines.append(f"  {json.dumps(key)}: {{")
                entries = sorted(value.items())
                for j, (name, entry) in enumerate(entries):
                    inner = "," if j < len(entries) - 1 else ""
                    tight = key == "series"
                    lines.append(f"    {json.dumps(name, ensure_ascii=False)}: {_one_line(entry, tight)}{inner}")
                lines.append("  }" + comma)
            else:
                lines.append(f"  {json.dumps(key)}: {_one_line(value, False)}{comma}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, text: str) -> RunRecord:
        data = json.loads(text)
        return cls(
            id=data["id"],
            fingerprint=data["fingerprint"],
            seeds=list(data.get("seeds", [])),
            config=data.get("config"),
            duration=float(data.get("duration", 0.0)),
            versions=dict(data.get("versions", {})),
            files=dict(data.get("files", {})),
            measurements=dict(data.get("measurements", {})),
            series=dict(data.get("series", {})),
            quick=bool(data.get("quick", False)),
        )

    @classmethod
    def read(cls, path: Path) -> RunRecord | None:
        """The record at ``path``; ``None`` when it is missing or unreadable."""
        try:
            return cls.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, path: Path) -> None:
        atomic_write(path, self.dumps())


def run_path(runs_dir: Path, exp_id: str) -> Path:
    """``runs_dir/ch05.lr_sweep.json``."""
    return runs_dir / f"{exp_id}.json"


def compact(values: Any) -> Any:
    """Array-like ``values`` as nested lists, floats rounded to 6 significant digits."""
    if hasattr(values, "tolist"):  # NumPy arrays and scalars, torch tensors
        values = values.tolist()
    if isinstance(values, (list, tuple)):
        return [compact(v) for v in values]
    if isinstance(values, bool) or values is None:
        return values
    if isinstance(values, int):
        return values
    if isinstance(values, float):
        return float(f"{values:.6g}") if math.isfinite(values) else None
    raise TypeError(f"a series holds numbers, not {type(values).__name__}")


def _one_line(value: Any, tight: bool) -> str:
    separators = (",", ":") if tight else (", ", ": ")
    return json.dumps(_finite(value), sort_keys=True, separators=separators, ensure_ascii=False, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
