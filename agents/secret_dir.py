"""The run's private directory on an agent host: its link key and its secrets.

``/tmp/loadtower-private-UID/RUN_ID/`` (UID: the SSH user's), both levels mode 0700 and
owned by that user, checked (lstat: no symlink, our owner, no group/other bits) before
every use; files are 0600, created with O_EXCL|O_NOFOLLOW. The orchestrator runs, over
SSH, with the secrets as JSON on stdin (never on a command line):

- ``python -m loadtower.agents.secret_dir put RUN_ID``: writes ``{name: text}`` there
  and prints the directory;
- ``python -m loadtower.agents.secret_dir remove RUN_ID``: removes the run's directory
  (at the end of the run; `loadtower cleanup` removes those of dead runs).

Workers read the link key and the phase's secrets with :func:`read_secret`
(protocol/link_secrets.py: the phase message names the files, it never holds them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

from loadtower.agents.private_files import check_private_dir, private_dir
from loadtower.errors import LoadtowerError
from loadtower.protocol.link_secrets import LINK_KEY_FILE, valid_name

ROOT_PREFIX = "/tmp/loadtower-private-"
MAX_SECRET_BYTES = 1024 * 1024


def base_dir(root_prefix: str = ROOT_PREFIX) -> Path:
    return Path(f"{root_prefix}{os.getuid()}")


def run_dir(run_id: str, root_prefix: str = ROOT_PREFIX) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id).lstrip(".") or "_"
    return base_dir(root_prefix) / name


def check_private(path: Path) -> None:
    """`path` is a real directory of ours that nobody else may enter (private_files'
    check), or LoadtowerError."""
    if not os.path.lexists(path):
        raise LoadtowerError(f"{path}: the run's private directory is missing")
    check_private_dir(path)


def put(run_id: str, secrets: dict[str, str], root_prefix: str = ROOT_PREFIX) -> Path:
    """Write `secrets` ({file name: text}) as 0600 files in the run's private directory."""
    base = base_dir(root_prefix)
    private_dir(base)
    directory = run_dir(run_id, root_prefix)
    private_dir(directory)
    for name, text in secrets.items():
        if name != LINK_KEY_FILE and not valid_name(name):
            raise LoadtowerError(f"{name!r}: not a secret file name")
        # a new file, then renamed over the name: agent hosts that share a file system
        # (and a user) may put the same secret at once
        temp = directory / f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, directory / name)
    return directory


def read_secret(directory: str | Path, name: str) -> str:
    """One secret of the run's private directory (refused unless the directory and the
    file are this user's alone)."""
    if name != LINK_KEY_FILE and not valid_name(name):
        raise LoadtowerError(f"{name!r}: not a secret file name")
    check_private(Path(directory))
    path = Path(directory) / name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise LoadtowerError(f"{path}: cannot read the run's secret: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as src:
        info = os.fstat(src.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise LoadtowerError(f"{path}: not a 0600 file of this user: refused")
        data = src.read(MAX_SECRET_BYTES + 1)
    if len(data) > MAX_SECRET_BYTES:
        raise LoadtowerError(f"{path}: over {MAX_SECRET_BYTES} bytes")
    return data.decode("utf-8")


def link_key(directory: str | Path) -> bytes:
    return bytes.fromhex(read_secret(directory, LINK_KEY_FILE).strip())


def remove(run_id: str, root_prefix: str = ROOT_PREFIX) -> bool:
    """Remove the run's private directory; False when there was none."""
    directory = run_dir(run_id, root_prefix)
    if not os.path.lexists(directory):
        return False
    try:
        check_private(directory)
    except LoadtowerError:
        if not os.path.lexists(directory):  # another agent host on the same file system
            return False
        raise
    try:
        shutil.rmtree(directory)
    except FileNotFoundError:  # another agent host on the same file system removed it
        pass
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("put", "remove"):
        print("usage: python -m loadtower.agents.secret_dir put|remove RUN_ID", file=sys.stderr)
        return 2
    try:
        if argv[0] == "put":
            secrets = json.loads(sys.stdin.read())
            print(put(argv[1], {str(k): str(v) for k, v in secrets.items()}))
        else:
            remove(argv[1])
    except (LoadtowerError, OSError, ValueError) as exc:
        print(f"loadtower secret_dir {argv[0]}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
