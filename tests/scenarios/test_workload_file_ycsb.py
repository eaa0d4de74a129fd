"""YCSB core workload property files: Java .properties syntax, mapped onto the
built-in ycsb workload file; unknown properties and values loadtower cannot honour
are one line naming file, line and property."""

from __future__ import annotations

import pytest

from loadtower.errors import ConfigError
from loadtower.scenarios.workloads.java_properties import parse_properties
from loadtower.scenarios.workloads.loader import load_workload_file
from tests.scenarios.rendered import engine_names, op_statements

# YCSB's own workloads/workloada, as shipped (comments shortened)
WORKLOAD_A = """\
# Copyright (c) 2010 Yahoo! Inc. All rights reserved.
#
#   Workload A: Update heavy workload
#   Application example: Session store recording recent actions
#   Read/update ratio: 50/50
#   Default data size: 1 KB records (10 fields, 100 bytes each, plus key)
#   Request distribution: zipfian

recordcount=1000
operationcount=1000
workload=site.ycsb.workloads.CoreWorkload

readallfields=true

readproportion=0.5
updateproportion=0.5
scanproportion=0
insertproportion=0

requestdistribution=zipfian
"""

WORKLOAD_E = """\
recordcount=1000
operationcount=1000
workload=site.ycsb.workloads.CoreWorkload
readallfields=true
readproportion=0
updateproportion=0
scanproportion=0.95
insertproportion=0.05
requestdistribution=zipfian
maxscanlength=100
scanlengthdistribution=uniform
"""


def test_java_properties_syntax() -> None:
    source = ("# comment\n  ! another\n\na=1\nb : two words\nc\tthree\nd = x\\\n   y\\\n  z\n"
              "e=tab\\there\nf=\\u0041\\\\\ng\n")
    found = {p.key: (p.value, p.line) for p in parse_properties(source)}
    assert found == {"a": ("1", 4), "b": ("two words", 5), "c": ("three", 6),
                     "d": ("xyz", 7), "e": ("tab\there", 10), "f": ("A\\", 11), "g": ("", 12)}


def test_workload_a_is_the_ycsb_a_mix(write) -> None:
    checked = load_workload_file(write("workloada", WORKLOAD_A))
    ops = checked.model.ops
    weights = {name: op.weight for name, op in ops.items() if op.weight > 0}
    assert weights == {"read": 0.5, "update": 0.5}
    assert ops["read"].key is not None and ops["read"].key.gen == "zipfian"
    assert checked.model.vars["records"] == 1000 and checked.model.vars["fields"] == 10


def test_workload_e_scans(write) -> None:
    checked = load_workload_file(write("e.properties", WORKLOAD_E))
    ops = checked.model.ops
    assert {n: o.weight for n, o in ops.items() if o.weight} == {"scan": 0.95, "insert": 0.05}
    length = ops["scan"].bind["length"]
    assert (length.min, length.max) == (1, 100)


def test_table_fields_lengths_and_order(write) -> None:
    text = ("table=accounts\nfieldcount=3\nfieldlength=20\nminfieldlength=5\n"
            "fieldlengthdistribution=uniform\ninsertorder=ordered\ninsertstart=500\n"
            "readallfields=false\nwriteallfields=true\nrequestdistribution=hotspot\n"
            "hotspotdatafraction=0.1\nhotspotopnfraction=0.9\nthreadcount=8\n")
    checked = load_workload_file(write("w.properties", text))
    model = checked.model
    assert list(model.tables) == ["accounts"]
    assert list(model.tables["accounts"].column_types()) == ["y_id", "field0", "field1", "field2"]
    insert = model.ops["insert"]
    assert insert.key is not None and insert.key.gen == "sequence" and insert.key.first == 500
    assert insert.bind["y_id"].hash is False
    assert insert.bind["field*"].length.min == 5 and insert.bind["field*"].length.max == 20
    read_key = model.ops["read"].key
    assert read_key.gen == "hotspot" and (read_key.hot_data, read_key.hot_ops) == (0.1, 0.9)
    cql = op_statements(checked, "cassandra", engine_names(checked, "ks"))
    assert [r.text for r in cql["read"]] == [
        f"SELECT y_id, field{i} FROM ks.accounts WHERE y_id = ?" for i in range(3)]
    assert cql["update"][0].text == (
        "INSERT INTO ks.accounts (y_id, field0, field1, field2) VALUES (?, ?, ?, ?)")


@pytest.mark.parametrize(
    ("text", "line", "key", "problem"),
    [
        ("readproportion=0.5\nfieldcont=3\n", 2, "fieldcont",
         "unknown YCSB property (did you mean 'fieldcount'?)"),
        ("# c\nrequestdistribution=exponential\n", 2, "requestdistribution",
         "requestdistribution=exponential is not supported by loadtower yet"),
        ("readproportion=half\n", 1, "readproportion", "not a number: 'half'"),
        ("fieldcount=0\n", 1, "fieldcount", "out of range"),
        ("workload=site.ycsb.workloads.TimeSeriesWorkload\n", 1, "workload",
         "only YCSB's CoreWorkload is supported"),
        ("insertorder=random\n", 1, "insertorder", "invalid value 'random'"),
        ("fieldlengthdistribution=histogram\n", 1, "fieldlengthdistribution", "not supported"),
        ("table=bad-name\n", 1, "table", "invalid table name"),
        ("readproportion=0\nupdateproportion=0\n", None, None, "every op proportion is 0"),
    ],
)
def test_bad_property_files(write, text, line, key, problem) -> None:
    path = write("w.properties", text)
    with pytest.raises(ConfigError) as info:
        load_workload_file(path)
    error = info.value
    assert (error.line, error.key) == (line, key)
    assert problem in error.problem and "\n" not in str(error)
