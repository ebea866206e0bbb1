//! Each generator's exact answers to scripted draws. The expected blocks were worked out from
//! fio 3.33's formulas (`lib/zipf.c`, `lib/gauss.c`, `io_u.c`) by hand, in double precision.

use std::collections::{BTreeSet, VecDeque};

use super::*;
use crate::distribution::{parse, ZoneShare};
use crate::job::Pattern;

/// A generator that hands out the given values in order: `next_u32` takes the low 32 bits.
struct Script(VecDeque<u64>);

impl Script {
    fn new(values: &[u64]) -> Self {
        Self(values.iter().copied().collect())
    }
}

impl RngCore for Script {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    fn next_u64(&mut self) -> u64 {
        self.0.pop_front().expect("the script has a value left")
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        dest.iter_mut().for_each(|b| *b = self.next_u32() as u8);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

fn spec(distribution: &str) -> JobSpec {
    JobSpec {
        pattern: Pattern::RandRead,
        random_distribution: parse(distribution, crate::distribution::tests::bytes)
            .expect("parses"),
        ..JobSpec::default()
    }
}

fn draws(spec: &JobSpec, blocks: u64, script: &[u64], count: usize) -> Vec<u64> {
    let mut chooser = BlockChooser::new(spec, blocks, 4096).expect("chooser");
    let mut rng = Script::new(script);
    let got = (0..count)
        .map(|_| chooser.next(DataDirection::Read, &mut rng))
        .collect();
    assert!(rng.0.is_empty(), "every scripted draw used");
    got
}

#[test]
fn norandommap_draws_uniformly_with_replacement() {
    let mut job = spec("random");
    job.norandommap = true;
    let half = 1u64 << 63;
    assert_eq!(
        draws(&job, 1000, &[0, half, half, u64::MAX], 4),
        [0, 500, 500, 999]
    );
}

#[test]
fn lfsr_and_the_random_map_visit_each_block_once() {
    for (norandommap, generator) in [
        (false, RandomGenerator::Tausworthe),
        (true, RandomGenerator::Lfsr),
    ] {
        let mut job = spec("random");
        job.norandommap = norandommap;
        job.random_generator = generator;
        let got: BTreeSet<u64> = draws(&job, 50, &[12345], 50).into_iter().collect();
        assert_eq!(got.len(), 50, "{generator:?}");
    }
}

#[test]
fn zipf_ranks_are_hashed_and_centred() {
    // n = 100, theta = 1.2, offset 100 * 0.25 = 25: ranks 0, 0, 3, 13, 100.
    let job = spec("zipf:1.2:0.25");
    let script = [0, 0x2000_0000, 0x8000_0000, 0xC000_0000, 0xFFFF_FFFF];
    assert_eq!(draws(&job, 100, &script, 5), [25, 25, 2, 64, 17]);
}

#[test]
fn pareto_draws_its_offset_first() {
    // Offset 7, then ranks 0, 95, 99 for h = 0.9.
    let job = spec("pareto:0.9");
    let script = [7, 0, 0x8000_0000, 0xFFFF_FFFF];
    assert_eq!(draws(&job, 100, &script, 3), [7, 76, 84]);
}

#[test]
fn normal_averages_twelve_draws_and_jitters() {
    // Means 50 (jitter -5) and 99 (jitter +4 halved to 0 to stay below 100, offset 25).
    let mut script = vec![50; 12];
    script.push(0);
    assert_eq!(draws(&spec("normal:10"), 100, &script, 1), [23]);
    let mut script = vec![99; 12];
    script.push(0xFFFF_FFFF);
    assert_eq!(draws(&spec("normal:10:0.75"), 100, &script, 1), [2]);
    let script: Vec<u64> = (7..19).collect();
    assert_eq!(draws(&spec("normal"), 100, &script, 1), [39]);
}

#[test]
fn zoned_picks_a_slot_then_a_block_in_its_zone() {
    // 60 % of accesses to the first 10 % of 1000 blocks, 40 % to the other 90 %.
    let job = spec("zoned:60/10:40/90");
    let slot = |v: u64| (v << 32).div_ceil(100);
    let half = 1u64 << 63;
    let script = [
        slot(0),
        half,
        slot(59),
        u64::MAX,
        slot(60),
        0,
        slot(99),
        half,
    ];
    assert_eq!(draws(&job, 1000, &script, 4), [50, 99, 100, 550]);
}

#[test]
fn zoned_abs_zones_are_bytes_and_must_fit() {
    let job = spec("zoned_abs:50/40k:50/400k");
    let half = 1u64 << 63;
    let script = [0, half, 0xFFFF_FFFF, 0];
    // Blocks of 4 KiB: zone one is blocks 0..10, zone two 10..110.
    assert_eq!(draws(&job, 200, &script, 2), [5, 10]);
    let err = BlockChooser::new(&job, 100, 4096).expect_err("past the end");
    assert!(err.contains("zones end at byte 450560"), "{err}");
}

#[test]
fn a_direction_without_zones_is_uniform() {
    let mut job = spec("zoned:100/10,");
    job.pattern = Pattern::RandReadWrite;
    let RandomDistribution::Zoned { zones, .. } = &job.random_distribution else {
        panic!("zoned");
    };
    assert_eq!(
        zones[0],
        [ZoneShare {
            access: 100,
            size: 10
        }]
    );
    assert!(zones[1].is_empty());
    let mut chooser = BlockChooser::new(&job, 1000, 4096).expect("chooser");
    let mut rng = Script::new(&[u64::MAX]);
    assert_eq!(chooser.next(DataDirection::Write, &mut rng), 999);
}
