"""Issue 26 case 4: the spool never writes (or reads) through what another user of the
agent host planted. A real second user (made with useradd for the test, removed after)
plants folders and symlinks under the real /tmp/loadtower-spool; the real Spool code
must refuse them in one line and leave the victim file untouched."""

from __future__ import annotations

import io
import os
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.agents.private_files import UnsafePath
from loadtower.agents.spool import ROOT, Spool, read, shared_root, spool_dir

VICTIM_TEXT = "root-owned secret: do not overwrite\n"


@pytest.fixture
def other_user() -> Iterator[str]:
    """A real second user of this host (root only: useradd), removed after the test."""
    if os.getuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("planting as a second user needs root and useradd")
    name = f"ltspool{secrets.token_hex(3)}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                   check=True, capture_output=True, timeout=30)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True, timeout=30)


@pytest.fixture
def run_id() -> Iterator[str]:
    run = f"test-spool-{secrets.token_hex(4)}"
    try:
        yield run
    finally:
        shutil.rmtree(f"{ROOT}/{run}", ignore_errors=True)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "victim"
    target.write_text(VICTIM_TEXT)
    target.chmod(0o600)
    return target


def _as(user: str, script: str) -> None:
    """Run `script` (sh) as `user`: what another user of the host can do."""
    subprocess.run(["/bin/sh", "-ec", script], user=user, group=user, extra_groups=[],
                   check=True, capture_output=True, timeout=60, cwd="/")


def _one_line(exc: pytest.ExceptionInfo[UnsafePath]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_a_run_folder_planted_by_another_user_is_refused(
        other_user: str, run_id: str, victim: Path) -> None:
    shared_root()
    directory = spool_dir(run_id, "agent1")
    # the attacker makes the run's folder and the agent's, with 0.pid -> the victim
    _as(other_user, f"mkdir -p -m 777 {directory} && chmod 777 {directory} && "
                    f"ln -s {victim} {directory}/0.pid")
    victim.chmod(0o666)  # even a file the planted link could reach is not written
    with pytest.raises(UnsafePath) as exc:
        Spool(directory, 0, "agent1/0")
    line = _one_line(exc)
    assert f"{ROOT}/{run_id}" in line and "owned by uid" in line
    assert victim.read_text() == VICTIM_TEXT


def test_a_planted_pid_symlink_is_replaced_never_followed(
        run_id: str, victim: Path) -> None:
    shared_root()
    directory = Path(spool_dir(run_id, "agent1"))
    directory.mkdir(parents=True, mode=0o700)
    directory.parent.chmod(0o700)
    (directory / "0.pid").symlink_to(victim)
    (directory / "0.exit").symlink_to(victim)
    spool = Spool(directory, 0, "agent1/0")
    spool.exited("stopped")
    spool.close()
    assert victim.read_text() == VICTIM_TEXT
    assert not (directory / "0.pid").is_symlink() and (directory / "0.pid").is_file()
    assert stat.S_IMODE((directory / "0.pid").stat().st_mode) == 0o600
    assert not (directory / "0.exit").is_symlink()


def test_a_planted_spool_file_symlink_is_refused(run_id: str, victim: Path) -> None:
    shared_root()
    directory = Path(spool_dir(run_id, "agent1"))
    directory.mkdir(parents=True, mode=0o700)
    directory.parent.chmod(0o700)
    (directory / "0.jsonl").symlink_to(victim)
    with pytest.raises(UnsafePath) as exc:
        Spool(directory, 0, "agent1/0")
    assert "0.jsonl" in _one_line(exc) and "symlink" in _one_line(exc)
    assert victim.read_text() == VICTIM_TEXT


def test_folders_are_made_0700_and_an_open_one_is_refused(run_id: str) -> None:
    directory = Path(spool_dir(run_id, "agent1"))
    spool = Spool(directory, 0, "agent1/0")
    spool.close()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(directory.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "0.jsonl").stat().st_mode) == 0o600
    directory.chmod(0o755)
    with pytest.raises(UnsafePath) as exc:
        Spool(directory, 1, "agent1/1")
    assert "mode 0755" in _one_line(exc)


def test_the_reader_refuses_a_planted_link_and_prints_nothing_of_it(
        run_id: str, victim: Path) -> None:
    directory = Path(spool_dir(run_id, "agent1"))
    Spool(directory, 0, "agent1/0").close()
    (directory / "1.jsonl").symlink_to(victim)
    out = io.StringIO()
    with pytest.raises(UnsafePath):
        read(str(directory), {}, out)
    assert "secret" not in out.getvalue()
    done = subprocess.run([sys.executable, "-m", "loadtower.agents.spool", "read",
                           str(directory)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "secret" not in done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "1.jsonl" in done.stderr


def test_a_shared_root_without_the_sticky_bit_is_refused(
        other_user: str, tmp_path: Path) -> None:
    root = tmp_path / "spool"
    root.mkdir()
    tmp_path.chmod(0o755)
    os.chown(root, int(subprocess.run(["id", "-u", other_user], capture_output=True,
                                      text=True, check=True, timeout=30).stdout), -1)
    root.chmod(0o777)  # another user's, open to all, no sticky bit
    with pytest.raises(UnsafePath) as exc:
        shared_root(root)
    assert "sticky" in _one_line(exc)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    with pytest.raises(UnsafePath):
        shared_root(link)
