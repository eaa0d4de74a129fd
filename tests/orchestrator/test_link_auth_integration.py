"""The load workers' link during a real run on the sandbox (docs/security.md):

- an impostor on the agent host that connects to the forwarded Locust port as a ZeroMQ
  DEALER and speaks Locust's worker protocol gets nothing at all (no phase, no ack), is
  named in a `link_refused` event, and the run completes with the real workers;
- no message the master sends over the link holds the database password (a tap on
  every message: tests/orchestrator/link_probe.py);
- the run's private directory on the agent host is 0700 with 0600 files while the run
  goes, and gone after it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.agents import locust_setup  # noqa: F401 - before locust: no monkey-patching
from loadtower.store import StoreReader
from tests.orchestrator.link_probe import (
    Impostor,
    run_id_of,
    tap_env,
    tapped,
    wait_for,
    workers_of,
)
from tests.orchestrator.run_helpers import only_run

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

RUN_TIMEOUT_S = 400.0


def _modes(directory: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(os.lstat(directory).st_mode)}
    for entry in directory.iterdir():
        out[entry.name] = stat.S_IMODE(os.lstat(entry).st_mode)
    return out


def test_an_impostor_gets_nothing_and_the_run_completes(sandbox: dict, tmp_path: Path) -> None:
    inventory = Path(sandbox["inventory"])
    store = tmp_path / "runs.duckdb"
    env, tap = tap_env(tmp_path / "tap")
    argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory",
            str(inventory), "--headless", "--store", str(store), "--set", "dataset.records=3000",
            "--set", "phases[1].duration=8s", "--set", "phases[1].rate=200"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    impostor = None
    seen: dict[str, int] = {}
    try:
        run_id = wait_for(lambda: run_id_of(proc.pid), 120)
        assert run_id, "the run's Locust master never started"
        workers = wait_for(lambda: workers_of(run_id), 120)
        assert workers, "no load worker started on the agent host"
        # what any user of the agent host sees in `ps`: the forwarded port
        impostor = Impostor(workers[0]["master"]).start()
        private = Path(workers[0]["secret_dir"])
        while proc.poll() is None:  # the private directory while the run goes
            if private.is_dir():
                seen.update(_modes(private))
            try:
                proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if impostor is not None:
            impostor.stop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    run = only_run(store)
    assert run["status"] == "completed"
    assert impostor.sent >= 2
    assert impostor.received == []  # not even Locust's ack: the master never heard it
    events = StoreReader(store).events(run["id"])
    refused = [e for e in events if e["kind"] == "link_refused"]
    assert len(refused) == 1 and "b'impostor_probe'" in refused[0]["message"], refused
    # it was there before the run phase began: a master without the proof would have
    # registered it and sent it that phase (with the password, before issue 26)
    phases = {p["name"]: p for p in StoreReader(store).phases(run["id"])}
    assert refused[0]["ts"] < phases["ycsb-a"]["started"]
    summary = {(r["phase"], r["op"]): r for r in StoreReader(store).phase_summary(run["id"])}
    assert summary[("1-load", "insert")]["ops"] == 3000
    assert summary[("ycsb-a", "read")]["ops"] + summary[("ycsb-a", "update")]["ops"] > 0
    # the secrets: 0600 files in a 0700 directory during the run, gone after it
    assert seen.get(".") == 0o700 and seen.get("link.key") == 0o600, seen
    secrets = {name: mode for name, mode in seen.items() if name.startswith("secret-")}
    assert secrets and set(secrets.values()) == {0o600}, seen
    assert not private.exists()
    # no message the master sent holds the password, while the phases did go through it
    password = sandbox["cassandra"]["password"].encode()
    messages = tapped(tap)
    sent = [data for kind, _node, data in messages if kind == "lt_phase"]
    assert len(sent) >= 2 and all(b"password_ref" in p and b"secret-" in p for p in sent)
    assert not [kind for kind, _node, data in messages if password in data]
    assert all(node != "impostor_probe" for _kind, node, _data in messages)
