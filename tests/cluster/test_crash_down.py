"""`sandbox down` after a SIGKILL of `up --cluster` leaves nothing: no ltc-* namespace,
veth or bridge, no loadtower/* cgroup, no user ltsandbox, no sudo rule, no process."""

from __future__ import annotations

import pytest

from tests.cluster.conftest import CrashResult

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


def test_down_after_sigkill_of_up_leaves_nothing(crash_then_down: CrashResult) -> None:
    steps = crash_then_down.killed_after
    assert "sshd per host" in steps, steps  # killed with hosts, sshd and a node started
    present = crash_then_down.present_before_down
    assert any(p.startswith("namespace") or "ltc-" in p for p in present), present
    down = crash_then_down.down
    assert down is not None and down.returncode == 0, down and down.stderr
    assert crash_then_down.left_after_down == []
