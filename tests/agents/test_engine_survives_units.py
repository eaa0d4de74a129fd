"""The engine outlives a failure of its own bookkeeping: a drain whose wait for the ops
in flight raised still sends the phase's lines and its drain event, and the next phase
configures (every configure awaits the last drain: a drain that raised failed them all);
the per-second ticker that met an error warns once and sends the later seconds."""

from __future__ import annotations

import time
from typing import Any

from .test_phase_accounting import WAIT_S, Gate, begin, engine, instant, wait_until

__all__ = ["engine"]  # the fixture, used by name


def test_a_drain_whose_wait_raised_ends_the_phase_and_the_next_begins(  # noqa: ANN001
        engine, monkeypatch) -> None:
    eng, lines = engine
    gate = Gate(eng)
    begin(eng, "A", {"slow": gate.op})
    eng.add_lane(1)
    wait_until(lambda: gate.started == 1, "the lane's op")

    async def broken(phase: str, bound: float) -> None:
        raise RuntimeError("the wait broke")

    monkeypatch.setattr(eng.inflight, "wait", broken)
    eng.submit(eng.stop_phase(3)).result(WAIT_S)
    kinds = [x.get("kind") or x.get("type") for x in lines]
    assert "drain" in kinds and kinds[-1] == "stop_done"
    warning = next(x for x in lines if x.get("kind") == "warning")
    assert warning["message"] == "phase A: waiting for its ops: RuntimeError: the wait broke"
    monkeypatch.undo()
    gate.open()
    begin(eng, "B", {"fast": instant}, think=0.01)  # awaits A's drain first: it ended, without raising
    eng.add_lane(1)
    wait_until(lambda: any(x.get("type") == "interval" and x["phase"] == "B" for x in lines),
               "a second of phase B")


def test_the_ticker_warns_once_and_sends_the_later_seconds(engine) -> None:  # noqa: ANN001
    eng, lines = engine
    failures: list[int] = []

    def harvest(before: int) -> None:
        if len(failures) < 3:  # three seconds in a row: one warning
            failures.append(before)
            raise ValueError("no such phase")

    feed = eng._feed("cassandra")  # the CQL engines' native feed, as their first phase makes it
    assert feed is not None
    feed.harvest = harvest  # type: ignore[method-assign]
    begin(eng, "A", {"fast": instant}, think=0.01)
    eng.add_lane(1)
    deadline = time.monotonic() + WAIT_S

    def seconds() -> list[Any]:
        return [x["ts"] for x in list(lines) if x.get("type") == "interval"]

    wait_until(lambda: len(failures) == 3 and max(seconds(), default=0) > failures[-1]
               or time.monotonic() > deadline, "a second after the failures")
    assert len(failures) == 3
    warnings = [x["message"] for x in list(lines) if x.get("kind") == "warning"]
    assert warnings == ["per-second lines: reading the Rust core's ops: ValueError: "
                        "no such phase"]
    assert max(seconds()) > failures[-1]  # the ticker lived on
