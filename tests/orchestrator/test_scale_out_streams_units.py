"""scale_out's ask for a joined node's streams (phases/scale_out.py `bootstrap_streams`)
through its engine's hook: no hook, no record; a node that keeps no record at all
(NoRecord) is said once and not asked again; one that does not answer yet is asked
again until the phase gives up."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from loadtower.orchestrator.phases import scale_out
from loadtower.scenarios.engine_hooks import NoRecord
from loadtower.scenarios.plan import Plan, load_plan
from tests.scenarios.conftest import INVENTORY, SCENARIO

RECORD = {"streaming_duration_s": 4.2, "streaming_status": "success",
          "streamed_bytes": 2000, "streamed_files": 4}


class Control:
    interrupted = False

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def sleep(self, seconds: float) -> bool:
        self.ctx.now += seconds
        return True


class Context:
    """What `bootstrap_streams` uses of a PhaseContext: a clock that sleeps move."""

    def __init__(self, plan: Plan) -> None:
        self.plan, self.actions, self.now = plan, None, 100.0
        self.control = Control(self)
        self.events: list[str] = []

    def clock(self) -> float:
        return self.now

    def event(self, kind: str, message: str, host: str | None = None) -> None:
        self.events.append(f"{kind}: {message}")


@pytest.fixture
def ctx(tmp_path: Path) -> Context:
    (tmp_path / "inv.toml").write_text(INVENTORY)
    (tmp_path / "sc.toml").write_text(SCENARIO)
    return Context(load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml"))


def _hook(monkeypatch: pytest.MonkeyPatch, answers: list[Any]) -> list[str]:
    """The engine's hook answers (a record, None or an exception) in turn; the hosts asked."""
    asked: list[str] = []

    async def bootstrap_streams(actions: Any, plan: Any, host: str,
                                timeout: float) -> dict[str, Any] | None:
        asked.append(host)
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    monkeypatch.setattr(scale_out, "hook", lambda engine, name: bootstrap_streams)
    return asked


def _streams(ctx: Context, deadline: float = 1000.0) -> dict[str, Any] | None:
    return asyncio.run(scale_out.bootstrap_streams(ctx, "db2", deadline))


def test_no_hook_no_record(ctx: Context, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scale_out, "hook", lambda engine, name: None)
    assert _streams(ctx) is None
    assert ctx.events == []


def test_a_node_without_a_record_is_said_once(ctx: Context,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _hook(monkeypatch, [NoRecord("no system_views.streaming (0x2200)")])
    assert _streams(ctx) is None
    assert asked == ["db2"]
    assert ctx.events == [
        "scale_out: db2: no record of its streams (no system_views.streaming (0x2200))"]


def test_a_node_not_answering_yet_is_asked_again(ctx: Context,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _hook(monkeypatch, [OSError("refused"), TimeoutError(), RECORD])
    assert _streams(ctx) == RECORD
    assert asked == ["db2"] * 3 and ctx.events == []


def test_a_node_that_never_answers_is_given_up(ctx: Context,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _hook(monkeypatch, [OSError("refused")])
    assert _streams(ctx, deadline=105.0) is None  # before STREAMS_WAIT_S
    assert len(asked) == 6  # at 100, 101, ..., 105
    assert ctx.events == ["scale_out: db2: no record of its streams (refused)"]
