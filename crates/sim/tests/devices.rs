//! Device models against the figures they are built to reproduce: the seek curve's anchors,
//! QD1 random-read IOPS of a 7200 rpm disk, zone media rate, NCQ gains, write-back
//! caching, RAID 5 write cost; and the contract every model keeps: each command completes
//! exactly once, never before it was submitted, deterministically.

use ioslice_core::{Direction, Nanos};
use ioslice_sim::device::hdd::seek::SeekCurve;
use ioslice_sim::device::null::NullDevice;
use ioslice_sim::device::raid::{Raid, RaidConfig, RaidLevel};
use ioslice_sim::device::{Command, DeviceModel};
use ioslice_sim::preset::{build, presets, DeviceError, DeviceSpec};
use proptest::prelude::*;

fn device(spec: &str) -> Box<dyn DeviceModel> {
    let spec: DeviceSpec = spec.parse().expect("test specs are well formed");
    build(&spec).expect("test specs name valid devices")
}

/// A small deterministic generator (xorshift64*), so tests need no RNG crate.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound.max(1)
    }
}

fn command(tag: u64, direction: Direction, sector: u64, sectors: u32) -> Command {
    Command {
        tag,
        direction,
        sector,
        sectors,
        fua: false,
    }
}

/// Keep `depth` commands in flight until `count` have completed. Returns each command's
/// (tag, submit time, completion time) in completion order.
fn closed_loop(
    dev: &mut dyn DeviceModel,
    depth: usize,
    count: u64,
    mut next: impl FnMut(u64) -> Command,
) -> Vec<(u64, Nanos, Nanos)> {
    let mut now = 0;
    let mut issued = 0;
    let mut submitted = std::collections::HashMap::new();
    let mut done = Vec::new();
    let mut finished = Vec::new();
    while (finished.len() as u64) < count {
        while issued < count && dev.in_flight() < depth {
            let command = next(issued);
            submitted.insert(command.tag, now);
            dev.submit(command, now);
            issued += 1;
        }
        now = dev.next_event().expect("commands in flight").max(now);
        dev.advance(now, &mut done);
        for tag in done.drain(..) {
            finished.push((tag, submitted[&tag], now));
        }
    }
    finished
}

fn iops(finished: &[(u64, Nanos, Nanos)]) -> f64 {
    let end = finished.iter().map(|f| f.2).max().unwrap_or(1);
    finished.len() as f64 / (end as f64 * 1e-9)
}

fn random_reads(capacity: u64, sectors: u32, seed: u64) -> impl FnMut(u64) -> Command {
    let mut rng = Lcg(seed);
    move |tag| {
        let sector = rng.below(capacity / u64::from(sectors)) * u64::from(sectors);
        command(tag, Direction::Read, sector, sectors)
    }
}

#[test]
fn seek_curve_is_monotone_through_its_anchors() {
    let cylinders = 120_000;
    let curve =
        SeekCurve::new(0.8, 8.5, 18.0, cylinders).expect("sata-7200 anchors are consistent");
    assert_eq!(curve.time(1), 800_000);
    assert_eq!(
        curve.time(SeekCurve::average_distance(cylinders)),
        8_500_000
    );
    assert_eq!(curve.time(cylinders), 18_000_000);
    let mut previous = 0;
    for distance in (0..=cylinders).step_by(7) {
        let time = curve.time(distance);
        assert!(time >= previous, "seek time falls at {distance} cylinders");
        previous = time;
    }
    // The square-root regime: a seek over 1 % of the stroke costs several times its linear share.
    let linear_share = (18_000_000 - 800_000) / 100;
    assert!(curve.time(cylinders / 100) - 800_000 > 3 * linear_share);
}

#[test]
fn seek_curve_follows_the_disksim_st32171w_table() {
    // DiskSim's valid/barracuda.seek (Seagate ST32171W): 4,986 cylinders; the average anchor
    // at one third of the stroke is interpolated from the table's 1,000 and 2,000 cylinder rows.
    let average = 8.11 + (1662.0 - 1000.0) / 1000.0 * (10.09 - 8.11);
    let curve = SeekCurve::new(1.943, average, 16.679, 4986).expect("consistent anchors");
    for (distance, table_ms) in [
        (1, 1.943),
        (10, 2.35),
        (100, 4.16),
        (1000, 8.11),
        (2000, 10.09),
        (4986, 16.679),
    ] {
        let ms = curve.time(distance) as f64 / 1e6;
        assert!(
            (ms / table_ms - 1.0).abs() < 0.2,
            "{distance} cylinders: {ms:.2} ms, table {table_ms} ms"
        );
    }
}

#[test]
fn qd1_random_4k_reads_match_seek_plus_half_rotation() {
    let mut dev = device("sim:sata-7200:ncq=1");
    let capacity = dev.info().capacity_sectors;
    let finished = closed_loop(dev.as_mut(), 1, 3000, random_reads(capacity, 8, 7));
    let iops = iops(&finished);
    eprintln!("sata-7200 QD1 random 4 KiB reads: {iops:.1} IOPS");
    // One average seek, half a turn at 7200 rpm and the command overhead per request:
    // 1/(seek + 4.17 ms + overhead) ≈ 75–80 on a full-disk random load.
    assert!(
        (72.0..=86.0).contains(&iops),
        "QD1 random 4 KiB reads: {iops:.1} IOPS"
    );
}

#[test]
fn sequential_reads_at_the_outer_edge_run_at_the_outer_zone_rate() {
    for (spec, outer_mbps) in [("sim:sata-7200", 200.0), ("sim:ide-2004", 58.0)] {
        let mut dev = device(spec);
        let finished = closed_loop(dev.as_mut(), 1, 2000, |tag| {
            command(tag, Direction::Read, tag * 256, 256)
        });
        let mbps = iops(&finished) * 256.0 * 512.0 / 1e6;
        eprintln!("{spec}: sequential 128 KiB reads from LBA 0: {mbps:.1} MB/s");
        assert!(
            (mbps / outer_mbps - 1.0).abs() < 0.05,
            "{spec}: {mbps:.1} MB/s, outer zone {outer_mbps}"
        );
    }
}

#[test]
fn ncq_with_sptf_beats_no_queueing_on_random_reads() {
    let mut none = device("sim:sata-7200:ncq=1");
    let mut ncq = device("sim:sata-7200");
    let capacity = ncq.info().capacity_sectors;
    let one = iops(&closed_loop(
        none.as_mut(),
        1,
        2000,
        random_reads(capacity, 8, 3),
    ));
    let deep = iops(&closed_loop(
        ncq.as_mut(),
        31,
        4000,
        random_reads(capacity, 8, 3),
    ));
    eprintln!("sata-7200 random 4 KiB reads: ncq=1 {one:.0} IOPS, ncq=31 {deep:.0} IOPS");
    assert!(
        deep > 2.0 * one,
        "NCQ 31: {deep:.0} IOPS, no queueing: {one:.0} IOPS"
    );
}

#[test]
fn write_cache_makes_small_writes_fast_until_it_fills() {
    let mut dev = device("sim:sata-7200:ncq=1,wcache_mib=4");
    let capacity = dev.info().capacity_sectors;
    let mut rng = Lcg(11);
    let finished = closed_loop(dev.as_mut(), 1, 6000, |tag| {
        command(tag, Direction::Write, rng.below(capacity / 8) * 8, 8)
    });
    let mean_ms = |slice: &[(u64, Nanos, Nanos)]| {
        slice.iter().map(|f| (f.2 - f.1) as f64).sum::<f64>() / slice.len() as f64 / 1e6
    };
    let filling = mean_ms(&finished[..500]);
    let full = mean_ms(&finished[3000..]);
    assert!(filling < 0.3, "writes into an empty cache: {filling:.3} ms");
    assert!(full > 2.0, "writes into a full cache: {full:.3} ms");

    let mut through = device("sim:sata-7200:ncq=1,wce=off");
    let mut rng = Lcg(11);
    let direct = closed_loop(through.as_mut(), 1, 500, |tag| {
        command(tag, Direction::Write, rng.below(capacity / 8) * 8, 8)
    });
    assert!(
        mean_ms(&direct) > 8.0,
        "write-through: {:.3} ms",
        mean_ms(&direct)
    );
}

#[test]
fn fua_writes_go_to_the_media() {
    let mut dev = device("sim:sata-7200:ncq=1");
    let capacity = dev.info().capacity_sectors;
    let mut rng = Lcg(23);
    let finished = closed_loop(dev.as_mut(), 1, 200, |tag| Command {
        tag,
        direction: Direction::Write,
        sector: rng.below(capacity / 8) * 8,
        sectors: 8,
        fua: true,
    });
    let mean = finished.iter().map(|f| f.2 - f.1).sum::<u64>() / 200;
    assert!(mean > 8_000_000, "FUA writes averaged {mean} ns");
}

fn null_members(count: usize) -> Vec<Box<dyn DeviceModel>> {
    (0..count)
        .map(|i| {
            Box::new(NullDevice::new(format!("m{i}"), 1000, 4, 1 << 30)) as Box<dyn DeviceModel>
        })
        .collect()
}

fn raid(level: RaidLevel, members: usize) -> Raid {
    let config = RaidConfig {
        name: "array".into(),
        level,
        chunk_sectors: 128,
        queue_depth: 64,
    };
    Raid::new(config, null_members(members)).expect("valid array")
}

#[test]
fn raid5_small_write_costs_four_member_ios_and_full_stripe_none_read() {
    let mut array = raid(RaidLevel::Raid5, 12);
    let mut rng = Lcg(5);
    let capacity = array.info().capacity_sectors;
    closed_loop(&mut array, 8, 1000, |tag| {
        command(tag, Direction::Write, rng.below(capacity / 8) * 8, 8)
    });
    assert_eq!(array.member_commands(), 4000);

    let mut array = raid(RaidLevel::Raid5, 12);
    closed_loop(&mut array, 1, 10, |tag| {
        command(tag, Direction::Write, tag * 11 * 128, 11 * 128)
    });
    assert_eq!(
        array.member_commands(),
        10 * 12,
        "full-stripe writes: 11 data + 1 parity"
    );

    let mut array = raid(RaidLevel::Raid0, 4);
    closed_loop(&mut array, 1, 10, |tag| {
        command(tag, Direction::Read, tag * 512 + 64, 128)
    });
    assert_eq!(
        array.member_commands(),
        20,
        "a chunk-sized unaligned read spans two members"
    );
}

#[test]
fn raid5_small_writes_are_slower_than_reads_on_disks() {
    let mut array = device("sim:raid5-12");
    let capacity = array.info().capacity_sectors;
    let reads = iops(&closed_loop(
        array.as_mut(),
        32,
        2000,
        random_reads(capacity, 8, 9),
    ));
    let mut array = device("sim:raid5-12:wce=off");
    let mut rng = Lcg(9);
    let writes = iops(&closed_loop(array.as_mut(), 32, 2000, |tag| {
        command(tag, Direction::Write, rng.below(capacity / 8) * 8, 8)
    }));
    eprintln!("raid5-12 random 4 KiB at QD32: reads {reads:.0} IOPS, writes {writes:.0} IOPS");
    assert!(
        writes < reads / 2.5,
        "RAID 5 random 4 KiB: reads {reads:.0} IOPS, writes {writes:.0} IOPS"
    );
}

fn mixed_workload(dev: &mut dyn DeviceModel, seed: u64) -> Vec<(u64, Nanos, Nanos)> {
    let capacity = dev.info().capacity_sectors;
    let depth = dev.info().queue_depth.min(8);
    let mut rng = Lcg(seed);
    closed_loop(dev, depth, 3000, |tag| {
        let direction = if rng.below(3) == 0 {
            Direction::Write
        } else {
            Direction::Read
        };
        let sectors = [8, 16, 128, 256][rng.below(4) as usize];
        let sector = if rng.below(2) == 0 {
            tag * 8
        } else {
            rng.below(capacity / 256) * 256
        };
        Command {
            tag,
            direction,
            sector,
            sectors,
            fua: rng.below(10) == 0,
        }
    })
}

#[test]
fn every_preset_is_deterministic() {
    for preset in presets() {
        let spec = format!("sim:{}", preset.name);
        let first = mixed_workload(device(&spec).as_mut(), 17);
        let second = mixed_workload(device(&spec).as_mut(), 17);
        assert_eq!(first, second, "{spec} differs between two identical runs");
    }
}

fn random_commands() -> impl Strategy<Value = Vec<(bool, u64, u32, bool, u64)>> {
    prop::collection::vec(
        (
            any::<bool>(),
            0u64..1_000_000,
            0u32..600,
            any::<bool>(),
            0u64..2_000_000,
        ),
        1..120,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_command_completes_exactly_once(commands in random_commands(), preset in 0usize..6) {
        let name = presets()[preset].name;
        let mut dev = device(&format!("sim:{name}:capacity_gib=1"));
        let depth = dev.info().queue_depth;
        let mut now = 0;
        let mut submitted_at = std::collections::HashMap::new();
        let mut done = Vec::new();
        let mut pending = commands.iter().enumerate();
        let mut next = pending.next();
        loop {
            while let Some((tag, &(write, sector, sectors, fua, gap))) = next {
                if dev.in_flight() >= depth {
                    break;
                }
                let direction = if write { Direction::Write } else { Direction::Read };
                let tag = tag as u64;
                dev.submit(Command { tag, direction, sector: sector * 8 % 2_000_000, sectors, fua }, now);
                submitted_at.insert(tag, now);
                now += gap % 3 * gap / 4;
                next = pending.next();
            }
            let Some(at) = dev.next_event() else { break };
            prop_assert!(at >= now || dev.in_flight() > 0);
            now = now.max(at);
            let before = done.len();
            dev.advance(now, &mut done);
            for tag in &done[before..] {
                prop_assert!(submitted_at[tag] <= now);
            }
        }
        prop_assert!(next.is_none(), "device stalled with commands left");
        prop_assert_eq!(dev.in_flight(), 0);
        let mut tags = done.clone();
        tags.sort_unstable();
        prop_assert_eq!(tags, (0..commands.len() as u64).collect::<Vec<_>>());
    }
}

#[test]
fn specs_parse_and_print_back() {
    let spec: DeviceSpec = "sim:sata-7200:ncq=1,rpm=5400".parse().expect("valid");
    assert_eq!(spec.preset, "sata-7200");
    assert_eq!(
        spec.overrides,
        vec![("ncq".into(), "1".into()), ("rpm".into(), "5400".into())]
    );
    assert_eq!(spec.to_string(), "sim:sata-7200:ncq=1,rpm=5400");
    let dev = build(&spec).expect("valid device");
    assert_eq!(dev.info().name, "sim:sata-7200:ncq=1,rpm=5400");
    assert_eq!(dev.info().queue_depth, 1);
    assert!(dev.info().rotational);
}

/// Every preset, with every parameter set to its default, prints as text that parses back.
#[test]
fn every_preset_spec_parses_back_from_its_text() {
    for preset in presets() {
        let spec = DeviceSpec {
            preset: preset.name.to_string(),
            overrides: preset
                .params
                .iter()
                .map(|p| (p.name.to_string(), p.value.clone()))
                .collect(),
        };
        let text = spec.to_string();
        assert_eq!(text.parse::<DeviceSpec>(), Ok(spec.clone()), "{text}");
        build(&spec).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    assert_eq!(
        "sim:sata-7200:ncq=1,ncq=4"
            .parse::<DeviceSpec>()
            .unwrap_err()
            .to_string(),
        "bad device `sim:sata-7200:ncq=1,ncq=4`: setting 'ncq' is given twice: expected sim:PRESET[:key=value,...]"
    );
}

#[test]
fn bad_specs_say_what_is_valid() {
    let error = |text: &str| match text.parse::<DeviceSpec>() {
        Ok(spec) => build(&spec).err().expect("bad spec"),
        Err(e) => e,
    };
    for text in [
        "sata-7200",
        "sim:",
        "sim:sata-7200:ncq",
        "sim:sata-7200:=1",
        "sim:sata-7200:ncq=1,",
    ] {
        assert!(matches!(error(text), DeviceError::Syntax { .. }), "{text}");
        assert!(error(text)
            .to_string()
            .contains("expected sim:PRESET[:key=value,...]"));
    }
    let message = error("sim:sata-7300").to_string();
    assert!(
        message.contains("`sata-7300`")
            && message.contains("sata-7200, sata-2009, ide-2004, raid5-12, eva-4400"),
        "{message}"
    );
    let message = error("sim:ssd:rpm=7200").to_string();
    assert!(
        message.contains("`rpm`") && message.contains("channels"),
        "{message}"
    );
    let message = error("sim:sata-7200:ncq=abc").to_string();
    assert!(
        message.contains("`abc`") && message.contains("`ncq`") && message.contains("1 to 256"),
        "{message}"
    );
    let message = error("sim:ide-2004:wce=maybe").to_string();
    assert!(message.contains("on or off"), "{message}");
    for value in ["0stripes", "65stripes", "stripes", "wide"] {
        let message = error(&format!("sim:raid5-12:ctrl_readahead={value}")).to_string();
        assert!(
            message.contains(&format!("`{value}`"))
                && message.contains("stripe, Nstripes (N from 1 to 64), chunk or off"),
            "{message}"
        );
    }
    let message = error("sim:raid5-12:ctrl_link_mbps=0").to_string();
    assert!(message.contains("`ctrl_link_mbps`"), "{message}");
    let message = error("sim:sata-7200:seek_full_ms=9").to_string();
    assert!(
        matches!(
            error("sim:sata-7200:seek_full_ms=9"),
            DeviceError::Inconsistent { .. }
        ),
        "{message}"
    );
    assert!(message.contains("seek"), "{message}");
}

#[test]
fn every_parameter_is_documented_and_overridable() {
    for preset in presets() {
        assert!(!preset.summary.is_empty());
        let overrides: Vec<_> = preset
            .params
            .iter()
            .map(|p| (p.name.to_string(), p.value.clone()))
            .collect();
        for param in &preset.params {
            assert!(
                !param.source.is_empty() && !param.unit.is_empty(),
                "{}.{}",
                preset.name,
                param.name
            );
        }
        let spec = DeviceSpec {
            preset: preset.name.to_string(),
            overrides,
        };
        let dev = build(&spec).unwrap_or_else(|e| panic!("{}: {e}", preset.name));
        assert!(dev.info().capacity_sectors > 0);
    }
}
