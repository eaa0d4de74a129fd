//! Key numbers and op choice, with the semantics of agents/workload/{fnv,keys,zipfian}.py:
//! YCSB's FNV-1a 64 hash, uniform / scrambled zipfian / hotspot distributions (latest is
//! generators::Latest), and the weighted op mix. The same distributions, not the same sequences.

use rand::rngs::SmallRng;
use rand::Rng;

pub const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
pub const FNV_PRIME: u64 = 0x100_0000_01B3;
const ZIPF_THETA: f64 = 0.99;
const SCRAMBLED_ITEMS: u64 = 10_000_000_001; // ZipfianGenerator(0, 10^10): max inclusive
const ZETAN: f64 = 26.469_028_201_783_02; // YCSB's ScrambledZipfianGenerator.ZETAN
const HEAD: usize = 1000;

/// FNV-1a over the 8 little-endian bytes of `value` (unsigned): `fnv.fnv64`.
pub fn fnv64(value: i64) -> u64 {
    let mut h = FNV_OFFSET;
    let mut v = value as u64;
    for _ in 0..8 {
        h ^= v & 0xFF;
        h = h.wrapping_mul(FNV_PRIME);
        v >>= 8;
    }
    h
}

/// YCSB's `Utils.fnvhash64`: Math.abs of fnv64 read as a signed long.
pub fn fnvhash64(value: i64) -> i64 {
    (fnv64(value) as i64).wrapping_abs()
}

/// sum(1/i^theta, i in 1..=n): the first 1000 terms exactly, then Euler-Maclaurin
/// (zipfian.zeta).
pub fn zeta(n: u64, theta: f64) -> f64 {
    let mut head = 0.0;
    let upto = (n as usize).min(HEAD);
    for i in 1..=upto {
        head += 1.0 / (i as f64).powf(theta);
    }
    if n as usize <= HEAD {
        return head;
    }
    let (a, b, s) = ((HEAD + 1) as f64, n as f64, 1.0 - theta);
    let integral = (b.powf(s) - a.powf(s)) / s;
    let ends = (a.powf(-theta) + b.powf(-theta)) / 2.0;
    let d1 = -theta * (b.powf(-theta - 1.0) - a.powf(-theta - 1.0));
    let d3 = -theta * (theta + 1.0) * (theta + 2.0) * (b.powf(-theta - 3.0) - a.powf(-theta - 3.0));
    head + integral + ends + d1 / 12.0 - d3 / 720.0
}

pub fn eta(items: u64, zetan: f64, theta: f64) -> f64 {
    let zeta2 = zeta(2, theta);
    if zetan <= zeta2 {
        return 0.0;
    }
    (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan)
}

/// YCSB's ZipfianGenerator over [0, n): item 0 hottest (zipfian.Zipfian).
#[derive(Clone, Debug)]
pub struct Zipfian {
    n: u64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    half_pow: f64,
}

impl Zipfian {
    pub fn new(n: u64, zetan: Option<f64>) -> Self {
        let n = n.max(1);
        let zetan = zetan.unwrap_or_else(|| zeta(n, ZIPF_THETA));
        Zipfian {
            n,
            zetan,
            alpha: 1.0 / (1.0 - ZIPF_THETA),
            eta: eta(n, zetan, ZIPF_THETA),
            half_pow: 1.0 + 0.5f64.powf(ZIPF_THETA),
        }
    }

    pub fn next(&self, rng: &mut SmallRng) -> u64 {
        let u: f64 = rng.gen();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < self.half_pow {
            return 1;
        }
        (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }
}

/// A key-number distribution over the records [0, n) (`latest`, whose key space grows
/// with the keys written, is generators::Latest).
#[derive(Clone, Debug)]
pub enum Distribution {
    Uniform { n: u64 },
    /// YCSB's scrambled zipfian: a draw over 10^10+1 items, fnvhash64(draw) % n.
    Zipfian { n: u64, z: Zipfian },
    /// the first hot keys get hot_ops of the draws.
    Hotspot { n: u64, hot: u64, hot_ops: f64 },
}

impl Distribution {
    pub fn new(name: &str, records: u64, hot_data: f64, hot_ops: f64) -> Result<Self, String> {
        let n = records.max(1);
        Ok(match name {
            "uniform" => Distribution::Uniform { n },
            "zipfian" => Distribution::Zipfian { n, z: Zipfian::new(SCRAMBLED_ITEMS, Some(ZETAN)) },
            "hotspot" => {
                for (key, v) in [("hotspot_data_fraction", hot_data), ("hotspot_op_fraction", hot_ops)] {
                    if !(0.0..=1.0).contains(&v) {
                        return Err(format!("{key} must be in [0, 1], not {v}"));
                    }
                }
                let hot = (n as f64 * hot_data) as u64;
                if hot == 0 || hot == n {
                    Distribution::Uniform { n }
                } else {
                    Distribution::Hotspot { n, hot, hot_ops }
                }
            }
            other => return Err(format!("unknown key distribution '{other}'")),
        })
    }

    pub fn next(&self, rng: &mut SmallRng) -> u64 {
        match self {
            Distribution::Uniform { n } => rng.gen_range(0..*n),
            Distribution::Zipfian { n, z } => (fnvhash64(z.next(rng) as i64) as u64) % n,
            Distribution::Hotspot { n, hot, hot_ops } => {
                if rng.gen::<f64>() < *hot_ops {
                    rng.gen_range(0..*hot)
                } else {
                    hot + rng.gen_range(0..(n - hot))
                }
            }
        }
    }
}

/// Weighted choice of op indexes (cumulative weights, one draw per pick): keys.OpMix.
#[derive(Clone, Debug)]
pub struct OpMix {
    cum: Vec<f64>,
}

impl OpMix {
    pub fn new(weights: &[f64]) -> Result<Self, String> {
        let total: f64 = weights.iter().filter(|w| **w > 0.0).sum();
        if total <= 0.0 {
            return Err("the mix has no op with a positive weight".into());
        }
        let mut acc = 0.0;
        let mut cum: Vec<f64> = weights
            .iter()
            .map(|w| {
                acc += w.max(0.0) / total;
                acc
            })
            .collect();
        if let Some(last) = cum.iter_mut().rev().find(|_| true) {
            *last = 1.0;
        }
        Ok(OpMix { cum })
    }

    pub fn next(&self, rng: &mut SmallRng) -> usize {
        let u: f64 = rng.gen();
        self.cum.iter().position(|edge| u < *edge).unwrap_or(self.cum.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fnv_known_values() {
        // fnv64(0): FNV-1a of eight zero bytes
        let mut h = FNV_OFFSET;
        for _ in 0..8 {
            h = h.wrapping_mul(FNV_PRIME);
        }
        assert_eq!(fnv64(0), h);
        assert!(fnvhash64(-1) >= 0);
    }

    #[test]
    fn zero_weights_never_drawn() {
        let mix = OpMix::new(&[0.5, 0.0, 0.5]).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        assert!((0..10_000).all(|_| mix.next(&mut rng) != 1));
    }
}
