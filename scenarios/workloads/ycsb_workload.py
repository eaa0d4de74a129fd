"""YCSB core workload property files (``workloada``, ``my.properties``) as workloads:
the built-in ycsb workload file (scenarios/builtin/workloads/ycsb.toml) with the
properties' table, field count and length, op proportions, key distribution, scan
lengths and insert order. A property loadtower does not know, or a value it cannot
honour, is one line naming file, line and property (exit 2).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from importlib import resources
from typing import Any

from loadtower.errors import ConfigError
from loadtower.scenarios.builtin_additions import additions
from loadtower.scenarios.identifiers import PORTABLE_NAME, PORTABLE_RULE
from loadtower.scenarios.key_suggestions import did_you_mean
from loadtower.scenarios.models import MAX_FIELD_SIZE, MAX_FIELDS, MAX_RECORDS, MAX_SCAN
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.file_slot import file_slots
from loadtower.scenarios.workloads.java_properties import Property, parse_properties
from loadtower.scenarios.workloads.variables import Scalar

CORE_WORKLOADS = ("site.ycsb.workloads.CoreWorkload", "com.yahoo.ycsb.workloads.CoreWorkload")
PROPORTIONS = {
    "readproportion": ("read", 0.95),
    "updateproportion": ("update", 0.05),
    "insertproportion": ("insert", 0.0),
    "scanproportion": ("scan", 0.0),
    "readmodifywriteproportion": ("read_modify_write", 0.0),
}
MAPPED = (
    "workload", "table", "recordcount", "operationcount", "fieldcount", "fieldlength",
    "minfieldlength", "fieldlengthdistribution", "readallfields", "writeallfields",
    *PROPORTIONS, "requestdistribution", "minscanlength", "maxscanlength",
    "scanlengthdistribution", "insertorder", "insertstart", "insertcount",
    "hotspotdatafraction", "hotspotopnfraction", "fieldnameprefix", "zeropadding",
)  # fmt: skip
# the YCSB client's own settings: the scenario decides them (threads, rate, duration,
# measurement); accepted and shown, not used
CLIENT = (
    "threadcount", "target", "maxexecutiontime", "measurementtype", "measurement.interval",
    "histogram.buckets", "timeseries.granularity", "exporter", "exportfile",
    "status.interval", "db", "insertionretrylimit", "insertionretryinterval",
    "core_workload_insertion_retry_limit", "core_workload_insertion_retry_interval",
    "hdrhistogram.percentiles", "hdrhistogram.fileoutput", "hdrhistogram.output.path",
    "dataintegrity", "debug",
)  # fmt: skip
KNOWN = (*MAPPED, *CLIENT)


def _builtin_ycsb() -> dict[str, Any]:
    ref = resources.files("loadtower.scenarios.builtin.workloads") / "ycsb.toml"
    return tomllib.loads(ref.read_text(encoding="utf-8") + additions("workloads", "ycsb"))


class _Props:
    def __init__(self, props: list[Property], file: str) -> None:
        self.file = file
        self.by_key = {p.key: p for p in props}  # the last one wins, as in Java

    def fail(self, key: str, problem: str) -> ConfigError:
        line = self.by_key[key].line if key in self.by_key else None
        return ConfigError(self.file, line, key, problem)

    def text(self, key: str, default: str) -> str:
        prop = self.by_key.get(key)
        return default if prop is None else prop.value.strip()

    def number(self, key: str, default: float, ok: Callable[[float], bool], rule: str,
               integer: bool = False) -> float:
        raw = self.text(key, "")
        if raw == "":
            return default
        try:
            value = int(raw) if integer else float(raw)
        except ValueError:
            raise self.fail(key, f"not {'an integer' if integer else 'a number'}: {raw!r}") from None
        if not (math.isfinite(value) and ok(value)):
            raise self.fail(key, f"{raw} is out of range: {rule}")
        return value

    def choice(self, key: str, default: str, allowed: tuple[str, ...],
               unsupported: tuple[str, ...] = ()) -> str:
        value = self.text(key, default)
        if value in unsupported:
            raise self.fail(key, f"{key}={value} is not supported by loadtower yet "
                            f"(supported: {', '.join(allowed)})")
        if value not in allowed:
            raise self.fail(key, f"invalid value {value!r} (expected one of {', '.join(allowed)})")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.text(key, "true" if default else "false").lower()
        if value not in ("true", "false"):
            raise self.fail(key, f"invalid value {value!r} (expected true or false)")
        return value == "true"


def ycsb_data(source: str, file: str) -> dict[str, Any]:
    """The workload file (as TOML data) a YCSB property file describes."""
    props = parse_properties(source)
    for prop in props:
        if prop.key not in KNOWN:
            raise ConfigError(file, prop.line, prop.key, "unknown YCSB property"
                              + did_you_mean(prop.key, list(KNOWN)))
    p = _Props(props, file)
    workload = p.text("workload", CORE_WORKLOADS[0])
    if workload not in CORE_WORKLOADS:
        raise p.fail("workload", f"only YCSB's CoreWorkload is supported, not {workload!r}")
    if p.text("fieldnameprefix", "field") != "field":
        raise p.fail("fieldnameprefix", "only the default prefix 'field' is supported yet")
    if p.text("zeropadding", "1") != "1":
        raise p.fail("zeropadding", "only zeropadding=1 (no padding) is supported yet")

    data = _builtin_ycsb()
    positive = (lambda v: 0 < v <= MAX_RECORDS, f"above 0, at most {MAX_RECORDS:,}")
    records = p.number("recordcount", 0, *positive, integer=True)
    operations = p.number("operationcount", 0, *positive, integer=True)
    fields = p.number("fieldcount", 10, lambda v: 0 < v <= MAX_FIELDS,
                      f"1 to {MAX_FIELDS:,}", integer=True)
    length = p.number("fieldlength", 100, lambda v: 0 < v <= MAX_FIELD_SIZE,
                      f"1 to {MAX_FIELD_SIZE:,}", integer=True)
    min_length = p.number("minfieldlength", 1, lambda v: 0 < v <= length,
                          f"1 to fieldlength ({int(length)})", integer=True)
    max_scan = p.number("maxscanlength", 1000, lambda v: 0 < v <= MAX_SCAN,
                        f"1 to {MAX_SCAN:,}", integer=True)
    min_scan = p.number("minscanlength", 1, lambda v: 0 < v <= max_scan,
                        f"1 to maxscanlength ({int(max_scan)})", integer=True)
    start = p.number("insertstart", 0, lambda v: 0 <= v <= MAX_RECORDS,
                     f"0 to {MAX_RECORDS:,}", integer=True)
    p.number("insertcount", 0, *positive, integer=True)
    fraction = (lambda v: 0 < v < 1, "between 0 and 1")
    hot_data = p.number("hotspotdatafraction", 0.2, *fraction)
    hot_ops = p.number("hotspotopnfraction", 0.8, *fraction)
    distribution = p.choice("requestdistribution", "uniform",
                            ("uniform", "zipfian", "latest", "hotspot"),
                            ("sequential", "exponential"))
    length_dist = p.choice("fieldlengthdistribution", "constant",
                           ("constant", "uniform", "zipfian"), ("histogram",))
    p.choice("scanlengthdistribution", "uniform", ("uniform",), ("zipfian",))
    hashed = p.choice("insertorder", "hashed", ("hashed", "ordered")) == "hashed"
    table = p.text("table", "usertable")
    if not PORTABLE_NAME.fullmatch(table):
        raise p.fail("table", f"invalid table name {table!r}: expected {PORTABLE_RULE}")

    weights = {}
    for key, (op, default) in PROPORTIONS.items():
        weights[op] = p.number(key, default, lambda v: v >= 0, "0 or more")
    if sum(weights.values()) <= 0:
        raise ConfigError(file, None, None, "every op proportion is 0: nothing to run")

    data["vars"].update(fields=int(fields), field_size=int(length),
                        distribution=distribution, scan_length=int(max_scan))
    if records:
        data["vars"]["records"] = int(records)
    if operations:
        data["vars"]["operations"] = int(operations)
    data["description"] = f"YCSB workload {file}"
    ops = data["ops"]
    for name, op in ops.items():
        op["weight"] = weights.get(name, 0.0)
        key = op.get("key")
        if isinstance(key, dict) and key.get("gen") == "sequence":
            key["first"] = int(start)
        elif isinstance(key, dict):
            key.update(hot_data=hot_data, hot_ops=hot_ops)
        for bind in op.get("bind", {}).values():
            if bind.get("prefix") == "user":
                bind["hash"] = hashed
            if bind.get("gen") == "text":
                bind["length"] = _length(length_dist, int(min_length), int(length))
    ops["scan"]["bind"]["length"]["min"] = int(min_scan)
    read_all, write_all = p.boolean("readallfields", True), p.boolean("writeallfields", False)
    if write_all:  # an update writes every field: it binds what an insert binds
        ops["update"]["bind"] = {"y_id": ops["insert"]["bind"]["y_id"],
                                 "field*": ops["insert"]["bind"]["field*"]}
    for slot in file_slots():  # each engine's read and update as the properties ask
        if slot.ycsb_properties is not None:
            slot.ycsb_properties(ops, read_all, write_all)
            continue
        for key, op, asked in (("readallfields", "read", not read_all),
                               ("writeallfields", "update", write_all)):
            if asked and slot.name in ops[op]:
                raise p.fail(key, f"the {slot.name} statements of YCSB's {op} have no form "
                             "for it (its engine's slot gives none)")
    if table != "usertable":
        data = _rename_table(data, table)
    return data


def _length(distribution: str, low: int, high: int) -> int | dict[str, Any]:
    if distribution == "constant":
        return high
    return {"min": low, "max": high, "distribution": distribution}


def _rename_table(data: Any, table: str) -> Any:
    if isinstance(data, dict):
        return {
            (table if k == "usertable" else k): _rename_table(v, table) for k, v in data.items()
        }
    if isinstance(data, list):
        return [_rename_table(v, table) for v in data]
    if isinstance(data, str):
        return data.replace("${usertable}", "${" + table + "}")
    return data


def ycsb_workload(source: str, file: str, overrides: dict[str, Scalar] | None = None) -> Checked:
    # deferred: a cycle (workloads/loader.py imports ycsb_workload from here)
    from loadtower.scenarios.workloads.loader import checked_from_data

    data = ycsb_data(source, file)
    return checked_from_data(data, "", file, overrides)
