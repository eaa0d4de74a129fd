"""The `flush` phase (study 3: memtables, expired rows with them, reach SSTables before
the last reads): every Cassandra host of the target runs its declared `flush` action,
one event per host, a failure kept in one line and the phase going on; a scenario whose
hosts declare no `flush` is refused by `check` in one line naming the file and key.

Actions are real local shell commands (phase_fixtures.ShellActions)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadtower.errors import ConfigError
from loadtower.orchestrator.context import TIMED_OUT
from loadtower.orchestrator.phases import HANDLERS, flush
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreReader
from tests.orchestrator.phase_fixtures import phase_context

SCENARIO = """
name = "flush"
[[phases]]
type = "flush"
{extra}
"""


def _inventory(db1: str, db2: str) -> str:
    return f"""
[hosts.db1]
address = "127.0.0.250"
roles = ["db"]
engine = "cassandra"
[hosts.db1.actions]
{db1}
[hosts.db2]
address = "127.0.0.251"
roles = ["db"]
engine = "cassandra"
[hosts.db2.actions]
{db2}
[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""


def test_flush_runs_on_every_db_host_and_a_failure_is_one_line(tmp_path: Path) -> None:
    inventory = _inventory(
        "flush = '''echo flushed'''",
        "flush = '''echo 'nodetool: Failed to connect to 127.0.0.251:7199' >&2; exit 2'''",
    )
    assert HANDLERS["flush"] is flush.run_phase
    with phase_context(tmp_path, SCENARIO.format(extra=""), inventory) as (ctx, _l, actions):
        result = asyncio.run(flush.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        run_id = ctx.run_id
    assert [(h, a) for h, a, _t in actions.calls] == [("db1", "flush"), ("db2", "flush")]
    assert result["hosts"]["db1"]["exit_status"] == 0
    assert result["hosts"]["db2"] == {
        "flush_s": result["hosts"]["db2"]["flush_s"], "exit_status": 2,
        "error": "nodetool: Failed to connect to 127.0.0.251:7199"}
    assert result["failed_hosts"] == ["db2"]
    said = [e["message"] for e in StoreReader(tmp_path / "store.duckdb").events(run_id)
            if e["kind"] == "flush"]
    assert said[0].startswith("flush on db1 took ")
    assert said[1] == ("flush on db2 failed (exit status 2): "
                       "nodetool: Failed to connect to 127.0.0.251:7199")


def test_flush_timeout_and_named_hosts(tmp_path: Path) -> None:
    inventory = _inventory("flush = '''sleep 30'''", "flush = '''echo flushed'''")
    scenario = SCENARIO.format(extra='hosts = ["db1"]\ntimeout = "1s"')
    with phase_context(tmp_path, scenario, inventory) as (ctx, _l, actions):
        result = asyncio.run(flush.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
    assert [(h, a, t) for h, a, t in actions.calls] == [("db1", "flush", 1.0)]
    assert result["hosts"]["db1"]["exit_status"] == TIMED_OUT
    assert "did not finish within 1 s" in result["hosts"]["db1"]["error"]
    assert result["failed_hosts"] == ["db1"]


def test_a_host_without_a_flush_action_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "sc.toml").write_text(SCENARIO.format(extra=""))
    (tmp_path / "inv.toml").write_text(
        _inventory("flush = '''echo flushed'''", "compact = '''echo compacted'''"))
    with pytest.raises(ConfigError) as info:
        load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'sc.toml'}:3: key 'phases[0]': ")
    assert "host 'db2' declares no 'flush' action in" in message


def test_the_headless_notes_say_what_each_flush_did() -> None:
    from loadtower.orchestrator.headless_display import phase_notes

    result = {"hosts": {"db1": {"flush_s": 1.2, "exit_status": 0},
                        "db2": {"flush_s": 0.3, "exit_status": 2, "error": "nodetool: refused"}},
              "duration_s": 1.5, "failed_hosts": ["db2"]}
    assert phase_notes({"flush": result}) == [
        "flush: flush on db1 took 1.2 s",
        "flush: flush on db2 took 0.3 s and failed (exit status 2): nodetool: refused",
    ]


def test_check_shows_the_flush_without_a_workload_and_each_tables_fp_chance(
    tmp_path: Path,
) -> None:
    import io

    from rich.console import Console

    from loadtower.scenarios.plan import render_plan

    (tmp_path / "sc.toml").write_text("""
name = "p"
[workloads.main]
preset = "ttl"
bloom_filter_fp_chance = 0.1
[[phases]]
type = "flush"
[[phases]]
type = "run"
rate = 10
duration = "1s"
""")
    (tmp_path / "inv.toml").write_text(_inventory("flush = 'echo'", "flush = 'echo'"))
    out = io.StringIO()
    Console(file=out, width=250).print(render_plan(load_plan(tmp_path / "sc.toml",
                                                             tmp_path / "inv.toml")))
    rows = {line.split("│")[2].strip(): line.split("│")[4].strip()
            for line in out.getvalue().splitlines() if line.startswith("│ ") and
            line.split("│")[1].strip().isdigit()}
    assert rows == {"1-flush": "", "2-run": "main: read 100% (uniform); bloom_filter_fp_chance 0.1"}
