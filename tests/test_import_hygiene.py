"""Heavy libraries deferred on purpose stay deferred (issue 30: imports go at the module's
top, unless a heavy third-party import is deferred on purpose and a test guards it).

Each case imports a module (or runs `loadtower --help`) in a fresh interpreter and checks
that the libraries named are not in sys.modules afterwards:

- `loadtower --help` imports the CLI and every command module (for their HELP and
  arguments); the commands import DuckDB, Textual, ... in `run`, so the help and the
  parser stay fast.
- the store: the HDR kernels (numba) are compiled when first needed; a read-only
  connection's SQL functions and the reader (pyarrow) are not needed by a bare
  connection or the live feed.
- the TUI: the app and the screens that do not query the store load no DuckDB until a
  screen opens; a headless `loadtower run` imports tui/launch.py without Textual.
- the scenarios' and the sandbox's command modules (also loaded by `loadtower --help`):
  none loads pydantic, rich, numpy, asyncssh, locust, cryptography or psutil before its
  `run`; the control API (imported by the TUI) loads no plan (pydantic, rich, duckdb).
- the orchestrator: asyncssh (the SSH pool, the host-key checks) and numba (the store's
  writer) are imported when a run or a cleanup starts, not by the modules that describe
  it; a workload file's target checks load no rich.
- the sandbox: cryptography only for a sandbox with TLS (tls_certs.py).
- the engines: an agent backend loads neither its driver (cassandra-driver, acsylla,
  clickhouse-connect, pymongo, redis) nor numpy (a workload file's runner); the
  orchestrator's MongoDB hooks load pymongo when they talk to a host.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 60
HELP = """
import contextlib, io
import loadtower.cli
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    loadtower.cli.main(["--help"])
assert "usage: loadtower" in out.getvalue(), out.getvalue()
"""
# the Locust master's side of the agent (orchestrator/locust_master.py)
LOCUST = ("locust", "gevent", "zmq")
# what is run -> the heavy libraries it must not load
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "loadtower --help": (HELP, ("textual", "duckdb", "pyarrow", "numba", "pandas", "numpy",
                                "pydantic", "rich", "asyncssh", *LOCUST, "cryptography",
                                "psutil")),
    "import loadtower.cli": ("import loadtower.cli",
                             ("textual", "duckdb", "pyarrow", "numba", "pandas")),
    "store.hdr": ("import loadtower.store.hdr", ("numba",)),
    "store.reader": ("import loadtower.store.reader", ("numba",)),
    "store.connection": ("import loadtower.store.connection", ("pyarrow", "numba")),
    "store.live_feed": ("import loadtower.store.live_feed", ("pyarrow", "numba")),
    "tui.app": ("import loadtower.tui.app", ("duckdb", "pyarrow")),
    "tui.screens.sql_console": ("import loadtower.tui.screens.sql_console", ("duckdb",)),
    "tui.screens.engines": ("import loadtower.tui.screens.engines", ("duckdb",)),
    "tui.screens.compare": ("import loadtower.tui.screens.compare", ("duckdb",)),
    "tui.launch": ("import loadtower.tui.launch", ("textual", "duckdb")),
    "run_with_tui": ("import loadtower.run_with_tui",
                     ("textual", "duckdb", "pydantic", "rich", "asyncssh")),
    "demo_command": ("import loadtower.demo_command",
                     ("pydantic", "rich", "duckdb", "cryptography", "psutil")),
    "orchestrator.run_command": ("import loadtower.orchestrator.run_command",
                                 ("pydantic", "rich", "duckdb", "pyarrow", "numpy", "asyncssh",
                                  "textual", *LOCUST)),
    "scenarios.check_command": ("import loadtower.scenarios.check_command",
                                ("pydantic", "rich", "duckdb", "numpy")),
    "scenarios.control_command": ("import loadtower.scenarios.control_command",
                                  ("pydantic", "rich", "duckdb")),
    "fleet.cleanup_command": ("import loadtower.fleet.cleanup_command",
                                     ("pydantic", "asyncssh")),
    "orchestrator.agent_master_command": ("import loadtower.orchestrator.agent_master_command",
                                          LOCUST),
    "orchestrator.standalone_load_command": (
        "import loadtower.orchestrator.standalone_load_command",
        ("pydantic", "duckdb", "pyarrow", "numpy", *LOCUST)),
    "scenarios.control_api": ("import loadtower.scenarios.control_api",
                              ("pydantic", "rich", "duckdb")),
    "scenarios.environment_checks": ("import loadtower.scenarios.environment_checks",
                                     ("asyncssh",)),
    "scenarios.workloads.target_spec": ("import loadtower.scenarios.workloads.target_spec",
                                        ("rich",)),
    "orchestrator.benchmark": ("import loadtower.orchestrator.benchmark",
                               ("asyncssh", "numba", *LOCUST)),
    "orchestrator.context": ("import loadtower.orchestrator.context", ("asyncssh",)),
    "orchestrator.cleanup_hosts": ("import loadtower.fleet.cleanup_hosts",
                                   ("asyncssh",)),
    "sandbox.commands": ("import loadtower.sandbox.commands", ("cryptography", "psutil")),
    "sandbox.sandbox": ("import loadtower.sandbox.sandbox", ("cryptography",)),
    "engines.cassandra.agent.backend": ("import loadtower.engines.cassandra.agent.backend",
                                        ("numpy", "cassandra", "acsylla")),
    "engines.clickhouse.agent.backend": ("import loadtower.engines.clickhouse.agent.backend",
                                         ("numpy", "clickhouse_connect")),
    "engines.mongodb.agent.backend": ("import loadtower.engines.mongodb.agent.backend",
                                      ("numpy", "pymongo")),
    "engines.redis.agent.backend": ("import loadtower.engines.redis.agent.backend",
                                    ("numpy", "redis")),
    "engines.mongodb.orchestrator.node": ("import loadtower.engines.mongodb.orchestrator.node",
                                          ("pymongo",)),
}


def loaded(code: str, names: tuple[str, ...]) -> list[str]:
    """Which of `names` are in sys.modules after running `code` in a fresh interpreter
    (from the repository root: loadtower/<room> are the rooms of this tree)."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([n for n in {list(names)!r} " \
            "if n in sys.modules]))\n"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads(done.stdout.splitlines()[-1])
    return found


@pytest.mark.parametrize("case", list(CASES))
def test_heavy_imports_stay_deferred(case: str) -> None:
    code, heavy = CASES[case]
    found = loaded(code, heavy)
    assert found == [], (f"{case} loads {found}: import them inside the function that "
                         "needs them (with a '# deferred: ...' comment)")


def test_the_probe_sees_a_loaded_library() -> None:
    """The check can fail: a library imported by the code is reported."""
    assert loaded("import json", ("json", "duckdb")) == ["json"]
