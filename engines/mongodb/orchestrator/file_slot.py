"""The ``mongodb`` slot of a workload file: an op's pymongo call (its templates hold
parameters: ``loadtower.engines.mongodb.orchestrator.call_templates``), and a
collection's secondary indexes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from loadtower.scenarios.models import Strict
from loadtower.scenarios.workloads.file_slot import FileSlot


class MongodbTable(Strict):
    """The collection's secondary indexes (create_index)."""

    indexes: list[dict[str, Literal[1, -1]]] = Field(default_factory=list)


class MongodbOp(Strict):
    """One pymongo call; strings ":name" in filter/document/update/pipeline/limit are
    parameters."""

    call: Literal[
        "find_one", "find", "insert_one", "insert_many", "update_one", "update_many",
        "replace_one", "delete_one", "delete_many", "aggregate", "count_documents",
    ]  # fmt: skip
    collection: str
    filter: dict[str, Any] = Field(default_factory=dict)
    document: dict[str, Any] | None = None
    update: dict[str, Any] | None = None
    pipeline: list[dict[str, Any]] | None = None
    sort: dict[str, Literal[1, -1]] | None = None
    limit: Annotated[int, Field(gt=0)] | str | None = None


def ycsb_properties(ops: dict[str, Any], read_all: bool, write_all: bool) -> None:
    """YCSB's writeallfields = true: an update sets every field; readallfields = false
    changes nothing (a read fetches the document)."""
    if write_all:
        ops["update"]["mongodb"] = {"call": "update_one", "collection": "${usertable}",
                                    "filter": {"_id": ":y_id"},
                                    "update": {"$set": {"${field*}": ":field*"}}}


SLOT = FileSlot("mongodb", MongodbOp, MongodbTable, table_optional=True,
                rendering="loadtower.engines.mongodb.orchestrator.workload:RENDERING",
                ycsb_properties=ycsb_properties)


def mongodb_of(table: Any) -> MongodbTable | None:
    """A file's table's ``[tables.T.mongodb]``, None when the file gives none."""
    found = table.slot(SLOT.name)
    assert found is None or isinstance(found, MongodbTable)
    return found
