"""Benchmark of a large load fleet on one orchestrator (issue 28): N load workers' interval
lines through the real Locust master into the orchestrator's real consumers.

For each N of --workers, one step in a fresh orchestrator-side process (so its CPU and
memory are its own):
- the real master, started as a run starts it (`loadtower agent master`, the same
  arguments and environment as load_controller.py: the run's link key in
  $LOADTOWER_LINK_KEY, its own process group);
- N synthetic Locust workers in one helper process (bench/fleet_workers.py), each with
  its own ZeroMQ socket speaking the real worker protocol over loopback, every message
  signed with the link key, sending one interval line per second of --op-types op types
  x --ops ops (default 8 x 500, bench/store.py's line shape: about 23 KB) with real HDR
  histograms (the agents' recorder, agents/measure.py);
- with --ssh INVENTORY, the workers reach the master as a run's workers do: through SSH
  reverse forwards that the orchestrator side makes with its own HostPool (asyncssh, in
  this process, as LocustLoad makes them) to the inventory's first agent host (the
  sandbox's real sshd), --ssh-connections of them (one per agent host in a run; worker
  i uses the (i mod K)-th). The sshd processes serving them stand for the agent hosts'
  side: their CPU is in the note, not in the orchestrator's. Without --ssh the workers
  connect to the master over loopback directly (the orchestrator carries no worker
  bytes then: a lower bound on its cost). --ssh-apart makes the same forwards in a
  process of their own (its CPU said apart): what moving them out of the
  orchestrator's interpreter would give;
- the orchestrator's consumers, fed from the master's stdout as in a run: LocustLoad's
  own reader and dispatch (json.loads, `_dispatch`), Sinks, LiveStats and the
  StoreWriter into a real DuckDB file in a temporary directory.
The step waits for every worker to join, starts a phase (the orchestrator's `start`
command, open model; a start without ack within START_TIMEOUT_S is said and measured
anyway), waits WARMUP_S, measures for --seconds, then stops it as the orchestrator does
(`LocustLoad.stop`: the `stop` command, until the master's `stopped`).

Columns: workers; orchestrator CPU (this step process over the window: its reader, the
store writer's thread, everything, in % of one core); master CPU (the same, from
/proc); bytes/s through the master (into it: the workers' signed messages; out of it:
its stdout); line -> live view delay p50/p99/max (from when a synthetic worker sent the
line to when LiveStats.add took it; lines sent in the window); line -> store delay p99
(to the end of the writer flush that committed it); lines lost (lines sent minus lines
in the store's op_intervals after the stop; lines of a backlog still not in DRAIN_WAIT_S
after the stop ack are said apart); start / stop ack (the start command sent to `started` read, and the stop command sent to the master's
`stopped` read by the orchestrator); RSS of the orchestrator side and the master at the
end of the step (and every RSS_EVERY_S of the window, printed after the table: flat
memory over a long --seconds). A step whose backlog runs away (a line older than RUNAWAY_S, or
RUNAWAY_S seconds of lines not yet in) ends early and says so; larger N are then
skipped unless --keep-going. --profile N: a sampling profile of the orchestrator side's
threads at N workers.

Everything a step starts is in its own process group and killed at the end, also on
Ctrl-C or an error; the temporary directory is removed.

usage: python bench/fleet.py [--workers 16,64,128,256,512,1024] [--seconds 60] [--json]
                             [--save FILE] [--profile N] [--keep-going] [--op-types 8]
                             [--ops 500] [--rss-every 30]
                             [--ssh SANDBOX/inventory.toml [--ssh-connections 8]
                             [--ssh-apart]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb

from loadtower.errors import LoadtowerError
from loadtower.fleet.cleanup_script import marker_env
from loadtower.fleet.ssh_pool import HostPool
from loadtower.orchestrator.load_controller import (
    RUN_MARKER,
    START_TIMEOUT_S,
    STOP_ACK_TIMEOUT_S,
    LocustLoad,
)
from loadtower.orchestrator.sinks import Sinks
from loadtower.protocol.link_secrets import KEY_ENV
from loadtower.protocol.version import PROTOCOL_VERSION
from loadtower.scenarios.loader import load_inventory
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreWriter

HERE = Path(__file__).resolve().parent
DEFAULT_WORKERS = "16,64,128,256,512,1024"
OP_TYPES, OPS_PER_TYPE = 8, 500  # per worker and second: bench/store.py's line shape
WARMUP_S = 5.0  # after the start ack, before the window (the store's compiled kernels)
PHASE = "run"
RUNAWAY_S = 30.0
RSS_EVERY_S = 30.0  # the RSS of both sides sampled this often in the window
DRAIN_WAIT_S = 120.0  # after the stop ack: how long a backlog may take to come in
DRAIN_STALL_S = 15.0  # ... unless no line came in for this long
TICKS = os.sysconf("SC_CLK_TCK")
INVENTORY = """
[hosts.db1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"
[hosts.bench]
address = "127.0.0.1"
roles = ["agent"]
"""
SCENARIO = """
name = "fleet"
[[phases]]
type = "run"
rate = 8
duration = "60s"
"""


# ---------------------------------------------------------------- measuring
class Pairs:
    """(sent, delay) per line in two flat arrays of doubles: 16 bytes a line. A list of
    tuples of floats held 112 bytes a line, about 15 MB a minute at 1,024 workers for
    the two series and the handed times: most of the orchestrator side's RSS growth
    measured before, the bench's own records, not the product's."""

    def __init__(self) -> None:
        self.sent = array("d")
        self.delay = array("d")

    def append(self, sent: float, delay: float) -> None:
        self.sent.append(sent)
        self.delay.append(delay)

    def __len__(self) -> int:
        return len(self.sent)

    @property
    def nbytes(self) -> int:
        return (self.sent.buffer_info()[1] + self.delay.buffer_info()[1]) * self.sent.itemsize


class Probe:
    """Times each interval line on the orchestrator side: when LiveStats took it, when
    the store writer committed it (wrapping the instance's methods, nothing else)."""

    def __init__(self, sinks: Sinks, writer: StoreWriter) -> None:
        self.live = Pairs()  # (sent, delay to LiveStats.add) per line
        self.stored = Pairs()  # (sent, delay to its commit) per line
        self.handed = array("d")  # sent time of each line handed to the writer
        self.committed = 0
        add, hand, flush = sinks.stats.add, writer.add_interval, writer.flush

        def timed_add(line: dict[str, Any]) -> None:
            sent = _sent(line)
            self.live.append(sent, time.time() - sent)
            add(line)

        def timed_hand(run_id: str, line: dict[str, Any], ascii_text: bool = False) -> None:
            self.handed.append(_sent(line))
            hand(run_id, line, ascii_text)

        def timed_flush() -> None:
            upto = len(self.handed)  # these are in the writer's buffer now
            flush()
            now = time.time()
            for sent in self.handed[self.committed:upto]:
                self.stored.append(sent, now - sent)
            self.committed = upto

        sinks.stats.add = timed_add  # type: ignore[method-assign]
        writer.add_interval = timed_hand
        writer.flush = timed_flush

    @property
    def nbytes(self) -> int:
        """The probe's own records (the bench's, not the product's memory)."""
        handed = self.handed.buffer_info()[1] * self.handed.itemsize
        return self.live.nbytes + self.stored.nbytes + handed


class Sampler(threading.Thread):
    """A sampling profile of this process's threads (every `every` seconds, each thread's
    stack): which functions its time is spent in, without a tracer's overhead."""

    def __init__(self, every: float = 0.005) -> None:
        super().__init__(name="fleet-sampler", daemon=True)
        self.every = every
        self.running = True
        self.samples: Counter[str] = Counter()  # thread name -> samples
        self.inclusive: Counter[tuple[str, str]] = Counter()  # (thread, function) -> samples
        self.own: Counter[tuple[str, str]] = Counter()  # the same, innermost frame only

    def run(self) -> None:
        me = threading.get_ident()
        while self.running:
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                thread = names.get(ident, str(ident))
                self.samples[thread] += 1
                self.own[(thread, _where(frame))] += 1
                seen = set()
                walk: Any = frame
                while walk is not None:
                    seen.add(_where(walk))
                    walk = walk.f_back
                for where in seen:
                    self.inclusive[(thread, where)] += 1
            time.sleep(self.every)

    def text(self, top: int = 24) -> str:
        out = []
        for thread, total in self.samples.most_common():
            if total < 10 or thread.startswith("asyncio-waitpid"):
                continue
            out.append(f"---- thread {thread}: {total} samples (% of them: inclusive, own)")
            rows = sorted(((n, w) for (t, w), n in self.inclusive.items() if t == thread),
                          reverse=True)[:top]
            for count, where in rows:
                own = self.own.get((thread, where), 0)
                if count == total and not own:
                    continue  # every sample's outer frames (the thread's start)
                out.append(f"  {100 * count / total:5.1f}  {100 * own / total:5.1f}  {where}")
        return "\n".join(out)


def _where(frame: Any) -> str:
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"


def _sent(line: dict[str, Any]) -> float:
    """When the worker sent the line (its second's end for a line without the mark)."""
    sent = line.get("bench_sent")
    return float(sent) if sent is not None else float(line["ts"]) + 1.0


class CountedStream:
    """The master's stdout as LocustLoad reads it, counting the bytes."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream
        self.bytes = 0

    def __aiter__(self) -> CountedStream:
        return self

    async def __anext__(self) -> bytes:
        raw = await self.stream.readline()
        if not raw:
            raise StopAsyncIteration
        self.bytes += len(raw)
        return raw


def proc_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


async def _sample_rss(series: list[tuple[float, float, float, float]], master_pid: int,
                      probe: Probe, every_s: float) -> None:
    """(seconds into the window, orchestrator RSS MB, master RSS MB, the probe's own
    records MB) every `every_s`."""
    t0 = time.monotonic()
    while True:
        with contextlib.suppress(OSError):
            series.append((time.monotonic() - t0, rss_mb(), rss_mb(master_pid),
                           probe.nbytes / 2**20))
        await asyncio.sleep(every_s)


def rss_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for row in f:
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) / 1024
    return 0.0


def self_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100.0 * len(ordered)))]


# ---------------------------------------------------------------- one step
def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _spawn_master(port: int, workers: int, key: bytes, run_id: str
                        ) -> asyncio.subprocess.Process:
    """The master as LocustLoad.prepare starts it."""
    env = {**os.environ, KEY_ENV: key.hex(), **marker_env(run_id)}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "loadtower", "agent", "master",
        "--bind", f"127.0.0.1:{port}", "--expect-workers", str(workers), "--grace", "30",
        RUN_MARKER, run_id,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, limit=2**24, process_group=0,
    )


def sshd_pids() -> set[int]:
    """The pids of this machine's sshd processes (this user can read)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == "sshd":
                    found.add(int(entry.name))
    return found


def pids_cpu_s(pids: set[int]) -> float:
    """The CPU seconds of those of `pids` still running."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += proc_cpu_s(pid)
    return total


async def _ssh_forwards(inventory: Path, connections: int, port: int
                        ) -> tuple[list[str], list[HostPool], set[int]]:
    """`connections` SSH connections to the inventory's first agent host, each its own
    HostPool (as one run holds one per agent host), each with the reverse forward a run
    makes (LocustLoad: remote 127.0.0.1:0 -> the master's port). Returns the workers'
    addresses (the forwards' remote ends), the pools (close them) and the pids of the
    sshd processes that appeared meanwhile: those serving the connections (the agent
    hosts' side), and any other session started at the same moment on a shared machine."""
    inv, _ = load_inventory(inventory)
    agents = [n for n, h in inv.hosts.items() if "agent" in h.roles]
    if not agents:
        raise LoadtowerError(f"{inventory}: no host with role agent")
    before = sshd_pids()
    pools: list[HostPool] = []
    addresses = []
    try:
        for _ in range(connections):
            pool = HostPool(inv)
            pools.append(pool)
            remote = await pool.forward_remote_port(agents[0], 0, "127.0.0.1", port)
            addresses.append(f"127.0.0.1:{remote}")
    except BaseException:
        for pool in pools:
            with contextlib.suppress(Exception):
                await pool.close()
        raise
    return addresses, pools, sshd_pids() - before


async def _forwarder_process(inventory: str, connections: int, port: int
                             ) -> tuple[asyncio.subprocess.Process, list[str], set[int]]:
    """The same forwards made by a process of their own (`--forwarder`): what taking them
    out of the orchestrator's interpreter would give. Returns it, the workers' addresses
    and the sshd pids; it closes its forwards when its stdin closes."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--forwarder", inventory,
        str(connections), str(port), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, process_group=0)
    assert process.stdout is not None
    try:
        raw = await asyncio.wait_for(process.stdout.readline(), 60)
        if not raw:
            raise LoadtowerError("the forwarding process ended without its forwards")
        made = json.loads(raw)
    except BaseException:
        _kill_group(process)
        raise
    return process, list(made["addresses"]), set(made["sshd"])


async def _forward_until_stdin_closes(inventory: str, connections: int, port: int) -> None:
    addresses, pools, sshds = await _ssh_forwards(Path(inventory), connections, port)
    try:
        print(json.dumps({"addresses": addresses, "sshd": sorted(sshds)}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    finally:
        for pool in pools:
            with contextlib.suppress(Exception):
                await pool.close()


async def _spawn_workers(masters: list[str], workers: int, key: bytes, op_types: int, ops: int,
                         per_host: int = 1) -> asyncio.subprocess.Process:
    env = {**os.environ, KEY_ENV: key.hex()}
    return await asyncio.create_subprocess_exec(
        sys.executable, str(HERE / "fleet_workers.py"), "--master", ",".join(masters),
        "--workers", str(workers), "--op-types", str(op_types), "--ops", str(ops),
        "--per-host", str(per_host),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
        process_group=0,
    )


async def _follow(process: asyncio.subprocess.Process, latest: dict[str, Any]) -> None:
    """The synthetic workers' reports (lines and bytes sent so far)."""
    assert process.stdout is not None
    async for raw in process.stdout:
        with contextlib.suppress(ValueError):
            latest.update(json.loads(raw))


def _start_command(rate: float, seconds: float) -> dict[str, Any]:
    """The orchestrator's `start` for an open-model run phase of `rate` ops/s (the
    secrets already taken out, as AgentSecrets.strip leaves it)."""
    return {
        "cmd": "start", "protocol": PROTOCOL_VERSION, "phase": PHASE, "spec": {},
        "mode": "run", "rate": float(rate), "users": None,
        "think_time": 0.0, "duration": seconds, "records": None, "concurrency": None,
        "contact_points": ["127.0.0.1"], "port": 9042, "username": None,
        "password_ref": None,
    }


def _kill_group(process: asyncio.subprocess.Process | None) -> None:
    if process is None or process.returncode is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            try:
                done, _status = os.waitpid(process.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if done:
                return
            time.sleep(0.05)


async def _measure(load: LocustLoad, probe: Probe, latest: dict[str, Any], seconds: float,
                   workers: int) -> str:
    """Wait out the window; '' or why it ended early (the backlog ran away)."""
    begin = time.monotonic()
    end = begin + seconds
    while time.monotonic() < end:
        await asyncio.sleep(min(1.0, end - time.monotonic()))
        behind = int(latest.get("lines", 0)) - load.sinks.lines_received
        newest = probe.live.delay[-1] if len(probe.live) else 0.0
        if newest > RUNAWAY_S or behind > workers * RUNAWAY_S:
            return (f"runaway after {time.monotonic() - begin:.0f} s of the window: a line "
                    f"{newest:.0f} s old reached the live view, {behind} lines not yet in")
    return ""


async def _drain(load: LocustLoad, latest: dict[str, Any]) -> float:
    """Until every line sent is in the orchestrator, or DRAIN_WAIT_S, or no line came in
    for DRAIN_STALL_S; how long it waited."""
    start = time.monotonic()
    seen, moved = load.sinks.lines_received, start
    while time.monotonic() - start < DRAIN_WAIT_S and time.monotonic() - moved < DRAIN_STALL_S:
        if latest.get("final") and load.sinks.lines_received >= int(latest["lines"]):
            break
        await asyncio.sleep(0.2)
        if load.sinks.lines_received != seen:
            seen, moved = load.sinks.lines_received, time.monotonic()
    return time.monotonic() - start


def _window(pairs: Pairs, start: float, end: float) -> list[float]:
    """The delays of the lines sent in [start, end)."""
    return [delay for sent, delay in zip(pairs.sent, pairs.delay, strict=True)
            if start <= sent < end]


async def run_step(workers: int, seconds: float, tmp: Path, profile: bool,
                   shape: tuple[int, int] = (OP_TYPES, OPS_PER_TYPE),
                   rss_every: float = RSS_EVERY_S, ssh: tuple[str, int] | None = None,
                   apart: bool = False, per_host: int = 1) -> dict[str, Any]:
    (tmp / "inventory.toml").write_text(INVENTORY)
    (tmp / "scenario.toml").write_text(SCENARIO)
    plan = load_plan(tmp / "scenario.toml", tmp / "inventory.toml")
    store = tmp / "fleet.duckdb"
    writer = StoreWriter(store)
    run_id = writer.start_run("fleet", "fleet", SCENARIO, INVENTORY, {}, {}, {})
    sinks = Sinks(writer, run_id, plan)
    sinks.phase = PHASE
    probe = Probe(sinks, writer)
    load = LocustLoad(None, plan, run_id, sinks)
    load.expected = workers
    latest: dict[str, Any] = {}
    master = fleet = forwarder = None
    tasks: list[asyncio.Task[None]] = []
    pools: list[HostPool] = []
    out: dict[str, Any] = {"workers": workers, "seconds": seconds, "per_host": per_host,
                           "loadavg": list(os.getloadavg())}
    try:
        port = _free_port()
        master = await _spawn_master(port, workers, load.secrets.key, run_id)
        assert master.stdout is not None
        counted = CountedStream(master.stdout)
        master.stdout = counted  # type: ignore[assignment]  # LocustLoad reads it so
        load.master = master
        tasks += [asyncio.create_task(load._read_master()),
                  asyncio.create_task(load._read_stderr())]
        masters, sshds = [f"127.0.0.1:{port}"], set()
        if ssh is not None and apart:  # the forwards in a process of their own
            forwarder, masters, sshds = await _forwarder_process(ssh[0], ssh[1], port)
            out["ssh_connections"] = len(masters)
        elif ssh is not None:  # through SSH reverse forwards, as a run's workers reach it
            masters, pools, sshds = await _ssh_forwards(Path(ssh[0]), ssh[1], port)
            out["ssh_connections"] = len(pools)
        fleet = await _spawn_workers(masters, workers, load.secrets.key, *shape, per_host)
        tasks.append(asyncio.create_task(_follow(fleet, latest)))
        t = time.monotonic()
        await load._wait_joined()
        out["join_s"] = time.monotonic() - t
        rate = workers * shape[0] * shape[1]
        writer.phase_started(run_id, 0, PHASE, "run", time.time(), {"rate": rate})
        t = time.monotonic()
        await load._send(_start_command(rate, seconds))
        try:
            ack = await load._ack(("started", "failed"), START_TIMEOUT_S)
        except LoadtowerError:  # a run fails its phase here; the workers' lines flow anyway
            ack, out["start_ack_s"] = {}, None
            start_note = f"no start ack within {START_TIMEOUT_S:g} s (measured anyway)"
        else:
            out["start_ack_s"], start_note = time.monotonic() - t, ""
        if ack.get("type") == "failed":
            raise RuntimeError(f"the master did not start the phase: {ack.get('message')}")
        await asyncio.sleep(WARMUP_S)
        sampler = Sampler() if profile else None
        if sampler is not None:
            sampler.start()
        cpu0, mcpu0, wall0 = self_cpu_s(), proc_cpu_s(master.pid), time.monotonic()
        scpu0 = pids_cpu_s(sshds)
        fwcpu0 = proc_cpu_s(forwarder.pid) if forwarder is not None else 0.0
        start = time.time()
        in0, out0, lines0 = int(latest.get("bytes", 0)), counted.bytes, len(probe.live)
        sent0 = int(latest.get("lines", 0))
        fcpu0 = float(latest.get("cpu_s", 0.0))
        series: list[tuple[float, float, float, float]] = []
        sampling = asyncio.create_task(_sample_rss(series, master.pid, probe, rss_every))
        try:
            out["note"] = "; ".join(n for n in (start_note, await _measure(
                load, probe, latest, seconds, workers)) if n)
        finally:
            sampling.cancel()
        out["rss_series"] = [[round(t), round(o), round(m), round(b, 1)] for t, o, m, b in series]
        wall, end = time.monotonic() - wall0, time.time()
        out.update(
            window_s=wall,
            orch_cpu_pct=100.0 * (self_cpu_s() - cpu0) / wall,
            master_cpu_pct=100.0 * (proc_cpu_s(master.pid) - mcpu0) / wall,
            in_mb_s=(int(latest.get("bytes", 0)) - in0) / wall / 1e6,
            out_mb_s=(counted.bytes - out0) / wall / 1e6,
            lines_in_window=len(probe.live) - lines0,
            lines_sent_in_window=int(latest.get("lines", 0)) - sent0,
            workers_cpu_pct=100.0 * (float(latest.get("cpu_s", 0.0)) - fcpu0) / wall,
        )
        if ssh is not None:
            out["sshd_cpu_pct"] = 100.0 * (pids_cpu_s(sshds) - scpu0) / wall
        if forwarder is not None:
            out["forwarder_cpu_pct"] = 100.0 * (proc_cpu_s(forwarder.pid) - fwcpu0) / wall
        if sampler is not None:
            sampler.running = False
            out["profile"] = sampler.text()
        t = time.monotonic()
        await load.stop()
        out["stop_ack_s"] = time.monotonic() - t
        out["stop_acked"] = load.lines_complete
        assert fleet.stdin is not None
        fleet.stdin.close()  # the synthetic workers report their totals and leave
        out["drain_wait_s"] = await _drain(load, latest)
        out["master_rss_mb"] = rss_mb(master.pid)
        out["orch_rss_mb"] = rss_mb()
        with contextlib.suppress(Exception):
            await load._send({"cmd": "quit"})
        writer.end_run(run_id, "completed", None)
        writer.close()
        # what handing the heap's free pages back cost the writer's thread (heap_trim.py)
        out["trim_calls"], out["trim_s"] = writer.trim.calls, writer.trim.seconds
        with duckdb.connect(str(store), read_only=True) as con:
            row = con.execute("SELECT count(*), coalesce(sum(ops), 0) FROM op_intervals "
                              "WHERE run_id = ?", [run_id]).fetchone()
        # one op_intervals row per line and op type
        stored, ops = (int(row[0]) // shape[0], int(row[1])) if row else (0, 0)
        live = _window(probe.live, start, end)
        # (the workers report every half second: a shortfall of a second's lines is noise)
        if len(live) < out["lines_sent_in_window"] - 2 * workers and "backlog" not in out["note"]:
            out["note"] += "; " if out["note"] else ""
            out["note"] += (f"backlog: {len(live)} of the window's {out['lines_sent_in_window']} "
                           "lines reached the live view (delays: of those)")
        stored_delays = _window(probe.stored, start, end)
        sent = int(latest.get("lines", 0))
        out.update(
            drained=bool(latest.get("final")) and sinks.lines_received >= sent,
            lines_sent=sent, lines_received=sinks.lines_received, lines_stored=stored,
            lines_lost=sent - stored, ops_stored=ops,
            ops_sent=int(latest.get("ops", sent * shape[0] * shape[1])),
            failed_sends=int(latest.get("failed_sends", 0)),
            live_p50_s=percentile(live, 50), live_p99_s=percentile(live, 99),
            live_max_s=max(live, default=None), store_p99_s=percentile(stored_delays, 99),
            store_max_s=max(stored_delays, default=None), op_types=shape[0],
            ops_per_type=shape[1],
        )
        return out
    finally:
        for task in tasks:
            task.cancel()
        _kill_group(fleet)
        for pool in pools:
            with contextlib.suppress(Exception):
                await pool.close()
        _kill_group(forwarder)
        _kill_group(master)
        with contextlib.suppress(Exception):
            writer.close()


def one_step(workers: int, seconds: float, profile: bool, shape: tuple[int, int],
             rss_every: float = RSS_EVERY_S, ssh: tuple[str, int] | None = None,
             apart: bool = False, per_host: int = 1) -> int:
    """The orchestrator-side process of one step: prints its figures as one JSON line."""
    with tempfile.TemporaryDirectory(prefix="lt-fleet-") as tmp:
        try:
            result = asyncio.run(run_step(workers, seconds, Path(tmp), profile, shape, rss_every,
                                          ssh, apart, per_host))
        except Exception as exc:  # noqa: BLE001 - the step's failure is its result
            result = {"workers": workers, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result), flush=True)
    return 0


# ---------------------------------------------------------------- the table
def _step_process(workers: int, seconds: float, profile: bool, shape: tuple[int, int],
                  rss_every: float = RSS_EVERY_S, ssh: tuple[str, int] | None = None,
                  apart: bool = False, per_host: int = 1) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--one-step", str(workers),
            "--seconds", str(seconds), "--op-types", str(shape[0]), "--ops", str(shape[1]),
            "--rss-every", str(rss_every)]
    argv += ["--profile", str(workers)] if profile else []
    argv += ["--ssh", ssh[0], "--ssh-connections", str(ssh[1])] if ssh else []
    argv += ["--ssh-apart"] if apart else []
    argv += ["--per-host", str(per_host)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, _err = process.communicate(timeout=seconds + 600)
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGINT)  # its own clean-up kills its children
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    for raw in reversed(stdout.splitlines()):
        with contextlib.suppress(ValueError):
            return dict(json.loads(raw))
    return {"workers": workers, "error": f"the step process ended ({process.returncode}) "
            "without a result"}


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def row_text(r: dict[str, Any]) -> str:
    if r.get("error"):
        return f"| {r['workers']} | error: {r['error']} |"
    lost = str(r["lines_lost"]) if r["drained"] else (
        f"{r['lines_lost']} (not in {r.get('drain_wait_s', 20.0):.0f} s after the stop ack: "
        "backlog)")
    lost += f" ({r['failed_sends']} not sent)" if r["failed_sends"] else ""
    stop = f"{r['stop_ack_s']:.2f} s"
    if r["stop_ack_s"] >= STOP_ACK_TIMEOUT_S:
        stop = f"none within {STOP_ACK_TIMEOUT_S:g} s"
    elif not r["stop_acked"]:
        stop += " (an agent without a drain report)"
    start = r.get("start_ack_s")
    stop = ("none" if start is None else f"{start:.2f} s") + f" / {stop}"
    return (f"| {r['workers']} | {r['orch_cpu_pct']:.1f} | {r['master_cpu_pct']:.1f} "
            f"| {r['in_mb_s']:.2f} in, {r['out_mb_s']:.2f} out MB/s "
            f"| {_s(r['live_p50_s'])} / {_s(r['live_p99_s'])} / {_s(r['live_max_s'])} s "
            f"| {_s(r['store_p99_s'])} s | {lost} | {stop} "
            f"| {r['orch_rss_mb']:.0f} / {r['master_rss_mb']:.0f} MB "
            f"| {'; '.join(n for n in (r['note'], _sshd_note(r)) if n)} |")


def _sshd_note(r: dict[str, Any]) -> str:
    if "sshd_cpu_pct" not in r:
        return ""
    apart = (f"; the forwarding process {r['forwarder_cpu_pct']:.1f}%"
             if "forwarder_cpu_pct" in r else "")
    return (f"sshd (the agent hosts' side) {r['sshd_cpu_pct']:.1f}% over "
            f"{r['ssh_connections']} connections{apart}")


HEADER = ("| workers | orchestrator CPU (% of a core) | master CPU | bytes/s through the master "
          "| line -> live view p50 / p99 / max | line -> store p99 | lines lost | start / stop ack "
          "| RSS at the end: orchestrator / master | note |\n|---|---|---|---|---|---|---|---|---|---|")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default=DEFAULT_WORKERS, help="Ns, comma-separated")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured seconds per step")
    parser.add_argument("--json", action="store_true", help="one JSON object per step")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="a sampling profile of the orchestrator side's threads at N "
                        "workers (printed after the table)")
    parser.add_argument("--save", type=Path, help="also write every step's figures (JSON) here")
    parser.add_argument("--keep-going", action="store_true",
                        help="run the larger Ns after a step whose backlog ran away")
    parser.add_argument("--op-types", type=int, default=OP_TYPES,
                        help="op types in each worker's line (op0, op1, ...)")
    parser.add_argument("--ops", type=int, default=OPS_PER_TYPE,
                        help="ops per op type per worker per second")
    parser.add_argument("--rss-every", type=float, default=RSS_EVERY_S, metavar="S",
                        help="sample both sides' RSS every S seconds of the window")
    parser.add_argument("--ssh", metavar="INVENTORY",
                        help="the workers reach the master through SSH reverse forwards made "
                        "by the orchestrator side (asyncssh, as a run makes them) to the "
                        "inventory's first agent host (the sandbox's: a real sshd here)")
    parser.add_argument("--ssh-connections", type=int, default=8, metavar="K",
                        help="with --ssh: K connections, each its own forward (K agent hosts; "
                        "worker i uses the (i mod K)-th)")
    parser.add_argument("--ssh-apart", action="store_true",
                        help="with --ssh: the forwards made by a process of their own (its "
                        "CPU said apart), not by the orchestrator side's event loop")
    parser.add_argument("--per-host", type=int, default=1, metavar="K",
                        help="workers come in agent hosts of K that merge their lines (the "
                        "inventory's merge_workers): one line per host and second, sent by "
                        "the host's worker 0, with the K workers' ops merged")
    parser.add_argument("--forwarder", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--one-step", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    shape = (args.op_types, args.ops)
    ssh = (str(Path(args.ssh).resolve()), args.ssh_connections) if args.ssh else None
    if args.forwarder:
        asyncio.run(_forward_until_stdin_closes(args.forwarder[0], int(args.forwarder[1]),
                                                int(args.forwarder[2])))
        return 0
    for sig in (signal.SIGINT, signal.SIGTERM):  # also when started in the background
        signal.signal(sig, signal.default_int_handler)
    if args.one_step:
        return one_step(args.one_step, args.seconds, args.profile == args.one_step, shape,
                        args.rss_every, ssh, args.ssh_apart, args.per_host)
    try:
        counts = [int(n) for n in args.workers.split(",") if n.strip()]
    except ValueError:
        print(f"--workers: not a list of numbers: {args.workers}", file=sys.stderr)
        return 2
    if (not counts or min(counts + list(shape) + [args.per_host]) < 1 or args.seconds <= 0
            or args.rss_every <= 0):
        print("--workers, --op-types, --ops and --per-host need numbers >= 1, --seconds and "
              "--rss-every positive ones",
              file=sys.stderr)
        return 2
    if ssh is not None and (args.ssh_connections < 1 or not Path(ssh[0]).is_file()):
        print(f"--ssh {args.ssh}: not an inventory file, or --ssh-connections below 1",
              file=sys.stderr)
        return 2
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if not args.json:
        maker = "a process of their own" if args.ssh_apart else "the orchestrator's asyncssh"
        way = ("loopback ZeroMQ" if ssh is None else f"{ssh[1]} SSH connections' reverse "
               f"forwards (made by {maker}; the sshd side's CPU in the note)")
        print(f"fleet: {os.cpu_count()} cores, load average {load} at the start; "
              f"{args.seconds:g} s per step (after {WARMUP_S:g} s of warm-up); each worker "
              f"sends one line a second of {shape[0]} op types x {shape[1]} ops through "
              f"{way}; lost = sent - stored"
              + (f"; hosts of {args.per_host} workers send one merged line each a second "
                 "(merge_workers)" if args.per_host > 1 else "") + f"\n{HEADER}",
              flush=True)
    results = []
    for workers in counts:
        result = _step_process(workers, args.seconds, args.profile == workers, shape,
                               args.rss_every, ssh, args.ssh_apart, args.per_host)
        results.append(result)
        if args.json:
            print(json.dumps({k: v for k, v in result.items() if k != "profile"}), flush=True)
        else:
            print(row_text(result), flush=True)
        if (result.get("note") or result.get("error")) and not args.keep_going:
            skipped = [n for n in counts if n > workers]
            if skipped and not args.json:
                print(f"(not run: {', '.join(map(str, skipped))} workers, past the "
                      "runaway above)")
            break
    if args.save:
        args.save.write_text(json.dumps(results, indent=1) + "\n")
    for result in results:
        series = result.get("rss_series") or []
        if len(series) > 2 and not args.json:
            own = [o - b for _t, o, _m, b in series]
            print(f"RSS at {result['workers']} workers every {args.rss_every:g} s of the window "
                  "(orchestrator / master / the bench's own records inside the orchestrator "
                  "side, MB): " + ", ".join(f"{o}/{m}/{b:g}" for _t, o, m, b in series)
                  + f"; orchestrator range without the bench's records "
                  f"{max(own) - min(own):.0f} MB")
    for result in results:
        if result.get("trim_calls") and not args.json:
            print(f"malloc_trim after the writer's flushes at {result['workers']} workers: "
                  f"{result['trim_calls']} calls, {1000 * result['trim_s'] / result['trim_calls']:.2f} "
                  "ms each on average (about one a second)")
    for result in results:
        if result.get("profile"):
            print(f"\nSampling profile of the orchestrator side at {result['workers']} workers:\n"
                  + result["profile"], file=sys.stderr if args.json else sys.stdout)
    if not args.json:
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:  # every step's processes were ended by its clean-up
        print("fleet: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
