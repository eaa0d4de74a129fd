//! The open-model schedule: intended start times on a fixed grid at the current rate,
//! kept by clock.rs on a thread of its own (sent on time, not on tokio's 1 ms tick);
//! every op that is due is sent (a stall is caught up late, never dropped). Each op
//! takes an in-flight slot of ITS node (routing::choose) and waits for one at most until
//! its intended start + the request timeout (then: NodeBusy, late). Each sent op's
//! lateness (send - intended start) goes into its second's lateness histogram.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scylla::client::session::Session;
use scylla::statement::batch::Batch;
use scylla::statement::prepared::PreparedStatement;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::errors::{class, NODE_BUSY, NO_ROWS};
use crate::record::{Outcome, Recorder};
use crate::routing::choose;
use crate::binder::{Bound, FileWorkload, Part};

pub const LATE: Duration = Duration::from_millis(2);
/// The clock spins this long before each deadline (clock.rs): the rest of its wait sleeps.
pub const SPIN: Duration = Duration::from_micros(50);

/// What the scheduler and the ops share with the Python-facing `Core`.
pub struct Shared {
    pub running: AtomicBool,
    pub rate_bits: AtomicU64,
    pub seq: AtomicU64,
    pub discard_below: AtomicU64,
    pub per_node: AtomicUsize,
    /// the open model's clock spins this long before each deadline (clock.rs)
    pub spin_ns: AtomicU64,
    /// closed and load modes (closed.rs): loops wanted, loops running, think time (ns),
    /// every key of a load taken and recorded, and the load's rows whose op failed
    pub loops: AtomicUsize,
    pub active: AtomicUsize,
    pub think_ns: AtomicU64,
    pub exhausted: AtomicBool,
    pub failed_rows: AtomicU64,
    pub request_timeout: Duration,
    pub local_dc: Option<String>,
    pub recorder: Mutex<Recorder>,
    slots: Mutex<HashMap<Uuid, (usize, Arc<Semaphore>)>>,
}

impl Shared {
    pub fn new(request_timeout: Duration, local_dc: Option<String>) -> Self {
        Shared {
            running: AtomicBool::new(false),
            rate_bits: AtomicU64::new(0f64.to_bits()),
            seq: AtomicU64::new(0),
            discard_below: AtomicU64::new(0),
            per_node: AtomicUsize::new(128),
            spin_ns: AtomicU64::new(SPIN.as_nanos() as u64),
            loops: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            think_ns: AtomicU64::new(0),
            exhausted: AtomicBool::new(false),
            failed_rows: AtomicU64::new(0),
            request_timeout,
            local_dc,
            recorder: Mutex::new(Recorder::new()),
            slots: Mutex::new(HashMap::new()),
        }
    }

    pub fn rate(&self) -> f64 {
        f64::from_bits(self.rate_bits.load(Ordering::Relaxed))
    }

    pub fn set_rate(&self, rate: f64) {
        self.rate_bits.store(rate.max(0.0).to_bits(), Ordering::Relaxed);
    }

    /// The slots of node `id` (Uuid::nil: no replica known), sized to the current limit.
    fn slots(&self, id: Uuid) -> Arc<Semaphore> {
        let limit = self.per_node.load(Ordering::Relaxed).max(1);
        let mut slots = self.slots.lock().unwrap();
        match slots.get(&id) {
            Some((size, sem)) if *size == limit => sem.clone(),
            _ => {
                let sem = Arc::new(Semaphore::new(limit));
                slots.insert(id, (limit, sem.clone()));
                sem
            }
        }
    }
}

impl Shared {
    /// In flight (slots taken) per node id now.
    pub fn taken(&self) -> Vec<(Uuid, usize)> {
        let slots = self.slots.lock().unwrap();
        slots.iter().map(|(id, (size, sem))| (*id, size - sem.available_permits())).collect()
    }
}

pub struct Target {
    pub session: Arc<Session>,
    pub prepared: HashMap<String, Arc<PreparedStatement>>,
    /// statement name -> an UNLOGGED BATCH of it, as many times as its op's rows
    pub batches: HashMap<String, Arc<Batch>>,
    pub keyspace: String,
    pub table: String,
}

/// The schedule, until `running` is cleared: on the blocking pool (clock::run); the ops
/// go to the runtime's workers.
pub fn run(shared: Arc<Shared>, target: Arc<Target>, mut workload: FileWorkload) -> FileWorkload {
    crate::clock::run(&shared, |intended| launch(&shared, &target, &mut workload, intended));
    workload
}

/// An op scheduled: its number (`seq`), counted in flight and intended.
pub fn begin(shared: &Shared) -> u64 {
    let seq = shared.seq.fetch_add(1, Ordering::AcqRel);
    let mut rec = shared.recorder.lock().unwrap();
    rec.in_flight += 1;
    rec.intended += 1;
    seq
}

/// Send one statement; an error's class (a read that must find rows and found none:
/// `NoRows`, as agents/workload/file_ops.py counts it).
async fn send(target: &Target, part: &Part, prepared: &PreparedStatement) -> Result<(), &'static str> {
    let result = if part.rows.is_empty() {
        target.session.execute_unpaged(prepared, &part.values).await
    } else {
        let batch = target.batches.get(&part.statement).ok_or("Unprepared")?;
        if batch.statements.len() == part.rows.len() {
            target.session.batch(batch, part.rows.as_slice()).await
        } else {
            // a load's last block of the slice: fewer rows than the op's batch
            let mut fewer = Batch::new(batch.get_type());
            for _ in 0..part.rows.len() {
                fewer.append_statement(prepared.clone());
            }
            target.session.batch(&fewer, part.rows.as_slice()).await
        }
    };
    match result {
        Ok(r) if part.expect_rows => match r.into_rows_result() {
            Ok(rows) if rows.rows_num() > 0 => Ok(()),
            _ => Err(NO_ROWS),
        },
        Ok(_) => Ok(()),
        Err(e) => Err(class(&e)),
    }
}

fn launch(shared: &Arc<Shared>, target: &Arc<Target>, workload: &mut FileWorkload, intended: Instant) {
    launch_op(shared, target, workload.next(), intended, false);
}

/// Send one bound op in its own task: take its node's slot (waiting at most until
/// `intended` + the request timeout), send, record; the task's result: the op succeeded.
/// `closed`: a closed-model or load op, whose intended start is its send (never late).
pub fn launch_op(shared: &Arc<Shared>, target: &Arc<Target>, bound: Bound, intended: Instant,
                 closed: bool) -> JoinHandle<bool> {
    let seq = begin(shared);
    let first = &bound.first;
    let prepared = target.prepared.get(&first.statement).cloned();
    let routing_values = if first.rows.is_empty() { &first.values } else { &first.rows[0] };
    let node = prepared
        .as_ref()
        .and_then(|p| {
            let token = p.calculate_token(routing_values).ok().flatten()?;
            let ks = p.get_keyspace_name().unwrap_or(&target.keyspace);
            let table = p.get_table_name().unwrap_or(&target.table);
            choose(&target.session.get_cluster_state(), ks, table, token, shared.local_dc.as_deref())
        })
        .map(|(n, _)| n.host_id)
        .unwrap_or_else(Uuid::nil);
    let sem = shared.slots(node);
    let (shared, target) = (shared.clone(), target.clone());
    tokio::spawn(async move {
        let op = bound.op;
        let end = |late: bool, outcome: Outcome, start: Instant, done: Instant,
                   lateness: Option<Duration>| {
            let ok = matches!(outcome, Outcome::Ok { .. });
            let lateness = lateness.filter(|_| !closed); // a closed op's start is its send
            shared.recorder.lock().unwrap().record(seq, op, start, done, late && !closed, outcome,
                                                   lateness);
            ok
        };
        let Some(prepared) = prepared else {
            return end(false, Outcome::Error("Unprepared"), intended, Instant::now(), None);
        };
        let permit = match sem.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                let deadline = intended + shared.request_timeout;
                match tokio::time::timeout_at(deadline.into(), sem.acquire_owned()).await {
                    Ok(Ok(p)) => p,
                    _ => return end(true, Outcome::Error(NODE_BUSY), intended, Instant::now(), None),
                }
            }
        };
        if seq < shared.discard_below.load(Ordering::Acquire) {
            return false; // given up at a stop while it waited: never sent, never recorded
        }
        if !closed {
            crate::clock::spin_until(intended); // handed over `lead` early (clock.rs)
        }
        let sent = Instant::now();
        let start = if closed { sent } else { intended };
        let lateness = sent.saturating_duration_since(intended);
        let late = lateness > LATE;
        let mut result = send(&target, &bound.first, &prepared).await;
        for part in &bound.then {
            if result.is_err() {
                break;
            }
            result = match target.prepared.get(&part.statement) {
                Some(p) => send(&target, part, p).await,
                None => Err("Unprepared"),
            };
        }
        let done = Instant::now();
        drop(permit);
        match result {
            Ok(()) => end(late, Outcome::Ok { sent }, start, done, Some(lateness)),
            // a request that timed out is late from its intended start
            Err(c) => end(late || c == "RequestTimeout", Outcome::Error(c), start, done,
                          Some(lateness)),
        }
    })
}
