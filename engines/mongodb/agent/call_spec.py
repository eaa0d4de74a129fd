"""A MongoDB call as the phase spec carries it (StatementSpec's ``call``): what the
orchestrator renders of an op's ``mongodb`` slot and the agent makes."""

from __future__ import annotations

from typing import Any, TypedDict

# the calls that insert: N rows of one are one insert_many (others: one bulk_write)
MONGO_INSERTS = ("insert_one", "insert_many")


class MongoCallSpec(TypedDict, total=False):
    """One pymongo call (the ``mongodb`` slot of an op): templates are plain JSON in
    which ``{"$param": name}`` (protocol/workload_file_spec.py ``PARAM_MARK``) stands for
    a parameter; column groups and ``${...}`` references are resolved (one call per
    picked member, as statements)."""

    call: str  # find_one, find, insert_one, insert_many, update_one, update_many,
    #            replace_one, delete_one, delete_many, aggregate, count_documents
    collection: str  # the collection's name in the target's database (its keyspace)
    filter: dict[str, Any]
    document: dict[str, Any]
    update: dict[str, Any]
    pipeline: list[dict[str, Any]]
    sort: list[list[Any]]  # [[field, 1 | -1], ...] in order
    limit: Any  # a number, or a parameter's mark
