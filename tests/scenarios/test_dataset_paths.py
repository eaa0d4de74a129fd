"""Issue 26 case 2: a data set's file stays in its workload file's folder. An absolute
path, a '..' or a symlink leading out of the folder is refused in one line naming the
workload file, the line, the key and the path (exit 2), unless the data set says
``allow_outside = true``, which ``check`` then prints with the resolved path; no error
echoes the data file's content beyond names that look like column names."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.fleet.dataset_upload import copy_mode
from loadtower.scenarios.workloads.loader import load_workload_file

from .conftest import INVENTORY
from .test_workload_dataset_files import GOOD_CSV, WORKLOAD

SECRET = "root:$6$s3cr3thash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
KEY = "key 'datasets.people.file'"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A private file of the operator's, outside the workload's folder."""
    home = tmp_path / "home"
    home.mkdir()
    path = home / "shadow"
    path.write_text(SECRET)
    path.chmod(0o600)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def _workload(folder: Path, file: str, extra: str = "") -> Path:
    text = 'load = "load"\n' + WORKLOAD.format(file=file).replace('columns = { id', extra + "columns = { id", 1)
    path = folder / "w.toml"
    path.write_text(text)
    return path


def _refused(workload: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_workload_file(workload)
    line = str(info.value)
    assert "\n" not in line and line.startswith(f"{workload}:3: {KEY}: ")
    assert "s3cr3t" not in line and "daemon" not in line
    return line


def test_an_absolute_path_is_refused(folder: Path, secret: Path) -> None:
    line = _refused(_workload(folder, str(secret), extra='format = "csv"\n'))
    assert f"{secret} is an absolute path" in line and "allow_outside = true" in line


def test_a_symlink_out_of_the_folder_is_refused(folder: Path, secret: Path) -> None:
    (folder / "innocent.csv").symlink_to(secret)
    line = _refused(_workload(folder, "innocent.csv"))
    assert f"innocent.csv leads out of the workload file's folder {folder}" in line
    assert f"to {secret}" in line


def test_dot_dot_and_a_symlinked_subfolder_out_are_refused(folder: Path, secret: Path) -> None:
    _refused(_workload(folder, "../home/shadow"))
    (folder / "data").symlink_to(secret.parent)
    _refused(_workload(folder, "data/shadow"))


def test_a_symlink_inside_the_folder_is_followed(folder: Path) -> None:
    (folder / "data").mkdir()
    (folder / "data" / "people-2026.csv").write_text(GOOD_CSV)
    (folder / "people.csv").symlink_to(folder / "data" / "people-2026.csv")
    checked = load_workload_file(_workload(folder, "people.csv"))
    assert checked.model.datasets["people"].file == str(folder / "data" / "people-2026.csv")


def test_check_refuses_in_one_line_with_exit_2(folder: Path, secret: Path, capsys) -> None:
    (folder / "innocent.csv").symlink_to(secret)
    workload = _workload(folder, "innocent.csv")
    scenario = folder / "s.toml"
    scenario.write_text('name = "s"\n[workloads.kv]\nfile = "w.toml"\n[[phases]]\ntype = "load"\n')
    inventory = folder / "inv.toml"
    inventory.write_text(INVENTORY)
    assert main(["check", str(scenario), "-i", str(inventory)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{workload}:3: {KEY}" in err and str(secret) in err
    assert "s3cr3t" not in err


def test_allow_outside_reads_it_and_check_prints_the_resolved_path(
        folder: Path, tmp_path: Path, capsys) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "people.csv").write_text(GOOD_CSV)
    (folder / "people.csv").symlink_to(shared / "people.csv")
    _workload(folder, "people.csv", extra="allow_outside = true\n")
    scenario = folder / "s.toml"
    scenario.write_text('name = "s"\n[workloads.kv]\nfile = "w.toml"\n[[phases]]\ntype = "load"\n')
    inventory = folder / "inv.toml"
    inventory.write_text(INVENTORY)
    assert main(["check", str(scenario), "-i", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert f"data set people reads {shared / 'people.csv'} (allow_outside = true" in out


def test_errors_do_not_echo_the_files_content(folder: Path) -> None:
    # a "CSV" whose header is a password line: the missing column's error names none of it
    (folder / "shadow.csv").write_text(SECRET)
    line = _refused(_workload(folder, "shadow.csv"))
    assert "no column 'id'" in line and "no name shown" in line
    # a value that does not convert: named by row, column and length, never its text
    (folder / "people.csv").write_text("id,name,age\n1,ann,31\n2,bob,s3cr3t\n")
    line = _refused(_workload(folder, "people.csv"))
    assert line.endswith("row 2 (line 3), column 'age': its value (6 characters) is not a int")
    # DuckDB's own message blanks what it quotes (here nothing of the file but its name)
    (folder / "bad.json").write_text('{"id": "s3cr3t"\n')
    line = _refused(_workload(folder, "bad.json"))
    assert "cannot read it as json" in line


@pytest.mark.parametrize(("source", "copy"), [(0o600, 0o600), (0o400, 0o600),
                                              (0o644, 0o644), (0o640, 0o640), (0o777, 0o644)])
def test_a_copy_keeps_the_sources_mode_never_more(tmp_path: Path, source: int, copy: int) -> None:
    path = tmp_path / "d.csv"
    path.write_text(GOOD_CSV)
    path.chmod(source)
    assert copy_mode(path) == copy
