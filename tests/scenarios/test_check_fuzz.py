"""Random unicode (control characters, markup, lone surrogates, bidi and zero-width
characters) and numbers (huge, NaN, infinite) in scenario names, phase names, host
names, keyspaces and rates, through `load_plan` and `loadtower check`'s rendering:
never a traceback (only the loader's one-line error), never an ESC, BEL or CR byte in
what check prints."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.scenarios.plan import load_plan

from .conftest import INVENTORY, SCENARIO

PIECES = ["[/]", "[link=https://e.example]", "[bold]", "\x1b[31m", "\x1b]8;;x\x07", "\r",
          "\x07", "\u202e", "\u200b", "\ud800", "\x00", "\x9b", "\n", '"', "'", "\\", "{", ";"]
chars = st.characters(codec=None, categories=None)  # every code point, surrogates included
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(chars, max_size=6)), max_size=5).map(
    "".join
)
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63 - 1, 10**400, 0, -1]),
)


def toml_string(value: str, raw: bool) -> str:
    """A TOML string: escaped (\\uXXXX, valid unless a surrogate) or raw (control characters
    and surrogates make it invalid TOML or invalid UTF-8: a file a user can have too)."""
    return json.dumps(value, ensure_ascii=not raw)


def toml_number(value: float | int) -> str:
    if isinstance(value, float) and value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return repr(value)


@st.composite
def plans(draw: st.DrawFn) -> tuple[str, str]:
    raw = draw(st.booleans())
    name, phase = draw(texts), draw(texts)
    # valid or hostile: a valid plan reaches check's rendering with the hostile names
    host = draw(st.one_of(st.just("agent1"), texts))
    keyspace = draw(st.one_of(st.just("ks"), texts))
    scenario = SCENARIO.replace('name = "t"', f"name = {toml_string(name, raw)}")
    scenario = scenario.replace('type = "load"', f'type = "load"\nname = {toml_string(phase, raw)}')
    scenario = scenario.replace(
        'engine = "cassandra"\n', f'engine = "cassandra"\n[target]\nkeyspace = {toml_string(keyspace, raw)}\n', 1
    )
    rate, records = (draw(st.one_of(st.integers(1, 1000), numbers)) for _ in range(2))
    scenario = scenario.replace("rate = 100\n\n", f"rate = {toml_number(rate)}\n\n", 1)
    scenario = scenario.replace("records = 1000", f"records = {toml_number(records)}")
    inventory = INVENTORY.replace("[hosts.agent1]", f"[hosts.{toml_string(host, raw)}]")
    return scenario, inventory


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    return path


@settings(
    max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(plans())
def test_load_plan_and_check_output(files: tuple[str, str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        s, i = _write(Path(folder) / "s.toml", files[0]), _write(Path(folder) / "inv.toml", files[1])
        try:
            load_plan(s, i)
            loaded = True
        except ConfigError as exc:
            assert str(exc).startswith(str(s)) or str(exc).startswith(str(i))
            loaded = False
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", str(s), "-i", str(i)])
    printed = out.getvalue() + err.getvalue()
    assert "Traceback" not in printed
    for byte in ("\x1b", "\x07", "\r", "\x9b"):
        assert byte not in printed, repr(printed)
    if loaded:
        assert code == 0, printed
        assert "ok" in out.getvalue()
    else:
        assert code == 2
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("loadtower check: "), lines
