"""The `loadtower-agent` wheel: the agent install set, built from the running loadtower.

What a load host needs and nothing else: the package root's shared modules, the
`agents` and `protocol` rooms and the engines' agent parts (``loadtower.build.agent_files()``, the same files the
agent build id covers) and the agent dependencies of ``loadtower.install_sets``. Built
with zipfile from the installed (or source) files, so an installed loadtower can
bootstrap agents as well as a source tree. The wheel is reproducible: same files, same
bytes. Its version carries the agent build id as a local label (0.1.0+<id>), so pip
replaces an older agent build of the same version.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

from loadtower import __version__
from loadtower.build import agent_build_id, agent_files
from loadtower.install_sets import AGENT_EXTRAS, AGENT_REQUIRES
from loadtower.protocol.engine_kinds import GROUP

DIST_NAME = "loadtower-agent"
WHEEL_TAG = "py3-none-any"
REQUIRES_PYTHON = ">=3.11"
CONSOLE_SCRIPTS = "[console_scripts]\nloadtower = loadtower.cli:main\n"
# a fixed timestamp: the same files give the same wheel
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def agent_wheel_version() -> str:
    return f"{__version__}+{agent_build_id()}"


def wheel_name() -> str:
    return f"{DIST_NAME.replace('-', '_')}-{agent_wheel_version()}-{WHEEL_TAG}.whl"


def metadata() -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {DIST_NAME}",
        f"Version: {agent_wheel_version()}",
        "Summary: loadtower's load agent (Locust workers, engines, measurement)",
        f"Requires-Python: {REQUIRES_PYTHON}",
        *(f"Requires-Dist: {req}" for req in AGENT_REQUIRES),
    ]
    for extra, reqs in AGENT_EXTRAS.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {req}; extra == "{extra}"' for req in reqs]
    return "\n".join(lines) + "\n"


def entry_points_txt() -> str:
    """The console script and the built-in engines' registrations (the lines of
    ``loadtower.engines`` that name a package of ours: a third party's engine is its own
    distribution, installed on the load hosts apart)."""
    engines = sorted(f"{p.name} = {p.value}" for p in entry_points(group=GROUP)
                     if p.value.startswith("loadtower.engines."))
    return CONSOLE_SCRIPTS + f"\n[{GROUP}]\n" + "".join(f"{line}\n" for line in dict.fromkeys(engines))


def wheel_file() -> str:
    return ("Wheel-Version: 1.0\nGenerator: loadtower.agent_wheel\n"
            f"Root-Is-Purelib: true\nTag: {WHEEL_TAG}\n")


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def _write(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def build_agent_wheel(directory: Path) -> Path:
    """Write the agent wheel into `directory`; its path."""
    dist_info = f"{DIST_NAME.replace('-', '_')}-{agent_wheel_version()}.dist-info"
    entries = [(rel, path.read_bytes()) for rel, path in agent_files()]
    entries += [
        (f"{dist_info}/METADATA", metadata().encode()),
        (f"{dist_info}/WHEEL", wheel_file().encode()),
        (f"{dist_info}/entry_points.txt", entry_points_txt().encode()),
        (f"{dist_info}/top_level.txt", b"loadtower\n"),
    ]
    record = [f"{name},{_record_hash(data)},{len(data)}" for name, data in entries]
    record.append(f"{dist_info}/RECORD,,")
    wheel = directory / wheel_name()
    partial = wheel.with_suffix(".part")
    with zipfile.ZipFile(partial, "w") as archive:
        for name, data in entries:
            _write(archive, name, data)
        _write(archive, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode())
    partial.replace(wheel)
    return wheel


if __name__ == "__main__":  # `make agent-wheel`: python -m ... [DIR] (default dist/)
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "dist")
    out.mkdir(parents=True, exist_ok=True)
    print(build_agent_wheel(out))
