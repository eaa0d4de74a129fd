from __future__ import annotations

from pathlib import Path

import pytest

INVENTORY = """\
[ssh]
user = "root"
key = "/tmp/key"
known_hosts = "/tmp/known_hosts"

[metrics]
prometheus_url = "http://127.0.0.1:9090"

[cassandra]
username = "loadtower"
password_env = "LT_PW"

[hosts.db1]
address = "127.0.0.1"
ssh_port = 2222
roles = ["db"]
engine = "cassandra"

[hosts.db1.actions]
kill = "kill -9 $(cat /tmp/pid)"
compact = "nodetool compact"

[hosts.db2]
address = "127.0.0.2"
ssh_port = 2222
roles = ["db"]
engine = "cassandra"
standby = true

[hosts.db2.actions]
start = "start-node 2"
compact = "nodetool compact"

[hosts.agent1]
address = "127.0.0.1"
ssh_port = 2222
roles = ["agent"]
"""

SCENARIO = """\
name = "t"
engine = "cassandra"

[dataset]
records = 1000

[workloads.main]
preset = "ycsb-a"

[[phases]]
type = "load"

[[phases]]
type = "run"
duration = "10s"
rate = 100

[[phases]]
type = "fault"
host = "db1"
action = "kill"
rate = 100
"""


@pytest.fixture
def write(tmp_path: Path):
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write
