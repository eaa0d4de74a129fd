"""Build ids: digests of loadtower's installed source, so two hosts can prove they run the
same code (a version number alone does not change between edits).

- ``build_id()``: every room (the orchestrator's whole product).
- ``agent_build_id()``: only what runs on a load host (the agent install set: the
  package root's shared modules ``AGENT_ROOT_MODULES``, ``agents``, ``protocol`` and the
  engine packages without their orchestrator and sandbox parts),
  so an edit of the TUI or the store does not ask for agents to be bootstrapped again.
  The `loadtower-agent` wheel ships exactly ``agent_files()``, so a load host that
  installed it computes the same id as the orchestrator that built it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from pathlib import Path

from loadtower import __version__

ROOMS = ("loadtower", "loadtower.tui", "loadtower.agents", "loadtower.scenarios",
         "loadtower.orchestrator", "loadtower.fleet", "loadtower.store", "loadtower.sandbox",
         "loadtower.protocol", "loadtower.engines")
AGENT_ROOMS = ("loadtower", "loadtower.agents", "loadtower.protocol", "loadtower.engines")
# An engine package's parts that stay on the orchestrator (loadtower.engines.NAME.PART).
NOT_AGENT_PARTS = ("orchestrator", "sandbox", "builtin")
# The package root's modules a load host gets (the rest of the root is the orchestrator's).
AGENT_ROOT_MODULES = ("__init__.py", "__main__.py", "errors.py", "build.py", "cli.py")
SUFFIXES = (".py", ".toml")
SKIPPED = ("__pycache__",)


def _package_files(name: str, directory: Path) -> list[tuple[str, Path]]:
    """Files of a package and its sub-packages (directories with an __init__.py), data
    files included; the package root's sub-packages are rooms of their own."""
    found: list[tuple[str, Path]] = []
    for path in sorted(directory.iterdir()):
        if path.name in SKIPPED or path.suffix == ".pyc":
            continue
        if path.is_dir():
            if (path / "__init__.py").exists() and name != "loadtower":
                found += _package_files(f"{name}/{path.name}", path)
        elif path.is_file():
            found.append((f"{name}/{path.name}", path))
    return found


def room_files(rooms: tuple[str, ...], root_modules: tuple[str, ...] | None = None
               ) -> list[tuple[str, Path]]:
    """(path in the wheel, file here) of the rooms that are installed here (a room that
    is not, e.g. the orchestrator's on an agent host, is left out). `root_modules` keeps
    only those files of the package root (None: all of them)."""
    files: list[tuple[str, Path]] = []
    for module_name in rooms:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue
        directory = Path(next(iter(module.__path__)))
        for rel, path in _package_files(module_name.replace(".", "/"), directory):
            if module_name == "loadtower" and root_modules is not None \
                    and path.name not in root_modules:
                continue
            files.append((rel, path))
    return files


def _agent_part(rel: str) -> bool:
    """Not an engine package's orchestrator or sandbox part."""
    parts = rel.split("/")
    return not (parts[:2] == ["loadtower", "engines"] and len(parts) > 4
                and parts[3] in NOT_AGENT_PARTS)


def agent_files() -> list[tuple[str, Path]]:
    """What the `loadtower-agent` wheel ships, and what the agent build id covers: the
    agent rooms and each engine package but its orchestrator, sandbox and builtin parts."""
    return [(rel, path) for rel, path in room_files(AGENT_ROOMS, AGENT_ROOT_MODULES)
            if _agent_part(rel)]


def _digest(files: list[tuple[str, Path]]) -> str:
    """12 hex digits over the relative paths and contents of the source files."""
    digest = hashlib.sha256()
    for rel, path in files:
        if path.suffix in SUFFIXES:
            digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@functools.cache
def build_id() -> str:
    return _digest(room_files(ROOMS))


@functools.cache
def agent_build_id() -> str:
    return _digest(agent_files())


def version_line() -> str:
    return f"loadtower {__version__} (build {build_id()})"


def agent_version_line() -> str:
    """What `loadtower agent --version` prints on a load host."""
    return f"loadtower-agent {__version__} (build {agent_build_id()})"
