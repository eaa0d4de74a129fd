"""The agent hosts' driver versions (the command they run, what is read from it) and the
line a run's `versions` event shows."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

from loadtower import __version__
from loadtower.fleet.facts import agent_versions_command, parse_agent_versions
from loadtower.orchestrator.run_versions import summary


def test_the_agent_command_reports_this_python_and_its_drivers() -> None:
    done = subprocess.run(
        agent_versions_command(sys.executable), shell=True, capture_output=True, text=True,
        timeout=60,
    )
    found = parse_agent_versions("some banner\n" + done.stdout)
    assert found is not None, done.stderr
    assert found["loadtower"] == __version__
    assert found["cassandra-driver"] == importlib.metadata.version("cassandra-driver")
    assert found["python"] == ".".join(map(str, sys.version_info[:3]))


def test_output_without_the_versions_line_gives_none() -> None:
    assert parse_agent_versions("/usr/bin/python3: No module named loadtower\n") is None
    assert parse_agent_versions("LTVERSIONS {not json\n") is None


def test_summary_names_versions_and_each_host_without_one() -> None:
    line, problems = summary(
        {
            "databases": {
                "db1": {"engine": "cassandra", "version": "5.0.6"},
                "db2": {"engine": "cassandra", "error": "connecting to 127.0.0.1:1: refused"},
            },
            "agents": {"agent1": {"loadtower": "0.1.0", "python": "3.11.7", "acsylla": None,
                                  "cassandra-driver": "3.30.1"}},
        }
    )
    assert line == "versions: db1 cassandra 5.0.6; agent1: loadtower 0.1.0, cassandra-driver 3.30.1"
    assert problems == [("db2", "version of db2 unknown: connecting to 127.0.0.1:1: refused")]
