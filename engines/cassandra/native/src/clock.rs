//! The open model's clock (docs/agent-protocol.md, "Sending on time"): intended start
//! times on a fixed grid at the current rate, kept on a thread of its own (tokio's
//! blocking pool), not on the runtime's timer. tokio's timer has a 1 ms tick: an op due
//! at t was sent at the next tick, ~0.5-1 ms late, which response time (from the intended
//! start) counted as the database's. Here the thread sleeps (nanosleep, timer slack of
//! 1 us) until `spin` before the deadline, then spins to it; then every op that is due is
//! launched with its own intended start (a stall is caught up late, never dropped). The
//! ops themselves run on the runtime's workers.
//!
//! A worker that has parked between ops takes time to wake (measured here: 98 us at the
//! median at 100 ops/s, 37 us at 2,000): an op handed over at its deadline was sent that
//! much late. So each op is handed over `lead` before its intended start (a twentieth of
//! the interval, at most LEAD_MAX), and its task spins on the worker until that start
//! (`spin_until`) before it sends: the wake overlaps the lead, and the worker spins at
//! most a twentieth of its time.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::sched::Shared;

const WAKE: Duration = Duration::from_millis(20); // the loop looks at its rate and flag this often
/// The most an op is handed to the runtime before its intended start.
pub const LEAD_MAX: Duration = Duration::from_micros(150);

/// How long before its intended start an op is handed over at this interval.
pub fn lead(interval: Duration) -> Duration {
    (interval / 20).min(LEAD_MAX)
}

/// Spin until `t` (on the worker, for the at most `lead` an op was handed over early).
pub fn spin_until(t: Instant) {
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

/// The thread's timer slack down to 1 us (Linux's default, 50 us, is lateness too).
fn precise_timers() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer and touches this thread only
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0);
    }
}

/// Until `t`: sleep to `spin` before it, then spin the rest.
pub fn wait_until(t: Instant, spin: Duration) {
    let now = Instant::now();
    if t > now + spin {
        std::thread::sleep(t - now - spin);
    }
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

/// Call `launch(intended)` for every op of the schedule, `lead` before its intended start
/// (its task spins the rest: `spin_until`), until `running` is cleared; blocks the
/// calling thread (run it on the blocking pool).
pub fn run(shared: &Shared, mut launch: impl FnMut(Instant)) {
    precise_timers();
    let mut next = Instant::now();
    while shared.running.load(Ordering::Acquire) {
        let rate = shared.rate();
        let now = Instant::now();
        if rate <= 0.0 {
            next = now + WAKE;
            std::thread::sleep(WAKE);
            continue;
        }
        let interval = Duration::from_secs_f64(1.0 / rate);
        let lead = lead(interval);
        while next <= now + lead && shared.running.load(Ordering::Acquire) {
            launch(next);
            next += interval;
        }
        let spin = Duration::from_nanos(shared.spin_ns.load(Ordering::Relaxed));
        wait_until((next - lead).min(Instant::now() + WAKE), spin);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_op_is_handed_over_in_order_at_most_lead_before_its_start() {
        let shared = Arc::new(Shared::new(Duration::from_secs(1), None));
        shared.set_rate(2000.0);
        shared.running.store(true, Ordering::Release);
        let stopper = shared.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            stopper.running.store(false, Ordering::Release);
        });
        let mut seen: Vec<(Instant, Instant)> = Vec::new();
        run(&shared, |intended| seen.push((intended, Instant::now())));
        t.join().unwrap();
        assert!(seen.len() > 100, "{} ops in 200 ms at 2000/s", seen.len());
        for w in seen.windows(2) {
            assert_eq!(w[1].0 - w[0].0, Duration::from_secs_f64(1.0 / 2000.0));
        }
        // handed over at most `lead` before its intended start (its task spins the rest)
        let lead = lead(Duration::from_secs_f64(1.0 / 2000.0));
        assert_eq!(lead, Duration::from_micros(25));
        assert!(seen.iter().all(|(intended, handed)| *handed + lead >= *intended));
    }

    #[test]
    fn the_lead_is_a_twentieth_of_the_interval_at_most_lead_max() {
        assert_eq!(lead(Duration::from_millis(1)), Duration::from_micros(50));
        assert_eq!(lead(Duration::from_millis(10)), LEAD_MAX);
        let t = Instant::now() + Duration::from_micros(100);
        spin_until(t);
        assert!(Instant::now() >= t);
    }

    #[test]
    fn wait_until_never_returns_early() {
        for spin_us in [0u64, 50] {
            let t = Instant::now() + Duration::from_micros(700);
            wait_until(t, Duration::from_micros(spin_us));
            assert!(Instant::now() >= t);
        }
    }
}
