"""Running `loadtower run` as a user would, for the orchestrator's integration tests."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from loadtower.store import StoreReader

# the ops each YCSB preset (ycsb-a .. ycsb-f) runs: what a run of one stores
YCSB_OPS = {
    "a": {"read", "update"},
    "b": {"read", "update"},
    "c": {"read"},
    "d": {"read", "insert"},
    "e": {"scan", "insert"},
    "f": {"read", "read_modify_write"},
}


def ycsb_a_to_f_text(rate_of: dict[str, int]) -> tuple[str, str]:
    """The [workloads] and [[phases]] of a YCSB A-F run on a document/key engine: the
    six presets (batch_size 50, scan_length 20; e on table usertable_e of its own, since
    it inserts the same new keys as d), a load of a and one of e, then 3 s of each
    workload at `rate_of[w]` ops/s."""
    workloads = "\n".join(
        f'[workloads.{w}]\npreset = "ycsb-{w}"\nbatch_size = 50\nscan_length = 20\n'
        + ('table = "usertable_e"\n' if w == "e" else "")
        for w in YCSB_OPS
    )
    phases = '[[phases]]\ntype = "load"\nname = "load"\nworkload = "a"\nconcurrency = 8\n'
    phases += '\n[[phases]]\ntype = "load"\nname = "load-e"\nworkload = "e"\n'
    phases += "".join(
        f'\n[[phases]]\ntype = "run"\nname = "{w}"\nworkload = "{w}"\nduration = "3s"\n'
        f"rate = {rate_of[w]}\n" for w in YCSB_OPS
    )
    return workloads, phases


def scenario_argv(scenario: str | Path, inventory: Path, store: Path, *overrides: str) -> list[str]:
    """`loadtower run SCENARIO --inventory INV --headless --store STORE --set ...`."""
    argv = [sys.executable, "-m", "loadtower", "run", str(scenario), "--inventory", str(inventory)]
    argv += ["--headless", "--store", str(store)]
    for item in overrides:
        argv += ["--set", item]
    return argv


def run_scenario(
    scenario: str | Path,
    inventory: Path,
    store: Path,
    *overrides: str,
    timeout: float = 400,
) -> subprocess.CompletedProcess[str]:
    return run_argv(scenario_argv(scenario, inventory, store, *overrides), timeout)


def run_argv(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`argv` (a `loadtower run`) to its end, its output captured; one that does not end
    within `timeout` is asked where it waits (where_it_waits: SIGUSR2, SIGUSR1), then
    killed, and the test fails with that answer."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"`{' '.join(argv[2:5])}` did not end within {timeout:g} s; "
                             f"where it waited:\n{where_it_waited(proc)}") from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def ask_where(proc: subprocess.Popen[str]) -> None:
    """Ask a run that overstays where it waits (its stderr gets the answer)."""
    for sig in (signal.SIGUSR2, signal.SIGUSR1):
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            return
        time.sleep(1.0)


def where_it_waited(proc: subprocess.Popen[str]) -> str:
    """Ask, kill the run, and return the end of its stderr (the answer in it)."""
    ask_where(proc)
    proc.kill()
    try:
        _out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired as exc:  # a child kept the pipe open: what came
        raw = exc.stderr or b""
        err = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    return "\n".join((err or "").splitlines()[-250:])


def only_run(store: Path) -> dict:
    runs = StoreReader(store).runs()
    assert len(runs) == 1, runs
    return runs[0]


def phase_bounds(reader: StoreReader, run_id: str, name: str) -> tuple[int, int]:
    """Whole seconds fully inside the phase."""
    phase = next(p for p in reader.phases(run_id) if p["name"] == name)
    return int(phase["started"]) + 1, int(phase["ended"]) - 1


def remove_shipped(sandbox: dict, files: dict[str, Path]) -> None:
    """Remove the copies of `files` a run put on the sandbox's agent hosts (this machine).
    The folder they were in stays: under xdist another worker's run may be putting its own
    copy there at this moment (every sandbox's agent host shares ~/.loadtower)."""
    from loadtower.fleet.dataset_upload import DATASETS_DIR, sha256_of
    from loadtower.scenarios.loader import load_inventory

    inventory, _text = load_inventory(Path(sandbox["dir"]) / "inventory.toml")
    for host in inventory.with_role("agent").values():
        directory = Path(str(host.bootstrap_dir)).expanduser() / DATASETS_DIR
        for path in files.values():
            (directory / f"{sha256_of(path)[:16]}-{path.name}").unlink(missing_ok=True)


def run_text(tmp_path: Path, text: str, inventory: str | Path, *overrides: str, timeout: float = 240
             ) -> tuple[subprocess.CompletedProcess[str], StoreReader, str]:
    """`text` as tmp_path/s.toml run into tmp_path/runs.duckdb: (the process, the
    store's reader, the run's id)."""
    path = tmp_path / "s.toml"
    path.write_text(text)
    store = tmp_path / "runs.duckdb"
    done = run_scenario(path, Path(inventory), store, *overrides, timeout=timeout)
    return done, StoreReader(store), only_run(store)["id"]


def op_summary(reader: StoreReader, run_id: str) -> dict[tuple[str, str], dict]:
    """(phase, op) -> its stored phase_summary row."""
    return {(r["phase"], r["op"]): r for r in reader.phase_summary(run_id)}


def phase_results(reader: StoreReader, run_id: str) -> dict[str, dict]:
    """phase name -> its stored result."""
    out = {}
    for phase in reader.phases(run_id):
        result = phase["result"]
        out[phase["name"]] = json.loads(result) if isinstance(result, str) else result
    return out
