"""What produced the figures: versions and host facts, stored with every run."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import re
import shlex
from typing import Any

from loadtower import __version__
from loadtower.install_sets import (
    AGENT_EXTRAS,
    AGENT_REQUIRES,
    ENGINE_DRIVERS,
    ORCHESTRATOR_REQUIRES,
)


def _names(requirements: tuple[str, ...]) -> tuple[str, ...]:
    """The distributions' names of requirement strings (``locust>=2.20`` -> ``locust``)."""
    return tuple(dict.fromkeys(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in requirements))


# what an agent host's Python has of what makes the load: the agent install set (Locust,
# the HDR library, ...), every engine's driver and the optional session driver
AGENT_PACKAGES = _names(AGENT_REQUIRES + ENGINE_DRIVERS + AGENT_EXTRAS["fast"])
# and here: the agent set and what the orchestrator, the store and the TUI add
PACKAGES = AGENT_PACKAGES + _names(ORCHESTRATOR_REQUIRES)
AGENT_VERSIONS_MARK = "LTVERSIONS "
HOST_FACTS_CMD = "uname -srm; nproc; grep MemTotal /proc/meminfo; cat /etc/os-release 2>/dev/null | grep PRETTY_NAME"


def local_versions() -> dict[str, Any]:
    versions: dict[str, Any] = {"loadtower": __version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def parse_host_facts(text: str) -> dict[str, Any]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    facts: dict[str, Any] = {}
    if lines:
        facts["kernel"] = lines[0]
    for line in lines[1:]:
        if line.isdigit():
            facts["cpus"] = int(line)
        elif line.startswith("MemTotal:"):
            facts["mem_total_bytes"] = int(line.split()[1]) * 1024
        elif line.startswith("PRETTY_NAME="):
            facts["os"] = line.split("=", 1)[1].strip('"')
    return facts


def agent_versions_command(python: str) -> str:
    """A command printing, as one JSON line, the versions of loadtower, Python and the
    load's drivers that `python` on an agent host has."""
    script = "\n".join(
        [
            "import importlib.metadata as m, json, platform",
            "import loadtower",
            "out = {'loadtower': loadtower.__version__, 'python': platform.python_version()}",
            f"for name in {AGENT_PACKAGES!r}:",
            "    try:",
            "        out[name] = m.version(name)",
            "    except m.PackageNotFoundError:",
            "        out[name] = None",
            f"print({AGENT_VERSIONS_MARK!r} + json.dumps(out))",
        ]
    )
    return f"{shlex.quote(python)} -c {shlex.quote(script)}"


def parse_agent_versions(text: str) -> dict[str, Any] | None:
    """The versions printed by agent_versions_command, or None when it printed none."""
    for line in reversed(text.splitlines()):
        if line.startswith(AGENT_VERSIONS_MARK):
            try:
                found = json.loads(line[len(AGENT_VERSIONS_MARK) :])
            except ValueError:
                return None
            return found if isinstance(found, dict) else None
    return None
