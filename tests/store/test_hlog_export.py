"""`loadtower export RUN --format hlog`: HdrHistogram interval logs that HdrHistogram's
own Java HistogramLogProcessor and the Python hdrh reader read back with the run's
figures: the whole log's p50/p99 equal phase_summary's (response time) and the service
log's equal the store's service-time percentiles, to HDR's precision.

One difference is HdrHistogram's, not the log's: Java's getValueAtPercentile takes the
value at rank ceil(p N) (nearest rank), hdrh's (the store's rule, store/hdr.py) the
value at rank round(p N). Where the two ranks fall in different buckets of the tail,
Java prints the next recorded value; the tests check each library against its own rule
on the same merged histogram, and that the store's figure is hdrh's exactly."""

from __future__ import annotations

import csv
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from loadtower.cli import main
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.hlog import file_name
from tests.store.synth import make_lines, write_run

SECONDS = 12
JAR = (
    Path.home() / ".m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar"
)  # fetched by scripts/install.sh (Maven Central)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = Path(tmp_path_factory.mktemp("hlog"))
    store = folder / "s.duckdb"
    lines, _raw = make_lines(seconds=SECONDS, agents=3)
    with StoreWriter(store) as writer:
        run_id = write_run(writer, lines, SECONDS)
    out = folder / "out"
    assert main(["export", run_id, "--format", "hlog", "--out", str(out), "--store", str(store)]) == 0
    return {"store": store, "run_id": run_id, "out": out}


def _java_totals(log: Path, work: Path) -> dict[str, float]:
    """The last line of HistogramLogProcessor's interval CSV: the whole log's figures (ms)."""
    if shutil.which("java") is None or not JAR.is_file():
        pytest.fail(f"java and {JAR} are needed (scripts/install.sh fetches the jar)")
    result = work / f"{log.stem}.csv"
    subprocess.run(
        ["java", "-cp", str(JAR), "org.HdrHistogram.HistogramLogProcessor", "-i", str(log),
         "-o", str(result), "-csv", "-outputValueUnitRatio", "1000"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    rows = [r for r in csv.reader(result.read_text().splitlines()) if r and r[0][0] != "#"]
    header, last = rows[0], rows[-1]
    return {name: float(value) for name, value in zip(header, last, strict=True)}


def _close(a: float, b: float) -> bool:  # 3 significant digits, printed to 0.001 ms
    return abs(a - b) <= max(0.0011, 0.001 * abs(b))


def _merged(log: Path) -> HdrHistogram:
    total = HdrHistogram(1, 60_000_000, 3)
    reader = HistogramLogReader(str(log), total)
    while reader.add_next_interval_histogram() is not None:
        pass
    return total


def _nearest_rank_ms(hist: HdrHistogram, percentile: float) -> float:
    """HdrHistogram Java's rule: the highest equivalent value at rank ceil(p N)."""
    rank = max(1, math.ceil(percentile / 100.0 * hist.get_total_count()))
    seen = 0
    for item in hist.get_recorded_iterator():
        seen += item.count_added_in_this_iter_step
        if seen >= rank:
            return hist.get_highest_equivalent_value(item.value_iterated_to) / 1000
    raise AssertionError("rank beyond the histogram")


def test_java_processor_reads_the_phase_histogram(exported: dict, tmp_path: Path) -> None:
    reader = StoreReader(exported["store"])
    summary = reader.phase_summary(exported["run_id"])
    assert summary
    for row in summary:
        log = exported["out"] / file_name(row["phase"], row["op"])
        merged = _merged(log)
        # the log holds the phase's histogram: the store's figures, by the store's rule
        assert merged.get_value_at_percentile(99) / 1000 == pytest.approx(row["p99_ms"])
        assert merged.get_value_at_percentile(50) / 1000 == pytest.approx(row["p50_ms"])
        assert merged.get_total_count() == row["ops"] - row["errors"]
        totals = _java_totals(log, tmp_path)
        assert totals["Total_Count"] == row["ops"] - row["errors"]
        assert _close(totals["Total_Max"], row["max_ms"]), (row, totals)
        for column, p in (("Total_50%", 50.0), ("Total_99%", 99.0), ("Total_99.9%", 99.9)):
            assert _close(totals[column], _nearest_rank_ms(merged, p)), (column, row, totals)
        # one rank apart at most: Java's p99 is the store's or the next recorded value
        assert totals["Total_99%"] >= row["p99_ms"] - 0.0011


def test_service_log_gives_the_service_percentiles(exported: dict, tmp_path: Path) -> None:
    reader = StoreReader(exported["store"])
    row = reader.phase_summary(exported["run_id"])[0]
    service = reader.window_percentiles(
        exported["run_id"], 0, 2**40, op=row["op"], phase=row["phase"], kind="service"
    )
    log = exported["out"] / file_name(row["phase"], row["op"], "service")
    merged = _merged(log)
    assert merged.get_value_at_percentile(99) / 1000 == pytest.approx(service["p99_ms"])
    totals = _java_totals(log, tmp_path)
    assert _close(totals["Total_99%"], _nearest_rank_ms(merged, 99.0)), (service, totals)


def test_python_hdrh_reads_every_second(exported: dict) -> None:
    reader = StoreReader(exported["store"])
    for row in reader.phase_summary(exported["run_id"]):
        total = HdrHistogram(1, 60_000_000, 3)
        log = HistogramLogReader(str(exported["out"] / file_name(row["phase"], row["op"])), total)
        seconds = 0
        while log.add_next_interval_histogram() is not None:
            seconds += 1
        assert seconds == SECONDS


def test_names_never_make_a_path() -> None:
    assert file_name("../x", "a/b") == ".._x.a_b.hlog"
    assert "/" not in file_name("p", "op\x1b[2J", "service")


def test_files_are_private_to_the_folder_and_not_replaced(exported: dict) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in exported["out"].iterdir()}
    argv = ["export", exported["run_id"], "--format", "hlog", "--out", str(exported["out"]),
            "--store", str(exported["store"])]  # fmt: skip
    assert main(argv) == 2  # existing files: refused without --force
    assert {p.name: p.stat().st_mtime_ns for p in exported["out"].iterdir()} == before
    assert all(not os.path.islink(p) for p in exported["out"].iterdir())
