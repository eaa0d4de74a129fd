"""Shared fixtures. `sandbox`: one real sandbox for the whole test session.

Set LOADTOWER_TEST_SANDBOX=DIR to reuse a sandbox you brought up yourself
(`loadtower sandbox up --dir DIR`); it is then left running. Otherwise the
session starts one in a temporary directory and stops it at the end, checking
that no process it started is left.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


def live_pids(info: dict) -> list[int]:
    from loadtower.sandbox import state as st
    from loadtower.sandbox.processes import is_alive

    state = st.load(Path(info["dir"]))
    if state is None:
        return []
    records = [n.process for n in state.nodes.values()] + list(state.services.values())
    return [r.pid for r in records if r is not None and is_alive(r)]


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    from loadtower.sandbox import Sandbox

    reuse = os.environ.get("LOADTOWER_TEST_SANDBOX")
    if reuse:
        info = Sandbox(reuse).info()
        if not info.get("up"):
            pytest.fail(f"LOADTOWER_TEST_SANDBOX={reuse} is not up")
        yield info
        return
    box = Sandbox(tmp_path_factory.mktemp("sandbox"), cassandra_nodes=1, standby=1)
    try:
        yield box.up(timeout=240)
    finally:
        info = box.info()
        box.down()
        assert live_pids(info) == [], "the sandbox left processes running"
