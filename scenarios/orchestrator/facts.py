"""What produced the figures: versions and host facts, stored with every run."""

from __future__ import annotations

import importlib.metadata
import platform
from typing import Any

from loadtower import __version__

PACKAGES = (
    "cassandra-driver",
    "acsylla",
    "locust",
    "hdrhistogram",
    "duckdb",
    "asyncssh",
    "clickhouse-connect",
    "textual",
)
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
