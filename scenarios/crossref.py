"""Checks that need both files: hosts, actions and workloads that a scenario names.

A scenario with ``[targets.NAME]`` is checked once per target (its engine, its hosts),
and errors on a target's keys point at ``targets.NAME.KEY``.
"""

from __future__ import annotations

from pydantic import BaseModel

from loadtower.errors import ConfigError
from loadtower.protocol.engine_kinds import KINDS, engine_names, kind, titles, with_capability
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.models import (
    CompactionPhase,
    FaultPhase,
    FlushPhase,
    Inventory,
    ScaleOutPhase,
    Scenario,
)
from loadtower.scenarios.toml_lines import LineIndex, Path, format_path
from loadtower.scenarios.workloads.builtin_files import schemas_on


class _Reporter:
    def __init__(self, file: str, source: str) -> None:
        self.file = file
        self.index = LineIndex(source)

    def fail(self, path: Path, problem: str) -> ConfigError:
        return ConfigError(self.file, self.index.line_of(path), format_path(path), problem)


def engines_match(scenario_engine: str, host_engine: str | None) -> bool:
    """A host serves a scenario's engine when it runs that engine or one of its family
    (two engines of one family share a driver and a protocol, e.g. a flavour of one)."""
    if host_engine == scenario_engine:
        return True
    if host_engine is None or host_engine not in KINDS or scenario_engine not in KINDS:
        return False
    return kind(scenario_engine).family == kind(host_engine).family


def target_hosts(
    scenario: Scenario, inventory: Inventory, include_standby: bool = False
) -> list[str]:
    """The DB hosts of a single-target scenario (``for_target``): its ``hosts``, else every
    DB host whose engine matches; standby hosts only when asked."""
    named = getattr(scenario.target, "hosts", None)
    db = inventory.with_role("db", include_standby=include_standby)
    if named:
        return [n for n in named if n in db]
    return [n for n, h in db.items() if engines_match(scenario.engine, h.engine)]


def _target_path(scenario: Scenario, name: str | None) -> Path:
    return ("targets", name) if name else ("target",)


def used_builtin_workloads(scenario: Scenario) -> list[str]:
    """The built-in-schema workloads the phases use (a workload file's tables and ops
    are checked by scenarios/workloads/)."""
    names = {workload_of(scenario, i) for i in range(len(scenario.phases))}
    return [n for n in scenario.workloads if n in names and scenario.workloads[n].file is None]


def check_targets(scenario: Scenario, source: str, file: str) -> None:
    """Checks of the scenario alone: run_targets, and keys that only one engine knows."""
    sc = _Reporter(file, source)
    if scenario.run_targets is not None:
        if not scenario.targets:
            raise sc.fail(("run_targets",), "run_targets needs [targets.NAME] tables")
        if not scenario.run_targets:
            raise sc.fail(("run_targets",), "name at least one target")
        for j, wanted in enumerate(scenario.run_targets):
            if wanted not in scenario.targets:
                known = ", ".join(scenario.targets)
                raise sc.fail(("run_targets", j), f"unknown target '{wanted}' (defined: {known})")
    for name in scenario.targets or [None]:
        single = scenario.for_target(name) if name else scenario
        target, engine, where = single.target, single.engine, _target_path(scenario, name)
        foreign = foreign_key(target, engine)
        if foreign is not None:
            raise sc.fail((*where, foreign[0]), foreign[1])
        _check_schemas(scenario, engine, sc)
        check = hook(engine, "check_target")
        found = check(scenario, single, where) if check is not None else None
        if found is not None:
            raise sc.fail(*found)


def foreign_key(target: BaseModel, engine: str) -> tuple[str, str] | None:
    """The first key the target gives that only other engines take (a kind's
    ``only_keys``; one model may be two kinds'), and the line saying whose it is. Given:
    set in the file (or in a shared ``[target]``), whatever the value, a default too."""
    own = kind(engine).only_keys
    for owner in KINDS.values():
        for key in owner.only_keys:
            if key not in own and key in target.model_fields_set:
                owners = titles([k.name for k in KINDS.values() if key in k.only_keys])
                return key, f"'{key}' is a {owners} key; this target's engine is '{engine}'"
    return None


def _check_schemas(scenario: Scenario, engine: str, sc: _Reporter) -> None:
    """A built-in workload runs on an engine whose slot its schema's shipped file has
    statements in (a workload file of the user's is checked when it renders)."""
    able = schemas_on(kind(engine).dialect)
    for w in used_builtin_workloads(scenario):
        schema = scenario.workloads[w].schema_name
        if schema not in able:
            raise sc.fail(
                ("workloads", w, "schema"),
                f"the {engine} engine has no '{schema}' schema (only {', '.join(able)})",
            )


def _check_inventory(inventory: Inventory, inv: _Reporter) -> None:
    for engine in engine_names():
        creds = inventory.credentials(engine)
        given = [k for k in ("password", "password_env", "password_file") if getattr(creds, k)]
        if len(given) > 1:
            raise inv.fail(
                (engine, given[1]),
                f"give one of password, password_env, password_file (got {', '.join(given)})",
            )
    for name, host in inventory.hosts.items():
        if host.port is not None and host.engine in with_capability(per_host_port=False):
            raise inv.fail(
                ("hosts", name, "port"),
                f"a per-host port is for {titles(with_capability(per_host_port=True))} "
                f"hosts; {kind(host.engine).title}'s drivers use one port per cluster: "
                f"set [{host.engine}].port",
            )
        if host.port is not None and "db" not in host.roles:
            raise inv.fail(("hosts", name, "port"), "'port' is the port of a host with role 'db'")


def check_references(
    scenario: Scenario,
    scenario_source: str,
    scenario_file: str,
    inventory: Inventory,
    inventory_source: str,
    inventory_file: str,
) -> None:
    """Raise ConfigError for the first reference that does not resolve."""
    check_targets(scenario, scenario_source, scenario_file)
    sc = _Reporter(scenario_file, scenario_source)
    inv = _Reporter(inventory_file, inventory_source)
    _check_inventory(inventory, inv)
    names: list[str | None] = list(scenario.target_names()) or [None]
    for name in names:
        single = scenario.for_target(name) if name else scenario
        _check_target(single, name, names, sc, inv, inventory, inventory_file)
    if not inventory.with_role("agent"):
        raise inv.fail(("hosts",), "no host with role 'agent' to generate load")
    _check_phases(scenario, names, sc, inventory, inventory_file)


def _check_target(
    single: Scenario,
    name: str | None,
    others: list[str | None],
    sc: _Reporter,
    inv: _Reporter,
    inventory: Inventory,
    inventory_file: str,
) -> None:
    engine = single.engine
    label = f"target '{name}'" if name else "the scenario's engine"
    named = getattr(single.target, "hosts", None)
    if named:
        db_all = inventory.with_role("db", include_standby=True)
        for j, host in enumerate(named):
            path = ("targets", name or "", "hosts", j)
            if host not in inventory.hosts:
                raise sc.fail(path, f"host '{host}' is not in the inventory {inventory_file}")
            if host not in db_all:
                raise sc.fail(path, f"host '{host}' does not have role 'db'")
            if not engines_match(engine, db_all[host].engine):
                raise sc.fail(
                    path,
                    f"host '{host}' runs {db_all[host].engine}, {label} needs {engine}",
                )
    if not target_hosts(single, inventory):
        hint = ""
        if name and len(others) > 1:
            rest = ", ".join(f'"{n}"' for n in others if n != name)
            hint = f"; to run the other targets only: --set 'run_targets=[{rest}]'"
        raise inv.fail(
            ("hosts",),
            f"no running host with role 'db' and engine '{engine}' "
            f"({'the engine of ' + label if name else label}){hint}",
        )


def _check_phases(
    scenario: Scenario,
    names: list[str | None],
    sc: _Reporter,
    inventory: Inventory,
    inventory_file: str,
) -> None:
    db_hosts = inventory.with_role("db", include_standby=True)
    singles = [(n, scenario.for_target(n) if n else scenario) for n in names]
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
        if isinstance(phase, CompactionPhase | FlushPhase) and phase.hosts:
            hosts += [(("phases", i, "hosts", j), h) for j, h in enumerate(phase.hosts)]
        for path, host in hosts:
            if host not in inventory.hosts:
                raise sc.fail(path, f"host '{host}' is not in the inventory {inventory_file}")
            if host not in db_hosts:
                raise sc.fail(path, f"host '{host}' does not have role 'db'")
            for tname, single in singles:
                if tname and host not in target_hosts(single, inventory, include_standby=True):
                    raise sc.fail(
                        path,
                        f"host '{host}' is not a host of target '{tname}' (the phases run "
                        "once per target; a phase that names a host fits one target only)",
                    )
        action: str | None = None
        if isinstance(phase, ScaleOutPhase):
            joining = inventory.hosts[phase.host]
            ring = with_capability(ring=True)
            if joining.engine not in ring:
                raise sc.fail(
                    ("phases", i, "host"),
                    f"scale_out waits for a node to join a {titles(ring)} ring; host "
                    f"'{phase.host}' runs {joining.engine}",
                )
            if not joining.standby:
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
        if isinstance(phase, FlushPhase):
            for _tname, single in singles:
                for host in phase.hosts or target_hosts(single, inventory):
                    entry = inventory.hosts[host]
                    flushing = with_capability(flush_action=True)
                    if entry.engine in flushing and "flush" not in entry.actions:
                        raise sc.fail(
                            ("phases", i),
                            f"host '{host}' declares no 'flush' action in {inventory_file} "
                            f"(a flush phase runs it on every {titles(flushing)} host)",
                        )
        if isinstance(phase, CompactionPhase):
            for _tname, single in singles:
                for host in phase.hosts or target_hosts(single, inventory):
                    entry = inventory.hosts[host]
                    if entry.engine in with_capability(compaction="none"):
                        raise sc.fail(
                            ("phases", i),
                            f"a compaction phase is not supported for {entry.engine} (host "
                            f"'{host}'{f' of target {_tname}' if _tname else ''}): "
                            f"{KINDS[str(entry.engine)].title} has no "
                            "major compaction to trigger and wait for",
                        )
                    # a `statement` compaction: loadtower runs the engine's own statement
                    compacting = with_capability(compaction="action")
                    if entry.engine in compacting and "compact" not in entry.actions:
                        raise sc.fail(
                            ("phases", i),
                            f"host '{host}' declares no 'compact' action in {inventory_file}",
                        )


def workload_of(scenario: Scenario, index: int) -> str | None:
    phase = scenario.phases[index]
    name = getattr(phase, "workload", None)
    if name is None and len(scenario.workloads) == 1:
        return next(iter(scenario.workloads))
    return name
