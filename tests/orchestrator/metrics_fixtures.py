"""A run's live state fed with real interval lines, and its metrics page read back, for
the metrics endpoint's unit tests."""

from __future__ import annotations

import random
import socket
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from loadtower.orchestrator.sinks import Sinks
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreWriter
from tests.orchestrator.phase_fixtures import INVENTORY as PLAIN_INVENTORY
from tests.tui.live_writer import histogram

SECRET = "hunter2-never-shown"  # the inventory's password: masked in every label
INVENTORY = PLAIN_INVENTORY + f'[cassandra]\nusername = "u"\npassword = "{SECRET}"\n'
SCENARIO = """
name = "metrics"
[[phases]]
name = "steady"
type = "run"
rate = 100
duration = "10s"
"""
PHASE = 'steady "odd" \\ phase'  # a label value prometheus_client must escape
AGENTS = ("agent1/0", "agent1/1")
HTTP_TIMEOUT_S = 10.0


def line(rng: random.Random, agent: str, ts: int, index: int) -> dict[str, Any]:
    """One agent's interval line of second `ts`: reads and updates with real HDR
    histograms, some failed ops (one class holds the secret) and late ops."""
    reads, updates = 40 + 7 * index, 25 + index
    return {
        "type": "interval", "agent": agent, "host": "agent1", "ts": ts, "phase": PHASE,
        "cpu_pct": 30.0 + index,
        "ops": {
            "read": {"ops": reads, "errors": {"ReadTimeout": 2}, "late": 3,
                     "service_hist": histogram(rng, reads - 2, 700),
                     "response_hist": histogram(rng, reads - 2, 900 + 50 * index)},
            "update": {"ops": updates, "errors": {f"Denied-{SECRET}": 1}, "late": 0,
                       "service_hist": histogram(rng, updates - 1, 1500),
                       "response_hist": histogram(rng, updates - 1, 2500)},
        },
    }  # fmt: skip


def new_sinks(tmp_path: Path) -> tuple[Sinks, StoreWriter]:
    """Sinks of a run on a real store (`tmp_path`/store.duckdb), between phases."""
    (tmp_path / "inv.toml").write_text(INVENTORY)
    (tmp_path / "sc.toml").write_text(SCENARIO)
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    writer = StoreWriter(tmp_path / "store.duckdb")
    run_id = writer.start_run("metrics", "metrics", SCENARIO, INVENTORY, {}, {}, {})
    return Sinks(writer, run_id, plan), writer


def feed(sinks: Sinks, first: int, seconds: int) -> None:
    """`seconds` seconds from `first` of both agents' lines, and a node sample each."""
    rng = random.Random(first)
    sinks.phase = PHASE
    for ts in range(first, first + seconds):
        for index, agent in enumerate(AGENTS):
            sinks.interval(line(rng, agent, ts, ts - first + index))
        sinks.node_sample({"ts": ts + 0.5, "host": "db1", "cpu_pct": 40.0 + ts - first,
                           "mem_used_bytes": 8_000_000_000, "mem_total_bytes": 24_000_000_000,
                           "disk_read_bps": 0.0, "disk_write_bps": 0.0, "net_rx_bps": 0.0,
                           "net_tx_bps": 0.0})


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as response:  # noqa: S310
        assert response.status == 200
        return str(response.read().decode())


def samples(text: str) -> list[Sample]:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(found: list[Sample], name: str, **labels: str) -> float:
    """The one sample `name` whose labels include `labels`."""
    matches = [s for s in found if s.name == name and labels.items() <= s.labels.items()]
    assert len(matches) == 1, (name, labels, matches)
    return float(matches[0].value)


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on `port` now (as the metrics server binds:
    SO_REUSEADDR, so the closed connections' TIME_WAIT does not count)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def answers(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=HTTP_TIMEOUT_S):
            return True
    except OSError:
        return False
