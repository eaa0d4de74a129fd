"""compare flags a real 2x latency change as a regression (with an interval that holds
the change) and noise as no change; a short phase is too short to tell."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.store import StoreWriter, compare_runs
from loadtower.store.compare import interval_text
from tests.store.synth import make_lines, write_run


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = Path(tmp_path_factory.mktemp("cmp")) / "c.duckdb"
    ids = []
    with StoreWriter(path) as writer:
        for seed, scale, seconds in ((1, 1.0, 30), (2, 1.0, 30), (3, 2.0, 30), (4, 1.0, 6)):
            lines, _ = make_lines(seconds=seconds, agents=2, ops=("read",), seed=seed,
                                  scale=scale)
            ids.append(write_run(writer, lines, seconds, nodes=False))
    return path, ids


def test_two_x_latency_is_significant(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, _, slow, _short) = three_runs
    (row,) = compare_runs(path, a, slow)
    assert row["significant_p99"] and row["significant"]
    assert row["p99_verdict"] == "regression"
    assert row["p99_change_pct"] == pytest.approx(100, abs=30)
    low, high = row["p99_change_ci_pct"]
    assert 0 < low < row["p99_change_pct"] < high  # the interval holds the change, above 0
    # the same run the other way round: an improvement, the interval mirrored
    (back,) = compare_runs(path, slow, a)
    assert back["p99_verdict"] == "improvement" and back["significant_p99"]
    assert back["p99_change_ci_pct"][1] < 0


def test_noise_is_not_significant(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, b, _, _short) = three_runs
    (row,) = compare_runs(path, a, b)
    assert not row["significant"], row
    assert row["ops_verdict"] == row["p99_verdict"] == "no change"
    assert abs(row["p99_change_pct"]) < 20
    for key in ("ops", "p99"):
        low, high = row[f"{key}_change_ci_pct"]
        assert low < 0 < high and low <= row[f"{key}_change_pct"] <= high


def test_a_run_against_itself_is_no_change(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, *_rest) = three_runs
    (row,) = compare_runs(path, a, a)
    assert row["ops_change_pct"] == row["p99_change_pct"] == 0.0
    assert row["ops_verdict"] == row["p99_verdict"] == "no change"
    low, high = row["p99_change_ci_pct"]
    assert high > 0 and math.log1p(low / 100) == pytest.approx(-math.log1p(high / 100))


def test_a_short_phase_is_too_short_to_tell(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, _, _slow, short) = three_runs
    (row,) = compare_runs(path, a, short)  # 6 seconds: fewer than MIN_SECONDS
    assert row["ops_verdict"] == row["p99_verdict"] == "too short to tell"
    assert row["ops_change_ci_pct"] is None and row["p99_change_ci_pct"] is None
    assert not row["significant"] and row["p99_change_pct"] is not None


def test_welch_matches_a_known_value() -> None:
    from loadtower.store.significance import welch_p_value

    # scipy.stats.ttest_ind([1, 2, 3, 4], [2, 3, 4, 5.5], equal_var=False).pvalue
    assert welch_p_value([1, 2, 3, 4], [2, 3, 4, 5.5]) == pytest.approx(0.2986, abs=1e-3)


def _cli(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "loadtower", *args]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def test_cli_prints_change_interval_and_verdict(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, _b, slow, short) = three_runs
    (row,) = compare_runs(path, a, slow)
    done = _cli("compare", "--store", str(path), a, slow)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "99% interval" in out and "verdict" in out and "Welch" not in out
    line = next(ln for ln in out.splitlines() if "read" in ln)
    assert f"{row['p99_change_pct']:+.1f}%" in line
    assert interval_text(row["p99_change_ci_pct"]) in line and "regression" in line
    assert interval_text(row["ops_change_ci_pct"]) in line and "no change" in line
    done = _cli("compare", "--store", str(path), a, short)
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if "read" in ln)
    assert line.count("too short to tell") == 2


def test_cli_json_has_the_verdicts(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, _b, slow, short) = three_runs
    for other, verdicts in ((slow, ("no change", "regression")),
                            (short, ("too short to tell", "too short to tell"))):
        done = _cli("compare", "--store", str(path), a, other, "--json")
        assert done.returncode == 0, done.stderr
        (row,) = json.loads(done.stdout)
        assert (row["ops_verdict"], row["p99_verdict"]) == verdicts
        assert row == json.loads(json.dumps(compare_runs(path, a, other)[0]))
        if other == short:
            assert row["ops_change_ci_pct"] is None and row["p99_change_ci_pct"] is None
        else:
            assert len(row["p99_change_ci_pct"]) == 2 and row["significant"]


def test_a_stalled_second_counts_as_zero_ops() -> None:
    from loadtower.store.compare import _ops_series

    rows = [{"ts": 100, "ops": 5}, {"ts": 101, "ops": 7}, {"ts": 104, "ops": 6}]
    assert _ops_series(rows) == [5.0, 7.0, 0.0, 0.0, 6.0]
    assert _ops_series([]) == []
