"""compare flags a real 2x latency change as significant and noise as not."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.store import StoreWriter, compare_runs
from tests.store.synth import make_lines, write_run


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = Path(tmp_path_factory.mktemp("cmp")) / "c.duckdb"
    ids = []
    with StoreWriter(path) as writer:
        for seed, scale in ((1, 1.0), (2, 1.0), (3, 2.0)):
            lines, _ = make_lines(seconds=30, agents=2, ops=("read",), seed=seed, scale=scale)
            ids.append(write_run(writer, lines, 30, nodes=False))
    return path, ids


def test_two_x_latency_is_significant(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, _, slow) = three_runs
    (row,) = compare_runs(path, a, slow)
    assert row["significant_p99"] and row["significant"]
    assert row["p99_change_pct"] == pytest.approx(100, abs=30)
    assert row["p99_p_value"] < 0.001


def test_noise_is_not_significant(three_runs: tuple[Path, list[str]]) -> None:
    path, (a, b, _) = three_runs
    (row,) = compare_runs(path, a, b)
    assert not row["significant"], row
    assert abs(row["p99_change_pct"]) < 20


def test_welch_matches_a_known_value() -> None:
    from loadtower.store.compare import welch_p_value

    # scipy.stats.ttest_ind([1, 2, 3, 4], [2, 3, 4, 5.5], equal_var=False).pvalue
    assert welch_p_value([1, 2, 3, 4], [2, 3, 4, 5.5]) == pytest.approx(0.2986, abs=1e-3)
