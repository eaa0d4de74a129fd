"""The engines' kinds (protocol/engine_kinds.py): one per engine the models accept, and
what the core asks of them gives what the checks and phases did by name before."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import Field, create_model

from loadtower.engines.cassandra.agent.target_spec import CqlTargetSpec
from loadtower.engines.clickhouse.agent.target_spec import ClickhouseTargetSpec
from loadtower.engines.mongodb.agent.target_spec import MongodbTargetSpec
from loadtower.protocol.engine_kinds import (
    KINDS,
    default_engine,
    dialects,
    engine_names,
    kind,
    titles,
    with_capability,
)
from loadtower.protocol.phase_spec import TargetSpec
from loadtower.scenarios import models
from loadtower.scenarios.checked_types import Strict
from loadtower.scenarios.crossref import engines_match
from loadtower.scenarios.workloads.builtin_files import builtin_load_op
from loadtower.scenarios.workloads.target_spec import file_engine

ROOT = Path(__file__).resolve().parents[2]


def test_one_kind_per_engine_the_models_accept() -> None:
    assert engine_names() == tuple(f for f in models.Inventory.model_fields if f in KINDS)
    assert all(name == k.name for name, k in KINDS.items())
    assert set(dialects()) <= set(engine_names())  # a dialect is the slot of an engine


def test_only_keys_are_target_keys_of_one_model() -> None:
    by_model = {k.target_keys: k.only_keys for k in KINDS.values() if k.target_keys}
    owned = [key for keys in by_model.values() for key in keys]
    assert len(owned) == len(set(owned))  # no key belongs to two models
    assert set(owned) <= set(models.Target.model_fields)
    assert len(by_model) < len([k for k in KINDS.values() if k.target_keys])  # CQL's two


def test_the_phase_specs_target_types_only_the_shared_keys_and_each_agent_part_its_own() -> None:
    """protocol's TargetSpec names no engine's own key; an agent part's spec over it adds
    only keys of its kind's target_keys (engines/NAME/agent/target_spec.py)."""
    shared = TargetSpec.__required_keys__ | TargetSpec.__optional_keys__
    assert not shared & {key for k in KINDS.values() for key in k.only_keys}
    assert shared - {"engine", "hosts"} <= set(models.TargetBase.model_fields)
    for engine, spec in (("cassandra", CqlTargetSpec), ("clickhouse", ClickhouseTargetSpec),
                         ("mongodb", MongodbTargetSpec)):
        own = (spec.__required_keys__ | spec.__optional_keys__) - shared
        assert own and own <= set(kind(engine).only_keys), engine


def test_one_kind_is_the_engine_of_a_phase_spec_that_names_none() -> None:
    assert [n for n, k in KINDS.items() if k.default] == [default_engine()]
    assert default_engine() == "cassandra"
    scenario = models.Scenario.model_validate({"name": "s", "phases": [{"type": "load"}]})
    assert scenario.engine == default_engine()  # a scenario that names no engine runs it


class ClashingKeys(Strict):  # a third engine's keys, one of them ClickHouse's
    order_by: list[str] | None = None
    level: int | None = None
    tags: list[str] = Field(default_factory=list)  # a default made per target


class RivalKeys(Strict):  # a third engine's keys, one of them the CQL kinds'
    consistency: str | None = None


def test_target_has_each_engines_own_keys_and_a_clash_is_refused() -> None:
    own = models.engine_target_fields()
    assert set(own) == {key for k in KINDS.values() for key in k.only_keys}
    assert not set(own) & set(models.TargetBase.model_fields)
    assert list(models.Target.model_fields) == [*models.TargetBase.model_fields, *own]
    with_keys = next(k for k in KINDS.values() if k.only_keys)
    clash = replace(with_keys, name="third", target_keys=f"{__name__}:ClashingKeys")
    with pytest.raises(ValueError, match="engine third's target key 'order_by' is another's"):
        models.engine_target_fields([*KINDS.values(), clash])
    # a kind naming a model another kind names (ScyllaDB: Cassandra's) adds no key twice
    twin = replace(with_keys, name="twin")
    assert list(models.engine_target_fields([*KINDS.values(), twin])) == list(own)
    # another model with a registered model's key (the CQL kinds' consistency) is refused
    rival = replace(with_keys, name="rival", target_keys=f"{__name__}:RivalKeys")
    with pytest.raises(ValueError, match="engine rival's target key 'consistency' is another's"):
        models.engine_target_fields([*KINDS.values(), rival])
    third = models.engine_target_fields([clash])
    assert set(third) == {"order_by", "level", "tags"}
    keys = create_model("Keys", **third)
    assert keys().tags == [] and keys().level is None  # defaults kept, none required


# the engines the names' tables knew before the kinds (scripts/engine_coupling.py's before)
NAMED = ("cassandra", "scylla", "clickhouse", "mongodb")


def test_scylla_is_cassandra_for_workloads_hosts_and_loads() -> None:
    assert file_engine("scylla") == file_engine("cassandra") == "cassandra"
    assert engines_match("cassandra", "scylla") and engines_match("scylla", "cassandra")
    assert not engines_match("cassandra", "clickhouse")
    assert not engines_match("mongodb", None)


def test_capabilities_answer_what_the_names_did() -> None:
    """For the engines the names' tables knew (another engine package may add its own)."""

    def known(found: list[str]) -> list[str]:
        return [e for e in found if e in NAMED]

    assert known(with_capability(ring=True)) == ["cassandra", "scylla"]
    assert known(with_capability(flush_action=True)) == ["cassandra", "scylla"]
    assert known(with_capability(compaction="none")) == ["mongodb"]
    assert known(with_capability(tls_files=True)) == ["cassandra", "scylla", "mongodb"]
    assert known(with_capability(per_host_port=True)) == ["clickhouse", "mongodb"]
    assert titles(with_capability(ring=True)) == "Cassandra/ScyllaDB"
    builtin = models.Workload(preset="ycsb-a")
    loads = {e: builtin_load_op(builtin, file_engine(e), "insert") for e in NAMED}
    assert loads == {"cassandra": "insert", "scylla": "insert", "clickhouse": "insert_batch",
                     "mongodb": "insert_batch"}


def test_the_orchestrators_hooks_agree_with_the_kinds() -> None:
    """An engine whose compaction is its own statement has the hook that runs it, every
    engine tells its version, every hook named is one the orchestrator calls and
    resolves to a function; the Rust core drives the CQL backend, whose engine is
    `cassandra` for both."""
    from loadtower.scenarios.engine_hooks import HOOKS, hook

    for name, k in KINDS.items():
        assert (k.compaction == "statement") == ("compact" in k.hooks), name
        assert "version" in k.hooks, name
        assert set(k.hooks) <= set(HOOKS), name
        for hook_name in k.hooks:
            assert callable(hook(name, hook_name)), (name, hook_name)
    from loadtower.engines.cassandra.agent.backend import CqlBackend

    assert with_capability(rust_core=True) == with_capability(family="cql")
    assert CqlBackend.engine in with_capability(rust_core=True)
    assert with_capability(coordinator_latency=True) == ["cassandra"]


def test_the_inventory_has_a_section_per_registered_engine_and_refuses_others(
        tmp_path: Path) -> None:
    """An engine's `[ENGINE]` section and `engine = ...` come from the registry: a name
    no engine has is one line with the names it could be, as a literal's would be."""
    import pytest

    from loadtower.errors import LoadtowerError
    from loadtower.scenarios.loader import load_inventory

    host = '[hosts.db1]\naddress = "127.0.0.1"\nroles = ["db"]\nengine = "{}"\n'
    good = tmp_path / "good.toml"
    good.write_text('[mongodb]\nusername = "u"\n\n' + host.format("mongodb"))
    inventory, _ = load_inventory(good)
    assert inventory.credentials("mongodb").username == "u"
    bad = tmp_path / "bad.toml"
    bad.write_text(host.format("aerospike"))
    with pytest.raises(LoadtowerError) as refused:
        load_inventory(bad)
    names = [f"'{n}'" for n in engine_names()]
    assert str(refused.value).endswith(
        "key 'hosts.db1.engine': invalid value 'aerospike' "
        f"(expected {', '.join(names[:-1])} or {names[-1]})")
    section = tmp_path / "section.toml"
    section.write_text('[aerospike]\nusername = "u"\n\n' + host.format("cassandra"))
    with pytest.raises(LoadtowerError, match=r"section.toml:1: key 'aerospike': unknown key"):
        load_inventory(section)
    tls = tmp_path / "tls.toml"
    tls.write_text('[clickhouse]\ntls = true\ntls_ca_file = "ca.pem"\n\n' + host.format("clickhouse"))
    with pytest.raises(LoadtowerError, match=r"\[clickhouse\] has no tls keys: use secure = true"):
        load_inventory(tls)  # its kind has no TLS files
