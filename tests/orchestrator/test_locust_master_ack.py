"""The master's `stopped`: printed only once every worker of the phase answered the stop
with `stop_done` (sent after its drain, behind its lines), never on a stale answer.

A real Locust master runner on a loopback port; the workers' messages are handed to the
master's handler as Locust's receiving greenlet hands them (in order, one at a time)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

import loadtower.orchestrator.locust_master as lm
from loadtower.agents import locust_setup as ls
from loadtower.orchestrator.locust_master import Master, output
from loadtower.orchestrator.standalone_load import free_port

WAIT_S = 20.0


@pytest.fixture
def master() -> Iterator[Master]:
    from locust.runners import WorkerNode

    m = Master(f"127.0.0.1:{free_port()}", expect_workers=2)
    for wid in ("w1", "w2"):
        m.runner.clients[wid] = WorkerNode(wid)
    m.phase_workers = {"w1", "w2"}
    try:
        yield m
    finally:
        m.runner.quit()


def printed(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert output().drain(WAIT_S)  # the master's lines are written by a thread of its own
    return [json.loads(raw) for raw in capsys.readouterr().out.splitlines() if raw]


def feed(m: Master, wid: str, line: dict[str, Any]) -> None:
    from locust.rpc import Message

    m._on_line(m.runner.environment, Message("lt_line", line, wid))


def settle(until: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not until() and time.monotonic() < deadline:
        ls.gevent.sleep(0.01)


def test_stopped_waits_for_every_workers_stop_done(
    master: Master, capsys: pytest.CaptureFixture[str]
) -> None:
    stopping = ls.gevent.spawn(master.stop_command)
    settle(lambda: master.stop_id == 1)
    out: list[dict[str, Any]] = []
    for wid in ("w1", "w2"):
        feed(master, wid, {"type": "interval", "agent": wid, "phase": "run", "ts": 1, "ops": {}})
        feed(master, wid, {"type": "event", "kind": "drain", "agent": wid, "phase": "run"})
    feed(master, "w1", {"type": "stop_done", "id": 0})  # an answer to an older stop
    feed(master, "w1", {"type": "stop_done", "id": 1})
    ls.gevent.sleep(0.1)
    out += printed(capsys)
    assert not stopping.dead and all(x.get("type") != "stopped" for x in out)  # w2 drains
    feed(master, "w2", {"type": "interval", "agent": "w2", "phase": "run", "ts": 2, "ops": {}})
    feed(master, "w2", {"type": "stop_done", "id": 1})
    stopping.join(WAIT_S)
    out += printed(capsys)
    kinds = [x.get("kind") or x["type"] for x in out]
    assert kinds == ["interval", "drain", "interval", "drain", "interval", "stopped"]
    assert "stop_done" not in kinds  # the master's own: not printed


def test_a_worker_that_left_is_not_waited_for(
    master: Master, capsys: pytest.CaptureFixture[str]
) -> None:
    master.runner.clients["w2"].state = "missing"
    stopping = ls.gevent.spawn(master.stop_command)
    settle(lambda: master.stop_id == 1)
    feed(master, "w1", {"type": "stop_done", "id": 1})
    stopping.join(WAIT_S)
    assert [x["type"] for x in printed(capsys)] == ["stopped"]


def test_a_silent_worker_is_named_once_the_bound_passes(
    master: Master, capsys: pytest.CaptureFixture[str]
) -> None:
    master.stop_id = 4
    master.stop_done = {"w1"}
    master._await_drained(timeout=0.0)
    [warning] = printed(capsys)
    assert warning["kind"] == "warning" and "no drain report from w2" in warning["message"]


def test_an_operators_stop_tells_the_workers_its_drain_bound(
    master: Master, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, Any]] = []
    monkeypatch.setattr(master.runner, "send_message",
                        lambda kind, data=None, client_id=None: sent.append((kind, data)))
    stopping = ls.gevent.spawn(master.stop_command, 1.0)
    settle(lambda: master.stop_id == 1)
    for wid in ("w1", "w2"):
        feed(master, wid, {"type": "stop_done", "id": 1})
    stopping.join(WAIT_S)
    assert sent == [("lt_stop", {"id": 1, "drain_s": 1.0})]
    assert [x["type"] for x in printed(capsys)] == ["stopped"]
    master._resync("w1")  # a worker that missed it gets the same stop, bound included
    assert sent[-1] == ("lt_stop", {"id": 1, "drain_s": 1.0})
    master._stop()  # a stop without a bound (the end of a phase): the agents' own
    assert sent[-1] == ("lt_stop", {"id": 2})


def test_a_stop_before_the_workers_are_prepared_starts_no_load(
    master: Master, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the phase is being prepared: the users never start after it."""
    monkeypatch.setattr(master.runner, "send_message", lambda *a, **kw: None)
    starts: list[int] = []
    monkeypatch.setattr(master.runner, "start", lambda users, spawn_rate: starts.append(users))
    starting = ls.gevent.spawn(master._start_users, 8, 2, master.stop_id)
    ls.gevent.sleep(0.05)
    master._stop(1.0)  # the stop arrives; the workers say they are prepared after it
    master.configured = {"w1", "w2"}
    starting.join(WAIT_S)
    assert starting.dead and starts == []
    [failed] = printed(capsys)
    assert failed["type"] == "failed" and "stopped before it started" in failed["message"]


def test_the_stop_looks_often_and_waits_for_the_workers_to_be_back(
    master: Master, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A phase's end: Locust's stop, whose wait for the workers' users to end looks every
    20 ms (Locust's own looks once a second: a second more at every phase's end), and
    that also waits for each worker's client_ready after its client_stopped (Locust takes
    it off its list in between; the next phase's start counts the list)."""
    from locust.runners import WorkerNode

    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(master.runner, "send_message", lambda *a, **kw: None)
    monkeypatch.setattr(master.runner.server, "send_to_client",
                        lambda message: sent.append((message.type, message.node_id)))
    master.runner.state = "running"
    for wid in ("w1", "w2"):
        master.runner.clients[wid].user_classes_count = {"LaneUser": 2}
    stopping = ls.gevent.spawn(master._stop)
    settle(lambda: len(sent) == 2)
    assert master.runner.state == "stopping" and sorted(sent) == [("stop", "w1"), ("stop", "w2")]
    for wid in ("w1", "w2"):  # client_stopped: off the list, no users counted
        del master.runner.clients[wid]
    ls.gevent.sleep(0.05)
    assert not stopping.dead  # no user left, but neither worker is back yet
    master.runner.clients["w1"] = WorkerNode("w1")
    master._on_ready("w1")
    ls.gevent.sleep(0.05)
    assert not stopping.dead  # w2 is not back
    master.runner.clients["w2"] = WorkerNode("w2")
    master._on_ready("w2")
    # gevent wakes timers in the order they fall due: the stop's next look (20 ms) comes
    # before this sleep ends, however busy the machine; a look once a second would not
    ls.gevent.sleep(0.2)
    assert stopping.dead


def test_a_worker_between_stopped_and_ready_is_waited_for(
    master: Master, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off Locust's list between its client_stopped and client_ready, a worker still owes
    its stop_done (its last lines): the ack waits for it; one that stays off the list
    longer than BACK_WAIT_S is gone and not waited for."""
    master.stop_id = 3
    master.stop_done = {"w1"}
    del master.runner.clients["w2"]
    acking = ls.gevent.spawn(master._await_drained, WAIT_S)
    ls.gevent.sleep(0.1)
    assert not acking.dead
    feed(master, "w2", {"type": "stop_done", "id": 3})
    acking.join(WAIT_S)
    assert acking.dead and printed(capsys) == []
    monkeypatch.setattr(lm, "BACK_WAIT_S", 0.0)
    master.stop_id, master.stop_done = 4, {"w1"}
    master._await_drained(WAIT_S)  # returns at once: w2 is gone
    assert printed(capsys) == []


def test_a_stop_done_its_hosts_lead_relayed_counts_for_the_follower_that_wrote_it(
    master: Master, capsys: pytest.CaptureFixture[str]
) -> None:
    """agents/host_lines.py: w1 leads a merging host, w2 follows; w2's lines come on w1's
    link marked `relayed`, naming w2's own Locust id. Its stop_done is w2's, not w1's."""
    from loadtower.protocol.version import PROTOCOL_VERSION

    feed(master, "w2", {"type": "hello", "agent": "h/1", "pid": 2,  # on its own link
                        "protocol": PROTOCOL_VERSION})
    stopping = ls.gevent.spawn(master.stop_command)
    settle(lambda: master.stop_id == 1)
    feed(master, "w1", {"type": "stop_done", "id": 1, "agent": "h/0"})
    feed(master, "w1", {"type": "event", "kind": "drain", "agent": "h/1", "phase": "run",
                        "relayed": True, "relay_node": "w2"})
    ls.gevent.sleep(0.1)
    assert not stopping.dead  # w2 has not answered: w1's own answer is not w2's
    assert master.agents["h/1"] == "w2"  # a relayed line does not move the follower's name
    feed(master, "w1", {"type": "stop_done", "id": 1, "agent": "h/1", "relayed": True,
                        "relay_node": "w2"})
    stopping.join(WAIT_S)
    out = printed(capsys)
    assert [x.get("kind") or x["type"] for x in out] == ["drain", "stopped"]
    assert "relayed" not in out[0] and "relay_node" not in out[0]  # the master's own marks
