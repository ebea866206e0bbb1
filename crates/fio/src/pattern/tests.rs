//! Tests of a job's I/O sequence: files, offsets, lengths and directions.

use super::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeSet;

fn job(pattern: Pattern, size: u64, bs: u64) -> JobSpec {
    JobSpec {
        name: "j".into(),
        pattern,
        size: Some(Extent::Bytes(size)),
        block_size: [
            BlockSize::Fixed(bs),
            BlockSize::Fixed(bs),
            BlockSize::Fixed(bs),
        ],
        ..JobSpec::default()
    }
}

fn run(spec: &JobSpec, limit: usize) -> Vec<IoUnit> {
    let files = plan_files(spec, 0, 1 << 30).expect("files");
    let mut pattern = IoPattern::new(spec, &files, 0).expect("pattern");
    let mut rng = StdRng::seed_from_u64(7);
    std::iter::from_fn(|| pattern.next(&mut rng))
        .take(limit)
        .collect()
}

fn offsets(units: &[IoUnit]) -> Vec<u64> {
    units.iter().map(|u| u.offset).collect()
}

#[test]
fn sequential_reads_walk_the_region_once() {
    let units = run(&job(Pattern::Read, 16384, 4096), 100);
    assert_eq!(offsets(&units), [0, 4096, 8192, 12288]);
    assert!(units.iter().all(|u| u.length == 4096 && u.file == 0));
    assert!(units.iter().all(|u| u.direction == DataDirection::Read));
}

#[test]
fn offset_and_increment_shift_the_region() {
    let mut spec = job(Pattern::Write, 8192, 4096);
    spec.offset = Extent::Bytes(4096);
    spec.offset_increment = 65536;
    spec.filename = Some("/dev/sdz".into());
    let files = plan_files(&spec, 2, 1 << 20).expect("files");
    assert_eq!(
        files,
        [FilePlan {
            name: "/dev/sdz".into(),
            size: 1 << 20
        }]
    );
    let mut pattern = IoPattern::new(&spec, &files, 2).expect("pattern");
    let mut rng = StdRng::seed_from_u64(1);
    let got: Vec<u64> = std::iter::from_fn(|| pattern.next(&mut rng))
        .map(|u| u.offset)
        .collect();
    assert_eq!(got, [135168, 139264]);
}

#[test]
fn percent_offset_and_size_apply_to_the_device() {
    let mut spec = job(Pattern::Read, 0, 4096);
    spec.filename = Some("/dev/sdz".into());
    spec.size = Some(Extent::Percent(25));
    spec.offset = Extent::Percent(50);
    let files = plan_files(&spec, 0, 65536).expect("files");
    let mut pattern = IoPattern::new(&spec, &files, 0).expect("pattern");
    let mut rng = StdRng::seed_from_u64(1);
    let got: Vec<u64> = std::iter::from_fn(|| pattern.next(&mut rng))
        .map(|u| u.offset)
        .collect();
    assert_eq!(got, [32768, 36864, 40960, 45056]);
}

#[test]
fn backwards_reads_wrap_to_the_end() {
    let mut spec = job(Pattern::Read, 16384, 4096);
    spec.offset_modifier = -8192;
    let units = run(&spec, 100);
    assert_eq!(offsets(&units), [0, 12288, 8192, 4096]);
}

#[test]
fn forward_modifier_skips_blocks() {
    let mut spec = job(Pattern::Write, 32768, 4096);
    spec.offset_modifier = 4096;
    spec.loops = 2;
    let units = run(&spec, 100);
    assert_eq!(offsets(&units)[..6], [0, 8192, 16384, 24576, 0, 8192]);
}

#[test]
fn random_touches_every_block_once_per_pass() {
    let spec = job(Pattern::RandRead, 1000 * 4096, 4096);
    let mut spec2 = spec.clone();
    spec2.loops = 2;
    let units = run(&spec2, 10_000);
    assert_eq!(units.len(), 2000);
    for pass in units.chunks(1000) {
        let set: BTreeSet<u64> = pass.iter().map(|u| u.offset).collect();
        assert_eq!(set.len(), 1000);
        assert!(set.iter().all(|o| o % 4096 == 0 && *o < 1000 * 4096));
    }
    assert_ne!(offsets(&units[..1000]), offsets(&units[1000..]));
    let sorted: Vec<u64> = (0..1000).map(|i| i * 4096).collect();
    assert_ne!(
        offsets(&units[..1000]),
        sorted,
        "not a permutation in order"
    );
}

#[test]
fn permutation_covers_awkward_and_huge_domains() {
    let mut rng = StdRng::seed_from_u64(3);
    for len in [1u64, 2, 3, 5, 17, 255, 256, 257] {
        let mut perm = Permutation::new(len);
        let set: BTreeSet<u64> = (0..len).map(|_| perm.next(&mut rng)).collect();
        assert_eq!(set.len() as u64, len);
    }
    let mut huge = Permutation::new(u64::MAX / 3);
    assert!((0..100).all(|_| huge.next(&mut rng) < u64::MAX / 3));
}

#[test]
fn random_runs_take_sequential_ios() {
    let mut spec = job(Pattern::RandRead, 64 * 4096, 4096);
    spec.offset_modifier = 4;
    let units = run(&spec, 12);
    for run in units.chunks(4) {
        for pair in run.windows(2) {
            let expected = (pair[0].offset + 4096) % (64 * 4096);
            assert_eq!(pair[1].offset, expected);
        }
    }
}

#[test]
fn mix_follows_rwmixread() {
    let mut spec = job(Pattern::RandReadWrite, 10_000 * 4096, 4096);
    spec.rwmixread = 70;
    let units = run(&spec, 20_000);
    let reads = units
        .iter()
        .filter(|u| u.direction == DataDirection::Read)
        .count();
    let share = reads as f64 / units.len() as f64;
    assert!((share - 0.7).abs() < 0.02, "read share {share}");
}

#[test]
fn time_based_wraps_forever() {
    let mut spec = job(Pattern::Read, 8192, 4096);
    spec.time_based = true;
    let units = run(&spec, 5);
    assert_eq!(offsets(&units), [0, 4096, 0, 4096, 0]);
}

#[test]
fn number_ios_and_io_size_stop_early_or_late() {
    let mut spec = job(Pattern::Read, 16384, 4096);
    spec.number_ios = Some(3);
    assert_eq!(run(&spec, 100).len(), 3);
    let mut spec = job(Pattern::Read, 16384, 4096);
    spec.io_size = Some(6 * 4096);
    assert_eq!(offsets(&run(&spec, 100)), [0, 4096, 8192, 12288, 0, 4096]);
}

#[test]
fn files_round_robin_with_fio_names() {
    let mut spec = job(Pattern::Write, 4 * 8192, 4096);
    spec.nrfiles = 4;
    spec.directory = Some("/data/".into());
    let files = plan_files(&spec, 1, 0).expect("files");
    assert_eq!(files.len(), 4);
    assert_eq!(files[3].name, "/data/j.1.3");
    assert!(files.iter().all(|f| f.size == 8192));
    let units = run(&spec, 100);
    let order: Vec<usize> = units.iter().map(|u| u.file).collect();
    assert_eq!(order, [0, 1, 2, 3, 0, 1, 2, 3]);
}

#[test]
fn filename_format_names_files_as_fio_does() {
    let mut spec = job(Pattern::Write, 2 * 8192, 4096);
    spec.nrfiles = 2;
    spec.filename_format = Some("data.$JobNum.$filenum-$jobname$clientuid.$jobnum".into());
    let files = plan_files(&spec, 3, 0).expect("files");
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["data.3.0-j.3", "data.3.1-j.3"]);
    // A job named after a keyword is not expanded again.
    spec.name = "$jobname".into();
    spec.filename_format = Some("$jobname/$filenum".into());
    let files = plan_files(&spec, 0, 0).expect("files");
    assert_eq!(files[1].name, "$jobname/1");
    // A format without keywords names every file alike.
    spec.filename_format = Some("shared".into());
    let files = plan_files(&spec, 0, 0).expect("files");
    assert_eq!(files[0].name, "shared");
}

#[test]
fn a_files_tail_shorter_than_a_block_is_left_alone() {
    // size=256k over 3 files: 87381 bytes each, 21 whole 4 KiB blocks; fio 3.33 reads
    // 252 KiB and no partial block.
    let mut spec = job(Pattern::Read, 256 << 10, 4096);
    spec.nrfiles = 3;
    let units = run(&spec, 1000);
    assert_eq!(units.len(), 63);
    assert!(units.iter().all(|u| u.length == 4096));
}

#[test]
fn filenames_split_on_unescaped_colons() {
    assert_eq!(split_filenames("a:b\\:c::d"), ["a", "b:c", "d"]);
    let mut spec = job(Pattern::Read, 4096, 4096);
    spec.size = None;
    spec.filename = Some("/dev/sda:/dev/sdb".into());
    let files = plan_files(&spec, 0, 1 << 20).expect("files");
    assert_eq!(files.len(), 2);
    assert!(files.iter().all(|f| f.size == 1 << 20));
}

#[test]
fn no_size_no_filename_is_an_error() {
    let mut spec = job(Pattern::Read, 0, 4096);
    spec.size = None;
    spec.origin = Origin {
        file: "a.fio".into(),
        line: 3,
    };
    let err = plan_files(&spec, 0, 1 << 20).expect_err("no size");
    assert_eq!(
        err.to_string(),
        "a.fio:3: job j needs size= (or filename= of a device)"
    );
}

#[test]
fn block_size_range_and_split() {
    let mut spec = job(Pattern::RandRead, 1 << 24, 4096);
    spec.block_size[0] = BlockSize::Range {
        min: 4096,
        max: 16384,
    };
    let units = run(&spec, 2000);
    let sizes: BTreeSet<u64> = units.iter().map(|u| u.length).collect();
    assert_eq!(sizes, BTreeSet::from([4096, 8192, 12288, 16384]));
    spec.block_size[0] = BlockSize::Split(vec![(4096, 90), (65536, 10)]);
    spec.time_based = true;
    let units = run(&spec, 5000);
    let big = units.iter().filter(|u| u.length == 65536).count();
    assert!((400..600).contains(&big), "{big} of 5000 are 64k");
}

#[test]
fn trimwrite_trims_then_writes_each_block() {
    let units = run(&job(Pattern::TrimWrite, 8192, 4096), 100);
    let got: Vec<(DataDirection, u64)> = units.iter().map(|u| (u.direction, u.offset)).collect();
    use DataDirection::{Trim, Write};
    assert_eq!(got, [(Trim, 0), (Write, 0), (Trim, 4096), (Write, 4096)]);
}

/// fio 3.33 on a loop device, `rw=trimwrite bs=4k,8k,16k size=64k` with `write_iolog`:
/// trims of 16 KiB and writes of 8 KiB, each at its own position, a trim when the last
/// write started where the last trim did.
#[test]
fn trimwrite_with_unequal_block_sizes_keeps_a_position_per_direction() {
    let mut spec = job(Pattern::TrimWrite, 65536, 4096);
    spec.block_size[1] = BlockSize::Fixed(8192);
    spec.block_size[2] = BlockSize::Fixed(16384);
    let units = run(&spec, 100);
    let got: Vec<(DataDirection, u64, u64)> = units
        .iter()
        .map(|u| (u.direction, u.offset >> 10, u.length >> 10))
        .collect();
    use DataDirection::{Trim, Write};
    let k = |direction, at: u64, len: u64| (direction, at, len);
    assert_eq!(
        got,
        [
            k(Trim, 0, 16),
            k(Write, 0, 8),
            k(Trim, 16, 16),
            k(Write, 8, 8),
            k(Write, 16, 8),
            k(Trim, 32, 16),
            k(Write, 24, 8),
            k(Write, 32, 8),
            k(Trim, 48, 16),
            k(Write, 40, 8),
            k(Write, 48, 8),
        ]
    );
}

/// fio 3.33 on a loop device over 1 MiB: `bs=4k,8k,16k` trims 64 times and writes 127;
/// `bs=4k,16k,8k` trims twice and writes 64 times, ending where a write would pass the end.
#[test]
fn trimwrite_counts_follow_fio_whichever_size_is_larger() {
    for (write, trim, trims, writes) in [(8192, 16384, 64, 127), (16384, 8192, 2, 64)] {
        let mut spec = job(Pattern::TrimWrite, 1 << 20, 4096);
        spec.block_size[1] = BlockSize::Fixed(write);
        spec.block_size[2] = BlockSize::Fixed(trim);
        let units = run(&spec, 10_000);
        let count = |d| units.iter().filter(|u| u.direction == d).count();
        assert_eq!(
            (count(DataDirection::Trim), count(DataDirection::Write)),
            (trims, writes),
            "write {write}, trim {trim}"
        );
    }
}

/// BFQ's interleaved readers: each clone reads 16 KiB, skips the 48 KiB its three
/// siblings read, and so on.
fn interleaved(pattern: Pattern, size: u64) -> JobSpec {
    let mut spec = job(pattern, size, 4096);
    spec.zone_mode = crate::job::ZoneMode::Strided;
    spec.zone_size = 16384;
    spec.zone_skip = 49152;
    spec.numjobs = 4;
    spec.offset_increment = 16384;
    spec
}

fn clone_units(spec: &JobSpec, clone: u32, capacity: u64, limit: usize) -> Vec<IoUnit> {
    let files = plan_files(spec, clone, capacity).expect("files");
    let mut pattern = IoPattern::new(spec, &files, clone).expect("pattern");
    let mut rng = StdRng::seed_from_u64(u64::from(clone) + 11);
    std::iter::from_fn(|| pattern.next(&mut rng))
        .take(limit)
        .collect()
}

#[test]
fn interleaved_readers_take_turns_zone_by_zone() {
    let spec = interleaved(Pattern::Read, 64 << 20);
    let expected: [[u64; 10]; 4] = [
        [
            0, 4096, 8192, 12288, 65536, 69632, 73728, 77824, 131072, 135168,
        ],
        [
            16384, 20480, 24576, 28672, 81920, 86016, 90112, 94208, 147456, 151552,
        ],
        [
            32768, 36864, 40960, 45056, 98304, 102400, 106496, 110592, 163840, 167936,
        ],
        [
            49152, 53248, 57344, 61440, 114688, 118784, 122880, 126976, 180224, 184320,
        ],
    ];
    for (clone, want) in expected.iter().enumerate() {
        let units = clone_units(&spec, clone as u32, 1 << 30, 10);
        assert_eq!(offsets(&units), want, "reader {clone}");
        assert!(units.iter().all(|u| u.length == 4096 && u.file == 0));
    }
    // The same on a device all four share.
    let mut shared = spec.clone();
    shared.filename = Some("/dev/sdb".into());
    for (clone, want) in expected.iter().enumerate() {
        let units = clone_units(&shared, clone as u32, 1 << 30, 10);
        assert_eq!(offsets(&units), want, "reader {clone} on /dev/sdb");
    }
}

#[test]
fn interleaved_readers_tile_the_region_without_overlap() {
    let mut spec = interleaved(Pattern::Read, 1 << 20);
    spec.filename = Some("/dev/sdb".into());
    let mut blocks = BTreeSet::new();
    for clone in 0..4 {
        let units = clone_units(&spec, clone, 4 << 20, usize::MAX);
        // size is the bytes each reader transfers, as in fio; its zones in the first
        // 1 MiB hold a quarter of that, so a reader within 1 MiB would go round four
        // times: the first pass is its own 256 KiB.
        let bytes: u64 = units.iter().map(|u| u.length).sum();
        assert_eq!(bytes, 1 << 20, "reader {clone} transfers size= bytes");
        for unit in &units[..64] {
            assert_eq!((unit.offset / 16384) % 4, u64::from(clone), "{unit:?}");
            assert!(blocks.insert(unit.offset), "{unit:?} read twice");
        }
    }
    let all: Vec<u64> = (0..256).map(|b| b * 4096).collect();
    assert_eq!(blocks.into_iter().collect::<Vec<_>>(), all);
}

#[test]
fn zones_wrap_to_the_first_at_the_end_of_the_file() {
    let mut spec = interleaved(Pattern::Read, 128 << 10);
    spec.io_size = Some(96 << 10);
    let units = clone_units(&spec, 0, 1 << 30, usize::MAX);
    let zone_starts: Vec<u64> = units.chunks(4).map(|c| c[0].offset).collect();
    assert_eq!(
        zone_starts,
        [0, 65536, 0, 65536, 0, 65536],
        "io_size sets the bytes"
    );
}

#[test]
fn a_zone_cut_by_the_end_of_the_file_ends_the_job_or_wraps_when_time_based() {
    let mut spec = interleaved(Pattern::Read, 72 << 10);
    let units = clone_units(&spec, 0, 1 << 30, usize::MAX);
    assert_eq!(offsets(&units), [0, 4096, 8192, 12288, 65536, 69632]);
    spec.time_based = true;
    let units = clone_units(&spec, 0, 1 << 30, 8);
    assert_eq!(
        offsets(&units),
        [0, 4096, 8192, 12288, 65536, 69632, 0, 4096]
    );
}

#[test]
fn random_io_stays_inside_each_zone() {
    let spec = interleaved(Pattern::RandRead, 1 << 20);
    let clone = 2;
    let first = 2 * 16384;
    let units = clone_units(&spec, clone, 1 << 30, usize::MAX);
    assert_eq!(units.len(), 256);
    // One zone per four I/Os, each a permutation of the zone's blocks; sixteen zones
    // fit in the file (1 MiB + 32 KiB), then the walk wraps to the first.
    for (k, zone) in units.chunks(4).enumerate() {
        let start = first + (k as u64 % 16) * 65536;
        let set: BTreeSet<u64> = zone.iter().map(|u| u.offset).collect();
        let want: BTreeSet<u64> = (0..4).map(|b| start + b * 4096).collect();
        assert_eq!(set, want, "zone {k}");
    }
    let in_order: Vec<u64> = units.iter().map(|u| u.offset).collect();
    let sorted = {
        let mut s = in_order.clone();
        s.sort_unstable();
        s
    };
    assert_ne!(in_order, sorted, "random within zones");
}

#[test]
fn random_variable_blocks_are_cut_at_the_zone_end() {
    let mut spec = interleaved(Pattern::RandRead, 1 << 20);
    spec.block_size[0] = BlockSize::Range {
        min: 4096,
        max: 16384,
    };
    spec.time_based = true;
    let units = clone_units(&spec, 1, 1 << 30, 2000);
    let mut lengths = BTreeSet::new();
    for unit in &units {
        let within = (unit.offset - 16384) % 65536;
        assert!(within + unit.length <= 16384, "{unit:?} leaves its zone");
        lengths.insert(unit.length);
    }
    assert!(lengths.len() > 1, "sizes vary: {lengths:?}");
}

#[test]
fn randread_runs_stay_inside_the_zone() {
    let mut spec = interleaved(Pattern::RandRead, 1 << 20);
    spec.zone_size = 65536;
    spec.zone_skip = 65536;
    spec.offset_increment = 0;
    spec.offset_modifier = 4;
    let units = clone_units(&spec, 0, 1 << 30, 400);
    for unit in &units {
        assert!(unit.offset % 131072 < 65536, "{unit:?} outside its zone");
    }
}

#[test]
fn zonerange_and_zonesize_apart() {
    // A range wider than the size: only the first 8 KiB of each 16 KiB zone.
    let mut spec = job(Pattern::Read, 64 << 10, 4096);
    spec.zone_size = 8192;
    spec.zone_range = 16384;
    let units = run(&spec, 6);
    assert_eq!(offsets(&units), [0, 4096, 16384, 20480, 32768, 36864]);
    // A size above the range: each 16 KiB zone read twice, then 16 KiB skipped.
    let mut spec = job(Pattern::Read, 256 << 10, 4096);
    spec.zone_size = 32768;
    spec.zone_range = 16384;
    spec.zone_skip = 16384;
    let units = run(&spec, 10);
    let k = 4096;
    assert_eq!(
        offsets(&units),
        [0, k, 2 * k, 3 * k, 0, k, 2 * k, 3 * k, 32768, 32768 + k]
    );
}

#[test]
fn zones_are_off_for_none_zero_size_and_several_files() {
    let plain = offsets(&run(&job(Pattern::Read, 64 << 10, 4096), 8));
    let mut spec = interleaved(Pattern::Read, 64 << 10);
    spec.zone_mode = crate::job::ZoneMode::None;
    assert_eq!(offsets(&run(&spec, 8)), plain);
    let mut spec = interleaved(Pattern::Read, 64 << 10);
    spec.zone_mode = crate::job::ZoneMode::Unspecified;
    assert_ne!(
        offsets(&run(&spec, 8)),
        plain,
        "zonesize alone means strided"
    );
    spec.zone_size = 0;
    assert_eq!(offsets(&run(&spec, 8)), plain);
    let mut spec = interleaved(Pattern::Read, 128 << 10);
    spec.nrfiles = 2;
    let units = run(&spec, 8);
    let first_file: Vec<u64> = units
        .iter()
        .filter(|u| u.file == 0)
        .map(|u| u.offset)
        .collect();
    assert_eq!(
        first_file,
        [0, 4096, 8192, 12288],
        "fio ignores zones with two files"
    );
}

#[test]
fn same_seed_same_sequence() {
    let spec = job(Pattern::RandReadWrite, 1 << 20, 4096);
    assert_eq!(run(&spec, 300), run(&spec, 300));
}
