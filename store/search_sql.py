"""The ``search_result`` view: one row per `search` phase of a run, read from the
phase's ``phases`` row (its result JSON, phases/search.py): a view, so it needs no
migration, and every store (older ones too) answers the same SQL
(``StoreReader.search_results`` runs it as a subquery, not through the view).

Columns: run_id, phase (its label, e.g. ``east:find``), target (the run's target,
or the engine of a single-target run), engine, target_text (the latency target in
words), target_p99_ms, target_p999_ms, max_error_rate, min_achieved,
found_ops_per_s (the rate found: the highest rate asked that passed), achieved_ops_per_s
(what that rate's last passing step achieved), bracket_low, bracket_high (the lowest
rate that failed; NULL when the max rate passed), resolution (``25 ops/s`` or ``5%``),
steps, confirmed, stop_reason, duration_s (the phase's clock).
"""

from __future__ import annotations


def _num(path: str) -> str:
    return f"try_cast(json_extract_string(result, '$.{path}') AS DOUBLE)"


SEARCH_RESULT_SQL = f"""SELECT run_id, name AS phase,
        coalesce(json_extract_string(params, '$.target'),
                 json_extract_string(params, '$.engine')) AS target,
        json_extract_string(params, '$.engine') AS engine,
        json_extract_string(result, '$.target') AS target_text,
        {_num('target_p99_ms')} AS target_p99_ms, {_num('target_p999_ms')} AS target_p999_ms,
        {_num('max_error_rate')} AS max_error_rate, {_num('min_achieved')} AS min_achieved,
        {_num('found')} AS found_ops_per_s, {_num('found_ops_per_s')} AS achieved_ops_per_s,
        {_num('bracket[0]')} AS bracket_low, {_num('bracket[1]')} AS bracket_high,
        json_extract_string(result, '$.resolution') AS resolution,
        CAST(json_array_length(result, '$.steps') AS INTEGER) AS steps,
        try_cast(json_extract_string(result, '$.confirmed') AS BOOLEAN) AS confirmed,
        json_extract_string(result, '$.stop_reason') AS stop_reason,
        round(ended - started, 3) AS duration_s, idx
    FROM phases WHERE type = 'search'"""
