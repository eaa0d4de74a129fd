//! A workload file's ops bound in Rust (agents/workload/{binder,file_ops}.py's rules): the
//! phase spec's `ops` (each op's key draw, bindings, types, groups) and `run` (each op's
//! statements with their `?` markers' parameters in order, batch, expect, weight, steps),
//! as JSON. One op's rows: the key number drawn once per row and shared by its `key`
//! bindings; N rows make an UNLOGGED BATCH, or one statement when a marker is a `:[...]`
//! list; `steps` bind one key number for every step, sent in order as one op.

use std::collections::{HashMap, VecDeque};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use scylla::value::CqlValue;
use serde_json::{Map, Value};

use crate::generators::{Ctx, Gen, Kind, KeySource, UNSUPPORTED};
use crate::keys::OpMix;

/// One statement to send: its values, or a batch's rows (`rows` not empty); a read
/// that must find a row (`expect_rows`: none is a `NoRows` error).
pub struct Part {
    pub statement: String,
    pub values: Vec<CqlValue>,
    pub rows: Vec<Vec<CqlValue>>,
    pub expect_rows: bool,
}

/// One op: its first statement and the ones sent after it (an op with steps).
pub struct Bound {
    pub op: usize,
    pub first: Part,
    pub then: Vec<Part>,
}

/// A marker's value: one parameter, or a `:[a, b]` list over the batch's rows.
#[derive(Clone, Debug)]
enum Marker {
    Param(usize),
    List(Vec<usize>),
}

#[derive(Clone, Debug)]
struct Statement {
    name: String,
    markers: Vec<Marker>,
    list: bool,
    /// per marker: the column's kind where it differs from the parameter's (Kind::cast)
    casts: Vec<Option<Kind>>,
}

struct OpBinder {
    key: Option<KeySource>,
    params: Vec<String>,
    gens: Vec<Gen>,
    kinds: Vec<Kind>,
    /// (param index, written slot): values kept for `written` readers
    remember: Vec<(usize, usize)>,
}

struct FileOp {
    name: String,
    statements: Vec<Statement>,
    batch: usize,
    expect_rows: bool,
    binder: usize,
    steps: Vec<usize>, // op indexes (then `binder` is unused)
}

/// The ops of a workload file's run phase, bound here. Owned by the scheduler.
pub struct FileWorkload {
    pub names: Vec<String>,
    ops: Vec<FileOp>,
    picks: Vec<usize>, // mix index -> op index
    mix: OpMix,
    binders: Vec<OpBinder>,
    slot_of: Vec<(usize, usize)>, // written slot -> (binder, param) that fills it
    windows: Vec<usize>,
    ctx: Ctx,
}

fn obj<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("{what}: not a table"))
}

/// Why the core does not bind this file's run ops (None: it does); `spec`: the phase
/// spec's workload_file as JSON.
pub fn unsupported(spec: &str) -> Option<String> {
    FileWorkload::new(spec, 1, 1).err()
}

impl FileWorkload {
    /// `records`: the data set's keys (a run phase's sequences come already shifted
    /// past them and interleaved: agents/workload/file_ops.interleaved).
    pub fn new(spec: &str, seed: u64, records: u64) -> Result<Self, String> {
        let spec: Value = serde_json::from_str(spec).map_err(|e| format!("workload_file: {e}"))?;
        let ops_spec = obj(spec.get("ops").ok_or("workload_file without ops")?, "ops")?;
        let run = obj(spec.get("run").ok_or("workload_file without run")?, "run")?;
        let mut w = FileWorkload {
            names: Vec::new(), ops: Vec::new(), picks: Vec::new(), mix: OpMix::new(&[1.0])?,
            binders: Vec::new(), slot_of: Vec::new(), windows: Vec::new(),
            ctx: Ctx::new(SmallRng::seed_from_u64(seed), records),
        };
        // every op the target runs, and the ops their steps name (even at weight 0)
        let mut order: Vec<String> = run.keys().cloned().collect();
        for r in run.values() {
            for s in r.get("steps").and_then(Value::as_array).into_iter().flatten() {
                let s = s.as_str().unwrap_or("").to_string();
                if !order.contains(&s) {
                    order.push(s);
                }
            }
        }
        let mut binder_of: HashMap<String, usize> = HashMap::new();
        let mut pending: Vec<(String, String, usize, usize, usize)> = Vec::new(); // op, param, window, binder, gen
        for name in order.iter().filter(|n| run.get(*n).is_some_and(|r| r.get("steps").is_none())) {
            let op = obj(ops_spec.get(name).ok_or_else(|| format!("op {name}: no bindings"))?, name)?;
            let b = w.binder(name, op, records, &mut pending)?;
            binder_of.insert(name.clone(), b);
        }
        for (op, param, window, b, g) in pending {
            let (&ob, pi) = binder_of
                .get(&op)
                .and_then(|ob| w.binders[*ob].params.iter().position(|p| *p == param).map(|pi| (ob, pi)))
                .ok_or_else(|| format!("written from {op}.{param}: that op does not run here"))?;
            let slot = match w.slot_of.iter().position(|s| *s == (ob, pi)) {
                Some(s) => s,
                None => {
                    w.slot_of.push((ob, pi));
                    w.windows.push(0);
                    w.ctx.written.push(VecDeque::new());
                    w.binders[ob].remember.push((pi, w.slot_of.len() - 1));
                    w.slot_of.len() - 1
                }
            };
            w.windows[slot] = w.windows[slot].max(window);
            if let Gen::Written { slot: s, .. } = &mut w.binders[b].gens[g] {
                *s = slot;
            }
        }
        let index: HashMap<&String, usize> = order.iter().enumerate().map(|(i, n)| (n, i)).collect();
        let mut weights = Vec::new();
        for name in &order {
            let r = obj(run.get(name).ok_or_else(|| format!("step {name} does not run here"))?, name)?;
            let weight = r.get("weight").and_then(Value::as_f64).unwrap_or(1.0);
            let steps = match r.get("steps").and_then(Value::as_array) {
                Some(s) => s.iter().map(|x| index[&x.as_str().unwrap_or("").to_string()]).collect(),
                None => Vec::new(),
            };
            let statements = match r.get("statements").and_then(Value::as_array) {
                Some(list) => list
                    .iter()
                    .enumerate()
                    .map(|(i, s)| statement(name, i, s, &w.binders[binder_of[name]].params))
                    .collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            };
            if steps.is_empty() && statements.is_empty() {
                return Err(format!("op {name}: no statement"));
            }
            w.ops.push(FileOp {
                name: name.clone(),
                statements,
                batch: r.get("batch").and_then(Value::as_u64).unwrap_or(1).max(1) as usize,
                expect_rows: r.get("expect").and_then(Value::as_str) == Some("rows"),
                binder: binder_of.get(name).copied().unwrap_or(usize::MAX),
                steps,
            });
            if weight > 0.0 {
                w.picks.push(w.ops.len() - 1);
                w.names.push(name.clone());
                weights.push(weight);
            }
        }
        w.mix = OpMix::new(&weights)?;
        Ok(w)
    }

    fn binder(&mut self, name: &str, op: &Map<String, Value>, records: u64,
              pending: &mut Vec<(String, String, usize, usize, usize)>) -> Result<usize, String> {
        let b = self.binders.len();
        let newest = self.ctx.newest;
        let key = match op.get("key") {
            Some(k) => Some(KeySource::new(obj(k, "key")?, records, newest)
                .map_err(|e| format!("op {name}: key: {e}"))?),
            None => None,
        };
        let empty = Map::new();
        let types = op.get("types").and_then(Value::as_object).unwrap_or(&empty);
        let groups = op.get("groups").and_then(Value::as_object).unwrap_or(&empty);
        let mut params = Vec::new();
        let mut gens = Vec::new();
        let mut kinds = Vec::new();
        for (param, g) in op.get("bind").and_then(Value::as_object).unwrap_or(&empty) {
            let g = obj(g, param)?;
            let gen = g.get("gen").and_then(Value::as_str).unwrap_or("");
            if UNSUPPORTED.contains(&gen) {
                return Err(format!("op {name} binds {param} to gen = \"{gen}\" (data sets run on the Python path)"));
            }
            let members: Vec<String> = match param.strip_suffix('*') {
                Some(group) => groups.get(group).and_then(Value::as_array).into_iter().flatten()
                    .filter_map(|m| m.as_str().map(str::to_string)).collect(),
                None => vec![param.clone()],
            };
            for member in members {
                let type_name = types.get(&member).and_then(Value::as_str)
                    .ok_or_else(|| format!("op {name}: {member} has no type"))?;
                let kind = Kind::parse(type_name).map_err(|e| format!("op {name}: {member}: {e}"))?;
                let mut asked = None;
                let mut note = |op: &str, p: &str, window: usize| {
                    asked = Some((op.to_string(), p.to_string(), window));
                    Ok(usize::MAX) // set once every op's parameters are known
                };
                let gen = Gen::new(g, kind, records, newest, &mut note)
                    .map_err(|e| format!("op {name}: {member}: {e}"))?;
                if let Some((op, p, window)) = asked {
                    pending.push((op, p, window, b, gens.len()));
                }
                params.push(member);
                gens.push(gen);
                kinds.push(kind);
            }
        }
        self.binders.push(OpBinder { key, params, gens, kinds, remember: Vec::new() });
        Ok(b)
    }

    /// A row of binder `b` (its key number drawn, or `key`): values by parameter index.
    fn row(&mut self, b: usize, key: Option<i64>) -> (i64, Vec<CqlValue>) {
        let k = match (key, self.binders[b].key.as_mut()) {
            (Some(k), _) => k,
            (None, Some(source)) => source.next(&mut self.ctx),
            (None, None) => 0,
        };
        let mut values = Vec::with_capacity(self.binders[b].gens.len());
        for g in 0..self.binders[b].gens.len() {
            let v = match self.binders[b].gens[g].next(&mut self.ctx, k) {
                Ok(v) => v,
                Err(slot) => {
                    // nothing written yet: a value that op would write (file_ops._fresh)
                    let (ob, pi) = self.slot_of[slot];
                    let (_, fresh) = self.row(ob, None);
                    fresh[pi].clone()
                }
            };
            values.push(v);
        }
        for &(pi, slot) in &self.binders[b].remember {
            let seen = &mut self.ctx.written[slot];
            seen.push_back(values[pi].clone());
            if seen.len() > self.windows[slot] {
                seen.pop_front();
            }
        }
        (k, values)
    }

    /// One statement of op `o` over `rows`.
    fn part(&mut self, o: usize, rows: Vec<Vec<CqlValue>>) -> Part {
        let op = &self.ops[o];
        let i = if op.statements.len() > 1 { self.ctx.rng.gen_range(0..op.statements.len()) } else { 0 };
        let s = &op.statements[i];
        let positional = |row: &Vec<CqlValue>| -> Vec<CqlValue> {
            s.markers.iter().zip(&s.casts).map(|(m, cast)| match (m, cast) {
                (Marker::Param(p), None) => row[*p].clone(),
                (Marker::Param(p), Some(kind)) => kind.cast(row[*p].clone()),
                (Marker::List(_), _) => unreachable!("a list marker makes one statement"),
            }).collect()
        };
        if s.list {
            let values = s.markers.iter().map(|m| match m {
                Marker::Param(p) => rows[0][*p].clone(),
                Marker::List(names) if names.len() == 1 => {
                    CqlValue::List(rows.iter().map(|r| r[names[0]].clone()).collect())
                }
                Marker::List(names) => CqlValue::List(rows.iter().map(|r| {
                    CqlValue::Tuple(names.iter().map(|n| Some(r[*n].clone())).collect())
                }).collect()),
            }).collect();
            return Part { statement: s.name.clone(), values, rows: Vec::new(), expect_rows: op.expect_rows };
        }
        if rows.len() == 1 {
            let values = positional(&rows[0]);
            return Part { statement: s.name.clone(), values, rows: Vec::new(), expect_rows: op.expect_rows };
        }
        let rows = rows.iter().map(positional).collect();
        Part { statement: s.name.clone(), values: Vec::new(), rows, expect_rows: op.expect_rows }
    }

    /// The next op of the mix, bound.
    pub fn next(&mut self) -> Bound {
        let pick = self.mix.next(&mut self.ctx.rng);
        let o = self.picks[pick];
        if self.ops[o].steps.is_empty() {
            let (b, n) = (self.ops[o].binder, self.ops[o].batch);
            let rows = (0..n).map(|_| self.row(b, None).1).collect();
            return Bound { op: pick, first: self.part(o, rows), then: Vec::new() };
        }
        let steps = self.ops[o].steps.clone();
        let (k, row) = self.row(self.ops[steps[0]].binder, None);
        let first = self.part(steps[0], vec![row]);
        let then = steps[1..].iter().map(|&s| {
            let (_, row) = self.row(self.ops[s].binder, Some(k));
            self.part(s, vec![row])
        }).collect();
        Bound { op: pick, first, then }
    }

    /// The index of op `name` for `load` (an op with its own bindings, not steps).
    pub fn load_op(&self, name: &str) -> Result<usize, String> {
        let o = self.ops.iter().position(|o| o.name == name)
            .ok_or_else(|| format!("the load op {name} does not run here"))?;
        if self.ops[o].binder == usize::MAX {
            return Err(format!("the load op {name} has steps"));
        }
        Ok(o)
    }

    /// One load op (file_ops.FileOps.load): op `o`'s rows of key numbers first ..
    /// first + count - 1 (each row's key number given, not drawn), recorded as op 0.
    pub fn load(&mut self, o: usize, first: i64, count: usize) -> Bound {
        let b = self.ops[o].binder;
        let rows = (0..count as i64).map(|i| self.row(b, Some(first + i)).1).collect();
        Bound { op: 0, first: self.part(o, rows), then: Vec::new() }
    }

    /// Every statement's name, its op's binder and its markers' parameters (single ones).
    pub fn statement_params(&self) -> Vec<(String, Vec<Option<Kind>>)> {
        self.ops.iter().filter(|o| o.binder != usize::MAX).flat_map(|o| {
            let kinds = &self.binders[o.binder].kinds;
            o.statements.iter().map(move |s| (s.name.clone(), s.markers.iter().map(|m| match m {
                Marker::Param(p) => Some(kinds[*p]),
                Marker::List(_) => None,
            }).collect()))
        }).collect()
    }

    /// Statement `name`'s markers take values of `columns` (the prepared statement's
    /// column kinds): a marker whose parameter's kind differs is cast at bind time.
    pub fn set_columns(&mut self, name: &str, columns: &[Option<Kind>]) {
        for op in &mut self.ops {
            let Some(kinds) = self.binders.get(op.binder).map(|b| &b.kinds) else { continue };
            for s in op.statements.iter_mut().filter(|s| s.name == name) {
                s.casts = s.markers.iter().enumerate().map(|(i, m)| match (m, columns.get(i)) {
                    (Marker::Param(p), Some(Some(col))) if *col != kinds[*p] => Some(*col),
                    _ => None,
                }).collect();
            }
        }
    }

    /// Statements that go as a batch, with their rows per op (prepared into a Batch).
    pub fn batches(&self) -> Vec<(String, usize)> {
        self.ops.iter().filter(|o| o.batch > 1 && o.steps.is_empty())
            .flat_map(|o| o.statements.iter().filter(|s| !s.list).map(move |s| (s.name.clone(), o.batch)))
            .collect()
    }

    /// Rows of op `name` (test hook): its values as the core binds them.
    pub fn rows_of(&mut self, name: &str, count: usize) -> Result<Vec<Vec<CqlValue>>, String> {
        let o = self.ops.iter().position(|o| o.name == name).ok_or_else(|| format!("no op {name}"))?;
        let b = self.ops[o].binder;
        if b == usize::MAX {
            return Err(format!("op {name} has steps"));
        }
        Ok((0..count).map(|_| self.row(b, None).1).collect())
    }

    /// The parameters of op `name` in the order of `rows_of`'s values.
    pub fn params_of(&self, name: &str) -> Vec<String> {
        self.ops.iter().find(|o| o.name == name)
            .and_then(|o| self.binders.get(o.binder))
            .map(|b| b.params.clone()).unwrap_or_default()
    }
}

fn statement(op: &str, i: usize, s: &Value, params: &[String]) -> Result<Statement, String> {
    let find = |p: &str| params.iter().position(|x| x == p)
        .ok_or_else(|| format!("op {op}: parameter {p} has no binding"));
    let mut markers = Vec::new();
    for b in s.get("binds").and_then(Value::as_array).into_iter().flatten() {
        markers.push(match b {
            Value::String(p) => Marker::Param(find(p)?),
            Value::Array(names) => Marker::List(names.iter()
                .map(|n| find(n.as_str().unwrap_or(""))).collect::<Result<_, _>>()?),
            other => return Err(format!("op {op}: bind {other}")),
        });
    }
    let list = markers.iter().any(|m| matches!(m, Marker::List(_)));
    let casts = vec![None; markers.len()];
    Ok(Statement { name: format!("{op}/{i}"), markers, list, casts })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"{
      "ops": {"put": {"key": {"gen": "sequence"}, "batch": 10,
                      "bind": {"id": {"gen": "key", "prefix": "k", "hash": false},
                               "n": {"gen": "key"},
                               "v": {"gen": "text", "length": 8}},
                      "types": {"id": "text", "n": "bigint", "v": "text"}}},
      "run": {"put": {"statements": [{"text": "", "binds": ["v", "id", "n"],
                                      "insert_rows": false}],
                      "batch": 10, "weight": 1.0}}
    }"#;

    #[test]
    fn a_load_binds_the_given_key_numbers_in_marker_order() {
        let mut w = FileWorkload::new(SPEC, 1, 1000).unwrap();
        let o = w.load_op("put").unwrap();
        let b = w.load(o, 995, 5); // the slice's last op: 5 rows, not the batch's 10
        assert_eq!(b.op, 0);
        assert_eq!(b.first.statement, "put/0");
        assert_eq!(b.first.rows.len(), 5);
        for (i, row) in b.first.rows.iter().enumerate() {
            let k = 995 + i as i64;
            assert_eq!(row[1], CqlValue::Text(format!("k{k}")));
            assert_eq!(row[2], CqlValue::BigInt(k));
            assert!(matches!(&row[0], CqlValue::Text(t) if t.len() == 8));
        }
        let one = w.load(o, 7, 1); // one row: one statement, its values
        assert!(one.first.rows.is_empty());
        assert_eq!(one.first.values[1], CqlValue::Text("k7".into()));
    }

    #[test]
    fn a_load_op_must_exist_and_have_no_steps() {
        let w = FileWorkload::new(SPEC, 1, 1000).unwrap();
        assert_eq!(w.load_op("nope").unwrap_err(), "the load op nope does not run here");
    }
}
