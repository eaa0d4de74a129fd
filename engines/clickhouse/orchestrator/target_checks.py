"""The ``check_target`` hook of ClickHouse (``loadtower check``): a target's
``table_engine``, ``update_mode`` and ``order_by`` against the built-in workloads it
runs (rows that would never update, or collapse)."""

from __future__ import annotations

from loadtower.engines.clickhouse.agent.schemas import columns, unique_column
from loadtower.engines.clickhouse.orchestrator.target_keys import ClickhouseTargetKeys
from loadtower.scenarios.crossref import used_builtin_workloads
from loadtower.scenarios.models import Scenario
from loadtower.scenarios.toml_lines import Path

UPSERT_OPS = ("update", "read_modify_write")


def check_target(scenario: Scenario, single: Scenario, where: Path) -> tuple[Path, str] | None:
    """(key path, problem) of the first setting that would make the figures wrong, or
    None."""
    target = ClickhouseTargetKeys.of(single.target)
    used = used_builtin_workloads(scenario)
    mix_ops = {op for w in used for op, weight in scenario.workloads[w].mix.items()
               if weight > 0}
    upserts = sorted(mix_ops & set(UPSERT_OPS))
    if target.table_engine == "MergeTree" and target.update_mode != "mutation" and upserts:
        return ((*where, "table_engine"),
                "a MergeTree table keeps every inserted version, so the op(s) "
                f'{", ".join(upserts)} need update_mode = "mutation" '
                '(or table_engine = "ReplacingMergeTree")')
    for w in used:
        schema = scenario.workloads[w].schema_name
        names = [c for c, _ in columns(schema, scenario.dataset.fields)]
        for j, column in enumerate(target.order_by or []):
            if column not in names:
                return ((*where, "order_by", j),
                        f"'{column}' is not a column of the {schema} table "
                        f"(columns: {', '.join(names[:4])}{', ...' if len(names) > 4 else ''})")
        unique = unique_column(schema)
        if target.order_by and target.table_engine != "MergeTree" and unique not in target.order_by:
            return ((*where, "order_by"),
                    f"a ReplacingMergeTree keeps one row per ORDER BY key: include '{unique}' "
                    f"(the {schema} table's unique column) or rows would collapse")
    return None
