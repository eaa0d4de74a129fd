"""The run's private directory on an agent host: 0700 directories of this user, 0600
files, nothing followed through a symlink, nothing left after `remove`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from loadtower.agents import secret_dir
from loadtower.errors import LoadtowerError
from loadtower.protocol.link_secrets import LINK_KEY_FILE, secret_name

KEY = b"k" * 32


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_put_read_remove(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    name = secret_name(KEY, "pw")
    directory = secret_dir.put("run-1", {LINK_KEY_FILE: KEY.hex(), name: "pw"}, prefix)
    assert directory == tmp_path / f"private-{os.getuid()}" / "run-1"
    assert _mode(directory.parent) == 0o700 and _mode(directory) == 0o700
    assert {p.name: _mode(p) for p in directory.iterdir()} == {LINK_KEY_FILE: 0o600, name: 0o600}
    assert secret_dir.link_key(directory) == KEY
    assert secret_dir.read_secret(directory, name) == "pw"
    secret_dir.put("run-1", {name: "pw"}, prefix)  # given again: replaced, still 0600
    assert _mode(directory / name) == 0o600
    assert secret_dir.remove("run-1", prefix) is True
    assert not directory.exists()
    assert secret_dir.remove("run-1", prefix) is False


def test_a_run_id_is_one_directory_name(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    directory = secret_dir.put("../../etc", {LINK_KEY_FILE: "00"}, prefix)
    assert directory.parent == tmp_path / f"private-{os.getuid()}"


def test_a_directory_others_may_enter_is_refused(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    base = tmp_path / f"private-{os.getuid()}"
    base.mkdir(mode=0o755)
    base.chmod(0o755)
    with pytest.raises(LoadtowerError, match="not 700"):
        secret_dir.put("run-1", {LINK_KEY_FILE: "00"}, prefix)


def test_a_planted_symlink_is_refused(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / f"private-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(LoadtowerError, match="symlink"):
        secret_dir.put("run-1", {LINK_KEY_FILE: "00"}, prefix)
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_secret_file_is_not_read(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    directory = secret_dir.put("run-1", {LINK_KEY_FILE: "00"}, prefix)
    target = tmp_path / "other.txt"
    target.write_text("not a secret of the run")
    name = secret_name(KEY, "x")
    (directory / name).symlink_to(target)
    with pytest.raises(LoadtowerError, match="cannot read"):
        secret_dir.read_secret(directory, name)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a directory of another user")
def test_a_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    base = tmp_path / f"private-{os.getuid()}"
    base.mkdir(mode=0o700)
    os.chown(base, 65534, 65534)
    with pytest.raises(LoadtowerError, match="owned by uid 65534"):
        secret_dir.put("run-1", {LINK_KEY_FILE: "00"}, prefix)


def test_names_that_are_not_ours_are_refused(tmp_path: Path) -> None:
    prefix = str(tmp_path / "private-")
    directory = secret_dir.put("run-1", {LINK_KEY_FILE: "00"}, prefix)
    for bad in ("../x", "/etc/passwd", "secret-zz"):
        with pytest.raises(LoadtowerError, match="not a secret file name"):
            secret_dir.read_secret(directory, bad)
        with pytest.raises(LoadtowerError, match="not a secret file name"):
            secret_dir.put("run-1", {bad: "x"}, prefix)
