"""Where `loadtower run` serves its figures: --metrics-address, else the inventory's
[metrics] serve, never with --no-metrics. A bad address or a taken port is one line and
exit 2 before the run starts (nothing stored); a headless run serves while it runs and
the server is gone when it returns."""

from __future__ import annotations

import argparse
import asyncio
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError, LoadtowerError
from loadtower.orchestrator import headless_session
from loadtower.orchestrator.benchmark import Orchestrator, RunState
from loadtower.orchestrator.sinks import Sinks
from loadtower.scenarios.loader import load_inventory
from loadtower.scenarios.plan import load_plan
from loadtower.scenarios.serve_address import ServeAddress, chosen_address, parse_serve_address
from loadtower.store import StoreReader, StoreWriter
from tests.orchestrator.metrics_fixtures import (
    INVENTORY,
    SCENARIO,
    answers,
    feed,
    port_free,
    samples,
    scrape,
    value,
)


@pytest.fixture
def listening() -> Iterator[int]:
    """A port on 127.0.0.1 another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _files(tmp_path: Path, inventory: str = INVENTORY) -> tuple[Path, Path]:
    (tmp_path / "sc.toml").write_text(SCENARIO)
    (tmp_path / "inv.toml").write_text(inventory)
    return tmp_path / "sc.toml", tmp_path / "inv.toml"


def _run(tmp_path: Path, *extra: str, inventory: str = INVENTORY) -> int:
    scenario, inv = _files(tmp_path, inventory)
    return main(["run", str(scenario), "--inventory", str(inv), "--headless",
                 "--store", str(tmp_path / "store.duckdb"), *extra])


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("9464", ("127.0.0.1", 9464)), ("0.0.0.0:80", ("0.0.0.0", 80)),
     ("localhost:65535", ("localhost", 65535)), ("[::1]:9464", ("::1", 9464))],
)
def test_good_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_serve_address(text) == expected


@pytest.mark.parametrize("bad", ["0", "70000", "host:", ":9464", "a b:1", "[::1]9464",
                                 "127.0.0.1:x", "١٢٣", "9464\n"])
def test_a_bad_metrics_address_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    assert _run(tmp_path, "--metrics-address", bad) == 2
    line = _one_line(capsys)
    assert line.startswith("loadtower run: --metrics-address: invalid address "), line
    assert "expected [HOST:]PORT such as 9464 or 127.0.0.1:9464" in line
    assert not (tmp_path / "store.duckdb").exists()


def test_a_bad_serve_in_the_inventory_names_file_line_and_key(tmp_path: Path) -> None:
    _scenario, inv = _files(tmp_path, INVENTORY + '[metrics]\nserve = "127.0.0.1:0"\n')
    with pytest.raises(ConfigError) as info:
        load_inventory(inv)
    line = INVENTORY.count("\n") + 2  # the serve line's
    message = str(info.value)
    assert message.startswith(f"{inv}:{line}: key 'metrics.serve': invalid address "
                              "'127.0.0.1:0': expected [HOST:]PORT"), message


def test_a_taken_port_is_one_line_and_exit_2_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], listening: int
) -> None:
    assert _run(tmp_path, "--metrics-address", f"127.0.0.1:{listening}") == 2
    line = _one_line(capsys)
    assert line == (f"loadtower run: cannot serve metrics on 127.0.0.1:{listening} "
                    "(--metrics-address): the port is in use (another run or program); "
                    "choose another port; or run with --no-metrics")
    assert not (tmp_path / "store.duckdb").exists()  # no run was started


def test_a_taken_port_of_the_inventorys_default_warns_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], listening: int
) -> None:
    """The inventory's serve (every run on a sandbox has one): a second run at the same
    time is not refused; it says it does not serve (the port is the first run's)."""
    inventory = INVENTORY + f'[metrics]\nserve = "127.0.0.1:{listening}"\n'
    _run(tmp_path, inventory=inventory)  # its hosts do not exist: how it ends is not tested
    err = capsys.readouterr().err
    warning = next(line for line in err.splitlines() if "warning" in line)
    assert warning == (f"loadtower run: warning: cannot serve metrics on 127.0.0.1:{listening} "
                       f"([metrics] serve of {tmp_path / 'inv.toml'}): the port is in use "
                       "(another run or program); choose another port; the run goes on "
                       "without serving them")
    assert (tmp_path / "store.duckdb").exists()  # the run started


def test_option_then_inventory_then_nothing() -> None:
    assert chosen_address("9000", False, "127.0.0.2:9001", "inv.toml") == ServeAddress(
        "127.0.0.1", 9000, "--metrics-address")
    assert chosen_address(None, False, "127.0.0.2:9001", "inv.toml") == ServeAddress(
        "127.0.0.2", 9001, "[metrics] serve of inv.toml")
    assert chosen_address(None, True, "127.0.0.2:9001", "inv.toml") is None
    assert chosen_address(None, False, None, "inv.toml") is None
    with pytest.raises(LoadtowerError):
        chosen_address("nope", False, None, "inv.toml")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_headless_run_serves_while_it_runs_and_not_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, inv = _files(tmp_path)
    plan = load_plan(scenario, inv)
    store = tmp_path / "store.duckdb"
    port = _free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    scraped: list[str] = []

    async def run(self: Orchestrator) -> RunState:  # a run of two seconds, no hosts
        writer = StoreWriter(store)
        run_id = writer.start_run("m", "metrics", SCENARIO, INVENTORY, {}, {}, {})
        self.state.run_id, self.state.status = run_id, "running"
        self.sinks = Sinks(writer, run_id, plan)
        feed(self.sinks, int(time.time()) - 30, 2)
        scraped.append(await asyncio.to_thread(scrape, url))
        writer.close()
        self.state.status = "completed"
        return self.state

    monkeypatch.setattr(Orchestrator, "run", run)
    args = argparse.Namespace(accept_new_host_keys=False, control=None, name=None,
                              metrics_address=f"127.0.0.1:{port}", no_metrics=False)
    code = asyncio.run(asyncio.wait_for(headless_session.run_headless(plan, store, args), 120))
    assert code == 0, capsys.readouterr()
    [run_row] = StoreReader(store).runs()
    reads = [r for r in StoreReader(store).op_seconds(run_row["id"]) if r["op"] == "read"]
    found = samples(scraped[0])
    assert value(found, "loadtower_ops_per_second", run_id=run_row["id"], op="read") == (
        reads[-1]["ops"])  # the last second's
    assert not answers(port) and port_free(port)  # the server is gone with the run
