"""start / stop / status of the chdb endpoint as a server process: what a ClickHouse host's
``start`` and ``stop`` actions call in the test inventory, in place of
``systemctl start clickhouse-server`` (no modern ClickHouse server installs here).

    python -m tests.clickhouse.chdb_service start --dir D --address A --port P --password-file F
    python -m tests.clickhouse.chdb_service stop --dir D
    python -m tests.clickhouse.chdb_service status --dir D

``start`` returns once the server answers ``/ping`` (exit 1 with its log otherwise) and
keeps its pid in ``D/server.pid``; its data stays in ``D/data`` across restarts.
``stop`` sends SIGTERM, then SIGKILL after ``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARK = "tests.clickhouse.chdb_http"


def pid_of(directory: Path) -> int | None:
    """The server's pid when it is running (and is ours: no reused pid)."""
    try:
        pid = int((directory / "server.pid").read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, ValueError):
        return None
    return pid if MARK in cmdline else None


def _ping(address: str, port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{address}:{port}/ping", timeout=2) as reply:
            return reply.read().startswith(b"Ok.")
    except OSError:
        return False


def start(args: argparse.Namespace) -> int:
    directory: Path = args.dir
    if pid_of(directory):
        print(f"already running (pid {pid_of(directory)})")
        return 0
    (directory / "data").mkdir(parents=True, exist_ok=True)
    log = (directory / "server.log").open("ab")
    argv = [sys.executable, "-m", MARK, "--address", args.address, "--port", str(args.port)]
    argv += ["--user", args.user, "--password-file", str(args.password_file)]
    argv += ["--data", str(directory / "data")]
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
    )
    (directory / "server.pid").write_text(f"{proc.pid}\n")
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if _ping(args.address, args.port):
            print(f"started (pid {proc.pid}) on {args.address}:{args.port}")
            return 0
        time.sleep(0.2)
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    tail = (directory / "server.log").read_text(errors="replace")[-2000:]
    print(f"the server did not answer /ping within {args.timeout:g} s:\n{tail}", file=sys.stderr)
    return 1


def stop(args: argparse.Namespace) -> int:
    pid = pid_of(args.dir)
    if pid is None:
        print("not running")
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline and pid_of(args.dir) == pid:
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":  # exited, not reaped
            break
        time.sleep(0.1)
    if pid_of(args.dir) == pid:
        os.kill(pid, signal.SIGKILL)
    (args.dir / "server.pid").unlink(missing_ok=True)
    print(f"stopped (pid {pid})")
    return 0


def status(args: argparse.Namespace) -> int:
    pid = pid_of(args.dir)
    print(f"running (pid {pid})" if pid else "stopped")
    return 0 if pid else 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    for name in ("start", "stop", "status"):
        p = sub.add_parser(name)
        p.add_argument("--dir", type=Path, required=True)
        p.add_argument("--timeout", type=float, default=60.0 if name == "start" else 20.0)
        if name == "start":
            p.add_argument("--address", default="127.0.0.1")
            p.add_argument("--port", type=int, required=True)
            p.add_argument("--user", default="default")
            p.add_argument("--password-file", type=Path, required=True)
    args = parser.parse_args(argv)
    return {"start": start, "stop": stop, "status": status}[args.action](args)


if __name__ == "__main__":
    raise SystemExit(main())
