"""Steering a run phase (rate / users) through the run's control: what is refused and
why, what is stored, what the phase's result says; the socket's round trip."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import duckdb
import pytest

from loadtower.orchestrator.control import ControlServer, RunControl
from loadtower.orchestrator.phases import run
from loadtower.scenarios.control_api import send

from .phase_fixtures import INVENTORY, InstantControl, phase_context

OPEN = """
name = "steer"
[dataset]
records = 100
[[phases]]
type = "run"
name = "steady"
rate = 500
duration = 30
"""
CLOSED = OPEN.replace("rate = 500", "users = 4")


class SteeredControl(InstantControl):
    """The phase's sleep: the operator's commands arrive while it runs (the clock moves
    10 s between them), then the rest of the phase passes."""

    def __init__(self, clock: object, commands: list[tuple[str, object]]) -> None:
        super().__init__(clock)  # type: ignore[arg-type]
        self.commands, self.replies = commands, []  # type: list[tuple[str, object]], list[str]

    async def sleep(self, seconds: float) -> bool:
        for command, value in self.commands:
            self.clock.now += 10
            self.replies.append(await self.command(command, value))
        self.clock.now += seconds - 10 * len(self.commands)
        return True


def _steered(tmp_path: Path, scenario: str, commands: list[tuple[str, object]]) -> tuple:
    with phase_context(tmp_path, scenario, INVENTORY) as (ctx, synth, _a):
        control = SteeredControl(ctx.clock, commands)
        ctx.control = control
        ctx.current_phase = "steady"
        result = asyncio.run(run.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        run_id = ctx.run_id
        assert ctx.control.steer is None  # none after the phase: a late command is refused
    with duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True) as con:
        events = con.execute("SELECT kind, phase, message, data FROM events WHERE run_id = ? "
                             "AND kind LIKE '%_change' ORDER BY ts", [run_id]).fetchall()
    return result, control.replies, synth.steers, events


def test_a_rate_change_reaches_the_load_is_stored_and_the_result_says_so(tmp_path: Path) -> None:
    result, replies, steers, events = _steered(
        tmp_path, OPEN, [("rate", 1000), ("rate", 1000), ("rate", 250.5)])
    assert replies == ["ok: phase steady now at 1,000 ops/s",
                       "ok: phase steady already runs at 1,000 ops/s",
                       "ok: phase steady now at 250.5 ops/s"]
    assert [(kind, value) for kind, value, _t in steers] == [("rate", 1000.0), ("rate", 250.5)]
    assert [(kind, phase) for kind, phase, _m, _d in events] == [("rate_change", "steady")] * 2
    first = json.loads(events[0][3])
    assert first == {"phase": "steady", "kind": "rate", "from": 500.0, "to": 1000.0,
                     "at_s": 10.0}
    assert "500 ops/s -> 1,000 ops/s" in events[0][2]
    assert [c["to"] for c in result["steered"]] == [1000.0, 250.5]
    assert result["notes"] == ["rate steered live: 500 ops/s -> 1,000 ops/s at 10s -> "
                               "250.5 ops/s at 30s; its figures mix those levels"]


def test_a_closed_model_steers_users_and_refuses_a_rate(tmp_path: Path) -> None:
    result, replies, steers, events = _steered(
        tmp_path, CLOSED, [("rate", 1000), ("users", 8), ("users", 2.5), ("users", 0)])
    assert replies[0] == ("phase steady runs a closed model (users): steer it with "
                          "'users N', not 'rate'")
    assert replies[1] == "ok: phase steady now at 8 users"
    assert replies[2] == "users must be a whole number up to 100,000 (got 2.5)"
    assert replies[3] == "users must be above 0 (got 0)"
    assert steers == [("users", 8.0, steers[0][2])]
    assert [kind for kind, *_ in events] == ["users_change"]
    assert result["steered"][0]["from"] == 4.0


@pytest.mark.parametrize("value", ["fast", None, True, float("nan"), -5, 1e9])
def test_a_bad_rate_is_refused_with_its_reason_and_nothing_changes(tmp_path: Path,
                                                                  value: object) -> None:
    result, replies, steers, events = _steered(tmp_path, OPEN, [("rate", value)])
    assert steers == [] and events == [] and "steered" not in result
    assert not replies[0].startswith("ok"), replies


def test_without_a_steerable_phase_the_control_says_so() -> None:
    control = RunControl()
    reply = asyncio.run(control.command("rate", 100))
    assert reply.startswith("no phase to steer now")
    assert asyncio.run(control.command("skip_phase")) == "ok" and control.skip_requested.is_set()


def test_the_socket_carries_the_number_and_the_reply(tmp_path: Path) -> None:
    control = RunControl()
    seen: list[tuple[str, float]] = []

    async def steer(kind: str, value: float) -> str:
        seen.append((kind, value))
        return f"ok: {kind} {value:g}"

    control.steer = steer

    async def scenario() -> list[str]:
        server = ControlServer(control, tmp_path / "c" / "run.sock")
        await server.start()
        try:
            path = server.path
            return [await send(path, "rate", value=750.0), await send(path, "users", value=3),
                    await send(path, "pause_phase")]
        finally:
            await server.close()

    assert asyncio.run(scenario()) == ["ok: rate 750", "ok: users 3", "ok"]
    assert seen == [("rate", 750.0), ("users", 3.0)]
    assert control.history == ["rate 750", "users 3", "pause_phase"]
