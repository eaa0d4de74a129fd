"""What the engines add to loadtower's built-in files (issue 30): an engine's package may
ship TOML text, ``scenarios/NAME.toml`` (a target of its own in built-in scenario NAME)
and ``workloads/SCHEMA.toml`` (its slot's ops and tables in a shipped workload file),
in the package its kind names as ``builtin_additions``. The text is appended to the
built-in file's own when the file is read, so that the run keeps the whole text and a
bad key's line is its line in that text.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from loadtower.protocol.engine_kinds import KINDS

_FOLDERS = {"loadtower.scenarios.builtin": "scenarios",
            "loadtower.scenarios.builtin.workloads": "workloads"}


def additions(folder: str, name: str) -> str:
    """The registered engines' text for the built-in file `folder/name.toml`."""
    out: list[str] = []
    for package in dict.fromkeys(k.builtin_additions for k in KINDS.values()):
        if package is None:
            continue
        ref = resources.files(package) / folder / f"{name}.toml"
        if ref.is_file():
            out.append(f"\n# added by the engine package {package}\n{ref.read_text()}")
    return "".join(out)


def builtin_folder(path: Path) -> str | None:
    """``scenarios`` or ``workloads`` when `path` is one of loadtower's built-in files."""
    for package, folder in _FOLDERS.items():
        try:
            if path.resolve().parent == Path(str(resources.files(package))).resolve():
                return folder
        except OSError:
            return None
    return None


def with_additions(path: Path, text: str) -> str:
    """`text`, the contents of `path`, with what the engines add if it is built-in."""
    folder = builtin_folder(path)
    return text if folder is None else text + additions(folder, path.stem)
