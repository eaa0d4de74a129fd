"""`report --out` and `export --out` never destroy what is there: not the store, not a
directory or device, not an existing file without --force, nothing through a symlink.
Run as a user would: the real command in a subprocess (with a timeout)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreWriter
from loadtower.store.output_files import OutputDir, is_duckdb_file
from tests.store.synth import make_lines, write_run


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "loadtower", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("outputs") / "loadtower.duckdb"
    lines, _ = make_lines(seconds=2, agents=1, per_second=5)
    with StoreWriter(path) as writer:
        run_id = write_run(writer, lines, 2)
    return path, run_id


def refused(done: subprocess.CompletedProcess, words: str) -> None:
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert words in done.stderr, done.stderr


def test_report_never_replaces_the_store_in_use(run: tuple[Path, str]) -> None:
    store, run_id = run
    before = store.read_bytes()
    for force in ([], ["--force"]):
        # named as the user did: `--out loadtower.duckdb` in the store's folder
        done = cli("report", run_id, "--out", "loadtower.duckdb", *force, cwd=store.parent)
        refused(done, "is the store in use")
    assert store.read_bytes() == before
    assert not [p for p in store.parent.iterdir() if p.name.endswith(".tmp")]


def test_report_never_replaces_another_duckdb_file(run: tuple[Path, str], tmp_path: Path) -> None:
    store, run_id = run
    other = tmp_path / "archive.db"  # a store, by its magic bytes, whatever its name
    shutil.copyfile(store, other)
    assert is_duckdb_file(other) and not is_duckdb_file(tmp_path)
    done = cli("report", "--store", str(store), run_id, "--out", str(other), "--force")
    refused(done, "is a DuckDB store")
    assert other.read_bytes() == store.read_bytes()


@pytest.mark.parametrize("target", ["directory", "/dev/full", "/dev/null"])
def test_report_refuses_a_directory_or_a_device(
    run: tuple[Path, str], tmp_path: Path, target: str
) -> None:
    store, run_id = run
    out = str(tmp_path) if target == "directory" else target
    done = cli("report", "--store", str(store), run_id, "--out", out, "--force")
    refused(done, "is a directory" if target == "directory" else "not a regular file")
    assert Path(out).exists()


def test_report_replaces_an_existing_file_only_with_force(
    run: tuple[Path, str], tmp_path: Path
) -> None:
    store, run_id = run
    out = tmp_path / "report.html"
    out.write_text("keep me")
    refused(cli("report", "--store", str(store), run_id, "--out", str(out)), "--force")
    assert out.read_text() == "keep me"
    done = cli("report", "--store", str(store), run_id, "--out", str(out), "--force")
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary left


def test_report_through_a_link_replaces_the_link_never_its_target(
    run: tuple[Path, str], tmp_path: Path
) -> None:
    store, run_id = run
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "r.html").symlink_to(victim)
    refused(cli("report", "--store", str(store), run_id, "--out", str(tmp_path / "r.html")),
            "symbolic link")  # fmt: skip
    done = cli("report", "--store", str(store), run_id, "--out", str(tmp_path / "r.html"),
               "--force")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious"
    assert not (tmp_path / "r.html").is_symlink()
    (tmp_path / "s.html").symlink_to(store)
    done = cli("report", "--store", str(store), run_id, "--out", str(tmp_path / "s.html"),
               "--force")  # fmt: skip
    refused(done, "link to a DuckDB store")


def test_export_refuses_links_and_existing_files_before_writing_any(
    run: tuple[Path, str], tmp_path: Path
) -> None:
    store, run_id = run
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    (out / "run.csv").symlink_to(outside)
    done = cli("export", "--store", str(store), run_id, "--format", "csv", "--out", str(out))
    refused(done, "run.csv exists (a symbolic link)")
    assert sorted(p.name for p in out.iterdir()) == ["run.csv"]  # nothing else written
    done = cli("export", "--store", str(store), run_id, "--format", "csv", "--out", str(out),
               "--force")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == "not yours"
    assert not (out / "run.csv").is_symlink() and run_id in (out / "run.csv").read_text()
    done = cli("export", "--store", str(store), run_id, "--format", "csv", "--out", str(out))
    refused(done, "exists: pass --force")


def test_export_out_an_existing_file_or_the_store(run: tuple[Path, str], tmp_path: Path) -> None:
    store, run_id = run
    existing = tmp_path / "notes.txt"
    existing.write_text("x")
    refused(cli("export", "--store", str(store), run_id, "--out", str(existing)),
            "is a file, not a directory")  # fmt: skip
    refused(cli("export", "--store", str(store), run_id, "--out", str(store)),
            "is a file, not a directory")  # fmt: skip
    assert existing.read_text() == "x"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("old")

    def half_then_fail(handle: object) -> None:
        handle.write(b"new, half")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    with OutputDir(tmp_path, force=True) as folder:
        with pytest.raises(LoadtowerError, match="No space left on device"):
            folder.write("a.csv", half_then_fail)
    assert (tmp_path / "a.csv").read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["a.csv"]


def test_names_that_are_not_file_names(tmp_path: Path) -> None:
    with OutputDir(tmp_path) as folder:
        for name in ("", ".", "..", "a/b"):
            with pytest.raises(LoadtowerError, match="not a file name|is a directory"):
                folder.check(name)
