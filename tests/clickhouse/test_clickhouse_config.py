"""Scenarios with [targets.*] and inventories with ClickHouse hosts: what loads, what is
refused (one line naming file, line and key), and how the load reaches each target."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.errors import ConfigError, LoadtowerError
from loadtower.protocol.engine_kinds import engine_names
from loadtower.scenarios.plan import load_plan

INVENTORY = """\
[ssh]
user = "root"
key = "/tmp/key"
known_hosts = "/tmp/known_hosts"

[cassandra]
username = "loadtower"
password_env = "LT_TEST_CQL_PW"

[clickhouse]
username = "bench"
password_env = "LT_TEST_CH_PW"

[hosts.db1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"

[hosts.db1.actions]
compact = "nodetool compact"
kill = "pkill -9 -f cassandra"

[hosts.ch1]
address = "10.0.0.7"
port = 18123
roles = ["db"]
engine = "clickhouse"

[hosts.ch1.actions]
start = "sudo systemctl start clickhouse-server"
stop = "sudo systemctl stop clickhouse-server"

[hosts.ch2]
address = "10.0.0.8"
roles = ["db"]
engine = "clickhouse"

[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""

TWO_TARGETS = """\
name = "two"

[target]
keyspace = "lt_two"
table = "recipes"

[targets.cass]
engine = "cassandra"

[targets.ch]
engine = "clickhouse"
order_by = ["id"]
delete_mode = "mutation"
settings = { mutations_sync = 2 }

[workloads.recipes]
preset = "recipes"

[[phases]]
type = "load"

[[phases]]
type = "compaction"

[[phases]]
type = "run"
name = "mix"
duration = "5s"
rate = 10
"""


@pytest.fixture
def write(tmp_path: Path):
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write


def plan_error(write, scenario: str, inventory: str = INVENTORY) -> str:  # noqa: ANN001
    s, i = write("s.toml", scenario), write("inv.toml", inventory)
    with pytest.raises(ConfigError) as info:
        load_plan(s, i)
    return str(info.value).replace(str(s), "s.toml").replace(str(i), "inv.toml")


def test_two_targets_merge_the_shared_target_keys(write) -> None:  # noqa: ANN001
    plan = load_plan(write("s.toml", TWO_TARGETS), write("inv.toml", INVENTORY))
    sc = plan.scenario
    assert sc.engine == "cassandra"  # the first target's
    assert sc.target_names() == ["cass", "ch"]
    ch = sc.for_target("ch")
    assert ch.engine == "clickhouse" and ch.targets == {}
    assert (ch.target.keyspace, ch.target.table) == ("lt_two", "recipes")  # from [target]
    assert ch.target.delete_mode == "mutation" and ch.target.settings == {"mutations_sync": 2}
    assert sc.for_target("cass").target.delete_mode is None


def test_run_targets_picks_and_orders(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS.replace('name = "two"', 'name = "two"\nrun_targets = ["ch"]')
    plan = load_plan(write("s.toml", text), write("inv.toml", INVENTORY))
    assert plan.scenario.target_names() == ["ch"]
    assert plan.scenario.engine == "clickhouse"  # whose password the load master gets


def test_unknown_run_target(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS.replace('name = "two"', 'name = "two"\nrun_targets = ["ch", "mongo"]')
    assert plan_error(write, text) == (
        "s.toml:2: key 'run_targets[1]': unknown target 'mongo' (defined: cass, ch)"
    )


def test_clickhouse_key_on_a_cassandra_target(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS.replace(
        'engine = "cassandra"', 'engine = "cassandra"\nupdate_mode = "mutation"'
    )
    assert plan_error(write, text) == (
        "s.toml:9: key 'targets.cass.update_mode': 'update_mode' is a ClickHouse key; this "
        "target's engine is 'cassandra'"
    )


def test_single_target_clickhouse_keys_need_engine_clickhouse(write) -> None:  # noqa: ANN001
    text = 'name = "x"\n[target]\ndelete_mode = "mutation"\n[[phases]]\ntype = "load"\n'
    assert plan_error(write, text) == (
        "s.toml:3: key 'target.delete_mode': 'delete_mode' is a ClickHouse key; this target's "
        "engine is 'cassandra'"
    )


def test_merge_tree_refuses_upserts_without_mutations(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS.replace('order_by = ["id"]', 'table_engine = "MergeTree"').replace(
        'preset = "recipes"', 'preset = "recipes"\nmix = { read = 50, update = 50 }'
    )
    message = plan_error(write, text)
    assert message.startswith("s.toml:12: key 'targets.ch.table_engine': a MergeTree table")
    assert 'update need update_mode = "mutation"' in message


def test_order_by_must_keep_rows_apart(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS.replace('order_by = ["id"]', 'order_by = ["total_price"]')
    assert plan_error(write, text) == (
        "s.toml:12: key 'targets.ch.order_by': a ReplacingMergeTree keeps one row per ORDER BY "
        "key: include 'id' (the recipes table's unique column) or rows would collapse"
    )
    text = TWO_TARGETS.replace('order_by = ["id"]', 'order_by = ["id", "colour"]')
    assert plan_error(write, text).startswith(
        "s.toml:12: key 'targets.ch.order_by[1]': 'colour' is not a column of the recipes table"
    )


def test_target_hosts_must_run_its_engine(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS.replace('engine = "clickhouse"', 'engine = "clickhouse"\nhosts = ["db1"]')
    assert plan_error(write, text) == (
        "s.toml:12: key 'targets.ch.hosts[0]': host 'db1' runs cassandra, target 'ch' needs "
        "clickhouse"
    )


def test_no_clickhouse_host(write) -> None:  # noqa: ANN001
    inventory = (
        INVENTORY.split("[hosts.ch1]")[0] + "[hosts.agent1]" + INVENTORY.split("[hosts.agent1]")[1]
    )
    assert plan_error(write, TWO_TARGETS, inventory) == (
        "inv.toml:14: key 'hosts': no running host with role 'db' and engine 'clickhouse' "
        "(the engine of target 'ch'); to run the other targets only: "
        "--set 'run_targets=[\"cass\"]'"
    )


def test_per_host_port_is_for_clickhouse(write) -> None:  # noqa: ANN001
    inventory = INVENTORY.replace('engine = "cassandra"', 'engine = "cassandra"\nport = 9043')
    assert plan_error(write, TWO_TARGETS, inventory) == (
        "inv.toml:18: key 'hosts.db1.port': a per-host port is for ClickHouse/MongoDB/Redis "
        "hosts; Cassandra's drivers use one port per cluster: set [cassandra].port"
    )


def test_one_password_source(write) -> None:  # noqa: ANN001
    inventory = INVENTORY.replace(
        'password_env = "LT_TEST_CH_PW"', 'password_env = "LT_TEST_CH_PW"\npassword_file = "pw"'
    )
    assert plan_error(write, TWO_TARGETS, inventory) == (
        "inv.toml:13: key 'clickhouse.password_file': give one of password, password_env, "
        "password_file (got password_env, password_file)"
    )


def test_a_phase_naming_a_host_fits_one_target(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS + '\n[[phases]]\ntype = "fault"\nhost = "db1"\naction = "kill"\n'
    assert plan_error(write, text) == (
        "s.toml:33: key 'phases[3].host': host 'db1' is not a host of target 'ch' (the phases "
        "run once per target; a phase that names a host fits one target only)"
    )


def test_clickhouse_faults_use_declared_actions(write) -> None:  # noqa: ANN001
    base = TWO_TARGETS.replace('name = "two"', 'name = "two"\nrun_targets = ["ch"]').replace(
        'engine = "clickhouse"', 'engine = "clickhouse"\nhosts = ["ch1"]'
    )
    ok = base + '\n[[phases]]\ntype = "fault"\nhost = "ch1"\naction = "stop"\n'
    load_plan(write("s.toml", ok), write("inv.toml", INVENTORY))
    bad = base + '\n[[phases]]\ntype = "fault"\nhost = "ch1"\naction = "kill"\n'
    assert plan_error(write, bad).endswith(
        "action 'kill' is not declared for host 'ch1' in inv.toml (declared: start, stop)"
    )


def test_scale_out_is_for_cql_rings(write) -> None:  # noqa: ANN001
    inventory = INVENTORY.replace('address = "10.0.0.8"', 'address = "10.0.0.8"\nstandby = true')
    text = TWO_TARGETS.replace('name = "two"', 'name = "two"\nrun_targets = ["ch"]') + (
        '\n[[phases]]\ntype = "scale_out"\nhost = "ch2"\nrate = 5\n'
    )
    assert plan_error(write, text, inventory).endswith(
        "scale_out waits for a node to join a Cassandra/ScyllaDB ring; host 'ch2' runs clickhouse"
    )


def test_builtin_recipes_mix_runs_both_engines(write) -> None:  # noqa: ANN001
    plan = load_plan("recipes-mix", write("inv.toml", INVENTORY))
    assert plan.scenario.target_names() == ["cassandra", "clickhouse"]
    ch = plan.scenario.for_target("clickhouse").target
    assert (ch.table_engine, ch.order_by) == ("MergeTree", ["id"])
    cassandra_only = (
        INVENTORY.split("[hosts.ch1]")[0] + "[hosts.agent1]" + INVENTORY.split("[hosts.agent1]")[1]
    )
    inv = write("cass.toml", cassandra_only)
    with pytest.raises(ConfigError, match="engine 'clickhouse' \\(the engine of target"):
        load_plan("recipes-mix", inv)
    only = load_plan("recipes-mix", inv, ['run_targets=["cassandra"]'])
    assert only.scenario.target_names() == ["cassandra"]


def test_connection_per_target(write, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from loadtower.orchestrator.targets import connection
    from loadtower.scenarios.models import as_plain

    monkeypatch.setenv("LT_TEST_CQL_PW", "cql-secret")
    monkeypatch.setenv("LT_TEST_CH_PW", "ch-secret")
    plan = load_plan(write("s.toml", TWO_TARGETS), write("inv.toml", INVENTORY))
    (cass_name, cass), (ch_name, ch) = plan.target_plans()
    assert (cass_name, ch_name) == ("cass", "ch")

    def spec(p) -> dict:  # noqa: ANN001
        return {"engine": p.scenario.engine, "target": as_plain(p.scenario.target)}

    c = connection(plan, spec(cass))
    assert (c["contact_points"], c["port"], c["username"]) == (["127.0.0.1"], 9042, "loadtower")
    assert "password" not in c  # the master got the first engine's password at start
    h = connection(plan, spec(ch))
    assert h["contact_points"] == ["10.0.0.7:18123", "10.0.0.8"]  # per-host port, default
    assert (h["port"], h["username"], h["password"]) == (8123, "bench", "ch-secret")
    assert h["spec"]["connection"] == {"secure": False}
    monkeypatch.delenv("LT_TEST_CH_PW")
    with pytest.raises(LoadtowerError, match=r"\$LT_TEST_CH_PW \(\[clickhouse\].password_env\)"):
        connection(plan, spec(ch))


def expected_engines() -> str:
    """How the models name the registered engines in a refusal: 'a', 'b' or 'c'."""
    names = [f"'{n}'" for n in engine_names()]
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def test_a_bad_target_engine_points_at_the_target(write) -> None:  # noqa: ANN001
    text = TWO_TARGETS.replace('engine = "clickhouse"', 'engine = "aerospike"')
    assert plan_error(write, text) == (
        "s.toml:11: key 'targets.ch.engine': invalid value 'aerospike' "
        f"(expected {expected_engines()})"
    )


def test_watched_db_hosts_are_those_of_the_targets_run(write) -> None:  # noqa: ANN001
    """Node metrics and versions cover the DB hosts the run's targets use, not every DB
    host of the inventory."""
    from loadtower.orchestrator.targets import db_hosts

    both = load_plan(write("s.toml", TWO_TARGETS), write("inv.toml", INVENTORY))
    assert db_hosts(both) == ["db1", "ch1", "ch2"]
    text = TWO_TARGETS.replace('name = "two"', 'name = "two"\nrun_targets = ["cass"]')
    cassandra_only = load_plan(write("s.toml", text), write("inv.toml", INVENTORY))
    assert db_hosts(cassandra_only) == ["db1"]
    text = TWO_TARGETS.replace('[targets.ch]\n', '[targets.ch]\nhosts = ["ch2"]\n')
    named = load_plan(write("s.toml", text), write("inv.toml", INVENTORY))
    assert db_hosts(named) == ["db1", "ch2"]
