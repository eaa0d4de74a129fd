"""Endless and huge input files through the real command line, in a child process with
a memory limit: refused with one line and exit 2, never read to the end."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from tests.reliability.helpers import cli, one_error_line
from tests.scenarios.conftest import INVENTORY, SCENARIO

MEMORY_LIMIT = 2 << 30  # address space: before, /dev/zero was read until the OOM killer came


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_check_refuses_devices_fifos_and_huge_files(tmp_path: Path) -> None:
    scenario, inventory = tmp_path / "s.toml", tmp_path / "inv.toml"
    scenario.write_text(SCENARIO)
    inventory.write_text(INVENTORY)
    done = cli("check", scenario, "-i", "/dev/zero", timeout=60, preexec_fn=_limit)
    assert done.returncode == 2
    assert one_error_line(done, "check") == (
        "loadtower check: /dev/zero: not a regular file (a character device)"
    )
    fifo = tmp_path / "s.fifo"
    os.mkfifo(fifo)  # no writer: opening it for reading would block without O_NONBLOCK
    done = cli("check", fifo, "-i", inventory, timeout=60, preexec_fn=_limit)
    assert one_error_line(done, "check") == f"loadtower check: {fifo}: not a regular file (a FIFO)"
    big = tmp_path / "big.toml"
    phase = '\n[[phases]]\ntype = "run"\nduration = "10s"\nrate = 100\n'
    with big.open("w") as f:  # 50 MB of valid TOML: before, minutes and 3.7 GB to check
        f.write(SCENARIO)
        while f.tell() < 50_000_000:
            f.write(phase * 1000)
    done = cli("check", big, "-i", inventory, timeout=60, preexec_fn=_limit)
    assert one_error_line(done, "check") == (
        f"loadtower check: {big}: larger than 1,048,576 bytes (the most an input file may hold)"
    )
    assert done.returncode == 2
