"""Fuzz: random unicode (control characters, Rich markup, bidi controls, lone surrogates) as
run, scenario, phase, op and host names, event text and reasons, through the real writer,
then the commands `runs`, `sql` (table, CSV), `report` (to a temporary file) and
`compare`. Fails on any traceback or non-zero exit, any character that could drive a
terminal in what they print, and any row lost (rows written vs rows read back)."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadtower.cli import main
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.writer_values import repaired_text
from tests.store.hostile import unsafe_in, write_hostile_run

FRAGMENTS = ["\x1b[2J", "\x1b]0;t\x07", "\x9b", "\r", "\x00", "[bold]", "[/]", "[link=x]",
             "\u202e", "\u200b", "\udcff", "\ud800", "é", "漢", "\n", "\t"]  # fmt: skip
SECONDS = 3
any_char = st.characters(exclude_categories=())  # surrogates and controls included
text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(any_char, max_size=4)),
                min_size=1, max_size=5).map("".join).filter(bool)  # fmt: skip
FIELDS = ("name", "scenario", "phase", "op", "host", "message", "reason")


def run_cli(*args: str) -> str:
    """`loadtower ARGS` in this process; its output (stdout and stderr), checked."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    printed = out.getvalue() + err.getvalue()
    assert code == 0, (args, printed)
    assert unsafe_in(printed) == [], (args, unsafe_in(printed), printed)
    return printed


def one(path: Path, query: str) -> list[tuple]:
    return StoreReader(path).sql(query)[1]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({field: text for field in FIELDS}))
def test_hostile_text_through_writer_and_commands(fields: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="lt-fuzz-") as tmp:
        store = Path(tmp) / "f.duckdb"
        with StoreWriter(store) as writer:
            ids = [write_hostile_run(writer, fields, seed=s, seconds=SECONDS) for s in (1, 2)]
        # nothing lost: every row written is read back, text as written or spelled out
        kept = {f: repaired_text(v) for f, v in fields.items()}
        assert one(store, "SELECT name, scenario, reason FROM runs ORDER BY started") == [
            (kept["name"], kept["scenario"], kept["reason"])
        ] * 2
        assert one(store, "SELECT name FROM phases") == [(kept["phase"],)] * 2
        assert one(store, "SELECT message, host, phase FROM events WHERE kind = 'info'") == [
            (kept["message"], kept["host"], kept["phase"])
        ] * 2
        assert one(store, "SELECT count(*), min(host) FROM node_samples") == [
            (2 * SECONDS, kept["host"])
        ]
        assert one(store, "SELECT count(*), min(op), min(phase) FROM op_intervals") == [
            (2 * SECONDS, kept["op"], kept["phase"])
        ]
        s = ["--store", str(store)]
        run_cli("runs", *s)
        for fmt in ("table", "csv"):
            run_cli("sql", *s, "--format", fmt, "SELECT * FROM runs")
            run_cli("sql", *s, "--format", fmt, "SELECT * FROM events")
        report = Path(tmp) / "r.html"
        run_cli("report", *s, ids[0], "--out", str(report))
        report.read_bytes().decode("utf-8")  # written whole, valid UTF-8
        run_cli("compare", *s, ids[0], ids[1])
