"""MongoDB pieces that need no server: error classes, contact points, the scenario keys
and checks that are MongoDB's, the serverStatus figures, the engine seams."""

from __future__ import annotations

import pytest
from pymongo import errors as pe

from loadtower.agents.backends import backend_for
from loadtower.engines.mongodb.agent.errors import (
    MongoAuthFailed,
    MongoDuplicateKey,
    MongoNetwork,
    MongoNotPrimary,
    MongoTimeout,
    stable,
)
from loadtower.engines.mongodb.agent.session import split_host
from loadtower.engines.mongodb.orchestrator.node import stats_of
from loadtower.errors import ConfigError, LoadtowerError
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.models import Dataset, Target, Workload
from loadtower.scenarios.plan import load_plan
from loadtower.scenarios.workloads.builtin_files import schemas_on
from loadtower.scenarios.workloads.target_spec import builtin_workload_file

INVENTORY = """\
[ssh]
user = "root"
key = "/tmp/key"
known_hosts = "/tmp/known_hosts"

[cassandra]
username = "loadtower"
password = "cass-pw"

[mongodb]
username = "bench"
password_file = "mongo.pw"

[hosts.db1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"

[hosts.mongo1]
address = "127.0.0.1"
port = 27117
roles = ["db"]
engine = "mongodb"

[hosts.mongo1.actions]
kill = "pkill -9 -f ferretdb"

[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""

SCENARIO = """\
name = "m"
engine = "mongodb"

[target]
keyspace = "lt_m"
write_concern = "majority"
read_preference = "secondaryPreferred"

[[phases]]
type = "load"
"""


@pytest.mark.parametrize(
    ("exc", "cls"),
    [
        (pe.ServerSelectionTimeoutError("no server"), MongoTimeout),
        (pe.NetworkTimeout("timed out"), MongoTimeout),
        (pe.ExecutionTimeout("exceeded", 50), MongoTimeout),
        (pe.WTimeoutError("wtimeout", 64), MongoTimeout),
        (pe.NotPrimaryError("not primary"), MongoNotPrimary),
        (pe.DuplicateKeyError("E11000", 11000), MongoDuplicateKey),
        (pe.BulkWriteError({"writeErrors": [{"code": 11000}, {"code": 11000}]}),
         MongoDuplicateKey),
        (pe.AutoReconnect("connection reset"), MongoNetwork),
        (pe.ConnectionFailure("refused"), MongoNetwork),
        (pe.OperationFailure("Authentication failed.", 18), MongoAuthFailed),
    ],
)
def test_pymongo_errors_get_stable_classes(exc: Exception, cls: type) -> None:
    mapped = stable(exc)
    assert type(mapped) is cls and mapped.__cause__ is exc
    assert type(exc).__name__ in str(mapped) and "\n" not in str(mapped)


def test_other_errors_keep_their_class() -> None:
    mixed = pe.BulkWriteError({"writeErrors": [{"code": 11000}, {"code": 2}]})
    for exc in (pe.OperationFailure("bad query", 2), mixed, ValueError("x")):
        assert stable(exc) is exc


def test_contact_points() -> None:
    assert split_host("10.0.0.7", 27017) == "10.0.0.7:27017"
    assert split_host("10.0.0.7:27117", 27017) == "10.0.0.7:27117"
    assert split_host("::1", 27017) == "[::1]:27017"
    assert split_host("[::1]:27117", 27017) == "[::1]:27117"


def test_backend_is_registered_with_its_schemas() -> None:
    backend = backend_for("mongodb")
    assert backend.engine == "mongodb" and backend.default_port == 27017


@pytest.mark.parametrize("schema", ["ycsb", "recipes", "ttl"])
def test_the_schemas_are_the_builtin_files_with_mongodb_slots(schema: str) -> None:
    """What a mongodb target may use (schemas_on) is what the shipped files can run there:
    only ycsb's file has mongodb calls."""
    assert schemas_on("mongodb") == ("ycsb",)
    workload = Workload.model_validate({"schema": schema, "mix": {"read": 1}})
    if schema in schemas_on("mongodb"):
        spec = builtin_workload_file("mongodb", Target(keyspace="lt"), Dataset(), workload)
        assert spec["engine"] == "mongodb" and "read" in spec["run"]
        return
    with pytest.raises(LoadtowerError, match="no op with a weight has a mongodb statement"):
        builtin_workload_file("mongodb", Target(keyspace="lt"), Dataset(), workload)


def plan_error(write, scenario: str) -> str:  # noqa: ANN001
    s, i = write("s.toml", scenario), write("inv.toml", INVENTORY)
    with pytest.raises(ConfigError) as info:
        load_plan(s, i)
    return str(info.value).replace(str(s), "s.toml")


def test_write_concern_and_read_preference_reach_the_phase_spec(write) -> None:  # noqa: ANN001
    from loadtower.scenarios.models import as_plain

    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    target = as_plain(plan.scenario.target)
    assert (target["write_concern"], target["read_preference"]) == (
        "majority", "secondaryPreferred")
    numbered = SCENARIO.replace('"majority"', "2")
    assert load_plan(write("s.toml", numbered), write("inv.toml", INVENTORY)
                     ).scenario.target.write_concern == 2


def test_mongodb_keys_on_another_engine_are_one_line(write) -> None:  # noqa: ANN001
    text = SCENARIO.replace('engine = "mongodb"', 'engine = "cassandra"')
    assert plan_error(write, text) == (
        "s.toml:6: key 'target.write_concern': 'write_concern' is a MongoDB key; this "
        "target's engine is 'cassandra'"
    )


def test_bad_read_preference_is_one_line(write) -> None:  # noqa: ANN001
    text = SCENARIO.replace('"secondaryPreferred"', '"secondary_preferred"')
    message = plan_error(write, text)
    assert message.startswith("s.toml:7: key 'target.read_preference': ")
    assert "\n" not in message


def test_only_the_ycsb_schema(write) -> None:  # noqa: ANN001
    text = SCENARIO + '\n[workloads.main]\npreset = "recipes"\n'
    assert plan_error(write, text).split(":", 2)[2] == (
        " key 'workloads.main.schema': the mongodb engine has no 'recipes' schema "
        "(only ycsb)"
    )


def test_compaction_is_refused_at_check_time(write) -> None:  # noqa: ANN001
    text = SCENARIO + '\n[[phases]]\ntype = "compaction"\n'
    assert plan_error(write, text).split(":", 2)[2] == (
        " key 'phases[1]': a compaction phase is not supported for mongodb (host "
        "'mongo1'): MongoDB has no major compaction to trigger and wait for"
    )


def test_the_password_file_is_masked(write) -> None:  # noqa: ANN001
    from loadtower.orchestrator.secrets import known_secrets

    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    assert "pw-of-mongo" in known_secrets(plan)


def test_server_status_figures_mongodb_and_ferretdb() -> None:
    mongo = {"connections": {"current": 7}, "mem": {"resident": 120}, "uptime": 9.0,
             "opcounters": {"insert": 10, "query": 5, "update": 3, "delete": 1, "getmore": 0,
                            "command": 40}}
    first, counters = stats_of(mongo, None)
    assert first == {"connections_current": 7, "mem_resident_mb": 120, "uptime_s": 9.0}
    later = dict(mongo, opcounters={**mongo["opcounters"], "insert": 25, "command": 41})
    figures, _ = stats_of(later, counters)
    assert figures["opcounters_delta"] == {"insert": 15, "query": 0, "update": 0, "delete": 0,
                                           "getmore": 0, "command": 1}
    ferret = {"uptime": 3.0, "metrics": {"commands": {"insert": {"total": 4}, "find": {"total": 9}}}}
    _, before = stats_of(ferret, None)
    ferret["metrics"]["commands"]["find"]["total"] = 19
    figures, _ = stats_of(ferret, before)
    assert figures["connections_current"] is None  # FerretDB does not say
    assert figures["opcounters_delta"]["query"] == 10 and figures["opcounters_delta"]["insert"] == 0


def test_mongodbs_hooks_are_its_nodes_functions() -> None:
    from loadtower.engines.mongodb.orchestrator import node

    for name in ("before_target", "version", "after_load", "node_stats"):
        assert hook("mongodb", name) is getattr(node, name)
    assert hook("mongodb", "compact") is None  # its kind's compaction is none
