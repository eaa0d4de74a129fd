"""How the worker processes of one agent host send their lines when the host merges them
(the inventory's ``merge_workers``): worker 0, the lead, sends one interval line per
host-second (agents/host_merge.py); the others hand it their lines over a Unix socket in
the host's private spool folder (agents/merge_relay.py).

Order: a follower hands the lead *every* line but its ``hello`` (interval lines, events,
``configured``, ``load_done``, ``stop_done``), and the lead sends the merged seconds that
hold a follower's lines before that follower's next other line, marked ``relayed`` (the
master counts it for the follower that wrote it). So a worker's ``stop_done`` still comes
after its last second, on one link, as without the merge.

Nothing is lost: every line is in its worker's spool before it is handed on; the lead
acknowledges a follower's lines once they are sent on, and a follower whose lead is gone
sends the lines it never heard acknowledged itself, then everything after (the
orchestrator de-duplicates by (agent, seq): a merged line names what it covers).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Any

from loadtower.agents.host_merge import HostMerger, Out
from loadtower.agents.merge_relay import RelayFollower, RelayLead

SOCKET_NAME = "merge.sock"
TICK_S = 0.1  # how often the lead looks for seconds that are due (`tick`)

# (line, its JSON text or None): send one line on this worker's own link
Direct = Callable[[dict[str, Any], "str | None"], None]


def _text(line: dict[str, Any]) -> str:
    return json.dumps(line, separators=(",", ":"))


class MergingLead:
    """Worker 0's side: its own lines and its followers' go through one `HostMerger`."""

    def __init__(self, path: str, host: str, agent: str, direct: Direct) -> None:
        self.agent, self.direct = agent, direct
        self.merger = HostMerger(host)
        self.merger.join(agent)
        self.relay = RelayLead(path, self._on_frame, self._on_join, self._on_leave)
        self.received: dict[str, int] = {}  # follower -> the last frame number it sent
        self.held: dict[str, set[int]] = {}  # follower -> its frames in the merger
        self.acked: dict[str, int] = {}
        self.lock = threading.RLock()  # the relay's readers and the worker's own sends

    def start(self) -> None:
        self.relay.start()

    def send(self, line: dict[str, Any], text: str | None) -> None:
        """One of the lead's own lines (spooled already)."""
        with self.lock:
            if line.get("type") == "interval":
                self._emit(self.merger.add(self.agent, line))  # type: ignore[arg-type]
                return
            if line.get("type") != "hello":
                self._emit(self.merger.flush_worker(self.agent))
            self.direct(line, text)

    def tick(self) -> None:
        with self.lock:
            self._emit(self.merger.due())

    def close(self) -> None:
        with self.lock:
            self._emit(self.merger.flush_all())
        self.relay.close()

    def _on_join(self, agent: str) -> None:
        with self.lock:
            self.merger.join(agent)

    def _on_leave(self, agent: str) -> None:
        with self.lock:
            self._emit(self.merger.leave(agent))

    def _on_frame(self, agent: str, n: int, kind: str, text: str) -> None:
        with self.lock:
            line = json.loads(text)
            self.received[agent] = n
            if kind == "I":
                self.held.setdefault(agent, set()).add(n)
                self._emit(self.merger.add(agent, line, (agent, n)))
            else:
                self._emit(self.merger.flush_worker(agent))
                self.direct({**line, "relayed": True}, None)
            self._ack(agent)

    def _emit(self, outs: list[Out]) -> None:
        touched: set[str] = set()
        for out in outs:
            line = dict(out.line)
            self.direct(line, _text(line))
            for token in out.tokens:
                if token is not None:
                    agent, n = token
                    self.held.get(agent, set()).discard(n)
                    touched.add(agent)
        for agent in touched:
            self._ack(agent)

    def _ack(self, agent: str) -> None:
        held = self.held.get(agent)
        upto = min(held) - 1 if held else self.received.get(agent, 0)
        if upto > self.acked.get(agent, 0):
            self.acked[agent] = upto
            self.relay.ack(agent, upto)


class Follower:
    """Worker I's side (I > 0): its lines go to the lead while the lead is there."""

    def __init__(self, path: str, agent: str, direct: Direct) -> None:
        self.direct = direct
        self.relay = RelayFollower(path, agent)
        self.lock = threading.Lock()
        self.node = ""  # this worker's Locust client id: the master counts relayed lines by it

    def start(self) -> None:
        threading.Thread(target=self.relay.connect, daemon=True).start()

    def send(self, line: dict[str, Any], text: str | None) -> None:
        with self.lock:
            if line.get("type") != "hello" and self.relay.up:
                if line.get("type") == "interval":
                    kind, body = "I", text if text is not None else _text(line)
                else:
                    kind, body = "L", _text({**line, "relay_node": self.node} if self.node
                                            else line)
                if self.relay.send(kind, body):
                    return
            self._take_back()
            self.direct(line, text)

    def close(self, timeout: float) -> None:
        """Wait (up to `timeout`) for the lead to send on what it has, then stop."""
        self.relay.wait_acked(timeout)
        with self.lock:
            self.relay.close()
            self._take_back()

    def _take_back(self) -> None:
        """The lead is gone: what it never acknowledged goes on this worker's own link."""
        for kind, body in self.relay.take_unacked():
            line = json.loads(body)
            self.direct(line, body if kind == "I" else None)


def host_link(merge: bool, spool_dir: str | None, index: int, host: str, agent: str,
              direct: Direct) -> MergingLead | Follower | None:
    """This worker's side of its host's merge, not started: the lead (worker 0) or a
    follower; None without one (not asked, or no spool folder: the socket lives in it,
    and the lines must be spooled before they are merged)."""
    if not merge or not spool_dir:
        return None
    path = os.path.join(spool_dir, SOCKET_NAME)
    if index == 0:
        return MergingLead(path, host, agent, direct)
    return Follower(path, agent, direct)
