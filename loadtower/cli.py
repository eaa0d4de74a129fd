"""The `loadtower` command line: one sub-command per job, each in its own module.

Each command module exposes ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``. Modules import their heavy dependencies inside ``run`` so
that ``loadtower --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from loadtower.build import version_line
from loadtower.errors import ConfigError, LoadtowerError

# command name -> module implementing it
COMMANDS: dict[str, str] = {
    "sandbox": "loadtower.sandbox.commands",
    "check": "loadtower.scenarios.check_command",
    "run": "loadtower.scenarios.run_command",
    "agent": "loadtower.agents.commands",
    "runs": "loadtower.store.commands.runs",
    "sql": "loadtower.store.commands.sql",
    "compare": "loadtower.store.commands.compare",
    "export": "loadtower.store.commands.export",
    "report": "loadtower.store.commands.report",
    "cleanup": "loadtower.agents.cleanup_command",
    "tui": "loadtower.tui.command",
    "demo": "loadtower.sandbox.demo_command",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loadtower",
        description="Orchestrate NoSQL benchmarks over SSH, watch them live, keep every sample.",
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        cmd = sub.add_parser(
            name,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(cmd)
        cmd.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help()
        return 0
    try:
        _recover_runs(args)  # in the try: Ctrl-C while it holds the store is one line too
        return int(args._module.run(args) or 0)
    except LoadtowerError as exc:
        from loadtower.store.terminal_text import visible

        # no control character reaches the terminal; a bad file's error is one line even
        # when it quotes a key with a newline in it (a few other errors show a tool's output)
        text = visible(exc, keep_newlines=not isinstance(exc, ConfigError))
        print(f"loadtower {args.command}: {text}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"loadtower {args.command}: interrupted", file=sys.stderr)
        return 130


def _recover_runs(args: argparse.Namespace) -> None:
    """Commands that open a store first mark the runs of dead orchestrators interrupted."""
    if "store" not in vars(args):
        return
    from loadtower.defaults import store_path
    from loadtower.store.admin import recover_runs

    recover_runs(store_path(args))
