"""The data set removal script of `loadtower cleanup --datasets`, run by a real shell on
a directory of this machine: a dry run counts and keeps, a real one removes, a missing
directory is nothing to remove; a host whose command fails is one line."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from loadtower.fleet.dataset_cleanup import (
    datasets_script,
    parse_datasets,
    remove_datasets,
)


async def _sh(script: str, timeout: float) -> tuple[int, str, str]:
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=timeout,
                          check=False)
    return done.returncode, done.stdout, done.stderr


def _copies(base: Path) -> Path:
    directory = base / "datasets"
    directory.mkdir(parents=True)
    (directory / "0123456789abcdef-people.csv").write_bytes(b"x" * 1000)
    (directory / ".0123456789abcdef-more.csv.1a2b.part").write_bytes(b"y" * 500)
    return directory


def test_a_dry_run_counts_and_keeps_a_real_one_removes(tmp_path: Path, capsys) -> None:
    directory = _copies(tmp_path)
    assert asyncio.run(remove_datasets("agent1", _sh, str(tmp_path), dry_run=True))
    assert f"agent1: would remove 2 data set file(s), 0.0 MB, in {tmp_path}/datasets" in \
        capsys.readouterr().out
    assert len(list(directory.iterdir())) == 2
    assert asyncio.run(remove_datasets("agent1", _sh, str(tmp_path) + "/", dry_run=False))
    assert "agent1: removed 2 data set file(s)" in capsys.readouterr().out
    assert not directory.exists() and tmp_path.exists()
    assert asyncio.run(remove_datasets("agent1", _sh, str(tmp_path), dry_run=False))
    assert f"agent1: no data set copies in {tmp_path}/datasets" in capsys.readouterr().out


def test_the_count_includes_the_bytes(tmp_path: Path) -> None:
    _copies(tmp_path)
    _status, out, _err = asyncio.run(_sh(datasets_script(str(tmp_path), True), 30))
    files, size = parse_datasets(out) or (0, 0)
    assert files == 2 and size >= 1500


def test_a_host_whose_command_fails_is_one_line(capsys) -> None:
    async def refused(script: str, timeout: float) -> tuple[int, str, str]:
        return 1, "", "sh: 1: cannot open /home/x/.loadtower/datasets: Permission denied\n"

    assert not asyncio.run(remove_datasets("agent2", refused, "/home/x/.loadtower", False))
    out = capsys.readouterr().out.strip()
    assert out == ("agent2: data set copies in /home/x/.loadtower/datasets NOT REMOVED: "
                   "sh: 1: cannot open /home/x/.loadtower/datasets: Permission denied")
