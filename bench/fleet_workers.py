"""Synthetic Locust workers for bench/fleet.py: N load workers in one process, each
speaking the real worker protocol to a real `loadtower agent master` over loopback ZeroMQ.

Each worker is one ZeroMQ DEALER socket with its own identity, as Locust's rpc client
makes it; every message is a Locust `Message` (msgpack) signed with the run's link key
exactly as agents/link_client.py signs it (second frame: HMAC over identity and
payload), and what the master sends is verified the same way. A worker sends
`client_ready`, a heartbeat every second, its `hello`, `configured` on a phase,
`spawning`/`spawning_complete` on a spawn, and, while its users run, one interval line
per second (`lt_interval`: its JSON text, as the real worker sends it) of --op-types op types with --ops
ops each, with real HDR histograms encoded by the agents' own recorder (agents/measure.py). On a stop it sends
the phase's last (partial) second, its drain event and `stop_done`, as an agent does.
Each line also carries ``bench_sent`` (when it was sent, wall clock) so that the
orchestrator side can time it.

Prints one JSON object per REPORT_S on stdout (lines and bytes sent, this process's CPU)
and a final one with ``"final": true`` when stdin closes, then exits (and dies with its
parent). The link key comes in $LOADTOWER_LINK_KEY (hex), never on the command line.

With several --master addresses (bench/fleet.py --ssh: the reverse forwards of SSH
connections standing for agent hosts), worker i connects to the (i mod K)-th.

With --per-host K (an inventory's `merge_workers`, agents/host_lines.py), workers come in
hosts of K (host h's workers reach the master through the (h mod K')-th address): each
host's worker 0 sends one line per second for the host, `HOST/*`, with the K workers'
ops merged by the agents' own merge (agents/host_merge.py, made once per template) and the
(agent, seq) pairs it covers; the other K - 1 send no interval line, as a follower whose
lines go through its lead. Their heartbeats, `configured`, drain events (without a seq
here) and `stop_done` still go on their own links.

usage: LOADTOWER_LINK_KEY=... python bench/fleet_workers.py --master 127.0.0.1:PORT[,...]
                                  --workers N [--op-types 8] [--ops 500]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import heapq
import json
import os
import random
import resource
import signal
import socket
import sys
import time
import uuid
from typing import Any

import zmq

from loadtower.agents.host_merge import merge_lines, merged_agent
from loadtower.agents.measure import IntervalRecorder
from loadtower.protocol.link_secrets import KEY_ENV, mac, to_worker, verify
from loadtower.protocol.version import PROTOCOL_VERSION

HEARTBEAT_S = 1.0  # Locust's HEARTBEAT_INTERVAL
SPREAD_S = 0.2  # the workers' lines of a second leave within this long after it ends
REPORT_S = 0.5
TEMPLATES = 32  # distinct histogram payloads, cycled
PR_SET_PDEATHSIG = 1


def _locust() -> tuple[str, Any]:
    """Locust's version and its rpc Message (imported when the workers start: Locust's
    import monkey-patches the process for gevent)."""
    from locust import __version__
    from locust.rpc.protocol import Message

    return __version__, Message


def op_templates(op_types: int, ops: int, count: int = TEMPLATES, seed: int = 7
                 ) -> list[dict[str, Any]]:
    """`count` lines' op samples: `op_types` op types (op0, op1, ...) of `ops` open-model
    ops each, as the agents' recorder encodes them: real service, response and lateness
    histograms."""
    rng = random.Random(seed)
    recorder = IntervalRecorder("bench/0", "bench")
    out = []
    for index in range(count):
        # monotonic seconds at the start of a wall-clock second: every op completes in it
        base = int(time.time()) - 100_000 + index * 10 - recorder.offset
        for kind in range(op_types):
            for _ in range(ops):
                intended = base + rng.random() * 0.9
                sent = intended + rng.expovariate(1 / 0.00008)
                done = sent + rng.lognormvariate(-7.0 + 0.05 * kind, 0.5)  # ~1 ms service
                recorder.ok("run", f"op{kind}", intended, sent, done, False, open_model=True)
        [line] = recorder.finished(int(recorder.wall(base + 5.0)))
        out.append(dict(line["ops"]))
    return out


def _merged_ops(templates: list[dict[str, Any]], first: int, count: int) -> dict[str, Any]:
    """The ops of `count` workers' lines (templates first, first + 1, ...) merged as a host's
    lead merges them (agents/host_merge.py)."""
    parts: list[Any] = [interval_line(f"bench/{j}", "bench", "run", 0,
                                      templates[(first + j) % len(templates)], j + 1, 0.0)
                        for j in range(count)]
    return dict(merge_lines("bench", parts)["ops"])


OPS_MARK = "@ops@"  # where a template's ops go in a line's text (no escapes in JSON)


def interval_line(agent: str, host: str, phase: str, second: int, ops: dict[str, Any],
                  seq: int, sent: float) -> dict[str, Any]:
    """One interval line of the agent protocol (protocol/lines.py), numbered as the spool
    numbers it, with the time it was sent."""
    return {
        "type": "interval", "agent": agent, "host": host, "ts": second, "phase": phase,
        "cpu_pct": 3.0, "cpu_s": 0.03, "span": [second + 0.001, second + 0.999], "ops": ops,
        "seq": seq, "bench_sent": sent,
    }


class Worker:
    """One synthetic Locust worker: its socket, its state and what it sent."""

    def __init__(self, ctx: zmq.Context, endpoint: str, key: bytes, host: str, index: int,
                 offset: float, role: str = "") -> None:
        self.id = f"{socket.gethostname()}_{uuid.uuid4().hex}"  # as Locust names a worker
        self.ident = self.id.encode()
        self.heard_from = to_worker(self.ident)
        self.key = key
        self.version, self.message = _locust()
        self.agent, self.host = f"{host}/{index}", host
        self.offset = offset
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.IDENTITY, self.ident)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(endpoint)
        self.state = "ready"  # Locust's worker states: ready, spawning, running
        self.phase = ""
        self.running = False
        self.seq = 0
        self.next_second = 0
        self.users = 0
        self.role = role  # "": alone; "lead" or "follower" of a merging host (--per-host)

    def send(self, kind: str, data: Any) -> int:
        payload = self.message(kind, data, self.id).serialize()
        self.sock.send_multipart([payload, mac(self.key, self.ident, payload)], zmq.NOBLOCK)
        return len(payload) + 32

    def receive(self) -> list[Any]:
        out: list[Any] = []
        while True:
            try:
                frames = self.sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return out
            if len(frames) == 2 and verify(self.key, self.heard_from, frames[0], frames[1]):
                out.append(self.message.unserialize(frames[0]))


class Fleet:
    """Every worker, driven from one loop: heartbeats and lines on a heap of due times."""

    def __init__(self, endpoints: list[str], key: bytes, count: int, op_types: int, ops: int,
                 host: str, per_host: int = 1) -> None:
        self.ctx = zmq.Context()
        self.ctx.set(zmq.MAX_SOCKETS, count + 64)  # ZeroMQ's default allows 1,023
        self.per_host = per_host
        self.ops = op_templates(op_types, ops)
        if per_host > 1:  # a host's line: its K workers' ops merged (K templates each)
            self.ops = [_merged_ops(self.ops, t, per_host) for t in range(len(self.ops))]
        self.ops_text = {id(o): json.dumps(o, separators=(",", ":")) for o in self.ops}
        self.ops_count = {id(o): sum(int(s["ops"]) for s in o.values()) for o in self.ops}
        self.ops_sent = 0
        if per_host > 1:
            self.workers = [
                Worker(self.ctx, endpoints[(i // per_host) % len(endpoints)], key,
                       f"{host}{i // per_host}", i % per_host, SPREAD_S * i / max(count, 1),
                       "lead" if i % per_host == 0 else "follower")
                for i in range(count)]
        else:  # worker i reaches the master at endpoints[i % len]: one per host's forward
            self.workers = [Worker(self.ctx, endpoints[i % len(endpoints)], key, host, i,
                                   SPREAD_S * i / max(count, 1)) for i in range(count)]
        self.by_socket = {w.sock: i for i, w in enumerate(self.workers)}
        self.poller = zmq.Poller()
        for worker in self.workers:
            self.poller.register(worker.sock, zmq.POLLIN)
        self.due: list[tuple[float, int, str]] = []  # (when, worker index, "beat"|"line")
        self.lines = self.bytes = self.failed_sends = self.templates_used = 0
        self.messages_in = 0
        # stdin in the same poll (Locust's import monkey-patches threads into greenlets):
        # its end says the bench is done
        self.stdin = sys.stdin.fileno()
        self.stdin_closed = False
        self.poller.register(self.stdin, zmq.POLLIN)

    def _send(self, worker: Worker, kind: str, data: Any) -> None:
        try:
            self.bytes += worker.send(kind, data)
        except zmq.ZMQError:  # its queue to the master is full: the real worker's spool keeps it
            self.failed_sends += 1

    def _line(self, worker: Worker, kind: str, extra: dict[str, Any]) -> None:
        self._send(worker, "lt_line", {"type": kind, "agent": worker.agent, **extra})

    def start(self) -> None:
        now = time.time()
        for index, worker in enumerate(self.workers):
            self._send(worker, "client_ready", worker.version)
            heapq.heappush(self.due, (now + HEARTBEAT_S * index / len(self.workers), index,
                                      "beat"))

    def _interval(self, worker: Worker, second: int) -> None:
        if worker.role == "follower":
            return  # its lines go through its host's lead
        worker.seq += 1
        ops = self.ops[self.templates_used % len(self.ops)]
        self.templates_used += 1
        line = interval_line(worker.agent, worker.host, worker.phase, second, OPS_MARK,
                             worker.seq, time.time())
        if worker.role == "lead":  # the host's line: what it covers, no seq of its own
            del line["seq"]
            line["agent"] = merged_agent(worker.host)
            line["covers"] = [[f"{worker.host}/{j}", worker.seq] for j in range(self.per_host)]
            line["workers"] = self.per_host
        # as the real worker sends it: the line's JSON text (its spool's), printed as is;
        # the ops' text made once per template (this one process stands in for N workers,
        # each of which makes its own line's text)
        head, tail = json.dumps(line, separators=(",", ":")).split(f'"{OPS_MARK}"')
        text = head + self.ops_text[id(ops)] + tail
        self._send(worker, "lt_interval", {"agent": str(line["agent"]), "text": text})
        self.lines += 1
        self.ops_sent += self.ops_count[id(ops)]

    def _on_message(self, index: int, worker: Worker, msg: Any) -> None:
        self.messages_in += 1
        data = msg.data if isinstance(msg.data, dict) else {}
        if msg.type == "ack":  # connected: the worker names itself (its hello)
            self._line(worker, "hello", {"pid": os.getpid(), "protocol": PROTOCOL_VERSION})
        elif msg.type == "lt_phase":
            worker.phase = str(data.get("phase", ""))
            self._line(worker, "configured", {})
        elif msg.type == "spawn":
            self._send(worker, "spawning", None)
            counts = dict(data.get("user_classes_count") or {})
            worker.users = sum(int(v) for v in counts.values())
            worker.state = "running"
            self._send(worker, "spawning_complete",
                       {"user_classes_count": counts, "user_count": worker.users})
            if not worker.running:
                worker.running = True
                worker.next_second = int(time.time())
                heapq.heappush(self.due, (worker.next_second + 1 + worker.offset, index, "line"))
        elif msg.type == "lt_stop":
            if worker.running:  # the phase's last, partial second, then its drain report
                worker.running = False
                self._interval(worker, int(time.time()))
                drain = {"phase": worker.phase, "waited_ops": 0, "drain_s": 0.0, "abandoned": 0}
                worker.seq += 1
                seq = {} if worker.role == "follower" else {"seq": worker.seq}
                self._line(worker, "event", {"kind": "drain", "ts": time.time(), "host": worker.host,
                                             "message": "drained", "data": drain, **seq})
            self._line(worker, "stop_done", {"id": data.get("id"), "ts": time.time()})
        elif msg.type == "stop":  # Locust's own stop: its users end, it is ready again
            worker.state, worker.users = "ready", 0
            self._send(worker, "client_stopped", None)
            self._send(worker, "client_ready", worker.version)

    def _due(self, now: float) -> None:
        while self.due and self.due[0][0] <= now:
            _when, index, kind = heapq.heappop(self.due)
            worker = self.workers[index]
            if kind == "beat":
                cpu = 3.0
                self._send(worker, "heartbeat", {"state": worker.state, "current_cpu_usage": cpu,
                                                 "current_memory_usage": 60_000_000})
                heapq.heappush(self.due, (now + HEARTBEAT_S, index, kind))
            elif worker.running:
                self._interval(worker, worker.next_second)
                worker.next_second += 1
                heapq.heappush(self.due, (worker.next_second + 1 + worker.offset, index, kind))

    def step(self, until: float) -> None:
        """Receive and send whatever is due until `until` (wall clock)."""
        while True:
            now = time.time()
            if now >= until:
                return
            wait = min(until, self.due[0][0] if self.due else until) - now
            for sock, _event in self.poller.poll(max(0, int(wait * 1000))):
                if sock == self.stdin:
                    if not os.read(self.stdin, 4096):
                        self.stdin_closed = True
                        self.poller.unregister(self.stdin)
                    continue
                index = self.by_socket[sock]
                for msg in self.workers[index].receive():
                    self._on_message(index, self.workers[index], msg)
            self._due(time.time())

    def report(self, final: bool = False) -> dict[str, Any]:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return {"lines": self.lines, "ops": self.ops_sent, "bytes": self.bytes,
                "failed_sends": self.failed_sends, "messages_in": self.messages_in,
                "cpu_s": r.ru_utime + r.ru_stime,
                "running": sum(w.running for w in self.workers), "ts": time.time(),
                "final": final}

    def close(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(zmq.ZMQError):
                worker.send("quit", None)  # as Locust's worker says goodbye
            worker.sock.close(linger=0)
        self.ctx.term()


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", required=True,
                        help="HOST:PORT of the Locust master; several, comma-separated: "
                        "worker i uses the (i mod K)-th (an SSH forward each)")
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--op-types", type=int, default=8, help="op types per line")
    parser.add_argument("--ops", type=int, default=500, help="ops per op type per second")
    parser.add_argument("--host-name", default="bench")
    parser.add_argument("--per-host", type=int, default=1,
                        help="workers per host, whose worker 0 sends the host's merged line")
    args = parser.parse_args()
    _die_with_parent()
    key = bytes.fromhex(os.environ.pop(KEY_ENV, ""))
    if len(key) < 16:
        print(f"fleet_workers: no link key in ${KEY_ENV}", file=sys.stderr)
        return 2
    masters = [f"tcp://{m.strip()}" for m in args.master.split(",") if m.strip()]
    fleet = Fleet(masters, key, args.workers, args.op_types, args.ops, args.host_name,
                  max(1, args.per_host))
    try:
        fleet.start()
        while not fleet.stdin_closed:
            fleet.step(time.time() + REPORT_S)
            print(json.dumps(fleet.report()), flush=True)
        print(json.dumps(fleet.report(final=True)), flush=True)
    finally:
        fleet.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
