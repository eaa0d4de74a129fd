//! Workload-file generators in Rust: what agents/workload/generators.py (the reference)
//! makes, read from the plain generator specs of protocol/workload_file_spec.py (JSON).
//! Key numbers render byte-identically to the reference (text `prefix + n`, numbers, a
//! uuid of k, a timestamp `start + n * step`; `hash`, `modulo`); the draws have the same
//! distributions and ranges, not the same sequences (another RNG).

use std::time::{SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::Rng;
use scylla::frame::response::result::{ColumnType, NativeType};
use scylla::value::{CqlDate, CqlTimestamp, CqlTimeuuid, CqlValue};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::keys::{fnv64, zeta, Distribution, Zipfian};

const POOL_SIZE: usize = 1 << 20;
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ZIPF_THETA: f64 = 0.99;
const EPOCH_DAYS: i64 = 1 << 31; // CQL's date: days since 1970-01-01 + 2^31
const GREGORIAN_TO_UNIX_100NS: u64 = 0x01B2_1DD2_1381_4000; // 1582-10-15 .. 1970-01-01

/// A portable column type (docs/workloads.md) as the CQL value it binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    Ascii,
    Blob,
    Boolean,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Float,
    Double,
    Uuid,
    Timeuuid,
    Timestamp,
    Date,
}

impl Kind {
    pub fn parse(name: &str) -> Result<Kind, String> {
        Ok(match name {
            "text" => Kind::Text,
            "ascii" => Kind::Ascii,
            "blob" => Kind::Blob,
            "boolean" => Kind::Boolean,
            "tinyint" => Kind::TinyInt,
            "smallint" => Kind::SmallInt,
            "int" => Kind::Int,
            "bigint" => Kind::BigInt,
            "float" => Kind::Float,
            "double" => Kind::Double,
            "uuid" => Kind::Uuid,
            "timeuuid" => Kind::Timeuuid,
            "timestamp" => Kind::Timestamp,
            "date" => Kind::Date,
            other => return Err(format!("type {other}")),
        })
    }

    /// The kind of a prepared statement's column (None: a type no generator makes).
    pub fn of_column(typ: &ColumnType<'_>) -> Option<Kind> {
        Some(match typ {
            ColumnType::Native(n) => match n {
                NativeType::Text => Kind::Text,
                NativeType::Ascii => Kind::Ascii,
                NativeType::Blob => Kind::Blob,
                NativeType::Boolean => Kind::Boolean,
                NativeType::TinyInt => Kind::TinyInt,
                NativeType::SmallInt => Kind::SmallInt,
                NativeType::Int => Kind::Int,
                NativeType::BigInt => Kind::BigInt,
                NativeType::Float => Kind::Float,
                NativeType::Double => Kind::Double,
                NativeType::Uuid => Kind::Uuid,
                NativeType::Timeuuid => Kind::Timeuuid,
                NativeType::Timestamp => Kind::Timestamp,
                NativeType::Date => Kind::Date,
                _ => return None,
            },
            _ => return None,
        })
    }

    /// `v` as a value of this kind where the column's engine type differs from the
    /// parameter's portable type (a table's `types` override: an int parameter in a CQL
    /// float column), as the Python drivers convert; else `v` unchanged.
    pub fn cast(self, v: CqlValue) -> CqlValue {
        let n = match &v {
            CqlValue::TinyInt(i) => Some(*i as f64),
            CqlValue::SmallInt(i) => Some(*i as f64),
            CqlValue::Int(i) => Some(*i as f64),
            CqlValue::BigInt(i) => Some(*i as f64),
            CqlValue::Float(x) => Some(*x as f64),
            CqlValue::Double(x) => Some(*x),
            _ => None,
        };
        let converted = match (&v, n) {
            (_, Some(x)) => match self {
                Kind::Float | Kind::Double => self.real(x),
                Kind::TinyInt | Kind::SmallInt | Kind::Int | Kind::BigInt => self.integer(x as i64),
                _ => None,
            },
            (CqlValue::Uuid(u), _) if self == Kind::Timeuuid => Some(CqlValue::Timeuuid(CqlTimeuuid::from(*u))),
            (CqlValue::Timeuuid(u), _) if self == Kind::Uuid => Some(CqlValue::Uuid(Uuid::from(*u))),
            (CqlValue::Text(s), _) if self == Kind::Ascii => Some(CqlValue::Ascii(s.clone())),
            (CqlValue::Ascii(s), _) if self == Kind::Text => Some(CqlValue::Text(s.clone())),
            _ => None,
        };
        converted.unwrap_or(v)
    }

    fn integer(self, n: i64) -> Option<CqlValue> {
        Some(match self {
            Kind::TinyInt => CqlValue::TinyInt(n as i8),
            Kind::SmallInt => CqlValue::SmallInt(n as i16),
            Kind::Int => CqlValue::Int(n as i32),
            Kind::BigInt => CqlValue::BigInt(n),
            Kind::Float => CqlValue::Float(n as f32),
            Kind::Double => CqlValue::Double(n as f64),
            _ => return None,
        })
    }

    fn real(self, x: f64) -> Option<CqlValue> {
        Some(match self {
            Kind::Float => CqlValue::Float(x as f32),
            Kind::Double => CqlValue::Double(x),
            _ => return None,
        })
    }

    fn text(self, s: String) -> Option<CqlValue> {
        Some(match self {
            Kind::Text => CqlValue::Text(s),
            Kind::Ascii => CqlValue::Ascii(s),
            Kind::Blob => CqlValue::Blob(s.into_bytes()),
            _ => return None,
        })
    }

    /// A time in microseconds since the epoch (timestamps: milliseconds, floor).
    fn instant(self, us: i64) -> Option<CqlValue> {
        Some(match self {
            Kind::Timestamp => CqlValue::Timestamp(CqlTimestamp(us.div_euclid(1000))),
            Kind::Date => CqlValue::Date(CqlDate((us.div_euclid(86_400_000_000) + EPOCH_DAYS) as u32)),
            _ => return None,
        })
    }
}

/// ISO 8601 (`datetime.fromisoformat` of the checks: `2024-01-01T00:00:00+00:00`, `Z`,
/// a date alone, fractions of a second; no zone: UTC) in microseconds since the epoch.
pub fn iso_us(text: &str) -> Result<i64, String> {
    let bad = || format!("not an ISO 8601 time: {text}");
    let t = text.trim();
    let (date, rest) = match t.find(['T', ' ']) {
        Some(10) => (&t[..10], &t[11..]),
        None if t.len() == 10 => (t, ""),
        _ => return Err(bad()),
    };
    let num = |s: &str| s.parse::<i64>().map_err(|_| bad());
    let (y, m, d) = (num(&date[0..4])?, num(&date[5..7])?, num(&date[8..10])?);
    let (clock, offset_s) = match rest.find(['+', '-', 'Z', 'z']) {
        Some(i) => {
            let zone = &rest[i..];
            let off = if zone.eq_ignore_ascii_case("z") {
                0
            } else {
                let sign = if zone.starts_with('-') { -1 } else { 1 };
                let hm: Vec<&str> = zone[1..].split(':').collect();
                let h = num(hm.first().ok_or_else(bad)?)?;
                let mi = hm.get(1).map(|s| num(s)).transpose()?.unwrap_or(0);
                sign * (h * 3600 + mi * 60)
            };
            (&rest[..i], off)
        }
        None => (rest, 0),
    };
    let mut parts = clock.split(':');
    let h = parts.next().filter(|s| !s.is_empty()).map(num).transpose()?.unwrap_or(0);
    let mi = parts.next().map(num).transpose()?.unwrap_or(0);
    let (s, us) = match parts.next() {
        Some(sec) => match sec.split_once('.') {
            Some((whole, frac)) => {
                let digits: String = frac.chars().chain("000000".chars()).take(6).collect();
                (num(whole)?, num(&digits)?)
            }
            None => (num(sec)?, 0),
        },
        None => (0, 0),
    };
    let days = days_from_civil(y, m, d);
    Ok(((days * 86_400 + h * 3600 + mi * 60 + s - offset_s) * 1_000_000) + us)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// timedelta(seconds=x) in microseconds: x * 1e6 rounded half to even, as Python does.
fn seconds_us(x: f64) -> i64 {
    let us = x * 1e6;
    let r = us.round();
    if (us - us.trunc()).abs() == 0.5 && (r as i64) % 2 != 0 {
        (r - us.signum()) as i64
    } else {
        r as i64
    }
}

/// How a key number becomes a value (generators.render_key).
#[derive(Clone, Debug)]
pub struct Render {
    prefix: String,
    hash: bool,
    modulo: Option<u64>,
    start_us: i64,
    step: f64,
    kind: Kind,
}

impl Render {
    pub fn new(spec: &Map<String, Value>, kind: Kind) -> Result<Render, String> {
        if !matches!(kind, Kind::Text | Kind::Ascii | Kind::TinyInt | Kind::SmallInt | Kind::Int
                     | Kind::BigInt | Kind::Float | Kind::Double | Kind::Uuid | Kind::Timeuuid
                     | Kind::Timestamp) {
            return Err(format!("a key number rendered as {kind:?}"));
        }
        Ok(Render {
            prefix: spec.get("prefix").and_then(Value::as_str).unwrap_or("").to_string(),
            hash: spec.get("hash").and_then(Value::as_bool).unwrap_or(false),
            modulo: spec.get("modulo").and_then(Value::as_u64).filter(|m| *m > 0),
            start_us: iso_us(spec.get("start").and_then(Value::as_str)
                .unwrap_or("2024-01-01T00:00:00+00:00"))?,
            step: spec.get("step").and_then(Value::as_f64).unwrap_or(1.0),
            kind,
        })
    }

    pub fn render(&self, k: i64) -> CqlValue {
        match self.kind {
            Kind::Uuid | Kind::Timeuuid => {
                let u = Uuid::from_u128(((fnv64(k) as u128) << 64) | (k as u64 as u128));
                if self.kind == Kind::Uuid { CqlValue::Uuid(u) } else { CqlValue::Timeuuid(CqlTimeuuid::from(u)) }
            }
            kind => {
                let mut n = if self.hash { fnv64(k) } else { k as u64 };
                if let Some(m) = self.modulo {
                    n %= m;
                }
                match kind {
                    Kind::Text => CqlValue::Text(format!("{}{}", self.prefix, n)),
                    Kind::Ascii => CqlValue::Ascii(format!("{}{}", self.prefix, n)),
                    Kind::Float => CqlValue::Float(n as f32),
                    Kind::Double => CqlValue::Double(n as f64),
                    Kind::Timestamp => {
                        let us = self.start_us + seconds_us(n as f64 * self.step);
                        CqlValue::Timestamp(CqlTimestamp(us.div_euclid(1000)))
                    }
                    _ => kind.integer(n as i64).expect("an integer kind (checked in new)"),
                }
            }
        }
    }
}

/// YCSB's SkewedLatestGenerator as keys.latest_keys draws it: newest - zipfian over that
/// many items, so the newest key written is the hottest and key 0 is never drawn (zetan
/// follows a count that grew; eta keeps the first item count).
#[derive(Clone, Debug)]
pub struct Latest {
    n: u64,
    counted: u64,
    zetan: f64,
    eta: f64,
}

impl Latest {
    fn new(top: u64) -> Latest {
        let n = top.max(1);
        let zetan = zeta(n, ZIPF_THETA);
        Latest { n, counted: n, zetan, eta: crate::keys::eta(n, zetan, ZIPF_THETA) }
    }

    fn next(&mut self, top: u64, rng: &mut SmallRng) -> u64 {
        if top > self.counted {
            self.zetan = zeta(top, ZIPF_THETA);
            self.counted = top;
            self.eta = crate::keys::eta(self.n, self.zetan, ZIPF_THETA);
        }
        let u: f64 = rng.gen();
        let uz = u * self.zetan;
        let drawn = if uz < 1.0 {
            0
        } else if uz < 1.0 + 0.5f64.powf(ZIPF_THETA) {
            1
        } else {
            (top as f64 * (self.eta * u - self.eta + 1.0).powf(1.0 / (1.0 - ZIPF_THETA))) as u64
        };
        top.saturating_sub(drawn)
    }
}

/// Where key numbers come from: a sequence, or a distribution over [0, keys).
#[derive(Clone, Debug)]
pub enum KeySource {
    /// counts from `first` by `stride`, on the worker's counter for that start and
    /// stride
    Sequence { first: i64, stride: i64 },
    Dist(Distribution),
    Latest(Latest),
}

impl KeySource {
    /// `records`: the data set's keys (the default key space).
    pub fn new(spec: &Map<String, Value>, records: u64, newest: i64)
        -> Result<KeySource, String> {
        let gen = spec.get("gen").and_then(Value::as_str).unwrap_or("");
        if gen == "sequence" {
            let first = spec.get("first").and_then(Value::as_i64).unwrap_or(0);
            let stride = spec.get("stride").and_then(Value::as_i64).unwrap_or(1).max(1);
            return Ok(KeySource::Sequence { first, stride });
        }
        let keys = spec.get("keys").and_then(Value::as_u64).unwrap_or(records).max(1);
        if gen == "latest" {
            return Ok(KeySource::Latest(Latest::new(newest.max(1) as u64)));
        }
        let f = |k: &str, d: f64| spec.get(k).and_then(Value::as_f64).unwrap_or(d);
        Ok(KeySource::Dist(Distribution::new(gen, keys, f("hot_data", 0.2), f("hot_ops", 0.8))?))
    }

    pub fn next(&mut self, ctx: &mut Ctx) -> i64 {
        match self {
            KeySource::Sequence { first, stride } => {
                let next = ctx.sequences.entry((*first, *stride)).or_insert(*first);
                let k = *next;
                *next += *stride;
                ctx.newest = ctx.newest.max(k);
                k
            }
            KeySource::Dist(d) => d.next(&mut ctx.rng) as i64,
            KeySource::Latest(l) => l.next(ctx.newest.max(1) as u64, &mut ctx.rng) as i64,
        }
    }
}

/// What an op's generators share: the rng, the text pool, the newest key number, the
/// values ops bound that `written` draws from (by slot), and the sequences' next numbers
/// by (first, stride) (every op whose key counts from one start shares its counter, so two
/// inserting ops never write the same new key).
pub struct Ctx {
    pub rng: SmallRng,
    pool: Vec<u8>,
    pub newest: i64,
    pub written: Vec<std::collections::VecDeque<CqlValue>>,
    pub sequences: std::collections::HashMap<(i64, i64), i64>,
}

impl Ctx {
    pub fn new(mut rng: SmallRng, records: u64) -> Ctx {
        let pool = (0..POOL_SIZE).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())]).collect();
        Ctx { rng, pool, newest: records.saturating_sub(1) as i64, written: Vec::new(),
              sequences: std::collections::HashMap::new() }
    }

    fn text(&mut self, size: usize) -> String {
        let size = size.min(POOL_SIZE - 1);
        let start = self.rng.gen_range(0..POOL_SIZE - size);
        String::from_utf8(self.pool[start..start + size].to_vec()).expect("ASCII pool")
    }
}

#[derive(Clone, Debug)]
pub enum Length {
    Fixed(usize),
    Uniform(usize, usize),
    Zipfian(usize, Zipfian),
}

impl Length {
    fn new(spec: Option<&Value>) -> Result<Length, String> {
        match spec {
            None => Ok(Length::Fixed(100)),
            Some(Value::Number(n)) => Ok(Length::Fixed(n.as_u64().ok_or("length")? as usize)),
            Some(Value::Object(m)) => {
                let low = m.get("min").and_then(Value::as_u64).unwrap_or(1) as usize;
                let high = m.get("max").and_then(Value::as_u64).ok_or("length without max")? as usize;
                Ok(match m.get("distribution").and_then(Value::as_str) {
                    Some("zipfian") => Length::Zipfian(low, Zipfian::new((high - low + 1) as u64, None)),
                    _ => Length::Uniform(low, high.max(low)),
                })
            }
            Some(other) => Err(format!("length {other}")),
        }
    }

    fn next(&self, rng: &mut SmallRng) -> usize {
        match self {
            Length::Fixed(n) => *n,
            Length::Uniform(lo, hi) => rng.gen_range(*lo..=*hi),
            Length::Zipfian(lo, z) => lo + z.next(rng) as usize,
        }
    }
}

/// One parameter's generator.
#[derive(Clone, Debug)]
pub enum Gen {
    Keys { source: KeySource, render: Render },
    OpKey(Render),
    Int { lo: i64, hi: i64, kind: Kind },
    Float { lo: f64, hi: f64, kind: Kind },
    Text { length: Length, kind: Kind },
    Uuid4(Kind),
    Uuid1(Kind),
    Now(Kind),
    Range { first_us: i64, span_us: f64, kind: Kind },
    Choice { values: Vec<CqlValue>, edges: Vec<f64> },
    Constant(CqlValue),
    /// the values of written slot `slot` (another op's parameter), among the last `window`
    Written { slot: usize, window: usize, from: (String, String) },
}

/// A generator this core does not bind: the phase runs on the Python path.
pub const UNSUPPORTED: &[&str] = &["dataset"];

/// A JSON scalar (a choice's or constant's value) as a value of `kind`.
fn scalar(v: &Value, kind: Kind) -> Result<CqlValue, String> {
    let bad = || format!("value {v} for a {kind:?} parameter");
    match v {
        Value::Bool(b) if kind == Kind::Boolean => Ok(CqlValue::Boolean(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => kind.integer(i).ok_or_else(bad),
            None => kind.real(n.as_f64().ok_or_else(bad)?).ok_or_else(bad),
        },
        Value::String(s) => match kind {
            Kind::Uuid => Uuid::parse_str(s).map(CqlValue::Uuid).map_err(|_| bad()),
            Kind::Timestamp | Kind::Date => kind.instant(iso_us(s)?).ok_or_else(bad),
            _ => kind.text(s.clone()).ok_or_else(bad),
        },
        _ => Err(bad()),
    }
}

impl Gen {
    /// The generator of `spec` for a parameter of `kind`; `written` gives the slot of
    /// OP.PARAM's values.
    pub fn new(spec: &Map<String, Value>, kind: Kind, records: u64, newest: i64,
               written: &mut dyn FnMut(&str, &str, usize) -> Result<usize, String>)
        -> Result<Gen, String> {
        let gen = spec.get("gen").and_then(Value::as_str).ok_or("a generator without gen")?;
        let num = |k: &str| spec.get(k).and_then(Value::as_f64);
        let need = |v: Option<CqlValue>| v.ok_or_else(|| format!("gen {gen} for a {kind:?} parameter"));
        Ok(match gen {
            "sequence" | "uniform" | "zipfian" | "latest" | "hotspot" => Gen::Keys {
                source: KeySource::new(spec, records, newest)?,
                render: Render::new(spec, kind)?,
            },
            "key" => Gen::OpKey(Render::new(spec, kind)?),
            "int" => {
                let lo = spec.get("min").and_then(Value::as_i64).unwrap_or(0);
                let hi = spec.get("max").and_then(Value::as_i64).unwrap_or((1 << 31) - 1);
                need(kind.integer(lo))?;
                Gen::Int { lo, hi: hi.max(lo), kind }
            }
            "float" => {
                let (lo, hi) = (num("min").unwrap_or(0.0), num("max").unwrap_or(1.0));
                need(kind.real(lo))?;
                Gen::Float { lo, hi: hi.max(lo), kind }
            }
            "text" | "blob" => {
                let kind = if gen == "blob" { Kind::Blob } else { kind };
                need(kind.text(String::new()))?;
                Gen::Text { length: Length::new(spec.get("length"))?, kind }
            }
            "uuid" => {
                if !matches!(kind, Kind::Uuid | Kind::Timeuuid) {
                    return Err(format!("gen uuid for a {kind:?} parameter"));
                }
                match spec.get("version").and_then(Value::as_u64).unwrap_or(4) {
                    1 => Gen::Uuid1(kind),
                    _ => Gen::Uuid4(kind),
                }
            }
            "timestamp" => {
                need(kind.instant(0))?;
                match (spec.get("from").and_then(Value::as_str), spec.get("to").and_then(Value::as_str)) {
                    (Some(a), Some(b)) => {
                        let first_us = iso_us(a)?;
                        Gen::Range { first_us, span_us: (iso_us(b)? - first_us) as f64, kind }
                    }
                    _ => Gen::Now(kind),
                }
            }
            "choice" => {
                let values = spec.get("values").and_then(Value::as_array).ok_or("choice without values")?;
                let values = values.iter().map(|v| scalar(v, kind)).collect::<Result<Vec<_>, _>>()?;
                let weights: Vec<f64> = match spec.get("weights").and_then(Value::as_array) {
                    Some(w) => w.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect(),
                    None => vec![1.0; values.len()],
                };
                let total: f64 = weights.iter().sum();
                let mut acc = 0.0;
                let mut edges: Vec<f64> = weights.iter().map(|w| { acc += w / total; acc }).collect();
                if let Some(last) = edges.last_mut() {
                    *last = 1.0;
                }
                Gen::Choice { values, edges }
            }
            "constant" => Gen::Constant(scalar(spec.get("value").ok_or("constant without value")?, kind)?),
            "written" => {
                let from = spec.get("from").and_then(Value::as_str).ok_or("written without from")?;
                let (op, param) = from.split_once('.').ok_or("written: from = OP.PARAM")?;
                let window = spec.get("window").and_then(Value::as_u64).unwrap_or(10_000).max(1) as usize;
                Gen::Written { slot: written(op, param, window)?, window,
                               from: (op.to_string(), param.to_string()) }
            }
            other => return Err(format!("gen {other}")),
        })
    }

    /// The next value; `key`: the row's key number. `Err(slot)`: a `written` slot with
    /// nothing written yet (the binder binds a fresh value of that op).
    pub fn next(&mut self, ctx: &mut Ctx, key: i64) -> Result<CqlValue, usize> {
        Ok(match self {
            Gen::Keys { source, render } => {
                let k = source.next(ctx);
                render.render(k)
            }
            Gen::OpKey(render) => render.render(key),
            Gen::Int { lo, hi, kind } => kind.integer(ctx.rng.gen_range(*lo..=*hi)).expect("checked"),
            Gen::Float { lo, hi, kind } => {
                let u: f64 = ctx.rng.gen();
                kind.real(*lo + u * (*hi - *lo)).expect("checked")
            }
            Gen::Text { length, kind } => {
                let n = length.next(&mut ctx.rng);
                let s = ctx.text(n);
                kind.text(s).expect("checked")
            }
            Gen::Uuid4(kind) => {
                let u = uuid::Builder::from_random_bytes(ctx.rng.gen()).into_uuid();
                uuid_value(u, *kind)
            }
            Gen::Uuid1(kind) => uuid_value(uuid1(&mut ctx.rng), *kind),
            Gen::Now(kind) => kind.instant(now_us()).expect("checked"),
            Gen::Range { first_us, span_us, kind } => {
                let u: f64 = ctx.rng.gen();
                kind.instant(*first_us + (u * *span_us) as i64).expect("checked")
            }
            Gen::Choice { values, edges } => {
                let u: f64 = ctx.rng.gen();
                let i = edges.iter().position(|e| u < *e).unwrap_or(values.len() - 1);
                values[i].clone()
            }
            Gen::Constant(v) => v.clone(),
            Gen::Written { slot, window, .. } => {
                let seen = &ctx.written[*slot];
                if seen.is_empty() {
                    return Err(*slot);
                }
                let recent = seen.len().min(*window);
                let i = seen.len() - recent + ctx.rng.gen_range(0..recent);
                seen[i].clone()
            }
        })
    }
}

fn uuid_value(u: Uuid, kind: Kind) -> CqlValue {
    if kind == Kind::Timeuuid { CqlValue::Timeuuid(CqlTimeuuid::from(u)) } else { CqlValue::Uuid(u) }
}

fn now_us() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_micros() as i64
}

/// A version-1 uuid of now (100 ns ticks since 1582-10-15), clock sequence and node from
/// the rng, as generators._uuid1 makes it.
fn uuid1(rng: &mut SmallRng) -> Uuid {
    let ticks = GREGORIAN_TO_UNIX_100NS + (now_us() as u64) * 10;
    let (low, mid, high) = (ticks as u32, (ticks >> 32) as u16, ((ticks >> 48) as u16) & 0x0FFF);
    let seq: u16 = rng.gen_range(0..1 << 14);
    let node: u64 = rng.gen_range(0..1u64 << 48);
    let mut d4 = [0u8; 8];
    d4[0] = 0x80 | (seq >> 8) as u8;
    d4[1] = (seq & 0xFF) as u8;
    d4[2..].copy_from_slice(&node.to_be_bytes()[2..]);
    Uuid::from_fields(low, mid, high | 0x1000, &d4)
}
