"""The protocol room's typed forms are the ones both sides read and write: the agents'
lines have exactly the keys the types name, a master's phase message is exactly the
agents' PhaseConfig, and a version mismatch is one line where the sides meet."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any, get_type_hints

import pytest

from loadtower.agents import locust_setup as ls
from loadtower.agents.driver_loop import PhaseConfig
from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.worker_main import phase_refusal
from loadtower.orchestrator.locust_master import Master, output
from loadtower.orchestrator.standalone_load import free_port
from loadtower.protocol.hdr_encoding import encode, new_hist
from loadtower.protocol.lines import IntervalLine, OpSample
from loadtower.protocol.phase_spec import PhaseMessage
from loadtower.protocol.version import PROTOCOL_VERSION, mismatch
from loadtower.store.hdr import decode


def test_interval_line_has_the_typed_keys() -> None:
    rec = IntervalRecorder("h/0", "h")
    rec.phase = "p"
    rec.ok("p", "read", 10.0, 10.0, 10.002, late=False)
    (line,) = rec.flush("p")
    assert set(line) == IntervalLine.__required_keys__
    sample = line["ops"]["read"]
    assert set(sample) == OpSample.__required_keys__
    assert decode(sample["service_hist"]).get_total_count() == 1


def test_phase_message_is_the_agents_phase_config() -> None:
    """The message names the password's file (password_ref); the agent's config holds the
    password it read from there (protocol/link_secrets.py)."""
    fields = {f.name for f in dataclasses.fields(PhaseConfig)}
    message = set(get_type_hints(PhaseMessage)) - {"protocol", "password_ref"}
    assert message | {"password"} == fields


def test_hdr_encoding_round_trips_through_the_store() -> None:
    hist = new_hist()
    for value in (1, 999, 1000, 123_456, 59_000_000):
        hist.record_value(value)
    back = decode(encode(hist))
    assert back.get_total_count() == 5
    assert back.get_max_value() == hist.get_max_value()
    assert back.get_value_at_percentile(50) == hist.get_value_at_percentile(50)


def test_mismatch_is_one_line_naming_both_versions() -> None:
    assert mismatch("x", PROTOCOL_VERSION) is None
    line = mismatch("load worker h/0", None)  # a worker older than the version field
    assert line is not None and "\n" not in line
    assert f"version 1, this process {PROTOCOL_VERSION}" in line and "h/0" in line


@pytest.fixture
def master() -> Iterator[Master]:
    from locust.runners import WorkerNode

    m = Master(f"127.0.0.1:{free_port()}", expect_workers=1)
    m.runner.clients["w1"] = WorkerNode("w1")
    try:
        yield m
    finally:
        m.runner.quit()


def printed(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert output().drain(20.0)  # the master's lines are written by a thread of its own
    return [json.loads(raw) for raw in capsys.readouterr().out.splitlines() if raw]


def test_master_refuses_a_start_of_another_protocol(
    master: Master, capsys: pytest.CaptureFixture[str]
) -> None:
    master._start({"cmd": "start", "protocol": PROTOCOL_VERSION + 1, "phase": "p", "spec": {},
                   "mode": "run", "rate": None, "users": 1, "records": 0,
                   "contact_points": ["127.0.0.1"]})
    (ack,) = printed(capsys)
    assert ack["type"] == "failed" and "protocol mismatch" in ack["message"]
    assert master.phase_msgs == {}  # no worker was sent the phase


def test_master_reports_a_worker_of_another_protocol(
    master: Master, capsys: pytest.CaptureFixture[str]
) -> None:
    from locust.rpc import Message

    hello = {"type": "hello", "agent": "agent1/0", "pid": 1}  # no version: version 1
    master._on_line(master.runner.environment, Message("lt_line", hello, "w1"))
    ok = {**hello, "agent": "agent2/0", "protocol": PROTOCOL_VERSION}
    master._on_line(master.runner.environment, Message("lt_line", ok, "w1"))
    ls.gevent.sleep(0)
    (event,) = printed(capsys)
    assert event["kind"] == "error" and "agent1/0" in event["message"]
    assert "protocol mismatch" in event["message"]


def test_worker_refuses_a_phase_of_another_protocol() -> None:
    message: Any = {"protocol": PROTOCOL_VERSION, "phase": "p"}
    assert phase_refusal("agent1/0", message) is None
    refusal = phase_refusal("agent1/0", {**message, "protocol": PROTOCOL_VERSION - 1})
    assert refusal is not None and refusal["type"] == "event" and refusal["kind"] == "error"
    assert refusal["message"].startswith("agent agent1/0: agent protocol mismatch")
