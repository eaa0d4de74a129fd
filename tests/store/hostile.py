"""Runs whose every name and text is chosen by an attacker (or a careless scenario), and a
check that what a command printed holds nothing that drives a terminal."""

from __future__ import annotations

import re
from typing import Any

from tests.store.synth import make_lines

# what must never reach a terminal raw: C0 but tab and newline, DEL, C1, bidi controls,
# zero-width and line separators, lone surrogates
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
HOSTILE = {
    "name": "\x1b]0;PWNED\x07x [bold]run[/bold]",
    "scenario": "[link=http://x]scn[/link]\x9b2J",
    "phase": "load-phase-with-a-long-name-never-cut-\x1b[31mred",
    "op": "read\u202egnp.exe",
    "host": "db0\r\x1b[2K",
    "message": "event \x1b[2J\x1b[H cleared \x08\x7f",
    "reason": "reason \x1b]8;;http://evil\x07link\x1b]8;;\x07 \udcff",
}


def unsafe_in(output: bytes | str) -> list[str]:
    """The characters of `output` that could drive a terminal (empty: safe). Bytes must be
    UTF-8: anything else is reported too."""
    if isinstance(output, bytes):
        try:
            output = output.decode("utf-8")
        except UnicodeDecodeError as exc:
            return [f"not UTF-8: {exc}"]
    return sorted({repr(c) for c in UNSAFE.findall(output)})


def write_hostile_run(writer: Any, text: dict[str, str], seed: int = 1, seconds: int = 3) -> str:
    """One run through the real writer with every text field from `text`; returns its id."""
    lines, _ = make_lines(seconds=seconds, agents=1, ops=(text["op"],), phase=text["phase"],
                          per_second=5, seed=seed)  # fmt: skip
    for line in lines:
        line["host"] = text["host"]
    run_id = writer.start_run(text["name"], text["scenario"], "", "", {}, {}, {})
    writer.phase_started(run_id, 0, text["phase"], "run", float(lines[0]["ts"]), {})
    for line in lines:
        writer.add_interval(run_id, line)
        writer.add_node_sample(run_id, float(line["ts"]), text["host"], 40.0, 1, 2, 0.0, 0.0,
                               0.0, 0.0)  # fmt: skip
    writer.event(run_id, float(lines[0]["ts"]), "info", text["message"], host=text["host"],
                 phase=text["phase"])  # fmt: skip
    writer.phase_ended(run_id, 0, float(lines[-1]["ts"]) + 1, {})
    writer.end_run(run_id, "failed", text["reason"])
    return run_id
