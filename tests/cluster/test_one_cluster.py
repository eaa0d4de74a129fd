"""One cluster sandbox per machine (its names are fixed): `up --cluster` in another
directory while the session's cluster is up refuses with one line naming that directory,
and `down` of another directory does not touch it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def test_a_second_cluster_is_refused_naming_the_first(cluster: dict, tmp_path: Path) -> None:
    other = tmp_path / "other"
    up = run_cli(["sandbox", "up", "--cluster", "--dir", str(other)], timeout=120)
    assert up.returncode == 2, up.stderr
    lines = up.stderr.strip().splitlines()
    assert len(lines) == 1 and cluster["dir"] in lines[0], lines
    down = run_cli(["sandbox", "down", "--cluster", "--dir", str(other)], timeout=120)
    assert down.returncode == 2 and cluster["dir"] in down.stderr, down.stderr
    status = run_cli(["sandbox", "status", "--dir", cluster["dir"], "--json"], timeout=60)
    assert status.returncode == 0, status.stdout  # still up
