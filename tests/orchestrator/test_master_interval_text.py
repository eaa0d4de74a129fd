"""A worker's interval line reaches the master as the JSON text its spool wrote
(``lt_interval``, protocol/interval_message.py) and the master prints that text as it came,
in order with the worker's other lines; a text that is not one JSON object's line is
refused with one error event and never printed (it would be two lines of the master's
stdout, which the orchestrator reads line by line).

A real Locust master runner on a loopback port, handed the messages as Locust's receiving
greenlet hands them; a real Spool on a temporary folder for the worker's side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadtower.agents.spool import Spool
from loadtower.orchestrator.locust_master import Master
from loadtower.protocol.interval_message import interval_message, text_problem

from .test_locust_master_ack import feed, master, printed

__all__ = ["master"]  # the fixture, used by name


def interval(agent: str, ts: int) -> dict[str, Any]:
    return {"type": "interval", "agent": agent, "host": "h", "ts": ts, "phase": "p",
            "cpu_pct": 1.0, "cpu_s": 0.01, "span": None, "ops": {}}


def feed_text(m: Master, wid: str, data: Any) -> None:
    from locust.rpc import Message

    m._on_interval(m.runner.environment, Message("lt_interval", data, wid))


def test_the_spools_text_is_printed_as_it_came_in_order(
        master: Master, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spool = Spool(tmp_path / "spool", 0, "a/0")
    try:
        first = interval("a/0", 100)
        text = spool.number(first)
        assert text is not None and json.loads(text) == {**first, "seq": 1}
        # the spool's file holds the same text, one line
        assert (tmp_path / "spool" / "0.jsonl").read_text() == text + "\n"
        assert spool.number({"type": "stop_done", "id": 1}) is None  # not spooled
    finally:
        spool.close()
    feed_text(master, "w1", interval_message("a/0", first, text))
    feed(master, "w1", {"type": "event", "kind": "warning", "ts": 1.0, "message": "m",
                        "agent": "a/0"})
    feed_text(master, "w1", interval_message("a/0", interval("a/0", 101)))  # made here
    lines = printed(capsys)
    assert [(x["type"], x.get("ts")) for x in lines] == [
        ("interval", 100), ("event", 1.0), ("interval", 101)]
    assert lines[0] == {**first, "seq": 1}
    assert master.agents["a/0"] == "w1"


@pytest.mark.parametrize(("data", "why"), [
    ({"agent": "a/0", "text": '{"type":"interval"}\n{"type":"phase_done"}'}, "line break"),
    ({"agent": "a/0", "text": '{"type":"interval"}\r'}, "not a JSON object"),
    ({"agent": "a/0", "text": "[1, 2]"}, "not a JSON object"),
    ({"agent": "a/0"}, "without its agent or text"),
    (["a/0", "{}"], "not a map"),
])
def test_a_text_that_is_not_one_object_line_is_refused(
        master: Master, capsys: pytest.CaptureFixture[str], data: Any, why: str) -> None:
    assert text_problem(data) is not None
    feed_text(master, "w1", data)
    (event,) = printed(capsys)
    assert event["type"] == "event" and event["kind"] == "error"
    assert why in event["message"] and master.failed
