"""The build id: a digest of loadtower's installed source, so two hosts can prove they
run the same code (a version number alone does not change between edits)."""

from __future__ import annotations

import functools
import hashlib
import importlib
from pathlib import Path

from loadtower import __version__

ROOMS = ("loadtower", "loadtower.tui", "loadtower.agents", "loadtower.scenarios",
         "loadtower.store", "loadtower.sandbox")
SUFFIXES = (".py", ".toml")


def _package_files(name: str, directory: Path) -> list[tuple[str, Path]]:
    """Files of a package and its sub-packages (directories with an __init__.py)."""
    found: list[tuple[str, Path]] = []
    for path in sorted(directory.iterdir()):
        if path.is_dir():
            if (path / "__init__.py").exists() and name != "loadtower":
                found += _package_files(f"{name}/{path.name}", path)
        elif path.suffix in SUFFIXES:
            found.append((f"{name}/{path.name}", path))
    return found


@functools.cache
def build_id() -> str:
    """12 hex digits over the relative paths and contents of every source file."""
    digest = hashlib.sha256()
    for module_name in ROOMS:
        module = importlib.import_module(module_name)
        directory = Path(next(iter(module.__path__)))
        for rel, path in _package_files(module_name.replace(".", "/"), directory):
            digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def version_line() -> str:
    return f"loadtower {__version__} (build {build_id()})"
