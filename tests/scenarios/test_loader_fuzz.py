"""Random and mutated scenario/inventory TOML, alone and as a plan (`load_plan`), never
raises anything but ConfigError with a one-line message naming the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadtower.errors import ConfigError
from loadtower.scenarios.catalog import resolve_scenario
from loadtower.scenarios.loader import load_inventory, load_scenario
from loadtower.scenarios.plan import load_plan

from .conftest import INVENTORY, SCENARIO

SCENARIO_SEEDS = [SCENARIO, resolve_scenario("scale-out-compaction").read_text()]
SEEDS = [*SCENARIO_SEEDS, INVENTORY]
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
def mutated(draw: st.DrawFn, seeds: list[str]) -> str:
    text = draw(st.sampled_from(seeds))
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


def _write(path: Path, text: str) -> Path:
    # lone surrogates become invalid UTF-8 bytes: a file a user can have, not a test error
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    return path


def _only_config_errors(call: Callable[[], object], *files: Path) -> None:
    """`call` succeeds or raises ConfigError with a one-line message naming one of `files`.

    Any other exception (a traceback for the user) propagates and fails the test.
    """
    try:
        call()
    except ConfigError as exc:
        message = str(exc)
        assert exc.problem, message
        assert len(message.splitlines()) == 1, message
        assert message.startswith(tuple(str(f) for f in files)), message


def _check_files(tmp: Path, text: str) -> None:
    path = _write(tmp / "f.toml", text)
    _only_config_errors(lambda: load_scenario(path), path)
    _only_config_errors(lambda: load_inventory(path), path)


def _check_plan(tmp: Path, scenario_text: str, inventory_text: str) -> None:
    scenario = _write(tmp / "scenario.toml", scenario_text)
    inventory = _write(tmp / "inventory.toml", inventory_text)
    _only_config_errors(lambda: load_plan(scenario, inventory), scenario, inventory)


FUZZ = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def test_seeds_are_valid(tmp_path: Path) -> None:
    """The mutations start from files that load, so the properties below are not vacuous."""
    for scenario in SCENARIO_SEEDS:
        load_plan(_write(tmp_path / "s.toml", scenario), _write(tmp_path / "i.toml", INVENTORY))


@FUZZ
@given(text=mutated(SEEDS))
def test_mutated_files_give_config_errors(tmp_path: Path, text: str) -> None:
    _check_files(tmp_path, text)


@FUZZ
@given(
    scenario=st.one_of(mutated(SCENARIO_SEEDS), st.sampled_from(SCENARIO_SEEDS)),
    inventory=st.one_of(mutated([INVENTORY]), st.just(INVENTORY)),
)
def test_mutated_plans_give_config_errors(tmp_path: Path, scenario: str, inventory: str) -> None:
    _check_plan(tmp_path, scenario, inventory)


@FUZZ
@given(text=st.text(max_size=200))
def test_random_text_gives_config_errors(tmp_path: Path, text: str) -> None:
    _check_files(tmp_path, text)
    _check_plan(tmp_path, text, INVENTORY)
    _check_plan(tmp_path, SCENARIO, text)


def _as_toml(data: dict) -> str:
    lines = []
    for key, value in data.items():
        try:
            lines.append(f"{key} = {json.dumps(value)}")
        except ValueError:
            continue
    return "\n".join(lines)


@FUZZ
@given(
    data=st.dictionaries(
        st.sampled_from(
            [
                "name",
                "engine",
                "phases",
                "hosts",
                "target",
                "targets",
                "run_targets",
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
    text = _as_toml(data)
    _check_files(tmp_path, text)
    _check_plan(tmp_path, text, INVENTORY)
    _check_plan(tmp_path, SCENARIO, text)
