"""The data set upload's naming and spec rewriting (the copy itself:
test_dataset_upload_integration.py, over the sandbox's sshd)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from loadtower.fleet.dataset_upload import uploads, with_agent_paths


def _spec(path: Path) -> dict:
    return {"model": {"datasets": {"people": {"file": str(path), "format": "csv",
                                              "columns": {"id": "bigint"}}}}}


def test_the_remote_name_carries_the_contents_sha256(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("id\n1\n")
    [upload] = uploads(_spec(path))  # type: ignore[arg-type]
    digest = hashlib.sha256(b"id\n1\n").hexdigest()
    assert (upload.name, upload.sha256, upload.size) == ("people", digest, 5)
    assert upload.remote_name == f"{digest[:16]}-people.csv"
    path.write_text("id\n2\n")  # new contents (and mtime): a new name
    [again] = uploads(_spec(path))  # type: ignore[arg-type]
    assert again.remote_name != upload.remote_name


def test_the_agents_spec_names_the_agent_side_path(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "people.csv")
    out = with_agent_paths(spec, {"people": "/home/a/.loadtower/datasets/x-people.csv"})  # type: ignore[arg-type]
    assert out["model"]["datasets"]["people"]["file"] == "/home/a/.loadtower/datasets/x-people.csv"
    assert spec["model"]["datasets"]["people"]["file"] == str(tmp_path / "people.csv")
