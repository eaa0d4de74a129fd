"""Build ids: digests of loadtower's installed source, so two hosts can prove they run the
same code (a version number alone does not change between edits).

- ``build_id()``: every room (the orchestrator's whole product).
- ``agent_build_id()``: only what runs on a load host (the agent install set: the
  package root's shared modules, ``agents`` and ``protocol``), so an edit of the TUI
  or the store does not ask for agents to be bootstrapped again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from pathlib import Path

from loadtower import __version__

ROOMS = ("loadtower", "loadtower.tui", "loadtower.agents", "loadtower.scenarios",
         "loadtower.store", "loadtower.sandbox", "loadtower.protocol")
AGENT_ROOMS = ("loadtower", "loadtower.agents", "loadtower.protocol")
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


def _digest(rooms: tuple[str, ...]) -> str:
    """12 hex digits over the relative paths and contents of the rooms' source files
    (a room that is not installed here, e.g. on an agent host, is left out)."""
    digest = hashlib.sha256()
    for module_name in rooms:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue
        directory = Path(next(iter(module.__path__)))
        for rel, path in _package_files(module_name.replace(".", "/"), directory):
            digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@functools.cache
def build_id() -> str:
    return _digest(ROOMS)


@functools.cache
def agent_build_id() -> str:
    return _digest(AGENT_ROOMS)


def version_line() -> str:
    return f"loadtower {__version__} (build {build_id()})"


def agent_version_line() -> str:
    """What `loadtower agent --version` prints on a load host."""
    return f"loadtower-agent {__version__} (build {agent_build_id()})"
