"""The plain description of a workload file's ops that agents bind and run (the phase
spec's ``workload_file``): what ``loadtower.scenarios.workloads`` validates and renders
for one target, and what a binder (the Python reference in
``agents/workload/binder.py``, later the Rust core) and the agents' executor
(``agents/workload/file_ops.py``) implement.

Generators are dicts keyed by ``gen`` with the fields docs/workloads.md lists; these
types name the parts a binder reads. The statements are rendered on the orchestrator
(the same code path as ``loadtower check``): an agent never parses a workload file.
"""

from typing import Any, Literal, NotRequired, TypedDict

GeneratorSpec = dict[str, Any]  # {"gen": "uniform", "keys": 1000, "prefix": "user", ...}
# one bind marker's value: a parameter's name, or a `:[a, b]` list's names (the list of
# the batch rows' values, or of their (a, b) tuples)
BindName = str | list[str]


class OpBindSpec(TypedDict, total=False):
    """One op as a binder sees it: its key draw, its bindings and each parameter's
    type (a portable column type: text, bigint, uuid, ...)."""

    key: GeneratorSpec
    bind: dict[str, GeneratorSpec]  # parameter (or "group*") -> generator
    types: dict[str, str]  # parameter -> portable type
    groups: dict[str, list[str]]  # "field" -> ["field0", ...] (for "field*" bindings)
    batch: int


# a parameter's place in an engine's own form of a statement (StatementSpec's `call`: the
# call templates of an engine whose statements are driver calls): {"$param": "name"},
# where the agent puts the row's value
PARAM_MARK = "$param"


class StatementSpec(TypedDict):
    """One statement as the target's driver takes it."""

    text: str  # in the engine's language: with `?` markers, with `{name:Type}` (or an
    #            insert head), or a driver call as check prints it (`ks.coll.find_one(...)`)
    binds: list[BindName]  # the markers' parameters in order (`?`) / by name (`{name:Type}`)
    insert_rows: bool  # an insert head, `INSERT INTO t (cols)`: the rows go in one insert
    #                    (or an insert call, whose load takes blocks of rows)
    types: dict[str, str]  # each parameter's type on this engine (its column type: float,
    #                        text, ...; or the portable type)
    # the engine's own form of the statement, where it is not text (a driver call,
    # engines/NAME/agent/call_spec.py): what the agent runs
    call: NotRequired[dict[str, Any]]


class OpRunSpec(TypedDict, total=False):
    """One op of the file on this target: its statements (one per picked group member,
    ``${g#}``), rows per op, what a read must find, its weight (the scenario's weights
    applied), or the ops it runs in order with one key (``steps``)."""

    statements: list[StatementSpec]
    batch: int
    expect: Literal["any", "rows"]
    weight: float
    steps: list[str]


class WorkloadFileSpec(TypedDict, total=False):
    """A workload file as the phase spec carries it (``PhaseSpec.workload_file``): the
    whole validated file (tables, ops and statements, as docs/workloads.md writes them),
    each op's binder spec with the types the checks worked out, and, rendered for the
    phase's target: its engine, DDL, tables, each op's statements and the load op."""

    model: dict[str, Any]  # WorkloadFile.as_spec()
    ops: dict[str, OpBindSpec]
    engine: str  # the target engine's statement slot (its kind's dialect)
    ddl: list[str]  # worker 0 runs them in order (or its calls: `create COLL`, `index ...`)
    tables: list[str]  # the file's tables as qualified names on the target (or the
    #                    collections' names in the target's database)
    run: dict[str, OpRunSpec]  # op -> what runs on this target (ops it lacks: absent)
    load: str | None  # the op a load phase runs (None: the file has none)
