"""The Rust load core's wheel (``loadtower_core``) for agent hosts.

scripts/build_core.sh builds it from its engine package's native/ crate into ``dist/core/`` of the
source tree (it is on no package index). The orchestrator copies it into an agent
host's wheelhouse when its tags fit the host's Python (abi3 from cp39, a manylinux tag
the host's glibc accepts), and the agent is then installed with the ``core`` extra.
``LOADTOWER_CORE_WHEEL`` names another wheel file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import loadtower
from loadtower.fleet.agent_wheelhouse import PythonTarget

PREFIX = "loadtower_core-"


def built_wheel() -> Path | None:
    """The newest built core wheel, or None (no cargo at install time)."""
    named = os.environ.get("LOADTOWER_CORE_WHEEL")
    if named:
        return Path(named) if Path(named).is_file() else None
    folder = Path(loadtower.__file__).resolve().parent.parent / "dist" / "core"
    found = sorted(folder.glob(f"{PREFIX}*.whl"), key=lambda p: p.stat().st_mtime) \
        if folder.is_dir() else []
    return found[-1] if found else None


def fits(wheel: Path, target: PythonTarget) -> bool:
    """Whether pip on `target` installs this wheel (its file name's tags)."""
    parts = wheel.name[:-len(".whl")].split("-")
    if len(parts) < 5:
        return False
    python, abi, platform = parts[-3], parts[-2], parts[-1]
    if abi == "abi3":
        ok = any(p.startswith("cp3") and int(p[3:]) <= target.version[1]
                 for p in python.split(".") if p[3:].isdigit())
    else:
        ok = target.python_tag in python.split(".")
    return ok and target.abbrev == "cp" and bool(set(platform.split(".")) & set(target.platforms()))


def add_to(house: Path, target: PythonTarget) -> bool:
    """Put the built core wheel into the wheelhouse `house` when it fits `target` (an older
    one is replaced): whether `house` now has one."""
    wheel = built_wheel()
    usable = wheel is not None and fits(wheel, target)
    for old in house.glob(f"{PREFIX}*.whl"):
        if wheel is None or not usable or old.name != wheel.name \
                or old.stat().st_size != wheel.stat().st_size:
            old.unlink()
    if wheel is None or not usable:
        return False
    if not (house / wheel.name).exists():
        shutil.copyfile(wheel, house / wheel.name)
    return True


def in_house(house: Path) -> bool:
    return any(house.glob(f"{PREFIX}*.whl"))
