//! ioslice's random offsets beside fio's own, distribution by distribution.
//!
//! ioslice draws from its own seeded generator, so the offsets cannot be fio's; what must
//! agree is their spread. For each distribution the same job (4096 blocks of 4 KiB, random
//! reads, `ioengine=null` so nothing is written) runs through fio 3.33 with `write_iolog=`
//! and through ioslice's pattern, and the two histograms are compared: the share of accesses
//! to the hottest 1 % and 10 % of blocks, the share of blocks ever touched, and for zoned
//! distributions each zone's share. Tolerances are absolute, 0.02 on each share (sampling
//! noise at 40960 I/Os is some 0.003). Without fio on the PATH the comparisons are skipped,
//! saying so.

use std::collections::HashMap;
use std::process::Command;

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::pattern::{plan_files, IoPattern};
use rand::rngs::StdRng;
use rand::SeedableRng;

const BLOCK: u64 = 4096;
const BLOCKS: u64 = 4096;
/// Shares may differ by this much.
const TOLERANCE: f64 = 0.02;

/// A histogram's summary.
#[derive(Debug)]
struct Spread {
    /// Share of accesses to the hottest 1 % of blocks.
    top1: f64,
    /// Share of accesses to the hottest 10 %.
    top10: f64,
    /// Share of blocks touched at least once.
    touched: f64,
    /// Share of accesses to each zone (bounds in blocks).
    zones: Vec<f64>,
}

fn spread(blocks: &[u64], zone_ends: &[u64]) -> Spread {
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for block in blocks {
        *counts.entry(*block).or_default() += 1;
    }
    let mut hot: Vec<u64> = counts.values().copied().collect();
    hot.sort_unstable_by(|a, b| b.cmp(a));
    let total = blocks.len() as f64;
    let share = |top: u64| hot.iter().take(top as usize).sum::<u64>() as f64 / total;
    let mut start = 0;
    let zones = zone_ends
        .iter()
        .map(|&end| {
            let n = blocks.iter().filter(|b| (start..end).contains(*b)).count();
            start = end;
            n as f64 / total
        })
        .collect();
    Spread {
        top1: share(BLOCKS / 100),
        top10: share(BLOCKS / 10),
        touched: counts.len() as f64 / BLOCKS as f64,
        zones,
    }
}

/// The job both run: `options` are `key=value` lines; `ios` I/Os in all.
fn job(options: &[&str], ios: u64) -> String {
    format!(
        "[d]\nioengine=null\nrw=randread\nbs=4k\nsize={}\nio_size={}\n{}\n",
        BLOCK * BLOCKS,
        BLOCK * ios,
        options.join("\n")
    )
}

fn ioslice_blocks(options: &[&str], ios: u64) -> Vec<u64> {
    let file = parse_str(&job(options, ios), "d.fio", &ParseOptions::default()).expect("parses");
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let spec = &file.jobs[0];
    let files = plan_files(spec, 0, 1 << 30).expect("files");
    let mut pattern = IoPattern::new(spec, &files, 0).expect("pattern");
    let mut rng = StdRng::seed_from_u64(11);
    std::iter::from_fn(|| pattern.next(&mut rng))
        .map(|unit| unit.offset / BLOCK)
        .collect()
}

/// fio's blocks from its iolog, or `None` (with the reason printed) when fio cannot run.
fn fio_blocks(options: &[&str], ios: u64) -> Option<Vec<u64>> {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("skipped: fio is not installed, so there is nothing to compare with");
        return None;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let jobfile = dir.path().join("d.fio");
    let log = dir.path().join("d.iolog");
    let text = format!("{}write_iolog={}\n", job(options, ios), log.display());
    std::fs::write(&jobfile, text).expect("job file written");
    let out = Command::new("fio")
        .current_dir(dir.path())
        .arg("--output=/dev/null")
        .arg(&jobfile)
        .output()
        .expect("fio runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(&log).expect("fio wrote its iolog");
    let blocks: Vec<u64> = log
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [_, _, "read", offset, _] => offset.parse::<u64>().ok(),
                _ => None,
            }
        })
        .map(|offset| offset / BLOCK)
        .collect();
    assert_eq!(blocks.len() as u64, ios, "fio issued every I/O");
    Some(blocks)
}

/// Runs both and checks every share within [`TOLERANCE`]; returns ioslice's spread.
fn compare(options: &[&str], ios: u64, zone_ends: &[u64]) -> Option<Spread> {
    let theirs = spread(&fio_blocks(options, ios)?, zone_ends);
    let ours = spread(&ioslice_blocks(options, ios), zone_ends);
    eprintln!("{options:?}\n  fio     {theirs:?}\n  ioslice {ours:?}");
    let pairs = [
        ("hottest 1 %", theirs.top1, ours.top1),
        ("hottest 10 %", theirs.top10, ours.top10),
        ("blocks touched", theirs.touched, ours.touched),
    ];
    let zones = theirs
        .zones
        .iter()
        .zip(&ours.zones)
        .map(|(t, o)| ("zone", *t, *o));
    for (what, fio, ioslice) in pairs.into_iter().chain(zones) {
        assert!(
            (fio - ioslice).abs() <= TOLERANCE,
            "{options:?}: {what}: fio {fio:.4}, ioslice {ioslice:.4}"
        );
    }
    Some(ours)
}

#[test]
fn norandommap_repeats_blocks_as_fio_does() {
    // One pass's worth of uniform draws with replacement touches 1 - 1/e of the blocks.
    if let Some(ours) = compare(&["norandommap"], BLOCKS, &[]) {
        assert!((ours.touched - 0.632).abs() < 0.02, "{ours:?}");
    }
    // The random map (and lfsr without one) touch every block once.
    for options in [&[][..], &["norandommap", "random_generator=lfsr"][..]] {
        if let Some(ours) = compare(options, BLOCKS, &[]) {
            assert_eq!(ours.touched, 1.0, "{options:?}");
        }
    }
}

#[test]
fn zipf_matches_fio() {
    for theta in ["zipf:0.8", "zipf:1.2", "zipf:1.2:0.25"] {
        let option = format!("random_distribution={theta}");
        compare(&[&option], 10 * BLOCKS, &[]);
    }
}

#[test]
fn pareto_matches_fio() {
    for h in ["pareto:0.9", "pareto:0.5:0.5"] {
        let option = format!("random_distribution={h}");
        compare(&[&option], 10 * BLOCKS, &[]);
    }
}

#[test]
fn normal_matches_fio() {
    for dev in ["normal", "normal:20", "normal:5:0.25"] {
        let option = format!("random_distribution={dev}");
        compare(&[&option], 10 * BLOCKS, &[]);
    }
}

#[test]
fn zoned_matches_fio() {
    let ends = [409, 1228, 2457, 4096];
    let option = "random_distribution=zoned:60/10:30/20:8/30:2/40";
    if let Some(ours) = compare(&[option], 10 * BLOCKS, &ends) {
        for (share, want) in ours.zones.iter().zip([0.60, 0.30, 0.08, 0.02]) {
            assert!((share - want).abs() < TOLERANCE, "{ours:?}");
        }
    }
}

#[test]
fn zoned_abs_matches_fio() {
    let ends = [256, 1024, 4096];
    let option = "random_distribution=zoned_abs:70/1m:20/3m:10/12m";
    if let Some(ours) = compare(&[option], 10 * BLOCKS, &ends) {
        for (share, want) in ours.zones.iter().zip([0.70, 0.20, 0.10]) {
            assert!((share - want).abs() < TOLERANCE, "{ours:?}");
        }
    }
}
