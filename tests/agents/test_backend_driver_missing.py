"""An agent without an engine's driver says which one is missing and how to get it (the
agent set's extra of the engine's package), instead of a traceback."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from loadtower.agents import backends
from loadtower.protocol.engine_kinds import kind


def test_a_built_in_engine_without_its_driver_names_its_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    missing = dataclasses.replace(kind("redis"),
                                  agent_backend="loadtower.engines.redis.agent.no_such:Backend")
    monkeypatch.setattr(backends, "kind", lambda engine: missing)
    with pytest.raises(ValueError) as raised:
        backends.backend_for("redis")
    assert str(raised.value) == (
        "the load agent cannot drive Redis: loadtower.engines.redis.agent.no_such is not "
        "installed here (install loadtower-agent[redis])")


def test_a_third_partys_engine_without_its_driver_names_the_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lt_other_engine_backend.py").write_text("import lt_no_such_driver\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    other = dataclasses.replace(kind("redis"), title="Other",
                                agent_backend="lt_other_engine_backend:Backend")
    monkeypatch.setattr(backends, "kind", lambda engine: other)
    with pytest.raises(ValueError) as raised:
        backends.backend_for("other")
    assert str(raised.value) == ("the load agent cannot drive Other: lt_no_such_driver is not "
                                 "installed here (install its package's requirements)")
    sys.modules.pop("lt_other_engine_backend", None)
