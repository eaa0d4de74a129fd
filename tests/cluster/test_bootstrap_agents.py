"""The agent hosts start with nothing: Debian's /usr/bin/python3 without loadtower and no
route to any package registry. The first run bootstraps the agent install set there
(wheel and wheelhouse over SFTP, installed with no index), and the host then reports
the orchestrator's agent build."""

from __future__ import annotations

import pytest

from tests.cluster.conftest import AGENTS, FirstRun, ssh

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]


def test_agents_bootstrapped_without_a_registry(cluster: dict, first_run: FirstRun) -> None:
    from loadtower.build import agent_version_line

    for host in AGENTS:
        before = first_run.before[host]
        assert before["import"].returncode != 0, before["import"]
        assert "No module named 'loadtower'" in before["import"].stderr, before["import"].stderr
        assert "Network is unreachable" in before["route"].stderr, before["route"].stderr
        assert before["bootstrap_dir"].returncode != 0, before["bootstrap_dir"].stdout
    assert first_run.done.returncode == 0, first_run.done.stderr[-3000:]
    for host in AGENTS:
        venvs = ssh(cluster, host, f"ls -d ~/loadtower-{host}/venv-*")
        assert venvs.returncode == 0, venvs.stderr
        venv = venvs.stdout.split()[-1]
        version = ssh(cluster, host, f"{venv}/bin/python -m loadtower agent --version")
        assert version.stdout.strip() == agent_version_line(), (host, version)
        # still no loadtower for the host's own python: only the bootstrapped venv has it
        again = ssh(cluster, host, "cd ~ && /usr/bin/python3 -c 'import loadtower'")
        assert again.returncode != 0
