"""An agent host's SSH link cut mid-run, through real SSH on the sandbox.

agent2 is reached through a TCP relay in front of the sandbox sshd (tcp_relay.py), so
it has an SSH connection of its own; cutting the relay closes that connection (sshd's
session for it ends, with the reverse forward agent2's worker uses to reach the
Locust master) and refuses new ones for a while.

- A 5 s cut: the orchestrator reconnects, forwards the master's port again, and
  backfills from agent2's spool what the cut link lost: every second of agent2 is
  stored, and agent2 kept its load going through the cut.
  Two kinds of cut: "dark" (nothing moves for 5 s, then the connection dies: what was
  sent into it is lost and comes back from the spool only) and "refused".
- A cut longer than the grace period (6 s here): agent2's worker stops its load and
  exits by itself (no orphaned load); after the reconnect the run records it as lost,
  stores its spooled seconds up to its stop and goes on with agent1.
- A 5 s dark cut of a host whose two workers merge their seconds (`merge_workers`): the
  merged lines the cut lost come back as the workers' own lines from their spools, and
  no op is stored twice.
- A 5 s cut over a phase change: the stop and the next phase's start miss agent2; when
  it answers again the master stops it and gives it the new phase.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.reliability.fault_run import (
    BackgroundRun,
    events,
    inventory_with_agent2,
    per_agent_seconds,
    pids_of,
    steady_scenario,
    total_ops,
    wait_steady_seconds,
)
from tests.reliability.tcp_relay import TcpRelay

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # cuts of 5 s against a 6 s grace
              pytest.mark.timeout(600)]

RATE = 300
HEARTBEAT_S = 1.0  # Locust's HEARTBEAT_INTERVAL: how often the master speaks
DURATION = 25  # the cut comes ~9 s in; 16 s after it to reconnect, backfill and run on


def scenario(path: Path) -> Path:
    return steady_scenario(path, "ssh-loss", RATE, DURATION)


@pytest.fixture
def relay(sandbox: dict) -> Iterator[TcpRelay]:
    relay = TcpRelay("127.0.0.1", int(sandbox["ssh"]["port"]))
    try:
        yield relay
    finally:
        relay.close()


def _start(sandbox: dict, tmp_path: Path, relay: TcpRelay, grace: str | None,
           processes: int = 1) -> BackgroundRun:
    inventory = inventory_with_agent2(
        sandbox, tmp_path / "inventory.toml", ssh_port=relay.port, grace=grace,
        processes=processes,
    )
    return BackgroundRun(scenario(tmp_path / "ssh-loss.toml"), inventory, tmp_path / "runs.duckdb",
                         tmp_path)


def _data(event: dict) -> dict:
    data = event["data"]
    return json.loads(data) if isinstance(data, str) else data


def _backfilled(data: dict) -> int:
    count = data.get("backfilled") or 0
    return count if isinstance(count, int) else sum(count.values())  # the final read: per host


@pytest.mark.parametrize("how", ["dark", "refused"])
def test_a_5_s_cut_leaves_no_gap_in_the_stored_seconds(
    sandbox: dict, tmp_path: Path, relay: TcpRelay, how: str
) -> None:
    run = _start(sandbox, tmp_path, relay, grace=None)
    try:
        steady = wait_steady_seconds(run, "agent2/0")
        cut_at = time.time()
        relay.cut(5.0, how)
        assert run.finish(240) == 0, run.log_tail()
    finally:
        run.stop()

    reader = StoreReader(tmp_path / "runs.duckdb")
    assert reader.run(run.run_id)["status"] == "completed"
    messages = [(e["kind"], e["host"], e["message"]) for e in reader.events(run.run_id)]
    assert ("warning", "agent2", "SSH to agent2: lost (the load agents' SSH link closed)") in messages
    assert any(k == "host" and h == "agent2" and "reconnected" in m for k, h, m in messages)
    assert not events(reader, run.run_id, "agent_lost"), "a cut link is not a lost agent"
    links = events(reader, run.run_id, "agent_link")
    assert links, messages
    back = _data(links[0])
    assert back["forwarded"] is True

    first = int(steady["started"]) + 1
    last = int(steady["started"] + DURATION) - 1
    seconds = per_agent_seconds(reader, run.run_id)
    for agent in ("agent1/0", "agent2/0"):
        missing = [ts for ts in range(first, last + 1) if seconds[agent].get(ts, 0) == 0]
        assert not missing, f"{agent}: seconds missing {missing}"
    ops = {r["ts"] for r in reader.op_seconds(run.run_id, "steady") if r["ops"] > 0}
    assert set(range(first, last + 1)) <= ops
    # agent2 kept its load going while it was cut off (its half of the rate)
    cut = range(int(cut_at) + 1, int(cut_at) + 5)
    assert all(seconds["agent2/0"][ts] >= 0.8 * RATE / 2 for ts in cut), seconds["agent2/0"]
    total = total_ops(reader, run.run_id, first, last) / (last - first + 1)
    backfilled = sum(_backfilled(_data(e)) for e in links)
    print(f"{how}: cut off {back['cut_s']} s; {backfilled} lines backfilled; "
          f"{total:.0f} ops/s (asked {RATE})")
    assert total >= 0.9 * RATE
    if how == "dark":  # what went into the dark link came back from the spool only
        assert backfilled >= 3
    assert not Path(f"/tmp/loadtower-spool/{run.run_id}").exists()


def test_a_cut_of_a_merging_host_is_backfilled_without_counting_an_op_twice(
    sandbox: dict, tmp_path: Path, relay: TcpRelay
) -> None:
    run = _start(sandbox, tmp_path, relay, grace=None, processes=2)
    try:
        steady = wait_steady_seconds(run, "agent2/*")
        relay.cut(5.0, "dark")
        assert run.finish(240) == 0, run.log_tail()
    finally:
        run.stop()

    reader = StoreReader(tmp_path / "runs.duckdb")
    assert reader.run(run.run_id)["status"] == "completed"
    first = int(steady["started"]) + 1
    last = int(steady["started"] + DURATION) - 1
    seconds = per_agent_seconds(reader, run.run_id)
    agent2: dict[int, int] = {}
    for agent in ("agent2/*", "agent2/0", "agent2/1"):  # merged, or a worker's own
        for ts, ops in seconds.get(agent, {}).items():
            agent2[ts] = agent2.get(ts, 0) + ops
    missing = [ts for ts in range(first, last + 1) if agent2.get(ts, 0) == 0]
    assert not missing, f"agent2: seconds missing {missing} ({sorted(seconds)})"
    backfilled = sum(_backfilled(_data(e)) for e in events(reader, run.run_id, "agent_link"))
    per_second: dict[int, int] = {}
    for r in reader.op_seconds(run.run_id, "steady"):  # a row per op type
        per_second[r["ts"]] = per_second.get(r["ts"], 0) + r["ops"]
    busiest = max(per_second[ts] for ts in range(first, last + 1))
    print(f"merging host cut: {backfilled} lines backfilled; the busiest second {busiest} "
          f"ops (asked {RATE}/s); agent rows {sorted(seconds)}")
    assert backfilled >= 1  # what the dark link swallowed came from the spools
    # a part stored twice would put a second at 1.5x the rate (a worker's share twice)
    assert busiest <= 1.1 * RATE, per_second
    total = total_ops(reader, run.run_id, first, last) / (last - first + 1)
    assert total >= 0.9 * RATE


def test_a_cut_longer_than_the_grace_stops_the_agent_by_itself(
    sandbox: dict, tmp_path: Path, relay: TcpRelay
) -> None:
    grace = 6.0
    run = _start(sandbox, tmp_path, relay, grace=f"{grace:g}s")
    try:
        steady = wait_steady_seconds(run, "agent2/0")
        pattern = f"--host-name agent2 --index 0 .*{run.run_id}"
        deadline = time.monotonic() + 10  # pgrep once missed the running worker (CI, once)
        while len(pids_of(pattern)) != 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = subprocess.run(["pgrep", "-af", "loadtower agent worker"], capture_output=True,
                                 text=True, timeout=10).stdout
        assert len(pids_of(pattern)) == 1, f"no one worker process matches {pattern!r}: {workers}"
        cut_at = time.time()
        relay.listener.close()  # the cut, held open while we watch agent2's worker
        relay._drop_all()
        stopped_at = None
        deadline = time.monotonic() + grace + 10
        while time.monotonic() < deadline:
            if not pids_of(pattern):
                stopped_at = time.time()
                break
            time.sleep(0.2)
        relay.listener = relay._listen()  # the link comes back
        assert stopped_at is not None, "agent2's worker outlived the grace period"
        assert run.finish(240) == 0, run.log_tail()
    finally:
        run.stop()

    alone = stopped_at - cut_at
    print(f"agent2's worker ended {alone:.1f} s after the cut (grace {grace:g} s)")
    # the worker counts the grace from the master's last heartbeat (one a second), which
    # came up to a second before the cut (later still on a loaded machine, hence the
    # half second of slack)
    assert grace - HEARTBEAT_S - 0.5 <= alone <= grace + 4
    reader = StoreReader(tmp_path / "runs.duckdb")
    assert reader.run(run.run_id)["status"] == "completed"
    lost = events(reader, run.run_id, "agent_lost")
    assert len(lost) == 1 and "stopped its load by itself" in lost[0]["message"], lost
    orphaned = events(reader, run.run_id, "agent_orphaned")  # its own event, from its spool
    assert orphaned and orphaned[0]["ts"] - cut_at <= grace + 2
    first = int(steady["started"]) + 1
    last = int(steady["started"] + DURATION) - 1
    seconds = per_agent_seconds(reader, run.run_id)
    agent2 = seconds["agent2/0"]
    # agent2's seconds while cut off, up to its own stop, came back from its spool
    missing = [ts for ts in range(first, int(cut_at) + int(grace) - 1) if agent2.get(ts, 0) == 0]
    assert not missing, f"agent2 seconds missing: {missing}"
    assert max(agent2) <= int(stopped_at) + 1
    agent1 = seconds["agent1/0"]
    assert all(agent1.get(ts, 0) > 0 for ts in range(first, last + 1))


def test_a_cut_over_a_phase_change_catches_the_agent_up(
    sandbox: dict, tmp_path: Path, relay: TcpRelay
) -> None:
    """The stop of the first phase and the start of the second are sent while agent2 is
    cut off: when it answers again the master stops it and gives it the new phase."""
    inventory = inventory_with_agent2(sandbox, tmp_path / "inventory.toml", ssh_port=relay.port)
    two = tmp_path / "two-phases.toml"
    two.write_text(
        scenario(tmp_path / "base.toml").read_text().replace('name = "steady"', 'name = "first"')
        + f'[[phases]]\ntype = "run"\nname = "second"\nrate = {RATE}\nduration = "20s"\n'
    )
    run = BackgroundRun(two, inventory, tmp_path / "runs.duckdb", tmp_path)
    try:
        first = run.wait_for("the first phase", run.phase_started("first"), 240)
        time.sleep(max(0.0, first["started"] + DURATION - 2 - time.time()))
        cut_at = time.time()
        relay.cut(5.0, "dark")
        assert run.finish(300) == 0, run.log_tail()
    finally:
        run.stop()

    reader = StoreReader(tmp_path / "runs.duckdb")
    assert reader.run(run.run_id)["status"] == "completed"
    phases = {p["name"]: p for p in reader.phases(run.run_id)}
    second = phases["second"]
    print(f"cut {cut_at - first['started']:.1f} s into 'first'; 'first' ended after "
          f"{phases['first']['ended'] - first['started']:.1f} s, 'second' started "
          f"{second['started'] - cut_at:.1f} s after the cut")
    assert second["started"] < cut_at + 30  # the stop did not hang on the cut-off worker
    _cols, rows = reader.sql(
        "SELECT agent, phase, ts, sum(ops) FROM op_intervals "
        f"WHERE run_id = '{run.run_id}' GROUP BY ALL"
    )
    agent2_second = sorted(ts for agent, phase, ts, ops in rows
                           if agent == "agent2/0" and phase == "second" and ops)
    assert agent2_second, "agent2 never ran the second phase"
    # from a few seconds after the phase started it ran, every second, to its end
    start, end = int(second["started"]) + 5, int(second["started"]) + 20 - 1
    assert [ts for ts in range(start, end + 1) if ts not in agent2_second] == []
    # nothing of agent2 was lost: every second from the first phase to the end is stored
    agent2 = {ts for agent, _p, ts, ops in rows if agent == "agent2/0" and ops}
    gap = [ts for ts in range(int(first["started"]) + 1, end + 1)
           if ts not in agent2 and not (int(phases["first"]["ended"]) <= ts <= start)]
    assert gap == []
