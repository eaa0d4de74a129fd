"""Issue 26 case 6 (LOW): raw ESC/BEL bytes stored in a run's name, scenario or reason
reach the HTML report visible (``\\x1b``), never raw, and HTML-escaped as before."""

from __future__ import annotations

from pathlib import Path

from loadtower.store import StoreReader, StoreWriter
from loadtower.store.html_text import escape
from loadtower.store.report_html import render


def test_the_escaping_helper_shows_control_characters() -> None:
    assert escape("a\x1b[31mb\x07<i>&\u202e") == "a\\x1b[31mb\\x07&lt;i&gt;&amp;\\u202e"
    assert escape(None) == "" and escape("plain") == "plain"


def test_control_characters_in_a_run_are_visible_in_the_report(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    writer = StoreWriter(store)
    run_id = writer.start_run("name\x1b]0;owned\x07", "scn\x1b[2J<b>", "", "", {}, {}, {})
    writer.end_run(run_id, "failed", "reason\x07\x1b[31m")
    writer.close()
    page = render(StoreReader(store), run_id)
    assert "\x1b" not in page and "\x07" not in page
    assert "name\\x1b]0;owned\\x07" in page and "scn\\x1b[2J&lt;b&gt;" in page
    assert "reason\\x07\\x1b[31m" in page


def test_a_listing_reads_capped_texts(tmp_path: Path) -> None:
    """Case 6: `runs` reads at most LISTED_CHARS of each text (a crafted store's 100 MB
    of compressible text stays in DuckDB); one run read whole keeps it all."""
    import json

    import duckdb

    from loadtower.store.reader import LISTED_CHARS

    store = tmp_path / "s.duckdb"
    writer = StoreWriter(store)
    run_id = writer.start_run("r", "scn", "", "", {}, {}, {})
    writer.end_run(run_id, "failed", "x" * (LISTED_CHARS * 10))
    writer.close()
    con = duckdb.connect(str(store))
    con.execute("UPDATE runs SET versions = ?", [json.dumps({"v": "y" * LISTED_CHARS * 3})])
    con.close()
    listed = StoreReader(store).runs()[0]
    assert listed["reason"] == "x" * LISTED_CHARS + f"... ({LISTED_CHARS * 10} characters)"
    assert listed["versions"] == {"left_out": f"{LISTED_CHARS * 3 + 9} characters"}
    assert len(StoreReader(store).run(run_id)["reason"]) == LISTED_CHARS * 10
