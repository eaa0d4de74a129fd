//! Test hook (docs/agent-protocol.md, "Sending on time"): the open model's clock
//! (clock.rs) and recorder with no database. Each op's "send" is a local no-op that holds
//! the runtime's worker for `hold` (0: returns at once; more than the interval: the
//! schedule falls behind, as when the load host cannot keep up), timed and recorded as
//! the core's real ops are (service from the send, response and lateness from the
//! intended start).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::record::Outcome;
use crate::sched::{begin, Shared, LATE};

/// The schedule's loop over echo sends, until `running` is cleared.
pub fn run(shared: Arc<Shared>, hold: Duration) {
    crate::clock::run(&shared, |intended| {
        let seq = begin(&shared);
        let shared = shared.clone();
        tokio::spawn(async move {
            crate::clock::spin_until(intended); // handed over `lead` early (clock.rs)
            let sent = Instant::now();
            if !hold.is_zero() {
                std::thread::sleep(hold); // a slow send: blocks the worker, as a busy one
            }
            let done = Instant::now();
            let lateness = sent.saturating_duration_since(intended);
            shared.recorder.lock().unwrap().record(seq, 0, intended, done, lateness > LATE,
                                                   Outcome::Ok { sent }, Some(lateness));
        });
    });
}
