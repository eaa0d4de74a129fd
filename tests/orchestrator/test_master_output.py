"""The master's stdout on a thread of its own (master_output.py): a reader that does not
read stalls nothing but the writing; order is kept but for an urgent ack; the backlog is
bounded (the handler of the workers' lines waits, and says so once); a reader that is gone
ends the writing."""

from __future__ import annotations

import json
import threading
from typing import Any

from loadtower.orchestrator.master_output import MasterOutput

WAIT_S = 20.0


class GatedStream:
    """A pipe whose reader reads only when let: each write blocks until `opened`."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.written: list[str] = []
        self.broken = False

    def write(self, text: str) -> int:
        assert self.opened.wait(WAIT_S)
        if self.broken:
            raise BrokenPipeError
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in "".join(self.written).splitlines()]


def test_put_returns_while_the_reader_is_stuck_and_order_is_kept_but_for_urgent() -> None:
    stream = GatedStream()
    out = MasterOutput(lambda: stream)
    for n in range(5):
        out.put({"type": "interval", "n": n})  # returns though nothing can be written
    out.put({"type": "stopped"})
    out.put({"type": "started"}, urgent=True)
    assert stream.written == []
    stream.opened.set()
    assert out.drain(WAIT_S)
    kinds = [(x["type"], x.get("n")) for x in stream.lines()]
    # the first line may have been taken before the urgent one came; the rest follow it
    assert ("started", None) in kinds[:2]
    rest = [k for k in kinds if k[0] != "started"]
    assert rest == [("interval", n) for n in range(5)] + [("stopped", None)]


def test_over_the_bound_the_line_handler_waits_and_says_so_once() -> None:
    stream = GatedStream()
    out = MasterOutput(lambda: stream, bound=1_000)
    line = {"type": "interval", "pad": "x" * 400}
    for _ in range(4):
        out.put(line)
    assert out.full()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        stream.opened.set()  # the reader reads again while the handler waits

    out.wait_for_room(sleep)
    assert slept and not out.full() and out.full_spells == 1
    out.wait_for_room(sleep)  # room: no wait, nothing said
    assert out.full_spells == 1
    assert out.drain(WAIT_S)
    warnings = [x for x in stream.lines() if x.get("kind") == "warning"]
    assert len(warnings) == 1 and warnings[0]["message"].startswith("backlog:")


def test_a_reader_that_is_gone_ends_the_writing() -> None:
    stream = GatedStream()
    stream.broken = True
    stream.opened.set()
    out = MasterOutput(lambda: stream)
    out.put({"type": "interval"})
    assert out.drain(WAIT_S) and out.closed
    out.put({"type": "interval"})  # dropped: nobody reads
    assert not out.full() and out.drain(WAIT_S)
