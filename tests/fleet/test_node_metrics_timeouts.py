"""Node metrics never wait forever on a Prometheus that accepts and then says nothing.

The "Prometheus" is a real listening socket that never answers: each HTTP query ends
at its read timeout, a tick's thread ends within the tick's budget, and a tick never
starts a second thread while one still waits.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from loadtower.fleet import node_metrics as metrics
from loadtower.fleet.node_metrics import NodeMetricsSampler, prometheus_queries
from loadtower.scenarios.models import Inventory

pytestmark = pytest.mark.timeout(60)


@pytest.fixture()
def silent_server() -> Iterator[str]:
    """A URL whose server accepts connections (the kernel's backlog) and never replies."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def _sampler(url: str, warnings: list[str]) -> NodeMetricsSampler:
    inventory = Inventory.model_validate(
        {
            "metrics": {"prometheus_url": url},
            "hosts": {
                "db1": {
                    "address": "127.0.0.250",
                    "roles": ["db"],
                    "engine": "cassandra",
                    "node_exporter": "127.0.0.1:9100",
                }
            },
        }
    )
    return NodeMetricsSampler(inventory, pool=None, on_warning=lambda h, m: warnings.append(m))


def test_a_query_to_a_silent_prometheus_ends_at_its_timeout(
    silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metrics, "QUERY_TIMEOUT_S", 0.3)
    monkeypatch.setattr(metrics, "TICK_BUDGET_S", 1.0)
    sampler = _sampler(silent_server, [])
    queries = prometheus_queries(["127.0.0.1:9100"], loopback=True)
    with pytest.raises(Exception) as caught:
        sampler._query_all(silent_server, queries)
    assert "timed out" in str(caught.value).lower() or isinstance(caught.value, TimeoutError)
    assert sampler._querying is False  # the thread is done, not still waiting


def test_a_tick_warns_once_and_never_piles_up_threads(
    silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metrics, "QUERY_TIMEOUT_S", 0.3)
    monkeypatch.setattr(metrics, "TICK_BUDGET_S", 1.0)
    warnings: list[str] = []
    sampler = _sampler(silent_server, warnings)
    hosts = {"db1": "127.0.0.1:9100"}
    asyncio.run(sampler._prometheus_tick(hosts))
    assert len(warnings) == 1 and f"Prometheus at {silent_server} failed" in warnings[0]
    assert sampler._queue.empty()

    sampler._querying = True  # as while an abandoned tick's thread still waits
    asyncio.run(sampler._prometheus_tick(hosts))
    assert len(warnings) == 1 and sampler._querying is True  # skipped: no second thread
