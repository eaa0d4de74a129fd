"""YCSB property files' ``readallfields = false`` and ``writeallfields = true`` on the
shipped ycsb file's statements in an SQL slot (a `FileSlot`'s ``ycsb_properties``): a
read selects the key and one field (picked per op), an update writes every field as the
insert does (an upsert on the engines that take this form). Light on purpose: an
engine's file_slot.py imports it while the workload model is being built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def sql_ycsb_properties(slot: str) -> Callable[[dict[str, Any], bool, bool], None]:
    """The ``ycsb_properties`` of SQL slot `slot`."""

    def apply(ops: dict[str, Any], read_all: bool, write_all: bool) -> None:
        if not read_all:
            ops["read"][slot] = ops["read"][slot].replace("${field*}", "${field#}").replace(
                "SELECT *", "SELECT y_id, ${field#}")
        if write_all:
            ops["update"][slot] = ops["insert"][slot]

    return apply
