"""Checks that need both files: hosts, actions and workloads that a scenario names."""

from __future__ import annotations

from loadtower.errors import ConfigError
from loadtower.scenarios.models import (
    CompactionPhase,
    FaultPhase,
    Inventory,
    ScaleOutPhase,
    Scenario,
)
from loadtower.scenarios.toml_lines import LineIndex, Path, format_path

CQL_ENGINES = {"cassandra", "scylla"}


class _Reporter:
    def __init__(self, file: str, source: str) -> None:
        self.file = file
        self.index = LineIndex(source)

    def fail(self, path: Path, problem: str) -> ConfigError:
        return ConfigError(self.file, self.index.line_of(path), format_path(path), problem)


def engines_match(scenario_engine: str, host_engine: str | None) -> bool:
    if host_engine == scenario_engine:
        return True
    return scenario_engine in CQL_ENGINES and host_engine in CQL_ENGINES


def check_references(
    scenario: Scenario,
    scenario_source: str,
    scenario_file: str,
    inventory: Inventory,
    inventory_source: str,
    inventory_file: str,
) -> None:
    """Raise ConfigError for the first reference that does not resolve."""
    sc = _Reporter(scenario_file, scenario_source)
    inv = _Reporter(inventory_file, inventory_source)
    db_hosts = inventory.with_role("db", include_standby=True)
    running_db = {n: h for n, h in db_hosts.items() if not h.standby}
    if not any(engines_match(scenario.engine, h.engine) for h in running_db.values()):
        raise inv.fail(
            ("hosts",),
            f"no running host with role 'db' and engine '{scenario.engine}' "
            f"(the scenario's engine)",
        )
    if not inventory.with_role("agent"):
        raise inv.fail(("hosts",), "no host with role 'agent' to generate load")

    for i, phase in enumerate(scenario.phases):
        workload = getattr(phase, "workload", None)
        if workload is not None and workload not in scenario.workloads:
            known = ", ".join(scenario.workloads) or "none"
            raise sc.fail(
                ("phases", i, "workload"), f"unknown workload '{workload}' (defined: {known})"
            )
        if workload is None and hasattr(phase, "workload") and len(scenario.workloads) != 1:
            if phase.type != "pause":
                raise sc.fail(
                    ("phases", i), "several workloads are defined: name one with 'workload'"
                )
        hosts: list[tuple[Path, str]] = []
        if isinstance(phase, ScaleOutPhase | FaultPhase):
            hosts.append((("phases", i, "host"), phase.host))
        if isinstance(phase, CompactionPhase) and phase.hosts:
            hosts += [(("phases", i, "hosts", j), h) for j, h in enumerate(phase.hosts)]
        for path, name in hosts:
            if name not in inventory.hosts:
                raise sc.fail(path, f"host '{name}' is not in the inventory {inventory_file}")
            if name not in db_hosts:
                raise sc.fail(path, f"host '{name}' does not have role 'db'")
        action: str | None = None
        if isinstance(phase, ScaleOutPhase):
            host = inventory.hosts[phase.host]
            if not host.standby:
                raise sc.fail(
                    ("phases", i, "host"),
                    f"host '{phase.host}' is not a standby host (set standby = true in "
                    f"{inventory_file}) so it cannot be added by scale_out",
                )
            action = "start"
            name = phase.host
        elif isinstance(phase, FaultPhase):
            action, name = phase.action, phase.host
        if action is not None and action not in inventory.hosts[name].actions:
            declared = ", ".join(inventory.hosts[name].actions) or "none"
            raise sc.fail(
                ("phases", i, "action" if isinstance(phase, FaultPhase) else "host"),
                f"action '{action}' is not declared for host '{name}' in "
                f"{inventory_file} (declared: {declared})",
            )
        if isinstance(phase, CompactionPhase):
            for name in phase.hosts or list(running_db):
                if "compact" not in inventory.hosts[name].actions:
                    raise sc.fail(
                        ("phases", i),
                        f"host '{name}' declares no 'compact' action in {inventory_file}",
                    )


def workload_of(scenario: Scenario, index: int) -> str | None:
    phase = scenario.phases[index]
    name = getattr(phase, "workload", None)
    if name is None and len(scenario.workloads) == 1:
        return next(iter(scenario.workloads))
    return name
