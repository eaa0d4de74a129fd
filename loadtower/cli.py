"""The `loadtower` command line: one sub-command per job, each in its own module.

Each command module exposes ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``. Modules import their heavy dependencies inside ``run`` so
that ``loadtower --help`` stays fast.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import sys
from collections.abc import Sequence

from loadtower.build import agent_version_line, version_line
from loadtower.errors import ConfigError, LoadtowerError

# Every command-line entry point, registered here and only here. A command module exposes
# ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``; each entry
# names the room it needs, and a command whose room is not installed (the agent install
# set has only `agents` and `protocol`) is left out of the parser.
COMMANDS: dict[str, tuple[str, str]] = {
    "sandbox": ("loadtower.sandbox.commands", "sandbox"),
    "check": ("loadtower.scenarios.check_command", "scenarios"),
    "run": ("loadtower.run_with_tui", "orchestrator"),  # composes its run and the tui
    "agent": ("", "agents"),  # the AGENT_ACTIONS below
    "runs": ("loadtower.store.commands.runs", "store"),
    "sql": ("loadtower.store.commands.sql", "store"),
    "compare": ("loadtower.store.commands.compare", "store"),
    "history": ("loadtower.store.commands.history", "store"),
    "export": ("loadtower.store.commands.export", "store"),
    "report": ("loadtower.store.commands.report", "store"),
    "repair": ("loadtower.store.commands.repair", "store"),  # the one write of a store
    "cleanup": ("loadtower.fleet.cleanup_command", "orchestrator"),
    "control": ("loadtower.scenarios.control_command", "scenarios"),
    "tui": ("loadtower.tui.command", "tui"),
    "demo": ("loadtower.demo_command", "sandbox"),  # composes sandbox and run
}
# `loadtower agent ACTION`: the worker runs on a load host; master and run are the
# orchestrator's side of the agent
AGENT_ACTIONS: dict[str, tuple[str, str]] = {
    "run": ("loadtower.orchestrator.standalone_load_command", "orchestrator"),
    "master": ("loadtower.orchestrator.agent_master_command", "orchestrator"),
    "worker": ("loadtower.agents.worker_command", "agents"),
}
AGENT_HELP = "Run the load agent on this host (interval lines as JSON on stdout)."
AGENT_DESCRIPTION = """The load agent: Locust users whose ops run on a native-thread asyncio engine
(over each database's own driver), measured per second with HDR histograms of service
time (from the actual send) and response time (from the intended start).

examples:
  loadtower agent run --contact-points 127.0.0.1 --username loadtower \\
      --password-env PW --workload ycsb-a --records 10000 --load --rate 500 --duration 10 --json
  loadtower agent master --bind 127.0.0.1:5557 --expect-workers 2   # commands on stdin
  loadtower agent worker --master 127.0.0.1:5557 --processes 0 --host-name agent1 \
      --secret-dir /tmp/loadtower-private-1000/RUN   # the run's link key (docs/security.md)"""
AGENT_SET_NOTE = "this is the agent install set: only `loadtower agent worker` is here"


@functools.cache
def installed(room: str) -> bool:
    """Whether `loadtower.<room>` is importable here."""
    return importlib.util.find_spec(f"loadtower.{room}") is not None


def _add(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, module_name: str,
         help_text: str | None = None) -> None:
    module = importlib.import_module(module_name)
    cmd = sub.add_parser(
        name,
        help=help_text or module.HELP,
        description=getattr(module, "DESCRIPTION", module.HELP),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    module.add_arguments(cmd)
    cmd.set_defaults(_module=module)


def _add_agent(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    description = AGENT_DESCRIPTION
    if not installed("orchestrator"):  # the examples of what is here
        lines = description.splitlines()
        description = "\n".join(
            line for i, line in enumerate(lines)
            if not ("agent run" in line or "agent master" in line
                    or (i and "agent run" in lines[i - 1]))
        ) + f"\n\n({AGENT_SET_NOTE})"
    agent = sub.add_parser("agent", help=AGENT_HELP, description=description,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    agent.add_argument("--version", action="version", version=agent_version_line())
    actions = agent.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, (module_name, room) in AGENT_ACTIONS.items():
        if installed(room):
            _add(actions, name, module_name)


def build_parser() -> argparse.ArgumentParser:
    description = "Orchestrate NoSQL benchmarks over SSH, watch them live, keep every sample."
    if not installed("scenarios"):
        description += f" ({AGENT_SET_NOTE})"
    parser = argparse.ArgumentParser(prog="loadtower", description=description)
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, room) in COMMANDS.items():
        if not installed(room):
            continue
        if name == "agent":
            _add_agent(sub)
        else:
            _add(sub, name, module_name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help()
        return 0
    try:  # no command writes a store before it runs: reads stay reads (`repair` marks)
        return int(args._module.run(args) or 0)
    except LoadtowerError as exc:
        # no control character reaches the terminal; a bad file's error is one line even
        # when it quotes a key with a newline in it (a few other errors show a tool's output)
        text = _visible(exc, keep_newlines=not isinstance(exc, ConfigError))
        print(f"loadtower {args.command}: {text}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"loadtower {args.command}: interrupted", file=sys.stderr)
        return 130


def _visible(exc: BaseException, keep_newlines: bool) -> str:
    """The error's text with no control character (the store's `visible`; the agent
    install set has no store: there, control characters become `?`)."""
    if installed("store"):
        # deferred: the agent install set has no store room (installed("store") above)
        from loadtower.store.terminal_text import visible

        return visible(exc, keep_newlines=keep_newlines)
    keep = "\n" if keep_newlines else ""
    return "".join(c if c.isprintable() or c in keep else "?" for c in str(exc))
