"""Display math converted once: each formula's OMML and fallback PNG, kept under a content hash.

Converting ``$$...$$`` costs latex2mathml and matplotlib's mathtext: about 1.5 s of imports
and 50 ms a formula. :class:`MathCache` keeps both results in memory for the process and,
given a folder, on disk, so a warm build reads files and imports neither library. A file's
name is the SHA-256 of everything its bytes depend on: the TeX, the size and colour of the
picture, :data:`FORMAT` and the converters' versions.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from functools import cache
from pathlib import Path

from slidegen.atomic import atomic_write
from slidegen.write.pptx import texmath

#: Bump when :func:`slidegen.write.pptx.omml.latex_to_omml` or :func:`slidegen.write.pptx.texmath.render_png`
#: change what they produce: every cached file is then made anew.
FORMAT = 2  # 2: a plain multi-line formula (a \\ b) is a row per line
#: Results kept in memory across decks of one process (a PNG is 5-30 KB).
MEMORY_ITEMS = 1024
_memory: dict[str, str | bytes] = {}


class MathCache:
    """OMML and fallback pictures of display math, from memory, ``folder`` or the converters.

    ``folder`` ``None`` keeps results in memory only (for this process).
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._on_disk: set[str] = set()

    def omml(self, tex: str) -> str:
        """One ``m:oMath`` element as XML text; raises ValueError (not cached) when ``tex`` cannot convert."""
        key = _key("omml", FORMAT, _version("latex2mathml"), _version("mathml_to_omml", "mathml-to-omml"), tex)
        xml = _memory.get(key)
        if isinstance(xml, str):
            self._keep(key, ".xml", xml.encode("utf-8"))
            return xml
        data = self._read(key, ".xml")
        if data is not None and data.startswith(b"<m:oMath"):
            xml = data.decode("utf-8")
        else:
            from slidegen.write.pptx import omml

            xml = omml.latex_to_omml(tex)
            self._write(key, ".xml", xml.encode("utf-8"))
        _remember(key, xml)
        return xml

    def png(self, tex: str, size_pt: float, color: str) -> bytes:
        """The fallback picture of ``tex`` (:func:`slidegen.write.pptx.texmath.render_png`); its pixel size is in
        its header."""
        key = _key("png", FORMAT, _version("matplotlib"), texmath.DPI, repr(float(size_pt)), color.lower(), tex)
        data = _memory.get(key)
        if isinstance(data, bytes):
            self._keep(key, ".png", data)
            return data
        data = self._read(key, ".png")
        if data is None or not data.startswith(b"\x89PNG\r\n\x1a\n"):
            data = texmath.render_png(tex, size_pt, color)
            self._write(key, ".png", data)
        _remember(key, data)
        return data

    def _read(self, key: str, suffix: str) -> bytes | None:
        if self.folder is None:
            return None
        try:
            data = (self.folder / f"{key}{suffix}").read_bytes()
        except OSError:
            return None
        self._on_disk.add(key)
        return data

    def _write(self, key: str, suffix: str, data: bytes) -> None:
        if self.folder is None:
            return
        try:
            atomic_write(self.folder / f"{key}{suffix}", data)
        except OSError:
            return  # a cache that cannot be written only costs time on the next build
        self._on_disk.add(key)

    def _keep(self, key: str, suffix: str, data: bytes) -> None:
        """Make sure a result found in memory (another folder's, say) is in this folder too."""
        if self.folder is not None and key not in self._on_disk:
            if (self.folder / f"{key}{suffix}").is_file():
                self._on_disk.add(key)
            else:
                self._write(key, suffix, data)


def _remember(key: str, data: str | bytes) -> None:
    if len(_memory) >= MEMORY_ITEMS:
        _memory.clear()
    _memory[key] = data


def _key(*parts: object) -> str:
    return hashlib.sha256("\0".join(str(p) for p in parts).encode("utf-8")).hexdigest()


@cache
def _version(module: str, dist: str | None = None) -> str:
    """The installed version of ``module``'s distribution, without importing it.

    Read from the name of the ``NAME-VERSION.dist-info`` folder beside it: importing
    :mod:`importlib.metadata` alone costs 30-60 ms, a listing of site-packages under 1 ms.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return "missing"
    site = Path(spec.origin).parent
    if spec.submodule_search_locations is not None:  # a package: origin is NAME/__init__.py
        site = site.parent
    prefix = (dist or module).replace("-", "_").lower() + "-"
    try:
        names = os.listdir(site)
    except OSError:
        names = []
    for name in names:
        if name.lower().startswith(prefix) and name.endswith(".dist-info"):
            version = name[len(prefix) : -len(".dist-info")]
            if "-" not in version:
                return version
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as metadata_version

    try:
        return metadata_version(dist or module)
    except PackageNotFoundError:
        return "unknown"
