//! The built-in schemas' ops, bound in Rust: the keys and values CqlOps
//! (agents/cql/schemas.py) makes, for the ops `supported` lists.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use scylla::value::CqlValue;

use crate::keys::{fnv64, Distribution, OpMix};

const POOL_SIZE: usize = 1 << 20;
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// The ops this core binds itself, per schema; anything else runs on the Python paths.
pub fn supported_ops(schema: &str) -> &'static [&'static str] {
    match schema {
        "ycsb" => &["read", "update", "insert", "delete", "scan"],
        "ttl" => &["read", "update", "insert"],
        _ => &[],
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Update,
    Insert,
    Delete,
    Scan,
}

impl Kind {
    pub fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "read" => Kind::Read,
            "update" => Kind::Update,
            "insert" => Kind::Insert,
            "delete" => Kind::Delete,
            "scan" => Kind::Scan,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Settings {
    pub schema: String,
    pub fields: usize,
    pub field_size: usize,
    pub records: u64,
    pub distribution: String,
    pub hot_data: f64,
    pub hot_ops: f64,
    pub seed: u64,
    pub new_key_start: i64,
    pub scan_length: i32,
}

/// Binds ops: which statement (by name) and its values. Owned by the scheduler.
pub struct Workload {
    pub names: Vec<String>,
    kinds: Vec<Kind>,
    mix: OpMix,
    dist: Distribution,
    pool: Arc<Vec<u8>>,
    rng: SmallRng,
    settings: Settings,
    new_key: i64,
}

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

/// A phase's ops: the built-in schemas' or a workload file's (binder.rs).
pub enum Ops {
    Builtin(Workload),
    File(crate::binder::FileWorkload),
}

impl Ops {
    pub fn next(&mut self) -> Bound {
        match self {
            Ops::Builtin(w) => w.next(),
            Ops::File(f) => f.next(),
        }
    }

    pub fn names(&self) -> Vec<String> {
        match self {
            Ops::Builtin(w) => w.names.clone(),
            Ops::File(f) => f.names.clone(),
        }
    }
}

impl Workload {
    pub fn new(settings: Settings, mix: &[(String, f64)]) -> Result<Self, String> {
        let allowed = supported_ops(&settings.schema);
        let mut names = Vec::new();
        let mut kinds = Vec::new();
        let mut weights = Vec::new();
        for (name, w) in mix.iter().filter(|(_, w)| *w > 0.0) {
            if !allowed.contains(&name.as_str()) {
                return Err(format!("the Rust core has no op {name} for the {} schema", settings.schema));
            }
            names.push(name.clone());
            kinds.push(Kind::parse(name).expect("supported op"));
            weights.push(*w);
        }
        let mix = OpMix::new(&weights)?;
        let dist = Distribution::new(&settings.distribution, settings.records, settings.hot_data,
                                     settings.hot_ops)?;
        let mut rng = SmallRng::seed_from_u64(settings.seed);
        let pool: Vec<u8> = (0..POOL_SIZE).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())]).collect();
        let new_key = settings.new_key_start;
        Ok(Workload { names, kinds, mix, dist, pool: Arc::new(pool), rng, settings, new_key })
    }

    fn text(&mut self, size: usize) -> String {
        let size = size.min(POOL_SIZE - 1);
        let start = self.rng.gen_range(0..POOL_SIZE - size);
        // the pool is ASCII: any slice is UTF-8
        String::from_utf8(self.pool[start..start + size].to_vec()).expect("ASCII pool")
    }

    fn key(&self, k: i64) -> CqlValue {
        match self.settings.schema.as_str() {
            "ycsb" => CqlValue::Text(format!("user{}", fnv64(k))),
            _ => CqlValue::BigInt(k),
        }
    }

    fn row(&mut self, k: i64) -> Vec<CqlValue> {
        let mut values = vec![self.key(k)];
        let (fields, size) = match self.settings.schema.as_str() {
            "ycsb" => (self.settings.fields, self.settings.field_size),
            _ => (2, self.settings.field_size),
        };
        for _ in 0..fields {
            let t = self.text(size);
            values.push(CqlValue::Text(t));
        }
        values
    }

    /// The next op of the mix, bound.
    pub fn next(&mut self) -> Bound {
        let op = self.mix.next(&mut self.rng);
        let ycsb = self.settings.schema == "ycsb";
        let (statement, values) = match self.kinds[op] {
            Kind::Read => {
                let k = self.dist.next(&mut self.rng) as i64;
                ("read".to_string(), vec![self.key(k)])
            }
            Kind::Update if ycsb => {
                let i = self.rng.gen_range(0..self.settings.fields.max(1));
                let k = self.dist.next(&mut self.rng) as i64;
                let value = self.text(self.settings.field_size);
                (format!("update{i}"), vec![CqlValue::Text(value), self.key(k)])
            }
            Kind::Update => {
                let k = self.dist.next(&mut self.rng) as i64;
                ("insert".to_string(), self.row(k))
            }
            Kind::Insert => {
                self.new_key += 1;
                let k = self.new_key;
                ("insert".to_string(), self.row(k))
            }
            Kind::Delete => {
                let k = self.dist.next(&mut self.rng) as i64;
                ("delete".to_string(), vec![self.key(k)])
            }
            Kind::Scan => {
                let length = self.rng.gen_range(1..=self.settings.scan_length.max(1));
                let k = self.dist.next(&mut self.rng) as i64;
                ("scan".to_string(), vec![self.key(k), CqlValue::Int(length)])
            }
        };
        let first = Part { statement, values, rows: Vec::new(), expect_rows: false };
        Bound { op, first, then: Vec::new() }
    }

    /// The key number distribution's draws (for tests of its shape).
    pub fn draw(&mut self) -> u64 {
        self.dist.next(&mut self.rng)
    }
}
