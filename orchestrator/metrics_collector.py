"""The run's live figures as Prometheus metric families (docs/prometheus.md).

A custom collector over a ``MetricsSnapshot`` (metrics_snapshot.py): every name, label
and value below comes from the snapshot, and prometheus_client writes (and escapes)
the exposition text. Names and labels:

- ``loadtower_phase_info{run_id, phase}`` 1 for the phase label under way;
- ``loadtower_second_timestamp_seconds{run_id}`` the last complete second (its start,
  unix time): the second the per-second figures below are of;
- ``loadtower_ops_per_second{run_id, phase, op}`` ops completed in that second;
- ``loadtower_latency_seconds{run_id, phase, op, quantile}`` p50, p90, p99, p99.9 of
  that second's merged response-time histograms (service time for a closed model);
- ``loadtower_ops_total``, ``loadtower_late_ops_total{run_id, phase, op}`` and
  ``loadtower_errors_total{run_id, phase, op, error}`` (error class) over the run;
- ``loadtower_agent_cpu_percent{run_id, agent}``;
- ``loadtower_node_cpu_percent``, ``loadtower_node_memory_used_bytes``,
  ``loadtower_node_memory_total_bytes{run_id, host}`` of the DB hosts' node samples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from loadtower.orchestrator.metrics_snapshot import MetricsSnapshot

PHASE_OP = ["run_id", "phase", "op"]
NODE_FIGURES = (
    ("loadtower_node_cpu_percent", "cpu_pct", "CPU % of the host's newest node sample"),
    ("loadtower_node_memory_used_bytes", "mem_used_bytes", "memory in use (newest sample)"),
    ("loadtower_node_memory_total_bytes", "mem_total_bytes", "memory of the host"),
)


class LiveCollector(Collector):
    """Collects `source()`'s snapshot at each scrape (nothing while it is None)."""

    def __init__(self, source: Callable[[], MetricsSnapshot | None]) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        snapshot = self.source()
        if snapshot is not None:
            yield from families(snapshot)


def families(snap: MetricsSnapshot) -> list[Metric]:
    run = snap.run_id
    phase = InfoMetricFamily("loadtower_phase", "the phase label under way", labels=["run_id"])
    if snap.phase:
        phase.add_metric([run], {"phase": snap.phase})
    second = GaugeMetricFamily(
        "loadtower_second_timestamp_seconds",
        "start (unix time) of the last complete second, which the per-second figures are of",
        labels=["run_id"])
    if snap.second is not None:
        second.add_metric([run], snap.second)
    rate = GaugeMetricFamily("loadtower_ops_per_second",
                             "ops completed in the last complete second", labels=PHASE_OP)
    latency = GaugeMetricFamily(
        "loadtower_latency_seconds",
        "latency quantile of the last complete second (every agent's histograms merged)",
        labels=[*PHASE_OP, "quantile"])
    for cell in snap.seconds:
        rate.add_metric([run, cell.phase, cell.op], cell.ops)
        for quantile, value in cell.latency_s.items():
            latency.add_metric([run, cell.phase, cell.op, quantile], value)
    ops = CounterMetricFamily("loadtower_ops", "ops completed in the run", labels=PHASE_OP)
    late = CounterMetricFamily("loadtower_late_ops", "ops sent late (open model)",
                               labels=PHASE_OP)
    errors = CounterMetricFamily("loadtower_errors", "failed ops by error class",
                                 labels=[*PHASE_OP, "error"])
    for total in snap.totals:
        ops.add_metric([run, total.phase, total.op], total.ops)
        late.add_metric([run, total.phase, total.op], total.late)
        for name, count in total.errors.items():
            errors.add_metric([run, total.phase, total.op, name], count)
    cpu = GaugeMetricFamily("loadtower_agent_cpu_percent", "CPU % of the agent's newest line",
                            labels=["run_id", "agent"])
    for agent, value in snap.agent_cpu.items():
        cpu.add_metric([run, agent], value)
    nodes = []
    for name, key, doc in NODE_FIGURES:
        family = GaugeMetricFamily(name, doc, labels=["run_id", "host"])
        for host, figures in snap.nodes.items():
            family.add_metric([run, host], figures[key])
        nodes.append(family)
    return [phase, second, rate, latency, ops, late, errors, cpu, *nodes]
