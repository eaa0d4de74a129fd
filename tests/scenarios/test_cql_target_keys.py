"""The target keys only Cassandra and ScyllaDB take (consistency, local_dc, replication):
one model of the cassandra package, named by both kinds (``target_keys``); one line for a
bad value; `check` refuses them on another engine's target; the phase spec still carries
them as before."""

from __future__ import annotations

import pytest

from loadtower.cli import main
from loadtower.engines.cassandra.orchestrator.target_keys import CqlTargetKeys
from loadtower.errors import ConfigError
from loadtower.protocol.engine_kinds import KINDS
from loadtower.scenarios.crossref import check_targets
from loadtower.scenarios.loader import load_scenario_text
from loadtower.scenarios.models import TargetBase, as_plain

from .conftest import INVENTORY

HEAD = 'name = "x"\nengine = "{engine}"\n[[phases]]\ntype = "load"\n[target]\n'
CQL_KEYS = ("consistency", "local_dc", "replication")


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        scenario = load_scenario_text(text, "s.toml")
        check_targets(scenario, text, "s.toml")
    message = str(info.value)
    assert "\n" not in message
    return message


def test_both_cql_kinds_name_one_model_and_the_core_has_none_of_its_keys() -> None:
    assert KINDS["cassandra"].target_keys == KINDS["scylla"].target_keys
    assert KINDS["scylla"].only_keys == CQL_KEYS == tuple(CqlTargetKeys.model_fields)
    assert not set(CQL_KEYS) & set(TargetBase.model_fields)
    assert "replication_factor" in TargetBase.model_fields  # every engine's (ycsb-suite)


def test_a_scylla_target_takes_the_keys_and_the_phase_spec_carries_them() -> None:
    text = HEAD.format(engine="scylla") + (
        'consistency = "ONE"\nlocal_dc = "dc1"\nreplication = {dc1 = 2, dc2 = 1}\n')
    scenario = load_scenario_text(text, "s.toml")
    check_targets(scenario, text, "s.toml")
    keys = CqlTargetKeys.of(scenario.target)
    assert (keys.consistency, keys.local_dc, keys.replication) == (
        "ONE", "dc1", {"dc1": 2, "dc2": 1})
    plain = as_plain(scenario.target)  # the wire's target: the same keys as before
    assert (plain["consistency"], plain["local_dc"], plain["replication"]) == (
        "ONE", "dc1", {"dc1": 2, "dc2": 1})
    # a target that gives none: the defaults the agents always had
    other = as_plain(load_scenario_text(HEAD.format(engine="mongodb"), "s.toml").target)
    assert (other["consistency"], other["local_dc"], other["replication"]) == (
        "LOCAL_QUORUM", None, None)


@pytest.mark.parametrize(("keys", "expected"), [
    ('consistency = "FOO"\n', "s.toml:6: key 'target.consistency': invalid value 'FOO' "
     "(expected 'ONE', 'TWO', 'THREE', 'QUORUM', 'ALL', 'LOCAL_QUORUM', 'EACH_QUORUM', "
     "'LOCAL_ONE' or 'ANY')"),
    ("replication = {}\n", "s.toml:6: key 'target.replication': replication needs at least "
     "one data centre, e.g. {dc1 = 2}"),
    ('replication = {"dc 1" = 2}\n', "s.toml:6: key 'target.replication.dc 1': data centre "
     "name 'dc 1' has characters other than letters, digits, '_', '-' and '.'"),
    ("replication = {dc1 = 101}\n", "s.toml:6: key 'target.replication.dc1': Input should "
     "be less than or equal to 100"),
    ("replication_factor = 2\nreplication = {dc1 = 2}\n", "s.toml:5: key 'target': give "
     "either replication_factor (SimpleStrategy) or replication (per data centre, "
     "NetworkTopologyStrategy), not both"),
    ('local_dc = ""\n', "s.toml:6: key 'target.local_dc': String should have at least 1 "
     "character"),
])
def test_a_bad_value_is_one_line_naming_the_key(keys: str, expected: str) -> None:
    for engine in ("cassandra", "scylla"):
        assert _error(HEAD.format(engine=engine) + keys) == expected


@pytest.mark.parametrize("engine", ["clickhouse", "mongodb", "redis"])
@pytest.mark.parametrize(("key", "value"), [
    ("consistency", '"LOCAL_QUORUM"'), ("local_dc", '"dc1"'), ("replication", "{dc1 = 1}")])
def test_a_cql_key_on_another_engines_target_is_refused(engine: str, key: str,
                                                         value: str) -> None:
    """Given is refused, whatever the value: consistency's default too."""
    assert _error(HEAD.format(engine=engine) + f"{key} = {value}\n") == (
        f"s.toml:6: key 'target.{key}': '{key}' is a Cassandra/ScyllaDB key; this target's "
        f"engine is '{engine}'")


def test_a_shared_cql_key_is_refused_on_the_other_engines_target() -> None:
    text = ('name = "x"\n[[phases]]\ntype = "load"\n[target]\nconsistency = "ONE"\n'
            '[targets.cql]\nengine = "scylla"\n[targets.doc]\nengine = "mongodb"\n')
    assert _error(text).endswith(
        "key 'targets.doc.consistency': 'consistency' is a Cassandra/ScyllaDB key; this "
        "target's engine is 'mongodb'")
    one = text.replace('[target]\nconsistency = "ONE"\n', "").replace(
        'engine = "scylla"\n', 'engine = "scylla"\nconsistency = "ONE"\n')
    check_targets(load_scenario_text(one, "s.toml"), one, "s.toml")


def test_check_refuses_a_cql_key_on_a_mongodb_target_in_one_line(write, capsys) -> None:
    text = HEAD.format(engine="mongodb") + 'local_dc = "dc1"\n'
    s, i = write("s.toml", text), write("inv.toml", INVENTORY)
    assert main(["check", str(s), "-i", str(i)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.rstrip().endswith(f"{s}:6: key 'target.local_dc': 'local_dc' is a "
                                 "Cassandra/ScyllaDB key; this target's engine is 'mongodb'")
