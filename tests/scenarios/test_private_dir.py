"""The per-user socket folder (/tmp/loadtower-UID) is used only when it is this user's
own folder with mode 0700; anything else is one clear line, never reused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.scenarios.private_dir import private_dir


def test_a_new_folder_is_made_private(tmp_path: Path) -> None:
    made = private_dir(tmp_path / "loadtower-1" / "sub")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700 and made.stat().st_uid == os.getuid()
    assert private_dir(made) == made  # reused: it is ours and private


def test_an_open_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o755)
    with pytest.raises(LoadtowerError) as info:
        private_dir(folder)
    assert str(info.value) == f"{folder}: mode 0755 lets others in; expected 0700 (chmod 700 {folder})"


def test_a_symlink_or_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "file").write_text("")
    for path in (tmp_path / "link", tmp_path / "file"):
        with pytest.raises(LoadtowerError, match="not a folder"):
            private_dir(path)


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, -1)
    with pytest.raises(LoadtowerError) as info:
        private_dir(folder)
    assert str(info.value).startswith(f"{folder}: owned by uid 65534, not by this user (0)")


def test_run_refuses_a_socket_folder_that_is_not_private(
    write, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`loadtower run` checks the socket folder (when it exists) before it starts; the
    folder is one under tmp_path here (the real /tmp/loadtower-UID may be in use)."""
    from loadtower.cli import main
    from loadtower.scenarios import private_dir as module

    from .conftest import INVENTORY, SCENARIO

    folder = tmp_path / "loadtower-uid"
    monkeypatch.setattr(module, "socket_folder", lambda: folder)
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)
    s, i = write("s.toml", SCENARIO), write("inv.toml", INVENTORY)
    store = tmp_path / "st.duckdb"
    assert main(["run", str(s), "-i", str(i), "--headless", "--store", str(store)]) == 2
    assert capsys.readouterr().err == (
        f"loadtower run: {folder}: mode 0777 lets others in; expected 0700 (chmod 700 {folder})\n"
    )
    assert not store.exists()
