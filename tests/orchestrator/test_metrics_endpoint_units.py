"""The metrics endpoint: a real HTTP server on 127.0.0.1 serving a run's live figures
(LiveStats fed with real interval lines, two agents), read back with prometheus_client's
parser. The per-second figures are the store's op_seconds row of the last complete second
(ops exactly, percentiles the same HDR value of the merged histograms), the totals its
counts; no secret reaches a label; the server is gone after close."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.orchestrator.metrics_endpoint import MetricsEndpoint, serve_run
from loadtower.orchestrator.metrics_snapshot import take_snapshot
from loadtower.scenarios.serve_address import ServeAddress
from loadtower.store import StoreReader
from tests.orchestrator.metrics_fixtures import (
    AGENTS,
    PHASE,
    SECRET,
    answers,
    feed,
    new_sinks,
    port_free,
    samples,
    scrape,
    value,
)
from tests.orchestrator.phase_fixtures import interval_line

EPHEMERAL = ServeAddress("127.0.0.1", 0, "test")
QUANTILES = {"0.5": "p50_ms", "0.9": "p90_ms", "0.99": "p99_ms", "0.999": "p999_ms"}


def _us(seconds_or_ms: float, scale: float) -> int:
    """An HDR value in whole microseconds."""
    return round(seconds_or_ms * scale)


def test_a_scrape_gives_the_stores_figures_of_the_last_complete_second(tmp_path: Path) -> None:
    sinks, writer = new_sinks(tmp_path)
    first = int(time.time()) - 60  # every second is complete by the clock
    feed(sinks, first, 5)
    last = first + 4

    async def serve_and_scrape() -> str:
        endpoint = serve_run(EPHEMERAL, lambda: sinks, asyncio.get_running_loop())
        try:
            return await asyncio.to_thread(scrape, endpoint.url)
        finally:
            await asyncio.to_thread(endpoint.close)

    text = asyncio.run(asyncio.wait_for(serve_and_scrape(), 60))
    found = samples(text)
    live = {op: sinks.stats.window(last, last + 1, op=op, phase=PHASE) for op in ("read", "update")}
    writer.close()
    rows = StoreReader(tmp_path / "store.duckdb").op_seconds(sinks.run_id)
    run = {"run_id": sinks.run_id}
    assert value(found, "loadtower_second_timestamp_seconds", **run) == last
    assert value(found, "loadtower_phase_info", **run, phase=PHASE) == 1
    for op in ("read", "update"):
        [row] = [r for r in rows if r["ts"] == last and r["op"] == op]
        labels = {**run, "phase": PHASE, "op": op}
        assert value(found, "loadtower_ops_per_second", **labels) == row["ops"] == live[op].ops
        for quantile, column in QUANTILES.items():
            served = value(found, "loadtower_latency_seconds", **labels, quantile=quantile)
            assert _us(served, 1e6) == _us(row[column], 1e3), (op, quantile)
            assert _us(served, 1e6) == _us(getattr(live[op], column), 1e3), (op, quantile)
        assert value(found, "loadtower_ops_total", **labels) == sum(
            r["ops"] for r in rows if r["op"] == op)
    read = {**run, "phase": PHASE, "op": "read"}
    update = {**run, "phase": PHASE, "op": "update"}
    assert value(found, "loadtower_late_ops_total", **read) == 3 * len(AGENTS) * 5
    assert value(found, "loadtower_errors_total", **read, error="ReadTimeout") == 2 * 2 * 5
    assert value(found, "loadtower_errors_total", **update, error="Denied-*****") == 2 * 5
    assert SECRET not in text
    for agent in AGENTS:
        assert value(found, "loadtower_agent_cpu_percent", **run, agent=agent) == (
            sinks.stats.agent_cpu[agent])
    assert value(found, "loadtower_node_cpu_percent", **run, host="db1") == 44.0
    assert value(found, "loadtower_node_memory_used_bytes", **run, host="db1") == 8e9
    assert value(found, "loadtower_node_memory_total_bytes", **run, host="db1") == 24e9


def test_the_last_complete_second_waits_for_every_agent_or_the_clock(tmp_path: Path) -> None:
    sinks, writer = new_sinks(tmp_path)
    stats = sinks.stats
    assert stats.last_complete_second(1000.0) is None
    stats.add({**interval_line(100, "read", 10, 900, 0), "agent": "a"})
    stats.add({**interval_line(100, "read", 10, 900, 0), "agent": "b"})
    stats.add({**interval_line(101, "read", 10, 900, 0), "agent": "a"})
    assert stats.last_complete_second(101.5) == 99  # b has not sent 101: 100 may grow
    stats.add({**interval_line(101, "read", 10, 900, 0), "agent": "b"})
    assert stats.last_complete_second(101.5) == 100
    assert stats.last_complete_second(104.0) == 101  # settled: no agent sends a later one
    assert stats.last_complete_second(1e9) == 101  # never past the newest second
    writer.close()


def test_an_op_of_the_phase_under_way_without_completions_is_zero(tmp_path: Path) -> None:
    sinks, writer = new_sinks(tmp_path)
    first = int(time.time()) - 60
    feed(sinks, first, 2)
    sinks.interval({**interval_line(first + 2, "read", 10, 900, 0, PHASE), "agent": AGENTS[0]})
    snapshot = take_snapshot(sinks, time.time())
    assert snapshot.second == first + 2
    by_op = {cell.op: cell for cell in snapshot.seconds}
    assert by_op["read"].ops == 10 and by_op["read"].latency_s["0.99"] == pytest.approx(9e-4, 1e-3)
    assert by_op["update"].ops == 0 and by_op["update"].latency_s == {}
    sinks.phase = ""  # between phases: no zeros for an op that did not run
    assert [c.op for c in take_snapshot(sinks, time.time()).seconds] == ["read"]
    writer.close()


def test_close_frees_the_port_and_ends_the_thread() -> None:
    endpoint = MetricsEndpoint(EPHEMERAL, lambda: None)
    port = endpoint.port
    assert answers(port)
    assert scrape(endpoint.url).strip() == ""  # no run yet: an empty page
    endpoint.close()
    assert not endpoint.thread.is_alive()
    assert not answers(port) and port_free(port)
    endpoint.close()  # twice: nothing more to do


def test_a_taken_port_is_one_line_naming_the_address() -> None:
    first = MetricsEndpoint(EPHEMERAL, lambda: None)
    try:
        taken = ServeAddress("127.0.0.1", first.port, "--metrics-address")
        with pytest.raises(LoadtowerError) as info:
            MetricsEndpoint(taken, lambda: None)
        message = str(info.value)
        assert message.startswith(f"cannot serve metrics on 127.0.0.1:{first.port} "
                                  "(--metrics-address): the port is in use"), message
        assert "\n" not in message and message.endswith("or run with --no-metrics")
    finally:
        first.close()


def test_a_loop_that_is_gone_gives_an_empty_page(tmp_path: Path) -> None:
    sinks, writer = new_sinks(tmp_path)
    feed(sinks, int(time.time()) - 60, 2)
    loop = asyncio.new_event_loop()
    loop.close()
    endpoint = serve_run(EPHEMERAL, lambda: sinks, loop)
    try:
        assert scrape(endpoint.url).strip() == ""
    finally:
        endpoint.close()
        writer.close()
