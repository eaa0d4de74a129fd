"""[[thresholds]] in a scenario: valid ones load and are described, bad ones are one line
naming file, line and key (exit 2)."""

from __future__ import annotations

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.scenarios.plan import load_plan
from loadtower.scenarios.thresholds import threshold_lines

from .conftest import INVENTORY

BASE = """\
name = "t"
[dataset]
records = 1000
[[phases]]
type = "load"
[[phases]]
name = "mix"
type = "run"
duration = "10s"
rate = 100
[[phases]]
type = "pause"
duration = "1s"
"""

GOOD = BASE + """
[[thresholds]]
phase = "mix"
op = "read"
metric = "p99"
max = 20

[[thresholds]]
metric = "error_rate"
max = 0.001

[[thresholds]]
phase = "mix"
metric = "ops_per_s"
min = 90

[[thresholds]]
phase = "mix"
metric = "p999"
max = 250
abort = true
abort_after = "3s"
"""


def _error(write, text: str) -> str:  # noqa: ANN001
    s, i = write("s.toml", text), write("inv.toml", INVENTORY)
    with pytest.raises(ConfigError) as info:
        load_plan(s, i)
    return str(info.value).replace(str(s), "s.toml")


def test_thresholds_load_and_read_as_one_line_each(write) -> None:  # noqa: ANN001
    plan = load_plan(write("s.toml", GOOD), write("inv.toml", INVENTORY))
    assert [t.metric for t in plan.scenario.thresholds] == ["p99", "error_rate", "ops_per_s",
                                                          "p999"]  # fmt: skip
    assert threshold_lines(plan.scenario) == [
        "p99 of op read in phase mix <= 20 ms",
        "error_rate of every op in every phase with load <= 0.1%",
        "ops_per_s of every op in phase mix >= 90 ops/s",
        "p999 of every op in phase mix <= 250 ms (checked live from 3s: a breach stops the run)",
    ]


def test_no_thresholds_is_fine(write) -> None:  # noqa: ANN001
    plan = load_plan(write("s.toml", BASE), write("inv.toml", INVENTORY))
    assert plan.scenario.thresholds == [] and threshold_lines(plan.scenario) == []


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('metric = "p98"\nmax = 1', "s.toml:16: key 'thresholds[0].metric': invalid value 'p98'"),
        ('metric = "p99"', "s.toml:15: key 'thresholds[0]': a threshold needs 'max' or 'min'"),
        ('metric = "p99"\nmax = 1\nmin = 2', "s.toml:15: key 'thresholds[0]': min (2) is above max (1)"),
        ('metric = "p99"\nmax = -1', "s.toml:17: key 'thresholds[0].max': Input should be greater than or equal to 0"),
        ('metric = "error_rate"\nmax = 5', "s.toml:15: key 'thresholds[0]': error_rate is a fraction"),
        ('metric = "ops_per_s"\nmin = 5\nabort = true', "s.toml:15: key 'thresholds[0]': abort = true checks 'max' live"),
        ('metric = "p99"\nmax = 1\nabort_after = "2s"', "s.toml:15: key 'thresholds[0]': abort_after is for abort = true"),
        ('metric = "p99"\nmax = 1\nlimit = 3', "s.toml:18: key 'thresholds[0].limit': unknown key"),
        ('phase = "mixx"\nmetric = "p99"\nmax = 1', "s.toml:16: key 'thresholds[0].phase': unknown phase 'mixx' (phases: 1-load, mix, 3-pause)"),
        ('phase = "3-pause"\nmetric = "p99"\nmax = 1', "s.toml:16: key 'thresholds[0].phase': phase '3-pause' has no figures to judge: a pause phase runs no load"),
    ],
)  # fmt: skip
def test_bad_thresholds_are_one_line(write, table: str, expected: str) -> None:  # noqa: ANN001
    message = _error(write, BASE + "\n[[thresholds]]\n" + table + "\n")
    assert "\n" not in message
    assert message.startswith(expected), message


def test_check_prints_the_thresholds_and_a_bad_one_exits_2(write, capsys) -> None:  # noqa: ANN001
    inv = write("inv.toml", INVENTORY)
    assert main(["check", str(write("s.toml", GOOD)), "--inventory", str(inv)]) == 0
    out = capsys.readouterr().out
    assert "thresholds (a breach fails a headless run, exit 1):" in out
    assert "p99 of op read in phase mix <= 20 ms" in out
    bad = write("bad.toml", BASE + '\n[[thresholds]]\nmetric = "p99"\nmax = "fast"\n')
    assert main(["check", str(bad), "--inventory", str(inv)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "key 'thresholds[0].max'" in err
