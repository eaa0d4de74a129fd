"""ClickHouse statements shaped by the scenario, contact points, the backend registry, and
experiment 1's table (min latency from merged HDR histograms, exactly as hdrh has it)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from loadtower.agents.backends import backend_for, engines
from loadtower.engines.clickhouse.agent.schemas import as_mutation
from loadtower.engines.clickhouse.agent.session import split_host
from loadtower.scenarios.models import Dataset, Target, Workload
from loadtower.scenarios.workloads.target_spec import builtin_workload_file
from loadtower.store import StoreWriter
from loadtower.store.engine_compare import LOW_VALUES, counts_of, engine_table, run_sides
from tests.store.synth import T0, hist


def rendered(schema: str, fields: int = 1, **target: object) -> dict:
    """A built-in workload's phase spec file on a ClickHouse target (its shipped file)."""
    return builtin_workload_file(
        "clickhouse", Target.model_validate({"keyspace": "lt", **target}),
        Dataset(records=10, fields=fields), Workload(schema=schema, mix={"read": 1}))


def test_ddl_follows_the_target_keys() -> None:
    _db, table = rendered(
        "recipes", table_engine="MergeTree", order_by=["id"],
        skip_indexes={"price_minmax": "total_price TYPE minmax GRANULARITY 1"})["ddl"]
    assert "ENGINE = MergeTree ORDER BY (id)" in table
    assert ", INDEX price_minmax total_price TYPE minmax GRANULARITY 1)" in table
    assert "bloom_filter" not in table
    default = rendered("recipes")["ddl"][1]
    assert "ENGINE = ReplacingMergeTree(ver) ORDER BY (total_price, id)" in default


def test_statements_follow_the_modes() -> None:
    def text(spec: dict, op: str, i: int = 0) -> str:
        return spec["run"][op]["statements"][i]["text"]

    plain = rendered("recipes", table_engine="MergeTree", update_mode="mutation")
    assert "FINAL" not in text(plain, "read")
    mut = rendered("recipes", update_mode="mutation")
    assert text(mut, "update") == (
        "ALTER TABLE lt.recipes UPDATE title = {title:String}, link = {link:String} "
        "WHERE total_price = {total_price:Float32} AND id = {id:UUID}"
    )
    # delete_mode = "mutation": the session makes DELETE FROM an ALTER TABLE ... DELETE
    assert as_mutation(text(mut, "delete")).startswith(
        "ALTER TABLE lt.recipes DELETE WHERE (total_price, id) IN")
    ycsb = rendered("ycsb", 2, update_mode="mutation")
    assert text(ycsb, "update", 1) == (
        "ALTER TABLE lt.usertable UPDATE field1 = {value:String} WHERE y_id = {y_id:String}")
    assert text(rendered("ycsb", 2), "update", 1).startswith("INSERT INTO lt.usertable")


def test_contact_points() -> None:
    assert split_host("10.0.0.7", 8123) == ("10.0.0.7", 8123)
    assert split_host("10.0.0.7:18123", 8123) == ("10.0.0.7", 18123)
    assert split_host("[::1]:9000", 8123) == ("::1", 9000)
    assert split_host("::1", 8123) == ("::1", 8123)
    assert split_host("ch.example.com", 8443) == ("ch.example.com", 8443)


def test_backend_registry() -> None:
    assert {"cassandra", "scylla", "clickhouse", "mongodb"} <= set(engines())
    assert backend_for("clickhouse").default_port == 8123
    assert backend_for("scylla").default_port == 9042
    assert backend_for("mongodb").default_port == 27017
    with pytest.raises(ValueError, match="no engine 'aerospike'"):
        backend_for("aerospike")


def test_lowest_values_are_hdrh_min() -> None:
    rng = random.Random(5)
    for _ in range(300):
        h = HdrHistogram(1, 60_000_000, 3)
        values = [max(1, int(rng.lognormvariate(rng.uniform(0, 16), 1.5))) for _ in range(5)]
        for v in values:
            h.record_value(min(v, 60_000_000))
        counts = counts_of(_raw(h))  # the stored form: hdrh's encoding without base64
        first = int(counts.nonzero()[0][0])
        assert LOW_VALUES[first] == h.get_min_value()


def _raw(h: HdrHistogram) -> bytes:
    import base64

    return base64.b64decode(h.encode())


def _line(ts: int, phase: str, ops: dict[str, list[int]]) -> dict:
    return {
        "type": "interval",
        "agent": "agent1/0",
        "host": "agent1",
        "ts": ts,
        "phase": phase,
        "cpu_pct": 5.0,
        "ops": {
            op: {
                "ops": len(v),
                "errors": {},
                "late": 0,
                "service_hist": hist([x // 2 for x in v]),
                "response_hist": hist(v),
            }
            for op, v in ops.items()
        },
    }


@pytest.fixture(scope="module")
def two_target_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:
    path = Path(tmp_path_factory.mktemp("ec")) / "s.duckdb"
    rng = random.Random(3)
    raw: dict = {}
    with StoreWriter(path) as writer:
        run = writer.start_run("x", "recipes-mix", 'engine = "cassandra"\n', "", {}, {}, {})
        for number, (target, engine, scale) in enumerate(
            (("cassandra", "cassandra", 1), ("clickhouse", "clickhouse", 7))
        ):
            name = f"{target}:mix"
            start = T0 + number * 100
            params = {"type": "run", "engine": engine, "target": target}
            writer.phase_started(run, number, name, "run", float(start), params)
            for ts in range(start, start + 10):
                ops = {
                    op: [int(rng.uniform(300, 90_000) * scale) for _ in range(rng.randint(1, 9))]
                    for op in ("read", "insert_batch", "delete")
                }
                for op, values in ops.items():
                    raw.setdefault((target, op), []).extend(values)
                writer.add_interval(run, _line(ts, name, ops))
            writer.phase_ended(run, number, float(start + 10), {})
        writer.end_run(run, "completed", None)
    return path, run, raw


def test_engine_table_rows_are_exact(two_target_store: tuple[Path, str, dict]) -> None:
    path, run, raw = two_target_store
    assert run_sides(path, run) == [("cassandra", "cassandra"), ("clickhouse", "clickhouse")]
    rows = engine_table(path, [run])
    keys = [(r["phase"], r["op"], r["target"]) for r in rows]
    assert keys == [
        ("mix", op, target)
        for op in ("read", "insert_batch", "delete", "total")
        for target in ("cassandra", "clickhouse")
    ]
    for r in rows:
        values = (
            [v for (t, _o), vs in raw.items() if t == r["target"] for v in vs]
            if r["op"] == "total"
            else raw[(r["target"], r["op"])]
        )
        h = HdrHistogram(1, 60_000_000, 3)
        for v in values:
            h.record_value(v)
        assert r["ops"] == len(values)
        assert r["ops_per_s"] == pytest.approx(len(values) / 10)
        assert r["min_ms"] == h.get_min_value() / 1000.0
        assert r["median_ms"] == h.get_value_at_percentile(50) / 1000.0
        assert r["p90_ms"] == h.get_value_at_percentile(90) / 1000.0
        assert r["p95_ms"] == h.get_value_at_percentile(95) / 1000.0
        assert r["p99_ms"] == h.get_value_at_percentile(99) / 1000.0
        assert r["max_ms"] == h.get_max_value() / 1000.0
        assert r["avg_ms"] == pytest.approx(h.get_mean_value() / 1000.0, rel=1e-12)
        assert r["engine"] == r["target"] and r["errors"] == 0
        assert r["return_codes"] == {"OK": len(values)}
    service = engine_table(path, [run], phase="mix", kind="service")
    read = next(r for r in service if (r["op"], r["target"]) == ("read", "cassandra"))
    h = HdrHistogram(1, 60_000_000, 3)
    for v in raw[("cassandra", "read")]:
        h.record_value(v // 2)
    assert read["min_ms"] == h.get_min_value() / 1000.0


def test_compare_command_prints_the_engines_table(
    two_target_store: tuple[Path, str, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    from loadtower.cli import main

    path, run, _raw = two_target_store
    assert main(["compare", run, "--store", str(path)]) == 0
    out = capsys.readouterr().out
    for column in ("ops/s", "avg", "min", "max", "median", "p90", "p95", "p99", "return codes"):
        assert column in out
    for word in ("cassandra", "clickhouse", "insert_batch", "total"):
        assert word in out
    assert main(["compare", run, "--store", str(path), "--phase", "nope"]) == 2
    assert "no phase 'nope'" in capsys.readouterr().err
