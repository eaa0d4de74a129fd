"""Random and mutated TOML never raises anything but ConfigError (with a message)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadtower.errors import ConfigError
from loadtower.scenarios.catalog import resolve_scenario
from loadtower.scenarios.loader import load_inventory, load_scenario

from .conftest import INVENTORY, SCENARIO

SEEDS = [SCENARIO, INVENTORY, resolve_scenario("scale-out-compaction").read_text()]
TOKENS = [
    '"x"',
    "1",
    "-5",
    "1.5",
    "true",
    "[]",
    "{}",
    "[[phases]]",
    "[hosts.h]",
    "=",
    "\n",
    "type = ",
    "rate = ",
    "duration = ",
    '"10q"',
    "roles = ",
    '["db"]',
    "0",
    '"run"',
    "mix = { read = -1 }",
    "actions = 5",
    "[workloads.w]",
    "preset = ",
]

scalars = st.one_of(
    st.integers(-10, 10**9),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace_line"]))
        if action == "insert":
            text = text[:pos] + draw(st.sampled_from(TOKENS)) + text[pos:]
        elif action == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 30)) :]
        else:
            lines = text.splitlines()
            if lines:
                i = draw(st.integers(0, len(lines) - 1))
                key = lines[i].split("=")[0].strip() or "k"
                lines[i] = f"{key} = {draw(st.sampled_from(TOKENS + ['999999999999999999999']))}"
                text = "\n".join(lines)
    return text


def _check(tmp: Path, text: str) -> None:
    path = tmp / "f.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    for loader in (load_scenario, load_inventory):
        try:
            loader(path)
        except ConfigError as exc:
            assert str(exc).startswith(str(path))
            assert len(str(exc).splitlines()) == 1


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=mutated())
def test_mutated_files_give_config_errors(tmp_path: Path, text: str) -> None:
    _check(tmp_path, text)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=200))
def test_random_text_gives_config_errors(tmp_path: Path, text: str) -> None:
    try:
        _check(tmp_path, text)
    except UnicodeEncodeError:
        pass  # not a file a user can write


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.dictionaries(
        st.sampled_from(
            [
                "name",
                "engine",
                "phases",
                "hosts",
                "target",
                "dataset",
                "workloads",
                "ssh",
                "metrics",
                "cassandra",
                "zzz",
            ]
        ),
        scalars,
        max_size=6,
    )
)
def test_random_structures_give_config_errors(tmp_path: Path, data: dict) -> None:
    import json

    lines = []
    for key, value in data.items():
        try:
            lines.append(f"{key} = {json.dumps(value)}")
        except ValueError:
            continue
    _check(tmp_path, "\n".join(lines))
