"""LocustLoad's reader tells the store which lines need no look for text that is not
UTF-8: those whose text is ASCII without a \\u escape (every string in them is ASCII).
Any other line is walked as before, so a lone surrogate from an escape is still spelled
out and reported, and text in UTF-8 is stored as it is."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from loadtower.orchestrator.load_controller import LocustLoad
from loadtower.orchestrator.sinks import Sinks
from loadtower.store import StoreReader
from tests.orchestrator.phase_fixtures import INVENTORY, phase_context
from tests.store.synth import make_lines

SCENARIO = """
name = "reader"
[[phases]]
name = "steady"
type = "run"
rate = 100
duration = "5s"
"""


def test_only_ascii_text_skips_the_walk_and_every_line_is_stored(tmp_path: Path) -> None:
    lines, _ = make_lines(seconds=3, agents=1, ops=("read",), per_second=5, phase="steady")
    plain, escaped, utf8 = (dict(line) for line in lines)
    escaped["agent"] = "agent\udcff/0"  # json.dumps writes it as a \u escape
    utf8["ops"] = {"lecture\u00e9": utf8["ops"]["read"]}  # raw UTF-8 (ensure_ascii=False)
    texts = [json.dumps(plain).encode(), json.dumps(escaped).encode(),
             json.dumps(utf8, ensure_ascii=False).encode("utf-8")]
    with phase_context(tmp_path, SCENARIO, INVENTORY) as (ctx, _synth, _a):
        sinks = Sinks(ctx.store, ctx.run_id, ctx.plan)
        sinks.phase = "steady"
        load = LocustLoad(None, ctx.plan, ctx.run_id, sinks)
        handed: list[bool] = []
        real = ctx.store.add_interval

        def add(run_id: str, line: dict[str, Any], ascii_text: bool = False) -> None:
            handed.append(ascii_text)
            real(run_id, line, ascii_text)

        ctx.store.add_interval = add

        async def read() -> None:
            reader = asyncio.StreamReader()  # made in the running loop
            for text in texts:
                reader.feed_data(text + b"\n")
            reader.feed_eof()
            load.master = SimpleNamespace(stdout=reader)  # type: ignore[assignment]
            load.closing = True  # its output ends as when the run tells it to quit
            await asyncio.wait_for(load._read_master(), 20.0)

        asyncio.run(read())
        run_id = ctx.run_id
    assert handed == [True, False, False]
    db = StoreReader(tmp_path / "store.duckdb")
    agents = db.sql(f"SELECT DISTINCT agent FROM op_intervals WHERE run_id = '{run_id}' "
                    "ORDER BY agent")[1]
    assert [a for (a,) in agents] == [plain["agent"], "agent\\udcff/0"]
    ops = db.sql(f"SELECT DISTINCT op FROM op_intervals WHERE run_id = '{run_id}' ORDER BY op")[1]
    assert [o for (o,) in ops] == ["lecture\u00e9", "read"]
    bad = [e for e in db.events(run_id) if e["kind"] == "bad_sample"]
    # the escaped line's, in op_intervals (and in agent_samples, which Sinks also fills)
    assert bad and all("udcff" in e["message"] for e in bad), bad
    assert any(e["message"].startswith("op_intervals line") for e in bad), bad
