"""The ``redis`` slot of a workload file: an op's Redis commands, sent in one pipeline
(one round trip; an op of N rows: every row's commands in one pipeline), and a read
made of each member of the last reply (``each``: a scan's records).

An argument is text, a number, a list (its parts joined: ``["${usertable}:", ":y_id"]``
is the key ``usertable:<y_id>``) or ``{ pairs = "g*" }`` (each member of column group g,
then its parameter: HSET's field-value pairs). In text, an argument that is exactly
``:name`` is parameter name, ``:g*`` the parameters of group g's members (one argument
each), ``${g*}`` the members' names, ``${g#}`` the member the op picked (one command set
per member, as statements), ``${t}`` a table of the file (its name on the target) and
``${keyspace}`` the target's keyspace; ``$each`` (in ``each`` only) is one member of the
reply. Anything else is text as it is: a Redis key may hold colons.

A table has nothing of its own here (Redis has no schema): ``[tables.T.redis]`` may be
left out."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from loadtower.scenarios.models import Strict
from loadtower.scenarios.workloads.file_slot import FileSlot

MAX_COMMANDS = 16
MAX_ARGS = 1_000


class Pairs(Strict):
    """``{ pairs = "field*" }``: field0, :field0, field1, :field1, ..."""

    pairs: Annotated[str, Field(min_length=2, max_length=200, pattern=r"^[A-Za-z_]\w*\*$")]


Text = Annotated[str, Field(max_length=10_000)]
Arg = Text | int | float | Pairs | Annotated[list[Text], Field(min_length=1, max_length=16)]
Command = Annotated[list[Arg], Field(min_length=1, max_length=MAX_ARGS)]


class RedisOp(Strict):
    commands: Annotated[list[Command], Field(min_length=1, max_length=MAX_COMMANDS)]
    # sent once per member of the last command's reply, in a second pipeline ($each)
    each: Command | None = None


class RedisTable(Strict):
    """Nothing to declare: keys are created by the writes."""


def ycsb_properties(ops: dict[str, Any], read_all: bool, write_all: bool) -> None:
    """YCSB's readallfields = false: a read fetches one field (picked per op, HMGET, as
    YCSB's redis binding reads the fields it is given); writeallfields = true: an update
    sets every field (HSET of all pairs)."""
    key = ops["read"]["redis"]["commands"][0][1]  # the record's key, as the file writes it
    if not read_all:
        ops["read"]["redis"] = {"commands": [["HMGET", key, "${field#}"]]}
    if write_all:
        ops["update"]["redis"] = {"commands": [["HSET", key, {"pairs": "field*"}]]}


SLOT = FileSlot("redis", RedisOp, RedisTable, table_optional=True,
                rendering="loadtower.engines.redis.orchestrator.workload:RENDERING",
                ycsb_properties=ycsb_properties)
