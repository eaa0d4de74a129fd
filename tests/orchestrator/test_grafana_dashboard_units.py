"""docs/grafana-loadtower.json (Grafana is not installed here): every panel's PromQL, its
variables' queries and legends name only metrics the metrics endpoint exports, with
labels those metrics have; the names come from a real scrape of a fed run."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest

from loadtower.orchestrator.metrics_endpoint import serve_run
from loadtower.scenarios.serve_address import ServeAddress
from tests.orchestrator.metrics_fixtures import feed, new_sinks, samples, scrape

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-loadtower.json"
# what a PromQL expression may name besides metrics: functions, aggregations, keywords
PROMQL_WORDS = {
    "sum", "avg", "min", "max", "count", "topk", "bottomk", "rate", "irate", "increase",
    "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
    "histogram_quantile", "clamp_min", "clamp_max", "abs", "time", "timestamp", "vector",
    "offset", "bool",
}  # fmt: skip
TARGET_LABELS = {"job", "instance"}  # added by Prometheus to every scraped series
LABEL_VALUES = re.compile(r"label_values\((?:(.+),\s*)?(\w+)\)")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Sample name -> its label names, from a scrape of a run with every kind of figure."""
    sinks, writer = new_sinks(tmp_path_factory.mktemp("dashboard"))
    feed(sinks, int(time.time()) - 60, 3)

    async def scraped() -> str:
        endpoint = serve_run(ServeAddress("127.0.0.1", 0, "test"), lambda: sinks,
                             asyncio.get_running_loop())
        try:
            return await asyncio.to_thread(scrape, endpoint.url)
        finally:
            await asyncio.to_thread(endpoint.close)

    text = asyncio.run(asyncio.wait_for(scraped(), 60))
    writer.close()
    names: dict[str, set[str]] = {}
    for sample in samples(text):
        names.setdefault(sample.name, set()).update(sample.labels)
    return names


def _dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def _panels(items: list[dict]) -> list[dict]:
    """Every panel, rows' panels included."""
    found = []
    for item in items:
        found.append(item)
        found += _panels(item.get("panels") or [])
    return found


def problems(expr: str, exported: dict[str, set[str]]) -> tuple[set[str], list[str]]:
    """(labels the expression may use, what is wrong with it)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals out
    text = re.sub(r"\[[^\]]*\]", "", text)  # range selectors ([$__rate_interval], [5m])
    text = re.sub(r"\$\{?\w+\}?", "", text)  # Grafana variables left
    used = [name for block in re.findall(r"\{([^}]*)\}", text)
            for name in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", block)]
    used += [name.strip() for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", text)
             for name in group.split(",") if name.strip()]
    rest = re.sub(r"\{[^}]*\}|\b(?:by|without)\s*\([^)]*\)", " ", text)
    wrong: list[str] = []
    metrics: set[str] = set()
    for word, call in re.findall(r"\b([A-Za-z_][\w:]*)\s*(\()?", rest):
        if call and word not in PROMQL_WORDS:
            wrong.append(f"unknown function {word}")
        elif not call and word not in PROMQL_WORDS:
            metrics.add(word)
    wrong += [f"metric {m} is not exported" for m in sorted(metrics) if m not in exported]
    labels = set().union(*(exported.get(m, set()) for m in metrics)) | TARGET_LABELS
    wrong += [f"label {name} is on none of {sorted(metrics)}" for name in used
              if name not in labels]
    if not metrics:
        wrong.append("names no metric")
    return labels, wrong


def test_every_panel_queries_exported_metrics_and_labels(exported: dict[str, set[str]]) -> None:
    panels = _panels(_dashboard()["panels"])
    assert len(panels) >= 8
    checked = 0
    for panel in panels:
        for target in panel.get("targets") or []:
            labels, wrong = problems(target["expr"], exported)
            legend = re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat") or "")
            wrong += [f"legend label {name} is not there" for name in legend if name not in labels]
            assert not wrong, (panel["title"], target["expr"], wrong)
            checked += 1
    assert checked >= len(panels)
    named = {m for p in panels for t in p.get("targets") or [] for m in re.findall(
        r"loadtower_\w+", t["expr"])}
    assert named >= {"loadtower_ops_per_second", "loadtower_latency_seconds",
                     "loadtower_errors_total", "loadtower_late_ops_total",
                     "loadtower_agent_cpu_percent"}, named


def test_every_variable_query_names_an_exported_metric_and_label(
    exported: dict[str, set[str]]
) -> None:
    queries = [v for v in _dashboard()["templating"]["list"] if v["type"] == "query"]
    assert {v["name"] for v in queries} == {"run_id", "phase", "op"}
    for variable in queries:
        found = LABEL_VALUES.fullmatch(variable["query"]["query"])
        assert found, variable
        selector, label = found.groups()
        labels, wrong = problems(selector, exported)
        assert not wrong and label in labels, (variable["name"], wrong)


def test_the_checker_catches_a_wrong_name_and_label(exported: dict[str, set[str]]) -> None:
    assert problems("sum(rate(loadtower_opz_total[1m]))", exported)[1] == [
        "metric loadtower_opz_total is not exported"]
    assert problems('sum by (host) (loadtower_ops_per_second{run_id="x"})', exported)[1] == [
        "label host is on none of ['loadtower_ops_per_second']"]
    assert problems('loadtower_latency_seconds{quantil="0.99"}', exported)[1] == [
        "label quantil is on none of ['loadtower_latency_seconds']"]
