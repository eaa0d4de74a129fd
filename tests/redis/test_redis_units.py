"""Redis pieces that need no server: the ycsb file's redis slots rendered for a target,
a workload file's redis slot and what check refuses in it, YCSB property files on Redis,
the schemas and keys check allows, error classes, argument values, INFO figures, the
sandbox service's configuration (the password in a 0600 file, never on the command line
or through a symlink), and ycsb-suite's Redis target."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from redis import exceptions as rex

from loadtower.agents.backends import backend_for
from loadtower.engines.redis.agent.errors import (
    RedisAuthFailed,
    RedisConnection,
    RedisLoading,
    RedisReadOnly,
    RedisResponse,
    RedisTimeout,
    stable,
)
from loadtower.engines.redis.agent.file_runner import Call, value
from loadtower.engines.redis.agent.session import split_host
from loadtower.engines.redis.orchestrator.node import stats_of
from loadtower.engines.redis.sandbox.service import SERVICE, write_private
from loadtower.errors import ConfigError, LoadtowerError
from loadtower.protocol.engine_kinds import kind
from loadtower.scenarios.catalog import resolve_scenario
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.loader import load_scenario
from loadtower.scenarios.models import Dataset, Target, Workload
from loadtower.scenarios.plan import load_plan
from loadtower.scenarios.workloads.builtin_files import schemas_on
from loadtower.scenarios.workloads.loader import load_workload_file
from loadtower.scenarios.workloads.target_spec import builtin_workload_file, render_for_target

KEY = '"lt:usertable:"+:y_id'


def ycsb(**workload: object) -> dict:
    w = Workload.model_validate({"schema": "ycsb", **workload})
    return dict(builtin_workload_file("redis", Target(keyspace="lt"), Dataset(fields=2), w))


def texts(spec: dict) -> dict[str, str]:
    return {op: r["statements"][0]["text"] for op, r in spec["run"].items() if "statements" in r}


def test_the_ycsb_file_on_redis_is_hashes_and_a_sorted_set_of_keys() -> None:
    spec = ycsb(mix={"read": 1, "scan": 1})
    assert spec["engine"] == "redis" and spec["ddl"] == [] and spec["tables"] == ["usertable"]
    assert spec["load"] == "insert_batch"
    assert texts(spec) == {
        "read": f"HGETALL {KEY}",
        "update": f"HSET {KEY} field0 :value",
        "insert": f"HSET {KEY} field0 :field0 field1 :field1 | ZADD lt:usertable 0 {KEY}",
        "scan": ('ZRANGE lt:usertable "[lt:usertable:"+:y_id + BYLEX LIMIT 0 :length ; '
                 "for each member: HGETALL $each"),
        "insert_batch": f"HSET {KEY} field0 :field0 field1 :field1 | ZADD lt:usertable 0 {KEY}",
        "delete": f"DEL {KEY} | ZREM lt:usertable {KEY}",
        "delete_batch": f"DEL {KEY} | ZREM lt:usertable {KEY}",
    }
    update = spec["run"]["update"]["statements"]
    assert [s["text"].split()[2] for s in update] == ["field0", "field1"]  # one per field
    assert spec["run"]["insert_batch"]["batch"] == 100
    scan = spec["run"]["scan"]["statements"][0]
    assert scan["binds"] == ["y_id", "length"] and scan["types"] == {"y_id": "text",
                                                                    "length": "int"}
    assert scan["call"] == {
        "commands": [["ZRANGE", "lt:usertable", {"$join": ["[lt:usertable:", {"$param": "y_id"}]},
                      "+", "BYLEX", "LIMIT", 0, {"$param": "length"}]],
        "each": ["HGETALL", {"$each": 1}]}


def test_a_renamed_table_renames_its_keys_and_index() -> None:
    w = Workload.model_validate({"schema": "ycsb", "table": "things", "mix": {"read": 1}})
    spec = builtin_workload_file("redis", Target(keyspace="ks"), Dataset(fields=1), w)
    assert texts(dict(spec))["delete"] == 'DEL "ks:things:"+:y_id | ZREM ks:things "ks:things:"+:y_id'


def test_only_ycsb_has_redis_slots_and_check_says_so(tmp_path: Path) -> None:
    assert schemas_on("redis") == ("ycsb",)
    (tmp_path / "s.toml").write_text(
        'name = "r"\nengine = "redis"\n[workloads.w]\npreset = "recipes"\n'
        '[[phases]]\ntype = "load"\nworkload = "w"\n')
    (tmp_path / "inv.toml").write_text(
        '[ssh]\nuser = "root"\nkey = "/tmp/key"\nknown_hosts = "/tmp/kh"\n'
        '[redis]\nusername = "u"\npassword = "p"\n'
        '[hosts.r1]\naddress = "127.0.0.1"\nroles = ["db"]\nengine = "redis"\n'
        '[hosts.a1]\naddress = "127.0.0.1"\nroles = ["agent"]\n')
    with pytest.raises(ConfigError) as refused:
        load_plan(tmp_path / "s.toml", tmp_path / "inv.toml")
    assert str(refused.value).endswith(
        "key 'workloads.w.schema': the redis engine has no 'recipes' schema (only ycsb)")


FILE = """\
[tables.kv]
columns = {{ id = "bigint", name = "text", "f*" = {{ type = "text", count = 2 }} }}
partition_key = ["id"]

[ops.op]
redis = {slot}
bind.id = {{ gen = "uniform" }}
{binds}
"""


def load(tmp_path: Path, slot: str, binds: str = "", batch: str = "") -> object:
    path = tmp_path / "w.toml"
    path.write_text(FILE.format(slot=slot, binds=binds) + batch)
    return load_workload_file(path)


def test_a_workload_files_redis_slot_types_its_parameters(tmp_path: Path) -> None:
    checked = load(tmp_path, '{ commands = [["HSET", ["k:", ":id"], "name", ":who", '
                   '{ pairs = "f*" }]] }', 'bind.who = { gen = "text", length = 5 }\n'
                   'bind."f*" = { gen = "text", length = 3 }')
    assert checked.params["op"]["redis"] == ["id", "who", "f0", "f1"]  # type: ignore[attr-defined]
    assert checked.param_types["op"]["who"] == "text"  # type: ignore[attr-defined]
    assert checked.param_columns["op"]["who"] == "name"  # after the column's name
    spec = render_for_target(checked, Workload.model_validate({"file": "w.toml"}),  # type: ignore[arg-type]
                             "redis", Target(keyspace="lt"))
    assert spec["run"]["op"]["statements"][0]["text"] == \
        'HSET "k:"+:id name :who f0 :f0 f1 :f1'


@pytest.mark.parametrize(("slot", "problem"), [
    ('{ commands = [["FLUSHALL"]] }',
     "FLUSHALL is a command of the server, not of the data"),
    ('{ commands = [["GET", "$each"]] }', "$each is one member of the last reply"),
    ('{ commands = [["HSET", ":id", { pairs = "g*" }]] }', "pairs = 'g*' names no column group"),
    ('{ commands = [["MGET", ":g*"]] }', ":g* names no column group"),
    ('{ commands = [["GET", "${nothing}"]] }', "unknown name ${nothing}: not a variable"),
    ('{ commands = [[":id"]] }', "a command's first argument is its name, as text"),
    ('{ commands = [["MGET", ["x", "${f*}"]]] }', "${f*} is not a table"),
])
def test_check_refuses_what_cannot_run(tmp_path: Path, slot: str, problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load(tmp_path, slot)
    assert "key 'ops.op.redis" in str(refused.value) and problem in str(refused.value)


def test_a_batch_op_cannot_read_each_member(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read each member of a reply"):
        load(tmp_path, '{ commands = [["ZRANGE", "z", 0, -1]], each = ["GET", "$each"] }',
             batch="batch = 5\n")


def test_a_ycsb_property_file_reads_one_field_and_writes_all(tmp_path: Path) -> None:
    path = tmp_path / "workloadr"
    path.write_text("recordcount=100\nfieldcount=2\nreadallfields=false\nwriteallfields=true\n"
                    "readproportion=0.5\nupdateproportion=0.5\n")
    checked = load_workload_file(path)
    spec = render_for_target(checked, Workload.model_validate({"file": str(path)}), "redis",
                             Target(keyspace="lt"))
    found = texts(dict(spec))
    assert found["read"] == f"HMGET {KEY} field0"
    assert found["update"] == f"HSET {KEY} field0 :field0 field1 :field1"


def test_ycsb_suite_has_a_redis_target_after_the_others() -> None:
    scenario, source = load_scenario(resolve_scenario("ycsb-suite"))
    assert list(scenario.targets) == ["cassandra", "mongodb", "redis"]
    assert scenario.targets["redis"].engine == "redis"
    assert "added by the engine package loadtower.engines.redis.builtin" in source


@pytest.mark.parametrize(("exc", "cls"), [
    (rex.TimeoutError("t"), RedisTimeout),
    (rex.ConnectionError("gone"), RedisConnection),
    (rex.BusyLoadingError("LOADING"), RedisLoading),
    (rex.ReadOnlyError("READONLY"), RedisReadOnly),
    (rex.AuthenticationError("invalid"), RedisAuthFailed),
    (rex.ResponseError("WRONGPASS invalid username-password pair"), RedisAuthFailed),
    (rex.ResponseError("WRONGTYPE Operation against a key"), RedisResponse),
    (TimeoutError(), RedisTimeout),
])
def test_errors_keep_one_stable_class(exc: BaseException, cls: type) -> None:
    mapped = stable(exc)
    assert type(mapped) is cls and mapped.__cause__ is exc


def test_values_and_arguments_as_redis_takes_them() -> None:
    import datetime
    import uuid

    assert value(True) == 1 and value(7) == 7 and value(b"x") == b"x"
    assert value(bytearray(b"ab")) == b"ab"
    assert value(datetime.date(2026, 1, 2)) == "2026-01-02"
    assert value(uuid.UUID(int=1)) == "00000000-0000-0000-0000-000000000001"
    call = Call({"commands": [["SET", {"$join": ["k:", {"$param": "id"}]}, {"$param": "v"}]]})
    assert [b({"id": 5, "v": b"z"}, None) for b in call.commands[0]] == ["SET", "k:5", b"z"]


def test_contact_points_and_the_kind() -> None:
    assert split_host("10.0.0.1", 6379) == ("10.0.0.1", 6379)
    assert split_host("10.0.0.1:7000", 6379) == ("10.0.0.1", 7000)
    assert split_host("[::1]:7000", 6379) == ("::1", 7000)
    redis = kind("redis")
    assert (redis.block_load, redis.ring, redis.compaction, redis.default_port) == (
        True, False, "none", 6379)
    assert backend_for("redis").default_port == 6379
    for name in ("before_target", "version", "after_load", "node_stats"):
        assert callable(hook("redis", name))


def test_info_figures_and_rates() -> None:
    info = {"connected_clients": 3, "used_memory": 3 * 2**20, "total_commands_processed": 100,
            "keyspace_hits": 10, "keyspace_misses": 2, "uptime_in_seconds": 9}
    first, counters = stats_of(info, None, 0.0)
    assert first["connected_clients"] == 3 and first["used_memory_mb"] == 3.0
    assert "per_s" not in first
    later = {**info, "total_commands_processed": 300, "keyspace_hits": 50}
    figures, _ = stats_of(later, counters, 2.0)
    assert figures["per_s"]["total_commands_processed"] == 100.0
    assert figures["per_s"]["keyspace_hits"] == 20.0


def test_the_sandbox_config_keeps_the_password_off_argv_and_out_of_symlinks(
        tmp_path: Path) -> None:
    if not SERVICE.available():
        pytest.skip(SERVICE.missing_reason())
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    conf = tmp_path / "redis" / "redis.conf"
    conf.parent.mkdir()
    conf.symlink_to(victim)
    argv = SERVICE.argv(tmp_path, "127.0.0.1", 6390)
    password = SERVICE.password(tmp_path)
    assert password not in " ".join(argv) and argv[-1] == str(conf)
    assert victim.read_text() == "keep me\n"  # the link was replaced, not followed
    assert not conf.is_symlink()
    assert stat.S_IMODE(conf.stat().st_mode) == 0o600
    assert stat.S_IMODE(conf.parent.stat().st_mode) == 0o700
    text = conf.read_text()
    assert "user default off" in text and f">{password}" in text and "port 6390" in text
    assert f'dir "{tmp_path}/redis/data"' in text  # quoted: a folder may hold spaces
    assert stat.S_IMODE(os.stat(SERVICE.password_file(tmp_path)).st_mode) == 0o600


def test_write_private_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "d" / "f.conf"
    write_private(target, "a\n")
    write_private(target, "b\n")
    assert target.read_text() == "b\n" and sorted(p.name for p in target.parent.iterdir()) == [
        "f.conf"]


def test_a_missing_server_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from loadtower.engines.redis.sandbox import service

    monkeypatch.setattr(service, "binary", lambda: None)
    assert not SERVICE.available()
    with pytest.raises(LoadtowerError, match="apt-get install redis-server"):
        SERVICE.fetch(require=True)
