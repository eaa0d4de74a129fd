"""A wheelhouse of the agent install set's dependencies, for one agent host's Python.

An agent host may have no route to any package registry (and no pip): the orchestrator
asks the host's Python what it is (``probe_command``: implementation, version, machine,
C library), downloads wheels of ``pip`` and the agent set's dependencies for exactly
that target with its OWN registry access (``pip download --only-binary=:all:
--python-version ... --platform ...``; when the target is this interpreter's own kind,
``pip wheel`` as a fallback, which also builds sdists), and caches them under
``~/.cache/loadtower/wheelhouse/<agent build id>/<target>-<requirements digest>/``.
``agent_version.py`` copies them over SFTP and installs with ``pip install --no-index``.

``python -m loadtower.fleet.agent_wheelhouse [PYTHON]`` prebuilds the
wheelhouse for PYTHON's target (default: /usr/bin/python3), as scripts/install.sh does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from loadtower.build import agent_build_id
from loadtower.defaults import cache_dir
from loadtower.errors import LoadtowerError
from loadtower.install_sets import AGENT_EXTRAS, AGENT_REQUIRES, ENGINE_DRIVERS

BUILD_TIMEOUT_S = 900.0  # pip download / pip wheel of the whole set
COMPLETE = ".complete"  # written last: a wheelhouse without it is rebuilt
PRUNE_AFTER_S = 3 * 86400  # other agent builds' wheelhouses unused this long are removed
PROBE_MARK = "LT-PYTHON "
MIN_PYTHON = (3, 11)  # the agent wheel's Requires-Python
PROBE = (
    "import json, platform, sys; "
    "libc, libc_version = platform.libc_ver(); "
    f"print({PROBE_MARK!r} + json.dumps({{"
    "'implementation': sys.implementation.name, "
    "'version': list(sys.version_info[:2]), "
    "'machine': platform.machine(), 'system': platform.system(), "
    "'libc': libc, 'libc_version': libc_version}))"
)
_ABBREV = {"cpython": "cp", "pypy": "pp"}


@dataclass(frozen=True)
class PythonTarget:
    """What an agent host's Python installs: the facts pip's tags are made of."""

    implementation: str  # sys.implementation.name: cpython
    version: tuple[int, int]
    machine: str  # x86_64, aarch64
    system: str  # Linux
    libc: str  # glibc, or "" (musl)
    libc_version: str  # 2.36

    @property
    def abbrev(self) -> str:
        return _ABBREV.get(self.implementation, self.implementation)

    @property
    def python_tag(self) -> str:
        return f"{self.abbrev}{self.version[0]}{self.version[1]}"

    def tag(self) -> str:
        """A file-name-safe name of the target: cp311-x86_64-glibc2.36."""
        libc = f"{self.libc}{self.libc_version}" if self.libc else "nolibc"
        return f"{self.python_tag}-{self.machine}-{libc}".replace("/", "_")

    def describe(self) -> str:
        libc = f"{self.libc} {self.libc_version}" if self.libc else "no glibc"
        return (f"{self.implementation} {self.version[0]}.{self.version[1]}, "
                f"{self.system} {self.machine}, {libc}")

    def platforms(self) -> list[str]:
        """pip's --platform values this Python accepts, newest first."""
        arch = self.machine.lower().replace("-", "_").replace(".", "_")
        if self.system != "Linux":
            raise LoadtowerError(f"{self.system} agent hosts are not supported (Linux only)")
        if self.libc == "glibc":
            try:
                major, minor = (int(p) for p in self.libc_version.split(".")[:2])
            except ValueError:
                raise LoadtowerError(f"unknown glibc version {self.libc_version!r}") from None
            newest = minor if major == 2 else 17
            tags = [f"manylinux_2_{m}_{arch}" for m in range(newest, 4, -1)]
            legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
            tags += [f"{name}_{arch}" for m, name in legacy.items() if m <= newest]
        else:  # musl (platform.libc_ver() names no glibc)
            tags = [f"musllinux_1_{m}_{arch}" for m in (2, 1)]
        return tags

    def pip_flags(self) -> list[str]:
        flags = ["--only-binary=:all:", "--implementation", self.abbrev,
                 "--python-version", f"{self.version[0]}.{self.version[1]}",
                 "--abi", self.python_tag, "--abi", "abi3", "--abi", "none"]
        for platform in self.platforms():
            flags += ["--platform", platform]
        return flags

    def is_this_interpreter(self) -> bool:
        """Same kind as the Python running the orchestrator (pip wheel may build for it)."""
        import platform

        here_libc, _ = platform.libc_ver()
        return (self.implementation == sys.implementation.name
                and self.version == tuple(sys.version_info[:2])
                and self.machine == platform.machine() and self.libc == here_libc)


def probe_command(python: str) -> str:
    return f"{shlex.quote(python)} -c {shlex.quote(PROBE)} 2>&1"


def parse_probe(output: str) -> PythonTarget | None:
    """The target the probe printed (its last marked line), None without one."""
    for line in reversed(output.splitlines()):
        if line.startswith(PROBE_MARK):
            try:
                data = json.loads(line[len(PROBE_MARK):])
                return PythonTarget(
                    implementation=str(data["implementation"]),
                    version=(int(data["version"][0]), int(data["version"][1])),
                    machine=str(data["machine"]),
                    system=str(data["system"]),
                    libc=str(data["libc"] or ""),
                    libc_version=str(data["libc_version"] or ""),
                )
            except (ValueError, KeyError, IndexError, TypeError):
                return None
    return None


def requirements(fast: bool) -> list[str]:
    """pip itself (the host may have none: it runs from its wheel), the agent set and every
    built-in engine's driver (its extra: the hosts get them all)."""
    return ["pip", *AGENT_REQUIRES, *ENGINE_DRIVERS, *(AGENT_EXTRAS["fast"] if fast else ())]


def wheelhouse_dir(target: PythonTarget, fast: bool) -> Path:
    digest = hashlib.sha256("\n".join(requirements(fast)).encode()).hexdigest()[:10]
    return cache_dir() / "wheelhouse" / agent_build_id() / f"{target.tag()}-{digest}"


def wheels(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.suffix == ".whl")


def pip_wheel_of(directory: Path) -> Path:
    """The pip wheel of a wheelhouse (the host runs pip from it: `python pip-*.whl/pip`)."""
    found = [p for p in wheels(directory) if p.name.startswith("pip-")]
    if not found:
        raise LoadtowerError(f"the wheelhouse {directory} has no pip wheel")
    return found[-1]


def _last_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["(no output)"])[0 if errors else -1]


def _pip(args: list[str], what: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise LoadtowerError(f"{what}: pip took over {BUILD_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        if "No module named pip" in done.stderr:
            raise LoadtowerError(f"{what}: {sys.executable} has no pip "
                                 "(the orchestrator downloads the wheels with it)")
        raise LoadtowerError(f"{what}: {_last_error(done.stderr or done.stdout)}")


def _prune(root: Path, keep: str) -> None:
    """Remove other agent builds' wheelhouses nobody used for PRUNE_AFTER_S."""
    if not root.is_dir():
        return
    now = time.time()
    for entry in root.iterdir():
        try:
            if entry.name != keep and entry.is_dir() and now - entry.stat().st_mtime > PRUNE_AFTER_S:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue


def build_wheelhouse(target: PythonTarget, fast: bool) -> tuple[Path, bool]:
    """The cached wheelhouse for `target` (built now when missing): (its path, was cached).
    Raises LoadtowerError with one line (target and pip's error) when pip cannot make it."""
    if target.version < MIN_PYTHON:
        raise LoadtowerError(
            f"Python {target.version[0]}.{target.version[1]} is too old for the agent "
            f"(needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer)")
    final = wheelhouse_dir(target, fast)
    if (final / COMPLETE).exists():
        os.utime(final.parent)
        _add_core(final, target)
        return final, True
    final.parent.mkdir(parents=True, exist_ok=True)
    _prune(final.parent.parent, final.parent.name)
    what = f"cannot build the agent wheelhouse for {target.describe()}"
    with tempfile.TemporaryDirectory(prefix=".building-", dir=final.parent) as scratch:
        partial = Path(scratch) / "wheels"
        reqs = requirements(fast)
        try:
            _pip(["download", "--quiet", "--dest", str(partial), *target.pip_flags(), *reqs], what)
        except LoadtowerError:
            if not target.is_this_interpreter():
                raise
            # this interpreter's own kind: pip wheel may build what has no wheel
            _pip(["wheel", "--quiet", "--wheel-dir", str(partial), *reqs], what)
        (partial / COMPLETE).write_text("\n".join(p.name for p in wheels(partial)) + "\n")
        try:
            partial.rename(final)
        except OSError:  # another process made it meanwhile
            if not (final / COMPLETE).exists():
                raise
    _add_core(final, target)
    return final, False


def _add_core(house: Path, target: PythonTarget) -> None:
    """The Rust load core's wheel, built here (scripts/build_core.sh), when it fits."""
    # deferred: a cycle (core_wheel imports PythonTarget from here)
    from loadtower.fleet import core_wheel

    core_wheel.add_to(house, target)


def local_target(python: str) -> PythonTarget:
    done = subprocess.run(["sh", "-c", probe_command(python)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    target = parse_probe(done.stdout)
    if target is None:
        raise LoadtowerError(f"{python} did not say what it is: {_last_error(done.stdout)}")
    return target


def main(argv: list[str]) -> int:
    python = argv[0] if argv else "/usr/bin/python3"
    fast = importlib.util.find_spec("acsylla") is not None  # as agent_version.py decides
    started = time.monotonic()
    try:
        target = local_target(python)
        path, cached = build_wheelhouse(target, fast)
    except LoadtowerError as exc:
        print(f"loadtower: {exc}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in wheels(path))
    print(f"agent wheelhouse for {python} ({target.describe()}): {len(wheels(path))} wheels, "
          f"{size / 1e6:.0f} MB in {path} ({'cached' if cached else 'built'} in "
          f"{time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
