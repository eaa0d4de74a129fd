"""The built-in scenarios' defaults, and loading keys from an offset (`start_key`)."""

from __future__ import annotations

import pytest

from loadtower.agents.workload.keys import load_slice
from loadtower.errors import ConfigError
from loadtower.scenarios.catalog import builtin_names, resolve_scenario
from loadtower.scenarios.loader import load_scenario
from loadtower.scenarios.models import LoadPhase, PausePhase, SearchPhase, SteadyPhase

from .conftest import SCENARIO


@pytest.mark.parametrize("workers", [1, 2, 3, 7, 64])
@pytest.mark.parametrize(("start", "records"), [(0, 1000), (20000, 10000), (5, 3), (100, 1)])
def test_load_slices_cover_each_key_once(workers: int, start: int, records: int) -> None:
    keys = [k for w in range(workers) for k in range(*load_slice(start, records, w, workers))]
    assert keys == list(range(start, start + records))


def test_start_key_is_a_load_phase_key(write) -> None:  # noqa: ANN001
    text = SCENARIO.replace('type = "load"', 'type = "load"\nrecords = 500\nstart_key = 1000')
    scenario, _ = load_scenario(write("s.toml", text))
    phase = scenario.phases[0]
    assert isinstance(phase, LoadPhase) and (phase.start_key, phase.records) == (1000, 500)
    assert load_scenario(write("s.toml", SCENARIO))[0].phases[0].start_key == 0  # default


def test_negative_start_key_names_file_line_and_key(write) -> None:  # noqa: ANN001
    path = write("s.toml", SCENARIO.replace('type = "load"', 'type = "load"\nstart_key = -1'))
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    assert str(info.value) == (
        f"{path}:12: key 'phases[0].start_key': Input should be greater than or equal to 0"
    )


def test_scale_multiplies_records_and_start_key() -> None:
    scenario, _ = load_scenario(resolve_scenario("ttl-tombstones"), scale=10)
    assert scenario.dataset.records == 200_000
    more = [p for p in scenario.phases if isinstance(p, LoadPhase) and p.start_key]
    assert [(p.start_key, p.records) for p in more] == [(200_000, 100_000)] * 2


def test_ttl_tombstones_reproduces_the_study() -> None:
    scenario, _ = load_scenario(resolve_scenario("ttl-tombstones"))
    ttl, plain = scenario.workloads["with-ttl"], scenario.workloads["without-ttl"]
    assert (ttl.table, ttl.ttl, plain.table, plain.ttl) == ("with_ttl", 60.0, "without_ttl", 0.0)
    assert ttl.mix == plain.mix == {"read": 100}
    assert scenario.dataset.records == 20_000
    runs: dict[str, list[SteadyPhase]] = {"with-ttl": [], "without-ttl": []}
    loads: dict[str, list[LoadPhase]] = {"with-ttl": [], "without-ttl": []}
    last_ttl_write = wait = None
    for i, phase in enumerate(scenario.phases):
        if isinstance(phase, SteadyPhase):
            runs[phase.workload or ""].append(phase)
            assert phase.rate * phase.duration == 2000 and phase.duration == 20  # type: ignore[operator]
            if last_ttl_write is not None and phase.workload == "with-ttl":
                wait = sum(
                    getattr(p, "duration", 0.0) for p in scenario.phases[last_ttl_write + 1 : i]
                )
        if isinstance(phase, LoadPhase):
            loads[phase.workload or ""].append(phase)
            if phase.workload == "with-ttl" and phase.start_key:
                last_ttl_write = i
    for table in runs:
        first, more = loads[table]
        assert (first.records, first.start_key) == (None, 0)  # dataset.records from key 0
        assert (more.records, more.start_key) == (10_000, 20_000)  # new keys
        assert len(runs[table]) == 2  # before and after
    assert any(isinstance(p, PausePhase) for p in scenario.phases)
    assert wait is not None and wait > 60  # the 1-minute TTL has passed before the last reads


def test_recipes_mix_ends_with_a_search_at_the_study_target() -> None:
    scenario, _ = load_scenario(resolve_scenario("recipes-mix"))
    search = scenario.phases[-1]
    assert isinstance(search, SearchPhase) and search.name == "saturation"
    assert search.target_p99_ms == 100 and search.max_error_rate == 0.01
    assert search.start_rate == 40 and search.min_rate <= 10  # the study's first re-run
    assert search.step_duration >= 3
    assert scenario.targets["clickhouse"].settings["lightweight_deletes_sync"] == 0


def test_scale_out_compaction_searches_before_and_after_the_new_node() -> None:
    scenario, _ = load_scenario(resolve_scenario("scale-out-compaction"))
    kinds = [(p.type, p.name) for p in scenario.phases]
    added = kinds.index(("scale_out", "add-node"))
    assert kinds[added - 1] == ("search", "at-target-before")
    assert kinds[added + 1] == ("search", "at-target-after")
    searches = [p for p in scenario.phases if isinstance(p, SearchPhase)]
    assert all(s.target_p99_ms == 10 for s in searches) and len(searches) == 2


def test_every_builtin_loads() -> None:
    assert set(builtin_names()) >= {
        "quickstart",
        "ycsb-a",
        "ycsb-b",
        "recipes-mix",
        "ttl-tombstones",
        "scale-out-compaction",
        "ycsb-suite",
    }
    for name in builtin_names():
        scenario, _ = load_scenario(resolve_scenario(name))
        assert scenario.phases, name


def test_a_table_without_ttl() -> None:
    from tests.scenarios import builtin_render as render

    assert "default_time_to_live = 0" in render.cql("ttl", "ks", "t", ttl=0)[0][1]
    assert "default_time_to_live = 60" in render.cql("ttl", "ks", "t")[0][1]
    assert all("TTL" not in sql for sql in render.clickhouse("ttl", "db", "t", ttl=0))
    assert "INTERVAL 60 SECOND" in render.clickhouse("ttl", "db", "t", ttl=60)[1]
