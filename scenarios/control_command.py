"""`loadtower control RUN COMMAND [N]`: steer or stop a run in progress through its control
socket (the same commands as the TUI's keys)."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from loadtower.defaults import add_store_argument, store_path
from loadtower.errors import LoadtowerError
from loadtower.scenarios.control_api import STEER_COMMANDS, control_path, send

HELP = "Steer a run in progress: its rate or users, pause, skip or stop its phase."
DESCRIPTION = """Send a command to a run in progress (`loadtower run`, headless or not, on this
machine, writing to --store) through its control socket, as the TUI's keys do:

  rate N         the current run phase's total rate, N ops/s (an open model)
  users N        the current run phase's users, N (a closed model)
  pause | resume the current phase's clock
  skip           the rest of the current phase
  stop           the run (its load at once)

A rate or users change reaches every load worker within a second, is stored as an event
(rate_change / users_change) and is listed in the phase's result.

examples:
  loadtower control 20261127-231502-8e64 rate 5000
  loadtower control 20261127-231502-8e64 users 64 --store results.duckdb
  loadtower control 20261127-231502-8e64 skip

exit status: 0 the run did it; 2 the run refused (one line says why), or no run of
that id listens on this store."""

ACTIONS = {"rate": "rate", "users": "users", "pause": "pause_phase", "resume": "resume_phase",
           "skip": "skip_phase", "stop": "stop"}
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", help="the run's id (its first output line)")
    parser.add_argument("action", metavar="COMMAND", choices=sorted(ACTIONS),
                        help=f"one of {', '.join(ACTIONS)}")
    parser.add_argument("value", metavar="N", nargs="?", default=None,
                        help="the new rate (ops/s) or number of users")
    add_store_argument(parser)


def _fail(message: str) -> int:
    print(f"loadtower control: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    if not RUN_ID.fullmatch(args.run_id):
        return _fail(f"'{args.run_id}' is not a run id (letters, digits, '.', '_', '-')")
    command = ACTIONS[args.action]
    value: float | None = None
    if command in STEER_COMMANDS:
        if args.value is None:
            return _fail(f"{args.action} needs a number: loadtower control RUN {args.action} N")
        try:
            value = float(args.value.replace(",", "").replace("_", ""))
        except ValueError:
            return _fail(f"{args.action} needs a number, not '{args.value}'")
    elif args.value is not None:
        return _fail(f"{args.action} takes no number (got '{args.value}')")
    path = control_path(store_path(args), args.run_id)
    try:
        reply = asyncio.run(send(path, command, value=value))
    except (OSError, TimeoutError) as exc:
        return _fail(f"no run {args.run_id} answers on {path} ({type(exc).__name__}: "
                     f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc})")
    except LoadtowerError as exc:
        return _fail(str(exc))
    if reply == "ok" or reply.startswith("ok:"):
        print(reply if reply != "ok" else f"{args.action}: ok")
        return 0
    return _fail(reply)
