"""node_exporter and a Prometheus that scrapes it every second, on loopback ports."""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

from loadtower.errors import LoadtowerError


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


def prometheus_command(home: Path, port: int, node_exporter_port: int) -> list[str]:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "prometheus.yml"
    config.write_text(
        "global:\n"
        "  scrape_interval: 1s\n"
        "  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: node\n"
        "    static_configs:\n"
        f"      - targets: ['127.0.0.1:{node_exporter_port}']\n"
    )
    return [
        binary("prometheus", "prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={home / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--storage.tsdb.retention.time=30d",
        "--log.level=warn",
    ]


def http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback
            return resp.status == 200
    except OSError:
        return False
