"""node_exporter and a Prometheus that scrapes it every second, on loopback ports; it
scrapes `loadtower run` too, at the address the sandbox reserves for a run's live
figures (the inventory's ``[metrics] serve``; docs/prometheus.md)."""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox.state import SandboxState

RUN_METRICS = "run_metrics"  # the port `loadtower run` serves its figures on (state.ports)
RUN_METRICS_PORT = 9464  # preferred, when free


def binary(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise LoadtowerError(f"'{name}' is not installed (apt-get install {package})")
    return path


def node_exporter_command(port: int) -> list[str]:
    return [
        binary("prometheus-node-exporter", "prometheus-node-exporter"),
        f"--web.listen-address=127.0.0.1:{port}",
        "--no-collector.wifi",
        "--no-collector.hwmon",
        "--no-collector.zfs",
        # every sandbox "host" talks over loopback: keep lo (Debian's default drops it)
        "--collector.netdev.device-exclude=^$",
    ]


def run_metrics_target(state: SandboxState) -> str | None:
    """HOST:PORT where `loadtower run` on this sandbox's inventory serves its figures:
    the port reserved on the first node's loopback address (each sandbox has its own
    address range, so two sandboxes' runs never want one port), None for a sandbox
    made before it had one."""
    port = state.ports.get(RUN_METRICS)
    return f"{state.nodes[1].address}:{port}" if port and 1 in state.nodes else None


def prometheus_command(
    home: Path, port: int, node_exporter_port: int, run_target: str | None = None
) -> list[str]:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "prometheus.yml"
    config.write_text(prometheus_config(node_exporter_port, run_target))
    return [
        binary("prometheus", "prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={home / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--storage.tsdb.retention.time=30d",
        "--log.level=warn",
    ]


def prometheus_config(node_exporter_port: int, run_target: str | None) -> str:
    """prometheus.yml: every second, node_exporter (job ``node``) and, given its
    target, `loadtower run`'s live figures (job ``loadtower``)."""
    text = (
        "global:\n"
        "  scrape_interval: 1s\n"
        "  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: node\n"
        "    static_configs:\n"
        f"      - targets: ['127.0.0.1:{node_exporter_port}']\n"
    )
    if run_target is not None:  # down between runs: Prometheus notes it and scrapes on
        text += (
            "  - job_name: loadtower\n"
            "    static_configs:\n"
            f"      - targets: ['{run_target}']\n"
        )
    return text


def http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback
            return resp.status == 200
    except OSError:
        return False
