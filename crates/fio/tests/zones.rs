//! Strided zones from the job file on: `zonemode`, `zonesize`, `zonerange` and `zoneskip`
//! as fio reads them, the one-line messages for values fio refuses, and the offsets the
//! pattern walks (BFQ's interleaved readers among them).

use ioslice_fio::jobfile::{check_supported, parse_str, ParseOptions};
use ioslice_fio::pattern::{plan_files, IoPattern, IoUnit};
use ioslice_fio::{Extent, JobFile, JobSpec, StridedZones, ZoneMode};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;

const INTERLEAVED: &str = "\
[global]
rw=read
bs=4k
zonemode=strided
zonesize=16k
zoneskip=48k
size=64m
[reader]
numjobs=4
offset_increment=16k
";

fn parse(text: &str) -> JobFile {
    parse_str(text, "jobs.fio", &ParseOptions::default()).expect("parses")
}

fn error(text: &str) -> String {
    parse_str(text, "jobs.fio", &ParseOptions::default())
        .expect_err("refused")
        .to_string()
}

fn units(spec: &JobSpec, clone: u32, limit: usize) -> Vec<IoUnit> {
    let files = plan_files(spec, clone, 1 << 30).expect("files");
    let mut pattern = IoPattern::new(spec, &files, clone).expect("pattern");
    let mut rng = StdRng::seed_from_u64(5);
    std::iter::from_fn(|| pattern.next(&mut rng))
        .take(limit)
        .collect()
}

#[test]
fn the_interleaved_readers_file_parses_and_walks_its_zones() {
    let file = parse(INTERLEAVED);
    check_supported(&file).expect("runnable");
    let job = &file.jobs[0];
    assert_eq!(job.zone_mode, ZoneMode::Strided);
    assert_eq!(
        job.strided_zones(),
        Some(StridedZones {
            size: 16384,
            range: 16384,
            skip: 49152
        })
    );
    assert_eq!((job.numjobs, job.offset_increment), (4, 16384));
    for clone in 0..4u64 {
        let got: Vec<u64> = units(job, clone as u32, 6)
            .iter()
            .map(|u| u.offset)
            .collect();
        let base = clone * 16384;
        let k = 4096;
        let want = [
            base,
            base + k,
            base + 2 * k,
            base + 3 * k,
            base + 65536,
            base + 65536 + k,
        ];
        assert_eq!(got, want, "reader {clone}");
    }
}

#[test]
fn zonesize_alone_means_strided_and_zonerange_defaults_to_it() {
    let job = &parse("[j]\nsize=1m\nzonesize=64k\nzoneskip=1m\n").jobs[0];
    assert_eq!(job.zone_mode, ZoneMode::Unspecified);
    assert_eq!(
        job.strided_zones(),
        Some(StridedZones {
            size: 65536,
            range: 65536,
            skip: 1 << 20
        })
    );
    let job = &parse("[j]\nsize=1m\nzonesize=8k\nzonerange=32k\n").jobs[0];
    assert_eq!(
        job.strided_zones().map(|z| (z.size, z.range)),
        Some((8192, 32768))
    );
    let job = &parse("[j]\nsize=1m\nzonemode=none\n").jobs[0];
    assert_eq!((job.zone_mode, job.strided_zones()), (ZoneMode::None, None));
    let job = &parse("[global]\nzonesize=16k\n[j]\nsize=1m\nzonesize=0\n").jobs[0];
    assert_eq!(
        job.strided_zones(),
        None,
        "zonesize=0 without zonemode: no zones"
    );
    let job = &parse("[j]\nsize=1m\nzonecapacity=8k\n");
    assert!(
        job.warnings.is_empty(),
        "zonecapacity is known: {:?}",
        job.warnings
    );
}

#[test]
fn zbd_runs_with_sizes_and_offsets_in_zones() {
    let file = parse(
        "[global]\nzonemode=zbd\nzonesize=256m\noffset=524z\ndirect=1\n[j]\nrw=write\nsize=4z\nmax_open_zones=8\n",
    );
    let job = &file.jobs[0];
    assert_eq!(job.zone_mode, ZoneMode::Zbd);
    assert_eq!(job.strided_zones(), None);
    assert_eq!(job.offset, Extent::Bytes(524 << 28));
    assert_eq!(job.size, Some(Extent::Bytes(4 << 28)));
    assert_eq!(job.max_open_zones, 8);
    assert!(check_supported(&file).is_ok());
}

#[test]
fn zbd_refuses_what_it_cannot_run_naming_file_and_line() {
    assert_eq!(
        error("[j]\nsize=4z\n"),
        "jobs.fio:2: size=4z is in zones but the job has no zonesize: expected a zonesize= such as 256m"
    );
    assert_eq!(
        error("[j]\noffset=1.5z\n"),
        "jobs.fio:2: invalid value '1.5z' for offset: expected a whole number of zones such as 4z"
    );
    let refused = |text: &str| {
        check_supported(&parse(text))
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        refused("[j]\nzonemode=zbd\nzonesize=256m\nrw=write\nsize=1z\n"),
        "jobs.fio:2: zonemode=zbd writes need direct=1, as fio requires for zoned block devices"
    );
    assert!(
        check_supported(&parse(
            "[j]\nzonemode=zbd\nzonesize=256m\nrw=randtrim\nsize=1z\ndirect=1\n"
        ))
        .is_ok(),
        "trims in zone mode are zone resets"
    );
}

#[test]
fn bad_zone_values_get_one_line_messages() {
    assert_eq!(
        error("[j]\nzonemode=stripes\n"),
        "jobs.fio:2: invalid value 'stripes' for zonemode: expected one of none, strided, zbd"
    );
    assert_eq!(
        error("[j]\nzonesize=-16k\n"),
        "jobs.fio:2: invalid value '-16k' for zonesize: expected a size such as 16k or 256m"
    );
    assert_eq!(
        error("[j]\nsize=1m\nzoneskip=far\n"),
        "jobs.fio:3: invalid value 'far' for zoneskip: expected a size such as 16k or 256m"
    );
    assert_eq!(
        error("[j]\nzonerange=2z\n"),
        "jobs.fio:2: invalid value '2z' for zonerange: expected a size such as 16k or 256m (zone units, 'z', are not supported)"
    );
    assert_eq!(
        error("[global]\nzonemode=strided\n[j]\nsize=1m\nzonesize=0\n"),
        "jobs.fio:5: zonesize=0 with zonemode=strided: expected a zone size above 0 such as 16k"
    );
    assert_eq!(
        error("[j]\nsize=1m\nzonemode=strided\n"),
        "jobs.fio:3: zonemode=strided without zonesize: expected a zonesize= such as 16k"
    );
    assert_eq!(
        error("[global]\nzonesize=16k\n[j]\nzonemode=none\n"),
        "jobs.fio:4: zonemode=none cannot be used with zonesize (set at jobs.fio:2): expected zonemode=strided, or no zonesize"
    );
    for message in [
        error("[j]\nzonesize=-16k\n"),
        error("[j]\nsize=1m\nzonemode=strided\n"),
    ] {
        assert!(!message.contains('\n'), "{message}");
    }
}

#[test]
fn zones_with_several_files_warn_that_fio_ignores_them() {
    let file = parse("[j]\nsize=1m\nnrfiles=2\n\nzonesize=16k\n");
    assert_eq!(file.warnings.len(), 1);
    let warning = &file.warnings[0];
    assert_eq!(warning.origin.line, 5);
    assert_eq!(
        warning.message,
        "job j: strided zones are ignored with 2 files, as fio ignores them with more than one"
    );
}

#[test]
fn random_readers_stay_in_their_zones() {
    let text = INTERLEAVED.replace("rw=read", "rw=randread");
    let file = parse(&text);
    let job = &file.jobs[0];
    for clone in 0..4u64 {
        for unit in units(job, clone as u32, 2000) {
            let rel = unit.offset - clone * 16384;
            assert!(
                rel % 65536 + unit.length <= 16384,
                "reader {clone}: {unit:?} outside its zones"
            );
        }
    }
}

/// Skewed and repeating random offsets are drawn over each zone's range, so they stay in it.
#[test]
fn skewed_random_readers_stay_in_their_zones() {
    for option in [
        "norandommap",
        "random_distribution=zipf:1.2",
        "random_distribution=pareto:0.9",
        "random_distribution=normal:10",
        "random_distribution=zoned:80/25:20/75",
    ] {
        let text = INTERLEAVED.replace("rw=read", &format!("rw=randread\n{option}"));
        let file = parse(&text);
        let job = &file.jobs[0];
        let units = units(job, 1, 2000);
        assert_eq!(units.len(), 2000, "{option}");
        for unit in units {
            let rel = unit.offset - 16384;
            assert!(
                rel % 65536 + unit.length <= 16384,
                "{option}: {unit:?} outside its zones"
            );
        }
    }
}

proptest! {
    /// Whatever the zone geometry, offset and block size: nothing panics, each I/O starts
    /// inside a zone (the first at the region's start, then every range + skip bytes),
    /// random I/O ends inside it too, and the job issues its size unless a zone cut by the
    /// end of the file ends it early (as fio does).
    #[test]
    fn zoned_io_starts_in_a_zone(
        zone_size in 1u64..64,
        zone_range in 0u64..64,
        zone_skip in 0u64..128,
        offset in 0u64..64,
        blocks in 1u64..8,
        size in 1u64..512,
        random in any::<bool>(),
        modifier in -2i64..3,
    ) {
        let k = 512;
        let bs = blocks * k;
        let rw = match (random, modifier) {
            (true, m) if m > 0 => format!("randread:{m}"),
            (true, _) => "randread".to_string(),
            (false, 0) => "read".to_string(),
            (false, m) => format!("read:{}", m * 512),
        };
        let text = format!(
            "[j]\nrw={rw}\nbs={bs}\nsize={}\noffset={}\nzonesize={}\nzonerange={}\nzoneskip={}\n",
            size * k + bs,
            offset * k,
            zone_size * k,
            zone_range * k,
            zone_skip * k
        );
        let file = parse(&text);
        let job = &file.jobs[0];
        let zones = job.strided_zones().expect("strided");
        let start = offset * k - (offset * k) % bs;
        let all = units(job, 0, 5000);
        let stride = zones.range + zones.skip;
        for unit in &all {
            prop_assert!(unit.length > 0);
            let rel = unit.offset - start;
            prop_assert!(rel % stride < zones.range, "{unit:?} starts outside a zone of {zones:?}");
            if random && modifier <= 0 {
                prop_assert!(rel % stride + unit.length <= zones.range, "{unit:?} leaves its zone");
            }
        }
        let bytes: u64 = all.iter().map(|u| u.length).sum();
        prop_assert!(bytes <= size * k + bs);
    }
}
