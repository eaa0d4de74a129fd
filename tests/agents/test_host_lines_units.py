"""A host's lead and followers (agents/host_lines.py) over the real Unix-socket relay:
what reaches the master's link, in which order, and what a follower does when its lead
is gone."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from loadtower.agents.host_lines import SOCKET_NAME, Follower, MergingLead
from loadtower.protocol.hdr_encoding import encode, new_hist

WAIT_S = 10.0


@pytest.fixture
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="lt"))  # 0700, and short enough for a socket
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _interval(agent: str, ts: int, seq: int, ops: int) -> dict[str, Any]:
    hist = new_hist()
    for n in range(ops):
        hist.record_value(100 + n)
    sample = {"ops": ops, "errors": {}, "late": 0, "service_hist": encode(hist),
              "response_hist": encode(hist)}
    return {"type": "interval", "agent": agent, "host": "h", "ts": ts, "phase": "run",
            "cpu_pct": 1.0, "cpu_s": 0.01, "span": None, "ops": {"read": sample}, "seq": seq}


def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class Link:
    """What each worker put on its own link to the master."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def of(self, who: str) -> Callable[[dict[str, Any], str | None], None]:
        def direct(line: dict[str, Any], text: str | None) -> None:
            if text is not None:
                assert json.loads(text) == line  # the text sent is the line's
            self.sent.append((who, line))
        return direct


@contextlib.contextmanager
def _host(folder: Path, bound_s: float = 1.0) -> Iterator[tuple[Link, MergingLead, Follower]]:
    """A lead (h/0) and one follower (h/1), connected; both closed at the end."""
    path = str(folder / SOCKET_NAME)
    link = Link()
    lead = MergingLead(path, "h", "h/0", link.of("lead"))
    lead.merger.bound_s = bound_s
    lead.start()
    follower = Follower(path, "h/1", link.of("h/1"))
    follower.start()
    try:
        _until(lambda: "h/1" in lead.relay.parties())
        yield link, lead, follower
    finally:
        follower.close(WAIT_S)
        lead.close()


def test_a_followers_stop_done_comes_after_the_merged_seconds_holding_its_lines(
    folder: Path,
) -> None:
    with _host(folder) as (link, lead, follower):
        follower.node = "w-1"  # its Locust client id: the master counts relayed lines by it
        follower.send({"type": "hello", "agent": "h/1"}, None)  # on its own link
        line = _interval("h/1", 50, 1, 3)
        follower.send(line, json.dumps(line))
        own = _interval("h/0", 50, 1, 2)
        lead.send(own, json.dumps(own))
        follower.send({"type": "stop_done", "id": 1, "ts": 1.0, "agent": "h/1"}, None)
        assert follower.relay.wait_acked(WAIT_S)
        _until(lambda: len(link.sent) == 3)
        (w1, hello), (w2, merged), (w3, done) = link.sent
        assert (w1, hello["type"]) == ("h/1", "hello")
        assert (w2, merged["agent"], merged["ts"]) == ("lead", "h/*", 50)
        assert merged["ops"]["read"]["ops"] == 5
        assert sorted(merged["covers"]) == [["h/0", 1], ["h/1", 1]]
        assert (w3, done["type"], done["agent"], done["relayed"], done["relay_node"]) == (
            "lead", "stop_done", "h/1", True, "w-1")


def test_a_second_waits_for_the_slower_worker_then_goes_on_the_leads_tick(
    folder: Path,
) -> None:
    with _host(folder, bound_s=0.2) as (link, lead, _follower):
        own = _interval("h/0", 60, 1, 2)
        lead.send(own, json.dumps(own))
        assert link.sent == []  # h/1 has not passed 60
        deadline = time.monotonic() + WAIT_S
        while not link.sent and time.monotonic() < deadline:
            time.sleep(0.05)
            lead.tick()
        assert [(w, line["agent"], line["workers"]) for w, line in link.sent] == [
            ("lead", "h/*", 1)]


def test_a_follower_whose_lead_is_gone_sends_what_was_never_acknowledged_itself(
    folder: Path,
) -> None:
    with _host(folder, bound_s=3600.0) as (link, lead, follower):  # nothing acknowledged
        held = [_interval("h/1", 70 + n, n + 1, 1) for n in range(3)]
        for line in held:
            follower.send(line, json.dumps(line))
        _until(lambda: lead.merger.pending() == 3)
        lead.relay.close()  # the lead dies with the three in its merger
        _until(lambda: not follower.relay.up)
        after = _interval("h/1", 73, 4, 1)
        follower.send(after, json.dumps(after))
        assert [(w, line["seq"]) for w, line in link.sent] == [
            ("h/1", 1), ("h/1", 2), ("h/1", 3), ("h/1", 4)]
