"""Peak memory (RSS) of `loadtower runs` and `loadtower export` on a small store holding
highly compressible text (issue 26 case 6): runs whose name, reason and versions are
tens of MB of one repeated character, and a run whose logs hold 100 x 1 MB lines. The
store file is a few MB; the text is 100+ MB once decompressed.

    .venv/bin/python bench/big_text_store.py [--mb 100]

Prints the store's size and each command's peak RSS (getrusage of the child), so a
change to the read path can be compared before/after on one machine."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

from loadtower.store import StoreWriter


def build(path: Path, mb: int) -> str:
    writer = StoreWriter(path)
    run_id = writer.start_run("big", "scn", "", "", {}, {}, {})
    writer.end_run(run_id, "completed", None)
    writer.close()
    con = duckdb.connect(str(path))
    try:
        big = f"repeat('A', {mb // 4} * 1024 * 1024)"
        versions = "'{\"v\": \"' || " + big + " || '\"}'"
        con.execute(f"UPDATE runs SET name = {big}, reason = {big}, versions = {versions}, "
                    f"scenario = {big}")
        con.execute("INSERT INTO logs SELECT ?, i, 'h', 'stdout', repeat('B', 1024 * 1024) "
                    f"FROM range({mb}) t(i)", [run_id])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return run_id


def peak_rss_mb(argv: list[str]) -> tuple[float, int]:
    """Peak RSS (MB) of one child run of `argv` (a fresh interpreter per command), rc."""
    code = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], "
            "stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode); "
            "sys.stderr.write(p.stderr.decode()[-300:])")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=900, check=True)
    kb, rc = done.stdout.split()
    if int(rc):
        print(f"  ({' '.join(argv[2:4])} exit {rc}: {done.stderr.strip()})")
    return int(kb) / 1024, int(rc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "big.duckdb"
        run_id = build(store, args.mb)
        print(f"store {store.stat().st_size / 1e6:.1f} MB, {args.mb} MB of text per field "
              "group")
        cli = [sys.executable, "-m", "loadtower"]
        for name, argv in (
            ("runs", [*cli, "runs", "--store", str(store)]),
            ("runs --json", [*cli, "runs", "--json", "--store", str(store)]),
            ("export parquet", [*cli, "export", run_id, "--out", f"{tmp}/p", "--store",
                                str(store)]),
            ("export csv", [*cli, "export", run_id, "--format", "csv", "--out", f"{tmp}/c",
                            "--store", str(store)]),
        ):
            mb, _rc = peak_rss_mb(argv)
            print(f"{name:>16}: peak RSS {mb:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
