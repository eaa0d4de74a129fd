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
# what is run -> the heavy libraries it must not load
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "loadtower --help": (HELP, ("textual", "duckdb", "pyarrow", "numba", "pandas")),
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
