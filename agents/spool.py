"""The agent's spool: every interval and event line, written to a local file first.

Each worker process appends its lines (numbered with a per-agent ``seq``) to
``DIR/INDEX.jsonl`` before sending them to the Locust master, and keeps
``DIR/INDEX.pid`` (and, when it ends on its own, ``DIR/INDEX.exit``). ``DIR`` is
``/tmp/loadtower-spool/RUN_ID/HOST`` on the agent host. The orchestrator runs, over SSH:

- ``python -m loadtower.agents.spool read DIR OPTIONS`` to read what was written after
  the byte offsets it already has, leaving out the lines it already stored
  (``{"offsets": {"0.jsonl": 1234}, "floors": {"0.jsonl": 57}, "before": null}``): for
  each file one header line ``@@ {"file": ..., "start": S, "end": E}`` then the lines
  in ``[S, E)`` it still needs;
- ``python -m loadtower.agents.spool watch DIR`` to learn within a quarter second when a
  worker process is gone: ``{"type": "alive"|"gone", ...}`` lines and a ``tick`` every
  second (its write fails, and the watcher ends, when the SSH session is gone).

It writes and reads plain files only; the orchestrator side parses with
:func:`parse_read` and de-duplicates with :class:`SeenSeqs`. The run's and the agent's
folders are this user's own (0700, checked for owner and mode before use) and no file
in them is opened through a symlink (agents/private_files.py): a folder or a ``0.pid``
planted by another user of the host is refused in one line, nothing written through it.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loadtower.agents.private_files import (
    UnsafePath,
    check_private_dir,
    open_append,
    open_read,
    private_dir,
    read_text,
    write_replace,
)

ROOT = "/tmp/loadtower-spool"
SPOOLED = ("interval", "event")
WATCH_EVERY_S = 0.25


def safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def shared_root(root: str | Path = ROOT) -> None:
    """The spool root is shared by every user of the host, like /tmp itself (mode 1777:
    anyone may make a run's directory in it, only its owner may remove it): an agent run
    by another user (e.g. the cluster sandbox's ltsandbox after root's runs) could not
    make its run directory in a root-owned 0755 root."""
    path = Path(root)
    try:
        path.mkdir(mode=0o1777)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UnsafePath(f"{path}: not a folder (a symlink or a file): refusing to use it")
    if info.st_uid == os.getuid() and info.st_mode & 0o7777 != 0o1777:
        os.chmod(path, 0o1777)  # our own, made with the umask (or by an older loadtower)
    elif info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        raise UnsafePath(f"{path}: writable by others without the sticky bit (mode "
                         f"{stat.S_IMODE(info.st_mode):04o}): another user could replace a "
                         "run's folder in it; refusing to use it")


def spool_dir(run_id: str, host: str, root: str = ROOT) -> str:
    return f"{root}/{safe(run_id)}/{safe(host)}"


class Spool:
    """One worker process's spool file, pid file and exit record."""

    def __init__(self, directory: str | Path, index: int, agent: str) -> None:
        self.dir = Path(directory)
        if self.dir.parent.parent == Path(ROOT):
            shared_root()
            private_dir(self.dir.parent)  # the run's folder: ours, 0700
        else:
            self.dir.parent.mkdir(parents=True, exist_ok=True)
        private_dir(self.dir)
        self.index, self.agent = index, agent
        self.seq = 0
        self.file = open_append(self.dir / f"{index}.jsonl")
        pid = {"pid": os.getpid(), "agent": agent, "started": time.time()}
        write_replace(self.dir / f"{index}.pid", json.dumps(pid))
        (self.dir / f"{index}.exit").unlink(missing_ok=True)  # unlink never follows a link

    def number(self, line: dict[str, Any]) -> str | None:
        """Give an interval/event line its seq and write it; return the JSON text written
        (what the worker sends of an interval line), None for a line not spooled."""
        if line.get("type") not in SPOOLED:
            return None
        self.seq += 1
        line["seq"] = self.seq
        line.setdefault("agent", self.agent)
        text = json.dumps(line, separators=(",", ":"))
        self.file.write(text + "\n")
        self.file.flush()  # in the page cache: survives the process being killed
        return text

    def exited(self, reason: str) -> None:
        record = {"agent": self.agent, "reason": reason, "ts": time.time()}
        write_replace(self.dir / f"{self.index}.exit", json.dumps(record))

    def close(self) -> None:
        self.file.close()


# ---------------------------------------------------------------- reading (agent host)
def read(
    directory: str,
    offsets: dict[str, int],
    out: Any = sys.stdout,
    floors: dict[str, int] | None = None,
    before: float | None = None,
) -> None:
    """Print the complete lines after each file's offset, without those the reader has:
    ``floors[file]`` (every seq up to it arrived). With ``before`` (a periodic read) it
    stops at the first missing line of second ``before`` or later: that one may still be
    on its way, so the reported end offset stays in front of it."""
    base = Path(directory)
    if not os.path.lexists(base):
        return
    check_private_dir(base)
    for path in sorted(base.glob("*.jsonl")):
        start = int(offsets.get(path.name, 0))
        floor = int((floors or {}).get(path.name, 0))
        with open_read(path) as fh:
            fh.seek(start)
            data = fh.read()
        end, kept = start, []
        for raw in data.splitlines(keepends=True):
            if not raw.endswith(b"\n"):
                break  # a line being written is left for later
            try:
                line = json.loads(raw)
            except ValueError:
                end += len(raw)
                continue
            if int(line.get("seq") or 0) > floor:
                if before is not None and float(line.get("ts") or 0) >= before:
                    break
                kept.append(raw)
            end += len(raw)
        header = {"file": path.name, "start": start, "end": end}
        out.write("@@ " + json.dumps(header) + "\n")
        out.write(b"".join(kept).decode("utf-8", errors="replace"))
    out.flush()


def parse_read(text: str) -> Iterator[tuple[str, int, dict[str, Any] | None]]:
    """(file, end offset, line) per spooled line; a header alone yields line None."""
    current, end = "", 0
    for raw in text.splitlines():
        if raw.startswith("@@ "):
            header = json.loads(raw[3:])
            current, end = str(header["file"]), int(header["end"])
            yield current, end, None
        elif raw.strip():
            try:
                yield current, end, json.loads(raw)
            except ValueError:
                continue


# ---------------------------------------------------------------- watching (agent host)
def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _emit(line: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def watch(directory: str, every: float = WATCH_EVERY_S) -> int:
    base = Path(directory)
    watched: dict[str, dict[str, Any]] = {}
    reported: set[str] = set()
    next_tick = 0.0
    checked = False
    try:
        while True:
            if not checked and os.path.lexists(base):
                check_private_dir(base)  # UnsafePath: main says it in one line
                checked = True
            for pid_file in sorted(base.glob("*.pid")) if checked else []:
                name = pid_file.stem
                if name in watched or name in reported:
                    continue
                try:
                    info = json.loads(read_text(pid_file))
                except UnsafePath:
                    raise
                except (OSError, ValueError):
                    continue  # being written
                watched[name] = info
                _emit({"type": "alive", "agent": info["agent"], "pid": info["pid"]})
            for name, info in list(watched.items()):
                if _alive(int(info["pid"])):
                    continue
                exit_file = base / f"{name}.exit"
                reason = "killed or crashed (it left no exit record)"
                if exit_file.exists():
                    try:
                        reason = str(json.loads(read_text(exit_file)).get("reason", reason))
                    except (OSError, ValueError):
                        pass
                _emit(
                    {
                        "type": "gone",
                        "agent": info["agent"],
                        "pid": info["pid"],
                        "ts": time.time(),
                        "reason": reason,
                    }
                )
                del watched[name]
                reported.add(name)
            if time.monotonic() >= next_tick:
                _emit({"type": "tick", "alive": len(watched)})
                next_tick = time.monotonic() + 1.0
            time.sleep(every)
    except (BrokenPipeError, OSError):
        return 0  # the SSH session is gone


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    except UnsafePath as exc:
        sys.stderr.write(f"loadtower spool: {exc}\n")
        return exc.exit_code


def _main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "read":
        opts = json.loads(argv[2]) if len(argv) > 2 else {}
        read(argv[1], opts.get("offsets", {}), floors=opts.get("floors"), before=opts.get("before"))
        return 0
    if len(argv) == 2 and argv[0] == "watch":
        return watch(argv[1])
    sys.stderr.write("usage: python -m loadtower.agents.spool read DIR [OPTIONS] | watch DIR\n")
    return 2


class SeenSeqs:
    """Which (agent, seq) lines are already stored: a floor per agent plus the seqs above it."""

    def __init__(self) -> None:
        self.floor: dict[str, int] = {}
        self.above: dict[str, set[int]] = {}

    def add(self, agent: str, seq: int) -> bool:
        """Record it; False when it was seen before."""
        floor = self.floor.get(agent, 0)
        above = self.above.setdefault(agent, set())
        if seq <= floor or seq in above:
            return False
        above.add(seq)
        while floor + 1 in above:
            floor += 1
            above.discard(floor)
        self.floor[agent] = floor
        return True

    def known(self, agent: str, seq: int) -> bool:
        """Whether (agent, seq) was recorded (nothing recorded by asking)."""
        return seq <= self.floor.get(agent, 0) or seq in self.above.get(agent, ())

    def count(self, agent: str) -> int:
        return self.floor.get(agent, 0) + len(self.above.get(agent, ()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
