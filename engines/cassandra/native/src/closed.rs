//! The closed model and the load (docs/agent-protocol.md, "The Rust core"): N loops, N
//! changeable while running (Shared::loops); each loop binds an op (from the mix, or the
//! load op's next block of key numbers), sends it through its node's slot
//! (sched::launch_op, intended = sent, never late), waits for it, then sleeps the think
//! time. A load's loops end once every key of its slice is taken; `Shared::exhausted`
//! says when every one is also recorded, `Shared::failed_rows` how many rows failed.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::sched::{launch_op, Shared, Target};
use crate::binder::{Bound, FileWorkload};

const WAKE: Duration = Duration::from_millis(20); // the controller looks at its loops this often

/// Where the loops' ops come from.
pub enum Source {
    /// the op mix (the closed model)
    Mix,
    /// the load op `op` over key numbers next..end, `rows` per op
    Keys { op: usize, next: i64, end: i64, rows: i64 },
}

pub struct State {
    pub ops: FileWorkload,
    pub source: Source,
}

impl State {
    /// The next op to send and its rows; None once the load's keys are all taken.
    pub fn next(&mut self) -> Option<(Bound, u64)> {
        match &mut self.source {
            Source::Mix => Some((self.ops.next(), 1)),
            Source::Keys { op, next, end, rows } => {
                if *next >= *end {
                    return None;
                }
                let (first, count) = (*next, (*rows).min(*end - *next));
                *next += count;
                Some((self.ops.load(*op, first, count as usize), count as u64))
            }
        }
    }

    pub fn exhausted(&self) -> bool {
        matches!(self.source, Source::Keys { next, end, .. } if next >= end)
    }
}

/// The controller: keeps `Shared::loops` loops running until `running` is cleared (or,
/// for a load, until every key is sent and recorded); returns the ops (their RNG and keys
/// go on at the next start).
pub async fn run(shared: Arc<Shared>, target: Arc<Target>, state: State) -> FileWorkload {
    shared.active.store(0, Ordering::Release);
    shared.exhausted.store(false, Ordering::Release);
    let state = Arc::new(Mutex::new(state));
    let mut loops: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    while shared.running.load(Ordering::Acquire) {
        loops.retain(|h| !h.is_finished());
        let exhausted = state.lock().unwrap().exhausted();
        if exhausted && loops.is_empty() {
            shared.exhausted.store(true, Ordering::Release);
            break;
        }
        let want = shared.loops.load(Ordering::Relaxed);
        while !exhausted && shared.active.load(Ordering::Acquire) < want {
            shared.active.fetch_add(1, Ordering::AcqRel);
            let (s, t, st) = (shared.clone(), target.clone(), state.clone());
            loops.push(tokio::spawn(one_loop(s, t, st)));
        }
        tokio::time::sleep(WAKE).await;
    }
    // stopped: the loops go; an op they wait for goes on in its own task (counted, or
    // given up by the stop's drain)
    for h in &loops {
        h.abort();
    }
    for h in loops {
        let _ = h.await;
    }
    shared.active.store(0, Ordering::Release);
    match Arc::try_unwrap(state) {
        Ok(m) => m.into_inner().unwrap().ops,
        Err(_) => unreachable!("every loop has ended"),
    }
}

async fn one_loop(shared: Arc<Shared>, target: Arc<Target>, state: Arc<Mutex<State>>) {
    while shared.running.load(Ordering::Acquire) {
        let (want, active) = (shared.loops.load(Ordering::Relaxed), shared.active.load(Ordering::Acquire));
        if active > want
            && shared.active.compare_exchange(active, active - 1, Ordering::AcqRel, Ordering::Acquire).is_ok()
        {
            return; // fewer loops wanted
        }
        let Some((bound, rows)) = state.lock().unwrap().next() else { break };
        let ok = launch_op(&shared, &target, bound, Instant::now(), true).await.unwrap_or(false);
        if !ok && matches!(state.lock().unwrap().source, Source::Keys { .. }) {
            shared.failed_rows.fetch_add(rows, Ordering::AcqRel);
        }
        let think = shared.think_ns.load(Ordering::Relaxed);
        if think > 0 {
            tokio::time::sleep(Duration::from_nanos(think)).await;
        }
    }
    shared.active.fetch_sub(1, Ordering::AcqRel);
}
