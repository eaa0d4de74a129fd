"""A ratchet on what the core knows of the engines (issue 30): `scripts/engine_coupling.py`
counts, per room, branches on an engine's name (or its family's), engine-keyed tables and
mentions of an engine's name anywhere in the text. A new one makes this fail: ask a
capability of protocol/engine_kinds.py, or put the code in the engine's package
(engines/NAME/), instead; when a count went down, lower its ceiling here so that it stays
down."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
# the counts on 2026-11-28 once the engines were packages found by entry point (their
# kinds name the agents' backend and the orchestrator's hooks: no _REGISTRY, no SEAMS);
# then the sandbox's engine hosts are the packages' sandbox parts, run alike
# (sandbox/engine_services.py); then workload files' slots and rendering are the
# packages' (scenarios/workloads/file_slot.py, rendering.py) and so are the per-engine
# target checks (the check_target hook); then the orchestrator's CQL client is the
# cassandra package's, and the coordinator counts and a joined node's streams are hooks
# (coordinated, bootstrap_streams): scenarios' names 218 -> 144; then the agents reach
# the Rust core's feed through the kinds' native_feed: agents' 32 -> 26; then the target
# keys only one engine takes are its package's (target_keys), and so are the portable
# column types' names in CQL and ClickHouse: scenarios' 144 -> 132; then the CQL kinds'
# target keys (consistency, local_dc, replication) are the cassandra package's too:
# scenarios' 132 -> 131, protocol's 32 -> 30; then the sandbox's Cassandra node, its
# jars and its login are the cassandra package's sandbox part, reached through the kinds'
# sandbox_ring (sandbox/ring_engine.py): sandbox's names 264 -> 167, tables 3 -> 2; then
# the orchestrator is a room of its own (orchestrator/, formerly a folder of scenarios/,
# with the run, cleanup and agent run/master commands): scenarios' 131 names and 29 inner
# imports split into scenarios' 93 and 8 and the orchestrator's 38 and 17 (the four
# deferred imports that went back into the orchestrator are gone); then, in one stop,
# every core room's last names: the store, the tui and loadtower/ (the report's
# tombstones title from the stored rows' engine, the old-store fallback and a scenario's
# default from the kinds' default_engine(), the demo's option from the ring engine, its
# stand-ins' warnings from the engine services), the agents and the protocol (the
# ClickHouse and MongoDB target keys are their agent parts', the native feed names its
# path event), scenarios and the orchestrator (the kinds' drivers and path events,
# capabilities, the CQL name rule in the cassandra package), and the sandbox (the cluster
# sandbox's ring specifics are the ring engine's, its column-store host an engine service
# with a cluster_host, `sandbox --help` in the engines' own words): names 34, 5, 10, 26,
# 29, 93, 38, 167 -> 0, the sandbox's branches and tables 2 and 2 -> 0. Since then the
# core names no engine: NONE below (a new name, branch or table fails this test).
# 50 branches and 12
# tables before the kinds, 29 and 7 before the packages. The engine packages themselves
# are not bounded: an engine names itself there. (branches, tables, names, and the imports
# of our own modules made inside a function: each left is a heavy library deferred on
# purpose, tests/test_import_hygiene.py, an optional room or a cycle; 200 of them before
# they were moved to the top, 73 after)
CEILINGS = {
    "loadtower": (0, 0, 0, 2), "agents": (0, 0, 0, 1), "protocol": (0, 0, 0, 0),
    "sandbox": (0, 0, 0, 3), "scenarios": (0, 0, 0, 8), "orchestrator": (0, 0, 0, 13),
    "fleet": (0, 0, 0, 4),
    "store": (0, 0, 0, 20), "tui": (0, 0, 0, 11), "engines": (1, 0, 10**6, 4),
}  # fmt: skip
KEYS = ("branches", "tables", "names", "inner_imports")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("engine_coupling",
                                                  ROOT / "scripts" / "engine_coupling.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_new_branch_or_table_on_engine_names() -> None:
    script = _script()
    where: list[str] = []
    counts = script.count(where)
    over = {
        room: tuple(c.get(k, 0) for k in KEYS)
        for room, c in counts.items()
        if room in CEILINGS and any(c.get(k, 0) > top for k, top in zip(KEYS, CEILINGS[room],
                                                                        strict=True))
    }
    assert not over, f"over the ceilings {CEILINGS}: {over}; " + "; ".join(
        w for w in where if w.split("/")[0] in over)


def test_a_new_mention_of_an_engine_is_counted() -> None:
    """The names ratchet can fail: a mention in code, a comment or a docstring counts."""
    script = _script()
    text = '"""Runs on Redis."""\nport = 6379  # redis\nname = "MongoDB"\ncql_rows = 1\n'
    assert len(script.MENTION.findall(text)) == 4


def test_the_count_sees_a_new_branch(tmp_path: Path) -> None:
    """The ratchet can fail: a comparison with an engine's or a family's name is counted."""
    script = _script()
    for text in ('if engine == "redis":\n    pass\n', 'ok = kind.family != "cql"\n',
                 'PORTS = {"mongodb": 1}\n'):  # fmt: skip
        visitor = script.Counts()
        visitor.visit(script.ast.parse(text))
        assert [k for _line, k in visitor.where] in (["branch"], ["table"]), text


def test_the_core_names_no_engine() -> None:
    """Issue 30: outside the engine packages (engines/) no room names an engine, branches
    on one or keeps a table keyed by one; each mention is listed when one comes back."""
    script = _script()
    where: list[str] = []
    counts = script.count(where)
    core = [room for room in counts if room not in ("engines", "all")]
    assert set(core) >= {"agents", "protocol", "sandbox", "scenarios", "orchestrator", "fleet",
                         "store", "tui", "loadtower"}
    found = {room: {k: counts[room].get(k, 0) for k in ("names", "branches", "tables")}
             for room in core}
    named = {room: c for room, c in found.items() if any(c.values())}
    assert not named, f"{named}: " + "; ".join(
        w for w in where if w.split("/")[0] in named and "inner_import" not in w)
