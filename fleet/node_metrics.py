"""Node metrics of the DB hosts, one sample per host per second.

From Prometheus + node_exporter (prometheus-api-client) for hosts that name a
`node_exporter` when the inventory names a Prometheus URL; otherwise by reading
/proc over the host's SSH connection and differencing successive readings. A host with
a `cgroup` is always read over SSH (node_exporter cannot see cgroups): its CPU and RAM
are its cgroup's, even when Prometheus is configured (proc_stats.py). Each sample says
what its CPU and RAM describe (`source`: "cgroup" or "host"), and the first sample of
each host is announced once (`on_note`: where its figures come from).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from loadtower.fleet.cancel_tasks import cancel_and_wait
from loadtower.fleet.proc_stats import (
    ProcReading,
    parse_proc,
    proc_command,
    rates,
)
from loadtower.scenarios.models import Inventory

WarningCallback = Callable[[str, str], None]
QUERY_TIMEOUT_S = 5.0  # one Prometheus query (HTTP read), one /proc reading over SSH
CONNECT_TIMEOUT_S = 2.0  # the HTTP connection to Prometheus
TICK_BUDGET_S = 8.0  # all of one tick's Prometheus queries: the worker thread ends by then
TICK_OFFSET_S = 0.3  # after node_exporter's 1 s scrape has landed


@dataclass(frozen=True)
class NodeSample:
    ts: float
    host: str
    cpu_pct: float
    mem_used_bytes: int
    mem_total_bytes: int
    disk_read_bps: float
    disk_write_bps: float
    net_rx_bps: float
    net_tx_bps: float
    source: str = "host"  # CPU and RAM of the whole "host", or of its "cgroup"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_loopback(address: str) -> bool:
    return address.startswith("127.") or address in ("::1", "localhost")


def prometheus_queries(instances: Iterable[str], loopback: bool) -> dict[str, str]:
    """PromQL per field, grouped by instance, over the given node_exporter instances."""
    regex = "|".join(sorted(set(instances))).replace(".", "\\\\.")
    sel = f'instance=~"{regex}"'
    net = sel if loopback else sel + ',device!="lo"'
    disk = sel + ',device!~"(loop|ram|zram|sr|fd|dm-).*"'
    return {
        "cpu_pct": f'100 * (1 - sum by (instance) (irate(node_cpu_seconds_total{{{sel},'
        f'mode=~"idle|iowait"}}[5s])) / sum by (instance) (irate(node_cpu_seconds_total{{{sel}}}[5s])))',
        "mem_total_bytes": f"max by (instance) (node_memory_MemTotal_bytes{{{sel}}})",
        "mem_available_bytes": f"max by (instance) (node_memory_MemAvailable_bytes{{{sel}}})",
        "disk_read_bps": f"sum by (instance) (irate(node_disk_read_bytes_total{{{disk}}}[5s]))",
        "disk_write_bps": f"sum by (instance) (irate(node_disk_written_bytes_total{{{disk}}}[5s]))",
        "net_rx_bps": f"sum by (instance) (irate(node_network_receive_bytes_total{{{net}}}[5s]))",
        "net_tx_bps": f"sum by (instance) (irate(node_network_transmit_bytes_total{{{net}}}[5s]))",
    }


class NodeMetricsSampler:
    """Yields NodeSample for every sampled host about once per `interval` seconds."""

    def __init__(
        self,
        inventory: Inventory,
        pool: Any,
        hosts: Callable[[], Iterable[str]] | None = None,
        on_warning: WarningCallback | None = None,
        on_note: WarningCallback | None = None,
    ) -> None:
        self.inventory = inventory
        self.pool = pool
        self.interval = float(inventory.metrics.interval)
        self._hosts = hosts or (lambda: list(inventory.with_role("db")))
        self.on_warning = on_warning or (lambda host, message: None)
        self.on_note = on_note or (lambda host, message: None)
        self._noted: set[str] = set()
        self._queue: asyncio.Queue[NodeSample] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._proc_tasks: dict[str, asyncio.Task[None]] = {}
        self._warned: set[str] = set()
        self._prom: Any = None
        self._querying = False  # a worker thread is in _query_all

    # ------------------------------------------------------------------ public
    async def samples(self) -> AsyncIterator[NodeSample]:
        self._tasks.append(asyncio.create_task(self._schedule()))
        while True:
            yield await self._queue.get()

    async def close(self) -> None:
        await cancel_and_wait([*self._tasks, *self._proc_tasks.values()])
        self._tasks.clear()
        self._proc_tasks.clear()

    # ------------------------------------------------------------------ scheduling
    def _split(self) -> tuple[dict[str, str], list[str]]:
        """Hosts sampled through Prometheus (host -> instance) and through /proc."""
        prom, proc = {}, []
        for name in self._hosts():
            host = self.inventory.hosts[name]
            if host.cgroup is None and self.inventory.metrics.prometheus_url and host.node_exporter:
                prom[name] = host.node_exporter
            else:
                proc.append(name)
        return prom, proc

    async def _schedule(self) -> None:
        while True:
            prom, proc = self._split()
            for name in proc:
                if name not in self._proc_tasks:
                    self._proc_tasks[name] = asyncio.create_task(self._proc_loop(name))
            if prom:
                await self._prometheus_tick(prom)
            await self._next_tick()

    async def _next_tick(self) -> None:
        """Sleep to just after the next interval boundary of the wall clock, so each
        tick lands in its own second (samples are stamped with that second)."""
        now = time.time()
        target = (now // self.interval + 1) * self.interval + TICK_OFFSET_S
        await asyncio.sleep(target - now)

    def _warn_once(self, key: str, host: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.on_warning(host, message)

    # ------------------------------------------------------------------ Prometheus
    async def _prometheus_tick(self, hosts: dict[str, str]) -> None:
        url = str(self.inventory.metrics.prometheus_url)
        loopback = any(is_loopback(self.inventory.hosts[n].address) for n in hosts)
        queries = prometheus_queries(hosts.values(), loopback)
        if self._querying:  # a thread of an abandoned tick still waits: never pile them up
            return
        try:
            values = await asyncio.wait_for(
                asyncio.to_thread(self._query_all, url, queries), TICK_BUDGET_S + 2
            )
        except Exception as exc:  # noqa: BLE001 - a missed tick is a warning, not a failure
            self._warn_once("prometheus", "", f"node metrics: Prometheus at {url} failed: {exc}")
            return
        self._warned.discard("prometheus")
        ts = float(int(time.time()))
        for name, instance in hosts.items():
            got = {field: by_instance.get(instance) for field, by_instance in values.items()}
            if got["cpu_pct"] is None or got["mem_total_bytes"] is None:
                self._warn_once(
                    f"prom:{name}",
                    name,
                    f"node metrics: Prometheus has no node_exporter data for {name} "
                    f"(instance {instance}) yet",
                )
                continue
            total = int(got["mem_total_bytes"] or 0)
            self._queue.put_nowait(
                NodeSample(
                    ts=ts,
                    host=name,
                    cpu_pct=round(max(0.0, min(100.0, got["cpu_pct"] or 0.0)), 2),
                    mem_used_bytes=total - int(got["mem_available_bytes"] or 0),
                    mem_total_bytes=total,
                    disk_read_bps=got["disk_read_bps"] or 0.0,
                    disk_write_bps=got["disk_write_bps"] or 0.0,
                    net_rx_bps=got["net_rx_bps"] or 0.0,
                    net_tx_bps=got["net_tx_bps"] or 0.0,
                )
            )

    def _query_all(self, url: str, queries: dict[str, str]) -> dict[str, dict[str, float]]:
        """Every query of one tick, in a worker thread: each HTTP request has a connect
        and read timeout and no retries, and the whole tick ends within TICK_BUDGET_S
        (TimeoutError), so the thread never outlives its tick by much."""
        self._querying = True
        try:
            return self._query_each(url, queries, time.monotonic() + TICK_BUDGET_S)
        finally:
            self._querying = False

    def _query_each(
        self, url: str, queries: dict[str, str], deadline: float
    ) -> dict[str, dict[str, float]]:
        if self._prom is None:
            from prometheus_api_client import PrometheusConnect
            from urllib3.util.retry import Retry

            self._prom = PrometheusConnect(
                url=url, disable_ssl=True, retry=Retry(total=0), timeout=QUERY_TIMEOUT_S
            )
        out: dict[str, dict[str, float]] = {}
        for field, query in queries.items():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the queries took over {TICK_BUDGET_S:g} s")
            read = min(QUERY_TIMEOUT_S, left)
            result = self._prom.custom_query(
                query,
                params={"timeout": f"{max(1, int(read * 1000))}ms"},
                timeout=(min(CONNECT_TIMEOUT_S, read), read),
            )
            out[field] = {
                str(item["metric"].get("instance", "")): float(item["value"][1])
                for item in result
                if item["value"][1] not in ("NaN", "+Inf", "-Inf")
            }
        return out

    # ------------------------------------------------------------------ /proc over SSH
    def _note_source(self, name: str, source: str) -> None:
        if name in self._noted:
            return
        self._noted.add(name)
        host = self.inventory.hosts[name]
        what = (f"CPU and RAM of cgroup {host.cgroup}" if source == "cgroup"
                else "CPU and RAM of the whole machine")
        net = (f"network of {host.net_device} only" if host.net_device
               else "network of every interface but lo" if not is_loopback(host.address)
               else "network of every interface")
        also = (" (Prometheus is configured: the cgroup's figures win)"
                if host.cgroup and self.inventory.metrics.prometheus_url and host.node_exporter
                else "")
        self.on_note(name, f"node metrics of {name} over SSH: {what}, the machine's disks, "
                     f"{net}{also}")

    async def _proc_loop(self, name: str) -> None:
        host = self.inventory.hosts[name]
        loopback = is_loopback(host.address)
        command = proc_command(host.cgroup)
        previous: ProcReading | None = None
        while True:
            try:
                status, out, err = await self.pool.run(name, command, timeout=QUERY_TIMEOUT_S)
                if status != 0:
                    raise RuntimeError(err.strip() or f"exit status {status}")
                reading = parse_proc(out, time.time(), include_loopback=loopback,
                                     net_device=host.net_device)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - keep sampling; say so once
                self._warn_once(f"proc:{name}", name, f"node metrics from /proc on {name}: {exc}")
                previous = None
            else:
                self._warned.discard(f"proc:{name}")
                if previous is not None:
                    sample = rates(previous, reading)
                    self._note_source(name, str(sample["source"]))
                    self._queue.put_nowait(NodeSample(host=name, **sample))
                previous = reading
            await self._next_tick()
