"""The target keys only ClickHouse takes (docs/clickhouse.md): the table's engine, its
sort key and skip indexes, and how deletes and updates write. Named by the kind's
``target_keys``: scenarios/models.py adds them to `Target`, and `check` refuses them on a
target of another engine."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field

from loadtower.scenarios.checked_types import Name, TargetKeys, checked

# a skip index's definition, e.g. "title TYPE bloom_filter(0.01) GRANULARITY 4": it goes
# into DDL, so no quote and no semicolon
INDEX_SPEC = re.compile(r"[A-Za-z0-9_ (),.]{1,200}")
INDEX_RULE = "letters, digits, _, spaces, parentheses, commas and dots (at most 200)"


def index_spec_problem(value: str) -> str | None:
    if INDEX_SPEC.fullmatch(value):
        return None
    return f"invalid skip index definition {value!r}: expected {INDEX_RULE}"


IndexSpec = Annotated[str, checked(index_spec_problem)]


class ClickhouseTargetKeys(TargetKeys):
    table_engine: Literal["ReplacingMergeTree", "MergeTree"] | None = None
    order_by: Annotated[list[Name], Field(min_length=1)] | None = None
    skip_indexes: dict[Name, IndexSpec] | None = None
    delete_mode: Literal["lightweight", "mutation"] | None = None
    update_mode: Literal["insert", "mutation"] | None = None


def runs_mutations(target: Any) -> bool:
    """A target with ``update_mode = "mutation"`` runs a file's ``OP_mutation`` variants
    in their ops' place (the slot's `mutation_variants`)."""
    return ClickhouseTargetKeys.of(target).update_mode == "mutation"
