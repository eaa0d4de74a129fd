"""`loadtower run` on the sandbox's inventory serves its live figures where the sandbox's
Prometheus scrapes them (the inventory's ``[metrics] serve``, no option): during a short
fixed-rate phase Prometheus has the run's ops/s series; afterwards the ops/s it scraped
for each second (joined, scrape by scrape, with the second they are of) are the store's
op_seconds ops of that second; the port is free once the run has ended."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.metrics_fixtures import answers, port_free
from tests.orchestrator.run_helpers import ask_where, only_run, scenario_argv

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

PHASE = "ycsb-a"
SHORT = (
    "target.keyspace=lt_test_prometheus",
    "dataset.records=2000",
    "phases[1].duration=10s",
    "phases[1].rate=200",
)
RUN_TIMEOUT_S = 400.0
HTTP_TIMEOUT_S = 5.0


def _api(prometheus: str, path: str, **params: str) -> Any:
    url = f"{prometheus}{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as response:  # noqa: S310
        body = json.loads(response.read())
    assert body["status"] == "success", body
    return body["data"]


def _watch(proc: subprocess.Popen[str], prometheus: str, err: Path) -> list[dict]:
    """Until the run exits: the ops/s series of the run phase Prometheus has now."""
    seen: list[dict] = []
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while proc.poll() is None:
        if time.monotonic() > deadline:
            ask_where(proc)
            raise AssertionError("the run did not end; where it waited:\n"
                                 + "\n".join(err.read_text().splitlines()[-250:]))
        data = _api(prometheus, "/api/v1/query",
                    query=f'loadtower_ops_per_second{{job="loadtower", phase="{PHASE}"}}')
        seen += [row for row in data["result"] if float(row["value"][1]) > 0]
        time.sleep(0.5)
    return seen


def _scraped(prometheus: str, run_id: str, since: float) -> dict[tuple[int, str], float]:
    """(second, op) -> the ops/s Prometheus scraped for that second of the run phase:
    each scrape's ops/s joined with the same scrape's loadtower_second_timestamp_seconds."""
    window = f"[{int(time.time() - since) + 30}s]"
    selector = f'{{run_id="{run_id}"}}'
    [seconds] = _api(prometheus, "/api/v1/query",
                     query=f"loadtower_second_timestamp_seconds{selector}{window}")["result"]
    second_at = {float(t): int(float(v)) for t, v in seconds["values"]}
    rates = _api(prometheus, "/api/v1/query",
                 query=f'loadtower_ops_per_second{{run_id="{run_id}", phase="{PHASE}"}}{window}')
    found: dict[tuple[int, str], float] = {}
    for series in rates["result"]:
        for t, v in series["values"]:
            if float(t) in second_at:
                found[(second_at[float(t)], series["metric"]["op"])] = float(v)
    return found


def test_the_sandboxs_prometheus_scrapes_the_runs_ops_per_second(
    sandbox: dict, tmp_path: Path
) -> None:
    target = sandbox["prometheus"].get("run_target")
    if not target:
        pytest.fail("this sandbox has no port for a run's figures (made before it had one): "
                    "`loadtower sandbox down` and `up` again")
    prometheus = sandbox["prometheus"]["url"]
    host, port = target.rsplit(":", 1)
    store = tmp_path / "runs.duckdb"
    started = time.time()
    argv = scenario_argv("quickstart", Path(sandbox["inventory"]), store, *SHORT)
    with (tmp_path / "out.log").open("w") as out, (tmp_path / "err.log").open("w") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        try:
            live = _watch(proc, prometheus, tmp_path / "err.log")
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)
    assert proc.returncode == 0, (tmp_path / "err.log").read_text()[-3000:]
    run = only_run(store)
    assert live, "Prometheus had no ops/s series of the run while it ran"
    assert {row["metric"]["run_id"] for row in live} == {run["id"]}
    assert not answers(int(port), host) and port_free(int(port), host)  # gone with the run

    stored = {(r["ts"], r["op"]): r["ops"]
              for r in StoreReader(store).op_seconds(run["id"], PHASE)}
    scraped = _scraped(prometheus, run["id"], started)
    compared = {key: (rate, stored.get(key, 0)) for key, rate in scraped.items()
                if rate or stored.get(key, 0)}  # the seconds with ops (not a phase's 0 tail)
    close = {key for key, (rate, ops) in compared.items() if abs(rate - ops) <= 0.01 * ops}
    print(f"{len(close)} of {len(compared)} (second, op) figures within 1% of the store's")
    assert len({second for second, _op in close}) >= 5, compared
    assert len(close) >= 0.8 * len(compared), {k: v for k, v in compared.items() if k not in close}
