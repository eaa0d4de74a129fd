//! loadtower_core: the load core of loadtower's CQL agents (docs/agent-protocol.md, "The
//! Rust core"). One `Core` per agent process owns a tokio runtime and a session of
//! ScyllaDB's Rust driver (`scylla` crate); Python connects, prepares, configures a
//! phase's workload file (the core has no built-in ops: it binds workload files only,
//! binder.rs), starts an open-model schedule, the closed model or a load, and harvests
//! per-second samples.

pub mod binder;
mod clock;
mod closed;
mod echo;
mod errors;
mod gate;
pub mod generators;
mod prepare;
pub mod keys;
pub mod record;
mod routing;
mod sched;
mod tls;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use binder::FileWorkload;
use gate::Gate;
use sched::{Shared, Target};

const DRIVER: &str = "scylla-rust-driver";
const DRIVER_VERSION: &str = "1.9.0"; // the scylla crate in Cargo.lock
const PROTOCOL: &str = "CQL native protocol v4 (the scylla crate speaks v4 only)";
const WORKER_THREADS: usize = 1; // measured best on a 2-core load host (docs/agent-protocol.md)
/// How often (in polls) a busy worker takes the ops the clock handed over (tokio: 61)
const GLOBAL_QUEUE_INTERVAL: u32 = 2;

fn consistency(name: &str) -> PyResult<Consistency> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "ANY" => Consistency::Any,
        "ONE" => Consistency::One,
        "TWO" => Consistency::Two,
        "THREE" => Consistency::Three,
        "QUORUM" => Consistency::Quorum,
        "ALL" => Consistency::All,
        "LOCAL_QUORUM" => Consistency::LocalQuorum,
        "EACH_QUORUM" => Consistency::EachQuorum,
        "LOCAL_ONE" => Consistency::LocalOne,
        other => return Err(PyValueError::new_err(format!("unknown consistency '{other}'"))),
    })
}

fn opt_str(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<String>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
        _ => Ok(None),
    }
}

/// One per agent process. Frozen: every method takes `&self`, so no Python thread ever
/// meets PyO3's borrow check ("Already mutably borrowed") while another call waits with
/// the GIL released (a stop on `asyncio.to_thread` while the agent's loop harvests).
/// What changes lives in `state`, locked only for moments with the GIL held and never
/// across a release of it or a call into Python (so no two threads ever wait on it for
/// long); the calls that change what runs also pass `control` one at a time (gate.rs).
/// The schedule and the ops never touch either: they share `Shared` (atomics, the
/// recorder's lock) as before.
#[pyclass(module = "loadtower_core", frozen)]
struct Core {
    rt: Runtime,
    control: Gate,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    shared: Option<Arc<Shared>>,
    session: Option<Arc<Session>>,
    prepared: HashMap<String, Arc<PreparedStatement>>,
    workload: Option<FileWorkload>,
    op_names: Vec<String>,
    keyspace: String,
    table: String,
    task: Option<JoinHandle<Option<FileWorkload>>>,
    tls: bool,
    local_dc: Option<String>,
    settings: Option<Connection>,
}

/// What a session is built from, kept for the prepare helper (prepare.rs).
#[derive(Clone)]
struct Connection {
    username: Option<String>,
    password: Option<String>,
    tls: Option<tls::TlsPem>,
    profile: scylla::client::execution_profile::ExecutionProfileHandle,
    connect_timeout: Duration,
}

impl Connection {
    fn builder(&self) -> Result<SessionBuilder, String> {
        let tls_cfg = match &self.tls {
            Some(pem) => Some(tls::config(pem)?),
            None => None,
        };
        let mut builder = SessionBuilder::new()
            .default_execution_profile_handle(self.profile.clone())
            .connection_timeout(self.connect_timeout)
            .tls_context(tls_cfg);
        if let Some(user) = self.username.clone().filter(|u| !u.is_empty()) {
            builder = builder.user(user, self.password.clone().unwrap_or_default());
        }
        Ok(builder)
    }
}

impl State {
    fn set_ops(&mut self, ops: FileWorkload, per_node_in_flight: usize, keyspace: String,
               table: String) -> PyResult<()> {
        self.op_names = ops.names.clone();
        self.workload = Some(ops);
        self.shared()?.per_node.store(per_node_in_flight.max(1), Ordering::Relaxed);
        self.keyspace = keyspace.trim_matches('"').to_string();
        self.table = table.trim_matches('"').to_string();
        Ok(())
    }

    fn take_workload(&mut self) -> PyResult<FileWorkload> {
        if self.task.is_some() {
            return Err(PyRuntimeError::new_err("already started"));
        }
        self.workload.take().ok_or_else(|| PyRuntimeError::new_err("not configured"))
    }

    /// What the ops send to: the session, the prepared statements, and an UNLOGGED BATCH
    /// of each statement a workload file's op sends N rows of.
    fn target(&self, workload: &FileWorkload) -> PyResult<Arc<Target>> {
        let mut batches = HashMap::new();
        for (name, rows) in workload.batches() {
            if let Some(p) = self.prepared.get(&name) {
                let mut batch = Batch::new(BatchType::Unlogged);
                for _ in 0..rows {
                    batch.append_statement((**p).clone());
                }
                batches.insert(name, Arc::new(batch));
            }
        }
        Ok(Arc::new(Target {
            session: self.session()?,
            prepared: self.prepared.clone(),
            batches,
            keyspace: self.keyspace.clone(),
            table: self.table.clone(),
        }))
    }

    fn spawn_closed(&mut self, rt: &Runtime, state: closed::State, loops: usize, think_s: f64)
        -> PyResult<()> {
        let shared = self.shared()?.clone();
        let target = match self.target(&state.ops) {
            Ok(t) => t,
            Err(e) => {
                self.workload = Some(state.ops);
                return Err(e);
            }
        };
        shared.loops.store(loops, Ordering::Relaxed);
        shared.think_ns.store(think_ns(think_s), Ordering::Relaxed);
        shared.exhausted.store(false, Ordering::Release);
        shared.running.store(true, Ordering::Release);
        self.task = Some(rt.spawn(async move { Some(closed::run(shared, target, state).await) }));
        Ok(())
    }

    fn shared(&self) -> PyResult<&Arc<Shared>> {
        self.shared.as_ref().ok_or_else(|| PyRuntimeError::new_err("the core is not connected"))
    }

    /// The shared state, made (no connection) for the echo hook and the clock's settings.
    fn shared_or_new(&mut self) -> Arc<Shared> {
        self.shared
            .get_or_insert_with(|| Arc::new(Shared::new(Duration::from_secs(12), None)))
            .clone()
    }

    fn session(&self) -> PyResult<Arc<Session>> {
        self.session.clone().ok_or_else(|| PyRuntimeError::new_err("the core is not connected"))
    }
}

fn think_ns(think_s: f64) -> u64 {
    (think_s.max(0.0) * 1e9) as u64
}

impl Core {
    /// The state, for a moment: never held across `allow_threads` nor a call into Python.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn shared_opt(&self) -> Option<Arc<Shared>> {
        self.state().shared.clone()
    }

    fn shared(&self) -> PyResult<Arc<Shared>> {
        self.state().shared().cloned()
    }

    /// `stop` with the gate held (close holds it too).
    fn stop_entered(&self, py: Python<'_>, timeout_s: f64) -> PyResult<u64> {
        let (shared, task) = {
            let mut state = self.state();
            let Some(shared) = state.shared.clone() else { return Ok(0) };
            shared.running.store(false, Ordering::Release);
            (shared, state.task.take())
        };
        let deadline = Instant::now() + Duration::from_secs_f64(timeout_s.max(0.0));
        let workload = py.allow_threads(|| {
            self.rt.block_on(async {
                let w = match task {
                    Some(t) => t.await.ok().flatten(),
                    None => None,
                };
                while shared.recorder.lock().unwrap().in_flight > 0 && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                w
            })
        });
        if workload.is_some() {
            self.state().workload = workload; // the next start goes on with its keys and RNG
        }
        let mut rec = shared.recorder.lock().unwrap();
        let next = shared.seq.load(Ordering::Acquire);
        shared.discard_below.store(next, Ordering::Release);
        Ok(rec.abandon(next))
    }
}

#[pymethods]
impl Core {
    #[new]
    #[pyo3(signature = (worker_threads = WORKER_THREADS))]
    fn new(worker_threads: usize) -> PyResult<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(worker_threads.max(1))
            // the clock's ops arrive from its own thread through the runtime's global
            // queue, which a busy worker looks at every 61 polls by default: an op due
            // waited behind a burst of replies (lateness p50 0.10 ms at 2,000 ops/s)
            .global_queue_interval(GLOBAL_QUEUE_INTERVAL)
            .thread_name("lt-core")
            .enable_all()
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("tokio runtime: {e}")))?;
        Ok(Core { rt, control: Gate::default(), state: Mutex::new(State::default()) })
    }

    /// Connect a session (token-aware; with `local_dc`: that DC only). Raises
    /// ConnectionError with one line on failure: with TLS and a handshake that fails, the
    /// node and why (`connect_failure`), else the contact points and the driver's error.
    #[pyo3(signature = (contact_points, port, username, password, consistency_name, tls = None,
                        local_dc = None, request_timeout_ms = 12_000, connect_timeout_ms = 10_000))]
    #[allow(clippy::too_many_arguments)]
    fn connect(&self, py: Python<'_>, contact_points: Vec<String>, port: u16,
               username: Option<String>, password: Option<String>, consistency_name: &str,
               tls: Option<&Bound<'_, PyDict>>, local_dc: Option<String>,
               request_timeout_ms: u64, connect_timeout_ms: u64) -> PyResult<()> {
        let consistency = consistency(consistency_name)?;
        let nodes: Vec<String> = contact_points
            .iter()
            .map(|p| if p.contains(':') { p.clone() } else { format!("{p}:{port}") })
            .collect();
        let tls_pem = match tls {
            Some(d) if !d.is_empty() => Some(tls::TlsPem {
                ca_pem: opt_str(d, "ca_pem")?.ok_or_else(|| PyValueError::new_err("tls: no ca_pem"))?,
                cert_pem: opt_str(d, "cert_pem")?,
                key_pem: opt_str(d, "key_pem")?,
            }),
            _ => None,
        };
        let _control = self.control.enter(py);
        self.state().tls = tls_pem.is_some();
        let mut policy = DefaultPolicy::builder().token_aware(true);
        if let Some(dc) = &local_dc {
            policy = policy.prefer_datacenter(dc.clone()).permit_dc_failover(false);
        }
        let request_timeout = Duration::from_millis(request_timeout_ms);
        let targeted = routing::Targeted { inner: policy.build(), local_dc: local_dc.clone() };
        let profile = ExecutionProfile::builder()
            .consistency(consistency)
            .request_timeout(Some(request_timeout))
            .load_balancing_policy(Arc::new(targeted))
            .build()
            .into_handle();
        let tls_for_probe = tls_pem.clone();
        let settings = Connection {
            username, password, tls: tls_pem, profile,
            connect_timeout: Duration::from_millis(connect_timeout_ms),
        };
        let mut builder = settings.builder().map_err(PyValueError::new_err)?.known_nodes(&nodes);
        if let Some(dc) = &local_dc {
            // no pools to other DCs' nodes at all: they coordinate nothing of ours
            builder = builder.host_filter(Arc::new(
                scylla::policies::host_filter::DcHostFilter::new(dc.clone())));
        }
        let deadline = Duration::from_millis(connect_timeout_ms.max(1000) * 3);
        let built = py
            .allow_threads(|| self.rt.block_on(async { tokio::time::timeout(deadline, builder.build()).await }))
            .map_err(|_| format!("timed out after {} s", deadline.as_secs()))
            .and_then(|r| r.map_err(|e| e.to_string()));
        let session = match built {
            Ok(session) => session,
            Err(e) => {
                let line = py.allow_threads(|| {
                    connect_failure(&nodes, tls_for_probe.as_ref(), &e, Duration::from_millis(connect_timeout_ms))
                });
                return Err(pyo3::exceptions::PyConnectionError::new_err(line));
            }
        };
        let mut state = self.state();
        state.session = Some(Arc::new(session));
        state.shared = Some(Arc::new(Shared::new(request_timeout, local_dc.clone())));
        state.local_dc = local_dc;
        state.settings = Some(settings);
        Ok(())
    }

    /// Prepare statements (name -> CQL) through the driver, which prepares on every node it
    /// reaches and re-prepares on UNPREPARED. Each waits at most `timeout_s`.
    #[pyo3(signature = (statements, timeout_s = 30.0))]
    fn prepare(&self, py: Python<'_>, statements: HashMap<String, String>, timeout_s: f64)
        -> PyResult<()> {
        let _control = self.control.enter(py);
        let (session, settings) = {
            let state = self.state();
            (state.session()?, state.settings.clone().expect("connected"))
        };
        let limit = Duration::from_secs_f64(timeout_s.max(0.1));
        let make = move || settings.builder().expect("the TLS settings built before");
        let prepared = py
            .allow_threads(|| self.rt.block_on(prepare::prepare_all(&session, make, &statements, limit)))
            .map_err(PyRuntimeError::new_err)?;
        self.state().prepared = prepared;
        Ok(())
    }

    /// Why this core does not bind a workload file's run ops (None: it does): `spec`, the
    /// phase spec's workload_file as JSON (its `ops` and `run`).
    #[staticmethod]
    fn file_unsupported(spec: &str) -> Option<String> {
        binder::unsupported(spec)
    }

    /// A workload file's run phase: `spec` (JSON: `ops` and `run`), its statements
    /// prepared as `OP/I` (the I-th statement of op OP); `records`: the data set's keys
    /// (a run phase's sequences come shifted past them: file_ops.interleaved).
    #[pyo3(signature = (spec, seed, records, per_node_in_flight, keyspace, table))]
    fn configure_file(&self, py: Python<'_>, spec: &str, seed: u64, records: u64,
                      per_node_in_flight: usize, keyspace: String, table: String) -> PyResult<()> {
        let mut w = binder::FileWorkload::new(spec, seed, records).map_err(PyValueError::new_err)?;
        let _control = self.control.enter(py);
        let mut state = self.state();
        if state.task.is_some() {
            return Err(PyRuntimeError::new_err("configure while running: stop first"));
        }
        for (name, _) in w.statement_params() {
            if let Some(p) = state.prepared.get(&name) {
                let columns: Vec<Option<generators::Kind>> = p.get_variable_col_specs().as_slice()
                    .iter().map(|c| generators::Kind::of_column(c.typ())).collect();
                w.set_columns(&name, &columns);
            }
        }
        state.set_ops(w, per_node_in_flight, keyspace, table)
    }

    /// Start the open-model schedule at `rate_ops_s` (its clock on a thread of the
    /// runtime's blocking pool: clock.rs).
    fn start(&self, py: Python<'_>, rate_ops_s: f64) -> PyResult<()> {
        let _control = self.control.enter(py);
        let mut state = self.state();
        let shared = state.shared()?.clone();
        let workload = state.take_workload()?;
        let target = match state.target(&workload) {
            Ok(t) => t,
            Err(e) => {
                state.workload = Some(workload);
                return Err(e);
            }
        };
        shared.set_rate(rate_ops_s);
        shared.running.store(true, Ordering::Release);
        state.task = Some(self.rt.spawn_blocking(move || Some(sched::run(shared, target, workload))));
        Ok(())
    }

    /// Test hook: the open-model schedule at `rate_ops_s` over local no-op sends (op
    /// `echo`; echo.rs), each holding the runtime's worker `hold_us` (a slow send makes
    /// the schedule fall behind); no connection needed. Stop, harvest, counts as usual.
    #[pyo3(signature = (rate_ops_s, hold_us = 0))]
    fn start_echo(&self, py: Python<'_>, rate_ops_s: f64, hold_us: u64) -> PyResult<()> {
        let _control = self.control.enter(py);
        let mut state = self.state();
        if state.task.is_some() {
            return Err(PyRuntimeError::new_err("already started"));
        }
        let shared = state.shared_or_new();
        state.op_names = vec!["echo".to_string()];
        shared.set_rate(rate_ops_s);
        shared.running.store(true, Ordering::Release);
        let hold = Duration::from_micros(hold_us);
        state.task = Some(self.rt.spawn_blocking(move || {
            echo::run(shared, hold);
            None
        }));
        Ok(())
    }

    /// The open model's clock spins this long before each deadline (the rest of its wait
    /// sleeps; clock.rs). Default 50 us.
    fn set_spin_us(&self, spin_us: u64) -> PyResult<()> {
        let shared = self.state().shared_or_new();
        shared.spin_ns.store(spin_us * 1000, Ordering::Relaxed);
        Ok(())
    }

    /// Start the closed model: `loops` concurrent loops, each an op of the mix (intended
    /// = sent), then `think_s` of sleep.
    fn start_closed(&self, py: Python<'_>, loops: usize, think_s: f64) -> PyResult<()> {
        let _control = self.control.enter(py);
        let mut state = self.state();
        let ops = state.take_workload()?;
        state.spawn_closed(&self.rt, closed::State { ops, source: closed::Source::Mix }, loops,
                           think_s)
    }

    /// Start the load of a workload file: its load op `op` over key numbers `start..end`
    /// (the worker's slice), `rows` per op (an UNLOGGED BATCH, or the op's `:[...]`
    /// list), by `loops` concurrent loops; `load_done` says when every key is recorded,
    /// `load_failed` how many rows failed.
    #[allow(clippy::too_many_arguments)]
    fn start_load(&self, py: Python<'_>, op: &str, start: i64, end: i64, rows: usize,
                  loops: usize) -> PyResult<()> {
        let _control = self.control.enter(py);
        let mut state = self.state();
        let ops = state.take_workload()?;
        let index = match ops.load_op(op) {
            Ok(i) => i,
            Err(e) => {
                state.workload = Some(ops);
                return Err(PyValueError::new_err(e));
            }
        };
        let shared = match state.shared() {
            Ok(s) => s.clone(),
            Err(e) => {
                state.workload = Some(ops);
                return Err(e);
            }
        };
        state.op_names = vec![op.to_string()];
        shared.failed_rows.store(0, Ordering::Release);
        let source = closed::Source::Keys { op: index, next: start, end: end.max(start),
                                            rows: rows.max(1) as i64 };
        state.spawn_closed(&self.rt, closed::State { ops, source }, loops, 0.0)
    }

    /// Closed model and load: how many loops run (while running too).
    fn set_loops(&self, loops: usize) -> PyResult<()> {
        self.shared()?.loops.store(loops, Ordering::Relaxed);
        Ok(())
    }

    /// Closed model: the think time after each op.
    fn set_think(&self, think_s: f64) -> PyResult<()> {
        self.shared()?.think_ns.store(think_ns(think_s), Ordering::Relaxed);
        Ok(())
    }

    /// The load started by `start_load` has sent every key and recorded every op.
    fn load_done(&self) -> bool {
        self.shared_opt().map(|s| s.exhausted.load(Ordering::Acquire)).unwrap_or(false)
    }

    /// Rows of the last load whose op failed.
    fn load_failed(&self) -> u64 {
        self.shared_opt().map(|s| s.failed_rows.load(Ordering::Acquire)).unwrap_or(0)
    }

    fn set_rate(&self, rate_ops_s: f64) -> PyResult<()> {
        self.shared()?.set_rate(rate_ops_s);
        Ok(())
    }

    /// Stop scheduling; wait up to `timeout_s` for the ops in flight; give up on the rest
    /// (never recorded afterwards): how many they are.
    #[pyo3(signature = (timeout_s = 30.0))]
    fn stop(&self, py: Python<'_>, timeout_s: f64) -> PyResult<u64> {
        let _control = self.control.enter(py);
        self.stop_entered(py, timeout_s)
    }

    /// Ops scheduled and not yet counted (waiting for a slot or sent).
    fn in_flight(&self) -> u64 {
        self.shared_opt().map(|s| s.recorder.lock().unwrap().in_flight).unwrap_or(0)
    }

    /// {node address: slots taken} now (`?` for ops whose replica is not known).
    fn in_flight_per_node(&self) -> PyResult<HashMap<String, usize>> {
        let (shared, session) = {
            let state = self.state();
            (state.shared()?.clone(), state.session()?)
        };
        let cluster = session.get_cluster_state();
        Ok(shared
            .taken()
            .into_iter()
            .map(|(id, n)| {
                let name = cluster
                    .get_nodes_info()
                    .iter()
                    .find(|node| node.host_id == id)
                    .map(|node| node.address.to_string())
                    .unwrap_or_else(|| "?".into());
                (name, n)
            })
            .collect())
    }

    /// (intended, recorded): ops scheduled and ops counted so far.
    fn counts(&self) -> (u64, u64) {
        self.shared_opt()
            .map(|s| {
                let r = s.recorder.lock().unwrap();
                (r.intended, r.recorded)
            })
            .unwrap_or((0, 0))
    }

    /// [(second, op, sample)] of every second up to `upto` (wall clock, inclusive);
    /// sample: ops, late, errors {class: n}, first, last, service, response (HDR V2
    /// bytes) and, when open-model ops were sent in it, lateness (send - intended start,
    /// HDR V2 bytes) and lateness_max_us (its highest bucket's top).
    #[pyo3(signature = (upto, final_ = false))]
    fn harvest<'py>(&self, py: Python<'py>, upto: i64, final_: bool) -> PyResult<Bound<'py, PyList>> {
        let _ = final_; // every second up to `upto` is handed over whether final or not
        let out = PyList::empty(py);
        let (shared, op_names) = {
            let state = self.state();
            (state.shared.clone(), state.op_names.clone())
        };
        let Some(shared) = shared else { return Ok(out) };
        let seconds = shared.recorder.lock().unwrap().harvest(upto);
        for ((second, op), stats) in seconds {
            let sample = PyDict::new(py);
            sample.set_item("ops", stats.ops)?;
            sample.set_item("late", stats.late)?;
            let errors = PyDict::new(py);
            for (class, n) in &stats.errors {
                errors.set_item(*class, *n)?;
            }
            sample.set_item("errors", errors)?;
            sample.set_item("first", stats.first)?;
            sample.set_item("last", stats.last)?;
            sample.set_item("service", PyBytes::new(py, &record::encode(&stats.service)))?;
            sample.set_item("response", PyBytes::new(py, &record::encode(&stats.response)))?;
            // lateness only when an open-model op was sent in it, with its top (what hdrh's
            // get_max_value gives): the agent passes the encodings on as they are, unread
            if !stats.lateness.is_empty() {
                sample.set_item("lateness", PyBytes::new(py, &record::encode(&stats.lateness)))?;
                sample.set_item("lateness_max_us", stats.lateness.max())?;
            }
            let name = op_names.get(op).cloned().unwrap_or_else(|| format!("op{op}"));
            out.append((second, name, sample))?;
        }
        Ok(out)
    }

    /// What sends: driver, version, protocol, TLS, local DC, per-node in-flight limit.
    fn path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (tls, local_dc, per_node) = {
            let state = self.state();
            (state.tls, state.local_dc.clone(),
             state.shared.as_ref().map(|s| s.per_node.load(Ordering::Relaxed)))
        };
        let d = PyDict::new(py);
        d.set_item("driver", DRIVER)?;
        d.set_item("driver_version", DRIVER_VERSION)?;
        d.set_item("core_version", env!("CARGO_PKG_VERSION"))?;
        d.set_item("protocol", PROTOCOL)?;
        d.set_item("tls", tls)?;
        d.set_item("local_dc", local_dc)?;
        d.set_item("per_node_in_flight", per_node)?;
        d.set_item("routing", "token-aware, per-node in-flight slots")?;
        Ok(d)
    }

    /// Stop (abandoning what is in flight) and drop the session.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let _control = self.control.enter(py);
        self.stop_entered(py, 0.0)?;
        let session = {
            let mut state = self.state();
            state.prepared.clear();
            state.session.take()
        };
        if let Some(session) = session {
            py.allow_threads(|| self.rt.block_on(async move { drop(session) }));
        }
        Ok(())
    }
}

impl Drop for Core {
    /// The open model's clock runs on the blocking pool until `running` is cleared: a
    /// Core dropped without `stop` clears it, so the runtime's drop does not wait forever.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = &state.shared {
            shared.running.store(false, Ordering::Release);
        }
    }
}

/// One line for a session that could not be built: with TLS, the first node whose
/// handshake fails and why (`198.18.0.11:9042: TLS handshake failed: certificate verify
/// failed: unable to get local issuer certificate`); else the driver's error.
fn connect_failure(nodes: &[String], tls: Option<&tls::TlsPem>, error: &str, timeout: Duration)
    -> String {
    if let Some(pem) = tls {
        for node in nodes {
            if let Some(why) = tls::handshake_failure(pem, node, timeout) {
                return format!("{node}: TLS handshake failed: {why}");
            }
        }
    }
    let error = error.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("connecting to {}: {error}", nodes.join(","))
}

/// Test hooks: the key hash, distribution draws and the HDR encoding, from Python.
#[pyfunction]
fn fnv64(value: i64) -> u64 {
    keys::fnv64(value)
}

/// Test hook: `count` key numbers drawn over `records` keys as a workload file's
/// `{gen = DISTRIBUTION, keys = RECORDS}` key generator draws them (generators::KeySource;
/// `latest`: the newest key is `records - 1`).
#[pyfunction]
#[pyo3(signature = (distribution, records, count, seed, hot_data = 0.2, hot_ops = 0.8))]
fn draws(distribution: &str, records: u64, count: usize, seed: u64, hot_data: f64, hot_ops: f64)
    -> PyResult<Vec<i64>> {
    let spec = serde_json::json!({"gen": distribution, "keys": records, "hot_data": hot_data,
                                  "hot_ops": hot_ops});
    let spec = spec.as_object().expect("a JSON object");
    let newest = records.saturating_sub(1) as i64;
    let mut source = generators::KeySource::new(spec, records, newest).map_err(PyValueError::new_err)?;
    let mut ctx = generators::Ctx::new(rand::SeedableRng::seed_from_u64(seed), records);
    Ok((0..count).map(|_| source.next(&mut ctx)).collect())
}

/// A CQL value as Python sees it in the test hooks: text str, blob bytes, numbers, a
/// uuid's str, a timestamp's milliseconds, a date's days since the epoch.
fn py_value(py: Python<'_>, v: &scylla::value::CqlValue) -> PyResult<PyObject> {
    use scylla::value::CqlValue as V;
    Ok(match v {
        V::Text(s) | V::Ascii(s) => s.into_pyobject(py)?.into_any().unbind(),
        V::Blob(b) => PyBytes::new(py, b).into_any().unbind(),
        V::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        V::TinyInt(i) => i.into_pyobject(py)?.into_any().unbind(),
        V::SmallInt(i) => i.into_pyobject(py)?.into_any().unbind(),
        V::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        V::BigInt(i) => i.into_pyobject(py)?.into_any().unbind(),
        V::Float(x) => (*x as f64).into_pyobject(py)?.into_any().unbind(),
        V::Double(x) => x.into_pyobject(py)?.into_any().unbind(),
        V::Uuid(u) => u.to_string().into_pyobject(py)?.into_any().unbind(),
        V::Timeuuid(u) => u.to_string().into_pyobject(py)?.into_any().unbind(),
        V::Timestamp(t) => t.0.into_pyobject(py)?.into_any().unbind(),
        V::Date(d) => (d.0 as i64 - (1i64 << 31)).into_pyobject(py)?.into_any().unbind(),
        V::List(items) => {
            let out = PyList::empty(py);
            for item in items {
                out.append(py_value(py, item)?)?;
            }
            out.into_any().unbind()
        }
        other => format!("{other:?}").into_pyobject(py)?.into_any().unbind(),
    })
}

/// Test hook: key numbers `ks` rendered by the key generator `spec` (JSON) for a
/// parameter of portable type `type_name`.
#[pyfunction]
fn render_keys(py: Python<'_>, spec: &str, type_name: &str, ks: Vec<i64>) -> PyResult<Vec<PyObject>> {
    let spec: serde_json::Value = serde_json::from_str(spec).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let map = spec.as_object().ok_or_else(|| PyValueError::new_err("spec: not a table"))?;
    let kind = generators::Kind::parse(type_name).map_err(PyValueError::new_err)?;
    let render = generators::Render::new(map, kind).map_err(PyValueError::new_err)?;
    ks.iter().map(|k| py_value(py, &render.render(*k))).collect()
}

/// Test hook: `count` rows of op `op` of a workload file's spec (JSON), as the core binds
/// them: (parameter names, rows of values).
#[pyfunction]
#[pyo3(signature = (spec, op, count, seed, records))]
fn bind_rows(py: Python<'_>, spec: &str, op: &str, count: usize, seed: u64, records: u64)
    -> PyResult<(Vec<String>, Vec<Vec<PyObject>>)> {
    let mut w = binder::FileWorkload::new(spec, seed, records).map_err(PyValueError::new_err)?;
    let rows = w.rows_of(op, count).map_err(PyValueError::new_err)?;
    let rows = rows.iter().map(|r| r.iter().map(|v| py_value(py, v)).collect::<PyResult<Vec<_>>>())
        .collect::<PyResult<Vec<_>>>()?;
    Ok((w.params_of(op), rows))
}

/// Test hook: the rows the load binds for key numbers `first .. first + count - 1` of
/// load op `op` (a workload file's spec, JSON): (parameter names, rows of values, the
/// statement's values or rows in marker order as the load sends them).
#[pyfunction]
#[pyo3(signature = (spec, op, first, count, seed, records))]
fn load_rows(py: Python<'_>, spec: &str, op: &str, first: i64, count: usize, seed: u64,
             records: u64) -> PyResult<(Vec<String>, Vec<Vec<PyObject>>, String, usize)> {
    let mut w = binder::FileWorkload::new(spec, seed, records).map_err(PyValueError::new_err)?;
    let o = w.load_op(op).map_err(PyValueError::new_err)?;
    let bound = w.load(o, first, count);
    let part = &bound.first;
    let rows: Vec<Vec<PyObject>> = if part.rows.is_empty() {
        vec![part.values.iter().map(|v| py_value(py, v)).collect::<PyResult<Vec<_>>>()?]
    } else {
        part.rows.iter().map(|r| r.iter().map(|v| py_value(py, v)).collect::<PyResult<Vec<_>>>())
            .collect::<PyResult<Vec<_>>>()?
    };
    Ok((w.params_of(op), rows, part.statement.clone(), part.rows.len()))
}

/// Test hook: the next `count` ops of a workload file's spec (JSON): (op name, statement
/// name, its values or a batch's rows count) per op, the steps' statements after it.
#[pyfunction]
#[pyo3(signature = (spec, count, seed, records))]
fn next_ops(py: Python<'_>, spec: &str, count: usize, seed: u64, records: u64)
    -> PyResult<Vec<(String, Vec<(String, Vec<PyObject>, usize)>)>> {
    let mut w = binder::FileWorkload::new(spec, seed, records).map_err(PyValueError::new_err)?;
    let mut out = Vec::new();
    for _ in 0..count {
        let b = w.next();
        let mut parts = Vec::new();
        for part in std::iter::once(&b.first).chain(b.then.iter()) {
            let values = part.values.iter().map(|v| py_value(py, v)).collect::<PyResult<Vec<_>>>()?;
            parts.push((part.statement.clone(), values, part.rows.len()));
        }
        out.push((w.names[b.op].clone(), parts));
    }
    Ok(out)
}

#[pyfunction]
fn encode_values<'py>(py: Python<'py>, values_us: Vec<u64>) -> Bound<'py, PyBytes> {
    let mut h = record::new_hist();
    for v in values_us {
        let _ = h.record(v.clamp(record::LOWEST, record::HIGHEST));
    }
    PyBytes::new(py, &record::encode(&h))
}

#[pymodule]
fn loadtower_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_function(wrap_pyfunction!(fnv64, m)?)?;
    m.add_function(wrap_pyfunction!(draws, m)?)?;
    m.add_function(wrap_pyfunction!(encode_values, m)?)?;
    m.add_function(wrap_pyfunction!(render_keys, m)?)?;
    m.add_function(wrap_pyfunction!(bind_rows, m)?)?;
    m.add_function(wrap_pyfunction!(next_ops, m)?)?;
    m.add_function(wrap_pyfunction!(load_rows, m)?)?;
    m.add("DRIVER", DRIVER)?;
    m.add("DRIVER_VERSION", DRIVER_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
