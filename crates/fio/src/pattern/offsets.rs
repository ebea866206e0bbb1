//! Which block a random I/O goes to.
//!
//! By default each block once a pass, in the order of a keyed [`Permutation`] (fio's random
//! map, or its `lfsr` generator). With `norandommap`, blocks drawn uniformly with replacement,
//! so some repeat and some are never visited, as fio's tausworthe generator draws them
//! (`__get_next_rand_offset`, `io_u.c`). The skewed distributions follow fio 3.33's
//! generators' mathematics (`lib/zipf.c`, `lib/gauss.c`, the zoned cases of `io_u.c` with
//! `zone-dist.c`'s table of 100 slots), but every draw comes from the caller's seeded
//! generator, not fio's own tausworthe states, so a run reproduces ioslice's sequence, not
//! fio's: the distributions match fio's, the offsets do not.
//!
//! - zipf: rank from the inverse of the zeta approximation (zeta(n) summed over at most 10
//!   million terms, as fio caps it), then scattered over the file by multiplying by the 64-bit
//!   golden ratio (`__hash_u64`) and adding an offset, random or `n * center`, modulo n.
//! - pareto: rank `(n - 1) * u^(ln h / ln(1 - h))`, scattered the same way.
//! - normal: the mean of 12 uniform draws in `0..=n`, plus a uniform jitter of width
//!   `ceil(n * dev / 100)` (at most n/2) centred on 0 and halved until it stays in range,
//!   scattered the same way, the offset `n * (center - 0.5)` or 0.
//! - zoned: a slot in 1..=100 picks the zone whose access share covers it; then a uniform
//!   block within the zone (`zoned`: zone bounds in percent of the blocks, rounded down;
//!   `zoned_abs`: bytes over the block size).

use rand::RngCore;

use super::mix;
use crate::direction::DataDirection;
use crate::distribution::{RandomDistribution, RandomGenerator, ZoneShare};
use crate::job::JobSpec;

/// fio's `__hash_u64` multiplier (`GOLDEN_RATIO_64`, `hash.h`).
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio's cap on the terms of zeta(n) (`ZIPF_MAX_GEN`).
const ZIPF_MAX_TERMS: u64 = 10_000_000;
/// Uniform draws averaged by fio's gauss generator (`GAUSS_ITERS`).
const GAUSS_DRAWS: u64 = 12;

/// Picks block indices in `0..blocks` for one region (or one strided zone).
#[derive(Debug, Clone)]
pub struct BlockChooser {
    blocks: u64,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Each block once a pass.
    Map(Permutation),
    /// Uniform with replacement.
    Uniform,
    Zipf(Zipf),
    Pareto {
        power: f64,
        offset: Scatter,
    },
    Normal(Normal),
    /// Per direction: 100 slots of (first block, blocks); empty for a uniform direction.
    Zoned(Box<[Vec<(u64, u64)>; 3]>),
}

impl BlockChooser {
    /// The chooser `spec` asks for over `blocks` blocks of `unit` bytes (a sequential job's
    /// is never drawn from); an error names what does not fit (`zoned_abs` zones past the
    /// region's end).
    pub fn new(spec: &JobSpec, blocks: u64, unit: u64) -> Result<Self, String> {
        let n = blocks.max(1);
        let kind = match &spec.random_distribution {
            _ if !spec.pattern.is_random() => Kind::Map(Permutation::new(blocks)),
            RandomDistribution::Uniform
                if !spec.norandommap || spec.random_generator == RandomGenerator::Lfsr =>
            {
                Kind::Map(Permutation::new(blocks))
            }
            RandomDistribution::Uniform => Kind::Uniform,
            RandomDistribution::Zipf { theta, center } => {
                Kind::Zipf(Zipf::new(n, *theta, Scatter::new(n, *center)))
            }
            RandomDistribution::Pareto { h, center } => Kind::Pareto {
                power: h.ln() / (1.0 - h).ln(),
                offset: Scatter::new(n, *center),
            },
            RandomDistribution::Normal { deviation, center } => {
                Kind::Normal(Normal::new(n, *deviation, *center))
            }
            RandomDistribution::Zoned { absolute, zones } => {
                let table = |shares: &Vec<ZoneShare>| zone_table(shares, *absolute, n, unit);
                Kind::Zoned(Box::new([
                    table(&zones[0])?,
                    table(&zones[1])?,
                    table(&zones[2])?,
                ]))
            }
        };
        Ok(Self { blocks: n, kind })
    }

    /// Starts a new pass of the random map (with a fresh key) at the next draw; the other
    /// generators have no passes.
    pub fn restart(&mut self) {
        if let Kind::Map(order) = &mut self.kind {
            order.restart();
        }
    }

    /// The next block for an I/O in `direction`.
    pub fn next(&mut self, direction: DataDirection, rng: &mut impl RngCore) -> u64 {
        let n = self.blocks;
        match &mut self.kind {
            Kind::Map(order) => order.next(rng),
            Kind::Uniform => uniform(n, rng),
            Kind::Zipf(zipf) => zipf.next(rng),
            Kind::Pareto { power, offset } => {
                let offset = offset.get(rng);
                let rank = ((n - 1) as f64 * unit_interval(rng).powf(*power)) as u64;
                scatter(rank, offset, n)
            }
            Kind::Normal(normal) => normal.next(rng),
            Kind::Zoned(tables) => {
                let table = &tables[super::direction_slot(direction)];
                if table.is_empty() {
                    return uniform(n, rng);
                }
                let slot = ((100 * u64::from(rng.next_u32())) >> 32) as usize;
                let (first, len) = table[slot];
                first + uniform(len, rng)
            }
        }
    }
}

/// A block in `0..n`, uniformly: fio's `lastb * (r / (max + 1))`, with a 64-bit draw.
fn uniform(n: u64, rng: &mut impl RngCore) -> u64 {
    ((u128::from(n) * u128::from(rng.next_u64())) >> 64) as u64
}

/// fio's `__rand / FRAND32_MAX`: a 32-bit draw as a fraction in 0..=1.
fn unit_interval(rng: &mut impl RngCore) -> f64 {
    f64::from(rng.next_u32()) / f64::from(u32::MAX)
}

/// Where a skewed generator's rank lands: hashed, plus an offset, modulo the blocks.
#[derive(Debug, Clone)]
enum Scatter {
    /// `n * center`.
    Fixed(u64),
    /// A 32-bit draw, made on first use (fio draws it when it sets the generator up).
    Random(Option<u64>),
}

impl Scatter {
    fn new(n: u64, center: Option<f64>) -> Self {
        match center {
            Some(center) => Self::Fixed((n as f64 * center) as u64),
            None => Self::Random(None),
        }
    }

    /// The offset, drawn before the first rank as fio draws it when it sets up.
    fn get(&mut self, rng: &mut impl RngCore) -> u64 {
        match self {
            Self::Fixed(offset) => *offset,
            Self::Random(drawn) => *drawn.get_or_insert_with(|| u64::from(rng.next_u32())),
        }
    }
}

/// fio's `(__hash_u64(rank) + offset) % n`.
fn scatter(rank: u64, offset: u64, n: u64) -> u64 {
    rank.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(offset) % n
}

/// fio's zipf generator over `n` ranks.
#[derive(Debug, Clone)]
struct Zipf {
    n: u64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    offset: Scatter,
}

impl Zipf {
    fn new(n: u64, theta: f64, offset: Scatter) -> Self {
        let zetan: f64 = (0..n.min(ZIPF_MAX_TERMS))
            .map(|i| (1.0 / (i + 1) as f64).powf(theta))
            .sum();
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Self {
            n,
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta,
            offset,
        }
    }

    fn next(&mut self, rng: &mut impl RngCore) -> u64 {
        let offset = self.offset.get(rng);
        let u = unit_interval(rng);
        let z = u * self.zetan;
        let rank = if z < 1.0 {
            0
        } else if z < 1.0 + 0.5f64.powf(self.theta) {
            1
        } else {
            (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
        };
        scatter(rank, offset, self.n)
    }
}

/// fio's gauss generator over `n` blocks.
#[derive(Debug, Clone)]
struct Normal {
    n: u64,
    /// Width of the jitter, in blocks.
    spread: u64,
    offset: u64,
}

impl Normal {
    fn new(n: u64, deviation: f64, center: Option<f64>) -> Self {
        let spread = if deviation == 0.0 {
            0
        } else {
            ((n as f64 * deviation / 100.0).ceil() as u64).min(n / 2)
        };
        // fio stores n * (center - 0.5) in an unsigned integer; below the middle it wraps.
        let offset = center.map_or(0, |c| (n as f64 * (c - 0.5)) as i64 as u64);
        Self { n, spread, offset }
    }

    fn next(&mut self, rng: &mut impl RngCore) -> u64 {
        let n = self.n;
        let sum: u64 = (0..GAUSS_DRAWS)
            .map(|_| u64::from(rng.next_u32()) % (n + 1))
            .sum();
        let mut mean = sum.div_ceil(GAUSS_DRAWS);
        if self.spread > 0 {
            let fraction = f64::from(rng.next_u32()) / (f64::from(u32::MAX) + 1.0);
            let spread = self.spread as i64;
            let mut jitter = (spread as f64 * fraction) as i64 - spread / 2;
            // fio loops forever when every draw was n; the jitter stops at 0 here.
            while jitter != 0 && mean.wrapping_add(jitter as u64) >= n {
                jitter /= 2;
            }
            mean = mean.wrapping_add(jitter as u64);
        }
        scatter(mean, self.offset, n)
    }
}

/// fio's `zone_state_index` for one direction: slot `v - 1` for the 1..=100 draw `v` holds
/// the zone's (first block, blocks). Empty for no zones.
fn zone_table(
    shares: &[ZoneShare],
    absolute: bool,
    blocks: u64,
    unit: u64,
) -> Result<Vec<(u64, u64)>, String> {
    if shares.is_empty() {
        return Ok(Vec::new());
    }
    let mut table = Vec::with_capacity(100);
    let mut start = 0u64;
    for share in shares {
        let end = start.saturating_add(share.size);
        let bounds = if absolute {
            let (first, last) = (start / unit, end / unit);
            if last > blocks {
                return Err(format!(
                    "random_distribution=zoned_abs zones end at byte {end}, past the {} bytes of the region: expected zones within it",
                    blocks.saturating_mul(unit)
                ));
            }
            (first, last - first)
        } else {
            let first = (u128::from(start) * u128::from(blocks) / 100) as u64;
            let len = (u128::from(blocks) * u128::from(share.size) / 100) as u64;
            (first, len)
        };
        table.resize(table.len() + share.access as usize, bounds);
        start = end;
    }
    table.resize(100, table.last().copied().unwrap_or((0, blocks)));
    Ok(table)
}

/// A pseudo-random permutation of `0..len` in O(1) memory: a 4-round Feistel network over
/// the smallest even-bit power of two that holds `len`, with cycle walking to stay in range.
/// A new key (drawn at the start of each pass) gives a new order.
#[derive(Debug, Clone)]
pub struct Permutation {
    len: u64,
    half_bits: u32,
    key: u64,
    position: u64,
    keyed: bool,
}

impl Permutation {
    /// A permutation of `0..len`; its key is drawn on first use.
    pub fn new(len: u64) -> Self {
        let bits = 64 - len.saturating_sub(1).leading_zeros();
        Self {
            len,
            half_bits: bits.div_ceil(2).max(1),
            key: 0,
            position: 0,
            keyed: false,
        }
    }

    /// Starts a new pass (with a fresh key) at the next call.
    pub fn restart(&mut self) {
        self.keyed = false;
    }

    /// The next index; a new pass (with a fresh key) starts after every `len` calls.
    /// Returns 0 for an empty domain.
    pub fn next(&mut self, rng: &mut impl RngCore) -> u64 {
        if self.len == 0 {
            return 0;
        }
        if !self.keyed || self.position == self.len {
            self.key = rng.next_u64();
            self.keyed = true;
            self.position = 0;
        }
        let mut value = self.encrypt(self.position);
        while value >= self.len {
            value = self.encrypt(value);
        }
        self.position += 1;
        value
    }

    fn encrypt(&self, value: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (value >> self.half_bits, value & mask);
        for round in 0..4u64 {
            let f = mix(right ^ self.key.wrapping_add(round.wrapping_mul(0x51_7cc1))) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }
}

#[cfg(test)]
mod tests;
