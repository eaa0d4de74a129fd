"""Workload files' slots come from the registered engines (scenarios/workloads/file_slot.py):
one per dialect, an engine's own models for [ops.X].NAME and [tables.T.NAME]; a slot that
does not import is left out with one line, not a crash of every command."""

from __future__ import annotations

from dataclasses import replace

import pytest

from loadtower.engines.clickhouse import CLICKHOUSE
from loadtower.protocol.engine_kinds import KINDS
from loadtower.scenarios.workloads.file_slot import FileSlot, file_slots, load_slots
from loadtower.scenarios.workloads.models import SLOTS, Op


def test_one_slot_per_dialect_in_the_registrys_order() -> None:
    dialects = list(dict.fromkeys(k.dialect for k in KINDS.values() if k.workload_file))
    assert [s.name for s in file_slots()] == dialects == list(SLOTS)
    assert all(isinstance(s, FileSlot) and s.rendering for s in file_slots())
    assert list(Op.model_fields)[-len(SLOTS) - 1:] == [*SLOTS, "bind"]


def test_a_slot_that_does_not_import_is_left_out_with_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    broken = replace(CLICKHOUSE, name="kv", dialect="kv",
                     workload_file="loadtower_no_such_engine.slot:SLOT")
    found = load_slots([*KINDS.values(), broken])
    assert [s.name for s in found] == list(SLOTS)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "loadtower: engine kv's workload-file slot (loadtower_no_such_engine.slot:SLOT) is "
        "left out: No module named 'loadtower_no_such_engine'")


def test_a_kinds_slot_must_be_the_slot_of_its_dialect() -> None:
    wrong = replace(CLICKHOUSE, name="kv", dialect="kv")  # names ClickHouse's slot
    with pytest.raises(TypeError, match="is not the FileSlot of its dialect 'kv'"):
        load_slots([wrong])
