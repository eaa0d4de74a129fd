//! Per-second, per-op measurement (agents/measure.py's rules): counts, late ops, error
//! classes, service, response and lateness HDR histograms (1..60e6 us, 3 digits;
//! lateness: send - intended start of the open model's sent ops). An op counts in
//! the wall-clock second it completed in. Encoded as HdrHistogram's uncompressed V2
//! (what protocol/hdr_encoding.encode writes, before base64).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;

pub const LOWEST: u64 = 1;
pub const HIGHEST: u64 = 60_000_000;
pub const DIGITS: u8 = 3;

pub fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST, HIGHEST, DIGITS).expect("valid HDR bounds")
}

/// Microseconds clamped into the histogram's range (measure.clamp_us).
pub fn clamp_us(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(LOWEST, HIGHEST)
}

pub fn encode(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2Serializer::new().serialize(h, &mut out).expect("V2 encoding into memory");
    out
}

/// Monotonic instants placed on the wall clock with one offset taken at creation.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    anchor: Instant,
    anchor_wall: f64,
}

impl Clock {
    pub fn new() -> Self {
        let anchor = Instant::now();
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Clock { anchor, anchor_wall: wall.as_secs_f64() }
    }

    pub fn wall(&self, t: Instant) -> f64 {
        if t >= self.anchor {
            self.anchor_wall + (t - self.anchor).as_secs_f64()
        } else {
            self.anchor_wall - (self.anchor - t).as_secs_f64()
        }
    }
}

pub struct OpStats {
    pub ops: u64,
    pub late: u64,
    pub errors: BTreeMap<&'static str, u64>,
    pub first: f64,
    pub last: f64,
    pub service: Histogram<u64>,
    pub response: Histogram<u64>,
    pub lateness: Histogram<u64>,
}

impl OpStats {
    fn new() -> Self {
        OpStats {
            ops: 0,
            late: 0,
            errors: BTreeMap::new(),
            first: f64::INFINITY,
            last: f64::NEG_INFINITY,
            service: new_hist(),
            response: new_hist(),
            lateness: new_hist(),
        }
    }
}

/// How an op ended.
pub enum Outcome {
    Ok { sent: Instant },
    Error(&'static str),
}

/// Every second's stats, and the ops in flight (scheduled, not yet recorded).
/// `seq`: ops numbered in schedule order; those below `discard_below` were given up at
/// a stop and are never recorded.
pub struct Recorder {
    pub clock: Clock,
    seconds: HashMap<(i64, usize), OpStats>,
    pub in_flight: u64,
    pub discard_below: u64,
    pub intended: u64,
    pub recorded: u64,
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            clock: Clock::new(),
            seconds: HashMap::new(),
            in_flight: 0,
            discard_below: 0,
            intended: 0,
            recorded: 0,
        }
    }

    /// One op ended: counted once, unless a stop gave it up. `lateness`: an open-model
    /// op that was sent, its send - intended start.
    #[allow(clippy::too_many_arguments)]
    pub fn record(&mut self, seq: u64, op: usize, intended: Instant, done: Instant, late: bool,
                  outcome: Outcome, lateness: Option<Duration>) {
        if seq < self.discard_below {
            return;
        }
        self.in_flight = self.in_flight.saturating_sub(1);
        self.recorded += 1;
        let (first, last) = (self.clock.wall(intended), self.clock.wall(done));
        let stats = self.seconds.entry((last.floor() as i64, op)).or_insert_with(OpStats::new);
        stats.ops += 1;
        if late {
            stats.late += 1;
        }
        if let Some(l) = lateness {
            let _ = stats.lateness.record(clamp_us(l));
        }
        stats.first = stats.first.min(first);
        stats.last = stats.last.max(last);
        match outcome {
            Outcome::Ok { sent } => {
                let _ = stats.service.record(clamp_us(done.saturating_duration_since(sent)));
                let _ = stats.response.record(clamp_us(done.saturating_duration_since(intended)));
            }
            Outcome::Error(class) => *stats.errors.entry(class).or_insert(0) += 1,
        }
    }

    /// Give up on every op in flight now: how many they are.
    pub fn abandon(&mut self, next_seq: u64) -> u64 {
        self.discard_below = next_seq;
        std::mem::take(&mut self.in_flight)
    }

    /// The stats of every second up to `upto` (inclusive), removed.
    pub fn harvest(&mut self, upto: i64) -> Vec<((i64, usize), OpStats)> {
        let keys: Vec<(i64, usize)> = self.seconds.keys().filter(|k| k.0 <= upto).copied().collect();
        let mut out: Vec<_> = keys.into_iter().map(|k| (k, self.seconds.remove(&k).unwrap())).collect();
        out.sort_by_key(|(k, _)| *k);
        out
    }
}
