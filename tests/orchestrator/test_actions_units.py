"""Node actions as phases run them: output into the store's logs, failures kept, timeouts
(compaction's `timeout`, scale-out's status polls bounded by what is left of the phase).

Actions are real local shell commands (phase_fixtures.ShellActions); the clock is the
phases' own (their sleeps move it), so no figure here depends on this machine's speed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadtower.orchestrator.context import TIMED_OUT
from loadtower.orchestrator.phases import compaction, scale_out
from loadtower.store import StoreReader
from tests.orchestrator.phase_fixtures import Second, phase_context

SCENARIO = """
name = "actions"
[[phases]]
type = "run"
rate = 10
duration = "5s"
"""


def _inventory(db1: dict[str, str], db2: dict[str, str] | None = None) -> str:
    def actions(name: str, acts: dict[str, str]) -> str:
        lines = "\n".join(f"{k} = '''{v}'''" for k, v in acts.items())
        return f"[hosts.{name}.actions]\n{lines}\n"

    text = """
[hosts.db1]
address = "127.0.0.250"
roles = ["db"]
engine = "cassandra"
""" + actions("db1", db1)
    if db2 is not None:
        text += """
[hosts.db2]
address = "127.0.0.251"
roles = ["db"]
engine = "cassandra"
standby = true
""" + actions("db2", db2)
    return text + '\n[hosts.agent1]\naddress = "127.0.0.1"\nroles = ["agent"]\n'


def _logs(store: Path) -> list[tuple[str, str, str]]:
    _cols, rows = StoreReader(store).sql("SELECT host, stream, text FROM logs ORDER BY rowid")
    return [tuple(r) for r in rows]  # type: ignore[misc]


def test_action_output_goes_to_the_logs_and_a_failure_keeps_its_message(tmp_path: Path) -> None:
    inventory = _inventory(
        {
            "compact": "echo 'compacting lt.usertable'; echo 'WARN  a slow sstable' >&2",
            "stop": "echo 'stopping'; echo 'nodetool: Failed to connect to 127.0.0.250:7199' >&2;"
            " exit 3",
        }
    )
    with phase_context(tmp_path, SCENARIO, inventory) as (ctx, _load, _actions):
        status, out, _err, _took = asyncio.run(ctx.action("db1", "compact"))
        assert (status, out) == (0, "compacting lt.usertable\n")
        failed = asyncio.run(ctx.action("db1", "stop"))
        assert failed[0] == 3
        run_id = ctx.run_id
    assert _logs(tmp_path / "store.duckdb") == [
        ("db1", "action:compact", "compacting lt.usertable"),
        ("db1", "action:compact:stderr", "WARN  a slow sstable"),
        ("db1", "action:stop", "stopping"),
        ("db1", "action:stop:stderr", "nodetool: Failed to connect to 127.0.0.250:7199"),
    ]
    events = [e for e in StoreReader(tmp_path / "store.duckdb").events(run_id)
              if e["kind"] == "action"]
    assert [e["message"].split(":")[0] for e in events] == ["compact on db1"] * 2 + [
        "stop on db1"
    ] * 2
    last = events[-1]
    assert "failed with exit status 3 (nodetool: Failed to connect to 127.0.0.250:7199)" in (
        last["message"]
    )
    assert last["data"]["error"] == "nodetool: Failed to connect to 127.0.0.250:7199"


def test_compaction_timeout_bounds_the_compact_action_and_the_phase_goes_on(
    tmp_path: Path,
) -> None:
    scenario = """
name = "compact"
[[phases]]
type = "compaction"
hosts = ["db1", "db2"]
timeout = "1s"
"""
    inventory = _inventory(
        {"flush": "echo flushed", "compact": "sleep 30"}, {"compact": "echo compacted"}
    ).replace("standby = true", "standby = false")
    with phase_context(tmp_path, scenario, inventory) as (ctx, _load, actions):
        result = asyncio.run(compaction.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        run_id = ctx.run_id
    assert [(h, a, t) for h, a, t in actions.calls] == [
        ("db1", "flush", 1.0),
        ("db1", "compact", 1.0),
        ("db2", "compact", 1.0),
    ]
    db1, db2 = result["hosts"]["db1"], result["hosts"]["db2"]
    assert db1["flush_exit_status"] == 0
    assert db1["exit_status"] == TIMED_OUT and "did not finish within 1 s" in db1["error"]
    assert db2["exit_status"] == 0 and "error" not in db2
    events = StoreReader(tmp_path / "store.duckdb").events(run_id)
    said = [e["message"] for e in events if e["kind"] == "compaction"]
    assert "major compaction on db1" in said[0] and "failed: host db1: `sleep 30`" in said[0]


def _join_script(tmp_path: Path, joined_at_poll: int | None) -> str:
    """A `status` action printing the ring as nodetool does: db2 joining (UJ) until the
    given poll, then normal (UN); not in the ring at all when None."""
    script = tmp_path / "status.sh"
    new_node = 'echo "$s  127.0.0.251  90 KiB  16  0.0%  bbbb  rack1"' if joined_at_poll else ""
    script.write_text(
        f"""n=$(cat {tmp_path}/polls 2>/dev/null || echo 0); n=$((n+1)); echo $n > {tmp_path}/polls
s=UJ; [ $n -ge {joined_at_poll or 0} ] && s=UN
echo 'Datacenter: datacenter1'
echo "UN  127.0.0.250  1.2 MiB  16  100.0%  aaaa  rack1"
{new_node}
"""
    )
    return f"sh {script}"


def _errors_while_joining(level: float, offset: int) -> Second:
    return 100, 2000, (2 if 5 <= offset < 10 else 0)  # 5 s of steady load, then the join


@pytest.mark.parametrize(("timeout", "poll_timeouts"), [("100s", [30, 30, 30]),
                                                       ("10s", [10, 9, 8])])
def test_scale_out_polls_within_what_is_left_of_the_phase(
    tmp_path: Path, timeout: str, poll_timeouts: list[float]
) -> None:
    scenario = f"""
name = "grow"
[[phases]]
type = "scale_out"
host = "db2"
rate = 100
timeout = "{timeout}"
"""
    inventory = _inventory({"status": _join_script(tmp_path, 3)},
                           {"start": "echo 'node 2: up'"})
    with phase_context(tmp_path, scenario, inventory, _errors_while_joining) as (
        ctx, load, actions,
    ):
        result = asyncio.run(scale_out.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        assert ctx.db_hosts_up == ["db1", "db2"]
        run_id = ctx.run_id
    polls = [t for h, a, t in actions.calls if a == "status"]
    assert polls == poll_timeouts
    assert ("db2", "start", float(timeout.rstrip("s"))) in actions.calls
    assert result["joined"] is True and result["status_polls"] == 3
    assert result["join_duration_s"] == 2.0 and result["joining_after_s"] == 0.0
    # no node to ask for its streams here (nothing listens on 127.0.0.251): the polls say
    assert result["streaming_duration_s"] == 2.0
    assert result["streaming_source"].startswith("status polls")
    assert result["errors_before"] == 0 and result["errors_during"] == 10
    assert result["errors_by_class_during"] == {"WriteTimeout": 10}
    assert load.starts[0]["rate"] == 100
    logs = _logs(tmp_path / "store.duckdb")
    assert ("db2", "action:start", "node 2: up") in logs
    messages = [e["message"] for e in StoreReader(tmp_path / "store.duckdb").events(run_id)]
    assert "db2 is joining (UJ) after 0.0 s" in messages
    assert any(m.startswith("db2 (127.0.0.251) is UN: joined in 2.0 s, streaming took 2.0 s")
               for m in messages)


def test_scale_out_whose_start_fails_says_why(tmp_path: Path) -> None:
    scenario = """
name = "grow"
[[phases]]
type = "scale_out"
host = "db2"
timeout = "60s"
"""
    inventory = _inventory(
        {"status": _join_script(tmp_path, None)},
        {"start": "echo 'Address 127.0.0.251:7000 already in use' >&2; exit 1"},
    )
    with phase_context(tmp_path, scenario, inventory) as (ctx, _load, _actions):
        result = asyncio.run(scale_out.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        assert ctx.db_hosts_up == ["db1"]
        run_id = ctx.run_id
    assert result["joined"] is False and result["start_exit_status"] == 1
    messages = [e["message"] for e in StoreReader(tmp_path / "store.duckdb").events(run_id)
                if e["kind"] == "scale_out"]
    assert messages == ["starting db2 failed: Address 127.0.0.251:7000 already in use"]
