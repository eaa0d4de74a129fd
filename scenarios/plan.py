"""A validated scenario + inventory pair, and how it is shown to the user."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Group
from rich.table import Table

from loadtower.protocol.engine_kinds import titles, with_capability
from loadtower.scenarios.catalog import resolve_scenario
from loadtower.scenarios.crossref import check_references, workload_of
from loadtower.scenarios.durations import format_duration
from loadtower.scenarios.load_path import load_path_lines
from loadtower.scenarios.loader import load_inventory, load_scenario_noted
from loadtower.scenarios.models import (
    CompactionPhase,
    FaultPhase,
    FlushPhase,
    Inventory,
    LoadPhase,
    PausePhase,
    RampPhase,
    ScaleOutPhase,
    Scenario,
    SearchPhase,
    SteadyPhase,
)
from loadtower.scenarios.thresholds import check_thresholds
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.scenario_files import file_mix, load_scenario_workloads
from loadtower.store.terminal_text import cell


@dataclass(frozen=True)
class Plan:
    scenario: Scenario
    scenario_path: Path
    scenario_text: str
    inventory: Inventory
    inventory_path: Path
    inventory_text: str
    # the scenario's workload files, checked (scenarios/workloads/): workload -> file
    workloads: dict[str, Checked] = field(default_factory=dict)
    # the defaults taken for a YCSB property file or workload file run as it is
    # (scenarios/direct_scenario.py): one line each; none for a scenario file
    notes: tuple[str, ...] = ()

    def target_plans(self) -> list[tuple[str | None, Plan]]:
        """(target name or None, the plan of that target alone), in run order: a scenario
        without ``[targets.*]`` is one unnamed target."""
        names = self.scenario.target_names()
        if not names:
            return [(None, self)]
        return [(name, replace(self, scenario=self.scenario.for_target(name)))
                for name in names]


def load_plan(
    scenario: str | Path,
    inventory: Path,
    overrides: list[str] | None = None,
    scale: float | None = None,
) -> Plan:
    scenario_path = resolve_scenario(str(scenario))
    sc, sc_text, notes = load_scenario_noted(scenario_path, overrides, scale)
    inv, inv_text = load_inventory(Path(inventory))
    check_references(sc, sc_text, str(scenario_path), inv, inv_text, str(inventory))
    check_thresholds(sc, sc_text, str(scenario_path))
    workloads = load_scenario_workloads(sc, scenario_path, sc_text)
    return Plan(sc, scenario_path, sc_text, inv, Path(inventory), inv_text, workloads, notes)


def _load_model(phase: object) -> str:
    rate = getattr(phase, "rate", None)
    users = getattr(phase, "users", None)
    if rate is not None:
        return f"open, {rate:g} ops/s"
    if users is not None:
        think = getattr(phase, "think_time", 0.0)
        return f"closed, {users} users" + (f", think {format_duration(think)}" if think else "")
    return "-"


def describe_phase(scenario: Scenario, index: int) -> tuple[str, str]:
    """(load model, what happens) for one phase."""
    phase = scenario.phases[index]
    if isinstance(phase, LoadPhase):
        records = phase.records or scenario.dataset.records
        keys = f" (keys from {phase.start_key:,})" if phase.start_key else ""
        return f"{phase.concurrency} in flight", f"insert {records:,} records{keys}"
    if isinstance(phase, SteadyPhase):
        return _load_model(phase), f"for {format_duration(phase.duration)}"
    if isinstance(phase, RampPhase):
        steps = phase.rates or phase.users or []
        unit = "ops/s" if phase.rates else "users"
        return (
            f"steps {', '.join(f'{s:g}' for s in steps)} {unit}",
            f"{format_duration(phase.step_duration)} each until p99 > {phase.target_p99_ms:g} ms "
            f"or errors > {phase.max_error_rate:.1%}",
        )
    if isinstance(phase, SearchPhase):
        start = phase.start_rate if phase.start_rate is not None else phase.min_rate
        resolution = (
            f"{phase.resolution:g} ops/s" if phase.resolution is not None
            else f"{phase.resolution_pct if phase.resolution_pct is not None else 10:g}%"
        )
        target = " and ".join(
            f"{name} <= {value:g} ms"
            for name, value in (("p99", phase.target_p99_ms), ("p99.9", phase.target_p999_ms))
            if value is not None
        )
        return (
            f"search {phase.min_rate:g}..{phase.max_rate:g} ops/s from {start:g}",
            f"steps of {format_duration(phase.step_duration)} for the highest rate with "
            f"{target}, errors <= {phase.max_error_rate:.1%}, within {resolution}",
        )
    if isinstance(phase, ScaleOutPhase):
        return _load_model(
            phase
        ), f"start {phase.host}, wait until UN (max {format_duration(phase.timeout)})"
    if isinstance(phase, CompactionPhase):
        hosts = ", ".join(phase.hosts) if phase.hosts else "every db host"
        return _load_model(phase), f"flush + major compaction on {hosts}"
    if isinstance(phase, FlushPhase):
        flushing = titles(with_capability(flush_action=True))
        hosts = ", ".join(phase.hosts) if phase.hosts else f"every {flushing} db host"
        return "-", f"flush (memtables to disk) on {hosts}"
    if isinstance(phase, FaultPhase):
        return (
            _load_model(phase),
            f"'{phase.action}' {phase.host} after {format_duration(phase.after)}, "
            f"phase lasts {format_duration(phase.duration)}",
        )
    if isinstance(phase, PausePhase):
        return "-", f"wait {format_duration(phase.duration)}"
    return "-", "-"


def render_plan(plan: Plan) -> Group:
    """The plan as tables; every name and value is plain text (terminal_text.cell: never
    markup, control characters spelled out), so a file cannot drive the terminal."""
    sc, inv = plan.scenario, plan.inventory
    hosts = Table(title=cell(f"Inventory {plan.inventory_path}"), title_justify="left")
    for column in ("host", "address", "ssh", "roles", "engine", "actions"):
        hosts.add_column(column)
    for name, host in inv.hosts.items():
        port = host.ssh_port or inv.ssh.port
        roles = ", ".join(host.roles) + (" (standby)" if host.standby else "")
        hosts.add_row(
            *map(
                cell,
                (
                    name,
                    host.address,
                    f"{host.ssh_host or host.address}:{port}",
                    roles,
                    host.engine or "",
                    ", ".join(host.actions),
                ),
            )
        )
    phases = Table(
        title=cell(f"Scenario {sc.name} ({sc.engine}): {sc.description}"), title_justify="left"
    )
    for column in ("#", "phase", "type", "workload", "load", "what"):
        phases.add_column(column)
    for i, phase in enumerate(sc.phases):
        load, what = describe_phase(sc, i)
        workload = workload_of(sc, i) if not isinstance(phase, PausePhase | FlushPhase) else None
        mix = ""
        if workload and sc.workloads[workload].file is not None:
            mix = f"{workload}: " + file_mix(plan.workloads.get(workload))
        elif workload:
            w = sc.workloads[workload]
            total = sum(w.mix.values())
            mix = f"{workload}: " + " ".join(f"{op} {v / total:.0%}" for op, v in w.mix.items())
            mix += f" ({w.distribution})"
            if w.bloom_filter_fp_chance is not None:
                mix += f"; bloom_filter_fp_chance {w.bloom_filter_fp_chance:g}"
        row = (str(i + 1), sc.phase_label(i), phase.type, mix, load, what)
        phases.add_row(*map(cell, row))
    metrics = inv.metrics.prometheus_url or "/proc over SSH"
    footer = (
        f"dataset: {sc.dataset.records:,} records x {sc.dataset.fields} fields x "
        f"{sc.dataset.field_size} B; keyspace {sc.target.keyspace}; metrics: {metrics}"
    )
    paths = [cell(line) for line in load_path_lines(sc, inv)]
    notes = [cell(f"default: {note}") for note in plan.notes]
    return Group(hosts, phases, cell(footer), *paths, *notes)
