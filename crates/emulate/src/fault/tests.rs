//! The fault-plan parser and the fault decisions, with a fake clock.

use ioslice_core::Direction;

use super::*;

const MS: Nanos = 1_000_000;
const S: Nanos = 1_000_000_000;

fn plan(text: &str) -> FaultPlan {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn read(sector: u64, sectors: u32) -> CommandInfo {
    CommandInfo {
        direction: Direction::Read,
        sector,
        sectors,
    }
}

fn write(sector: u64, sectors: u32) -> CommandInfo {
    CommandInfo {
        direction: Direction::Write,
        ..read(sector, sectors)
    }
}

#[test]
fn every_kind_parses_with_its_selectors() {
    let parsed = plan(
        "eio:sectors=2048..4096,dir=write; eio:every=100; eio:p=0.25; torn:sectors=0..8,keep=2; \
         slow:from=2s,for=1s,add=200ms; stall:at=5s,for=40s; stall:command=500,for=1.5s",
    );
    let kinds: Vec<&FaultKind> = parsed.faults.iter().map(|f| &f.kind).collect();
    assert_eq!(
        kinds,
        [
            &FaultKind::Eio,
            &FaultKind::Eio,
            &FaultKind::Eio,
            &FaultKind::Torn { keep: Some(2) },
            &FaultKind::Slow { add: 200 * MS },
            &FaultKind::Stall {
                start: StallStart::At(5 * S),
                length: 40 * S
            },
            &FaultKind::Stall {
                start: StallStart::Command(500),
                length: 1_500 * MS
            },
        ]
    );
    let first = &parsed.faults[0];
    assert_eq!(first.text, "eio:sectors=2048..4096,dir=write");
    assert_eq!(first.select.sectors, Some((2048, 4096)));
    assert_eq!(first.select.direction, Some(Direction::Write));
    assert_eq!(parsed.faults[1].select.every, Some(100));
    assert_eq!(parsed.faults[2].select.probability, Some(0.25));
    assert_eq!(parsed.faults[3].select.direction, Some(Direction::Write));
    assert_eq!(parsed.faults[4].select.window, Some((2 * S, 3 * S)));
    assert_eq!(
        plan("eio:from=1us").faults[0].select.window,
        Some((1_000, u64::MAX))
    );
    assert_eq!(plan("eio").faults[0].select, Selector::default());
}

/// A plan prints as its faults, `;`-separated, and that text parses back to the plan.
#[test]
fn a_plan_parses_back_from_its_text() {
    let parsed = plan(
        " eio:sectors=2048..4096,dir=write;eio:p=0.25,; torn:keep=2; slow:add=1m,for=1h; \
         stall:command=500,for=1.5s",
    );
    let text = parsed.to_string();
    assert_eq!(
        text,
        "eio:sectors=2048..4096,dir=write; eio:p=0.25,; torn:keep=2; slow:add=1m,for=1h; \
         stall:command=500,for=1.5s"
    );
    assert_eq!(plan(&text), parsed);
    assert_eq!(
        parsed.faults[3].kind,
        FaultKind::Slow { add: 60 * S },
        "every unit of the shared duration reader"
    );
}

#[test]
fn bad_plans_are_refused_with_one_line_naming_the_value_and_what_is_expected() {
    let cases = [
        ("", "no fault"),
        (
            "boom:every=2",
            "unknown kind 'boom': expected eio, torn, slow or stall",
        ),
        (
            "eio:every=0",
            "every=0: expected a whole number of at least 1",
        ),
        ("eio:every", "bad part 'every': expected KEY=VALUE"),
        (
            "eio:sectors=9..3",
            "sectors=9..3: expected START..END with START < END",
        ),
        ("eio:sectors=9", "sectors=9: expected START..END"),
        ("eio:dir=up", "dir=up: expected read, write or any"),
        ("eio:p=1.5", "p=1.5: expected a probability from 0 to 1"),
        (
            "eio:keep=2",
            "unknown key 'keep': expected one of dir, sectors",
        ),
        ("slow:from=2s", "slow needs add=DURATION"),
        (
            "slow:add=5",
            "add=5: expected a time with a unit (ns, us, ms, s, m, h or d)",
        ),
        ("slow:add=5y", "add=5y: expected a time with a unit"),
        ("eio:every=2,every=3", "setting 'every' is given twice"),
        (":every=2", "unknown kind ''"),
        ("torn:dir=read", "dir=read: a torn write tears writes"),
        (
            "torn:keep=x",
            "keep=x: expected a number of 512-byte sectors",
        ),
        ("stall:for=1s", "a stall needs at=TIME or command=N"),
        ("stall:at=1s", "a stall needs for=DURATION"),
        (
            "stall:at=1s,for=1s,dir=read",
            "unknown key 'dir': expected one of at, command, for",
        ),
    ];
    for (text, expected) in cases {
        let message = text.parse::<FaultPlan>().expect_err(text).to_string();
        assert!(message.contains(expected), "{text}: {message}");
        assert!(!message.contains('\n'), "{message}");
    }
}

#[test]
fn a_sector_range_fails_the_commands_overlapping_it_in_the_direction_given() {
    let mut faults = Faults::new(plan("eio:sectors=100..108,dir=write"), 1);
    let counts = FaultCounts::new(1);
    let fates: Vec<Fate> = [
        write(92, 8),  // ends at 100: outside
        write(96, 8),  // overlaps 100..104
        write(107, 1), // the last sector
        write(108, 8), // just after
        read(100, 8),  // a read
    ]
    .into_iter()
    .map(|c| faults.decide(c, 0, &counts).fate)
    .collect();
    assert_eq!(
        fates,
        [
            Fate::Served,
            Fate::Failed,
            Fate::Failed,
            Fate::Served,
            Fate::Served
        ]
    );
    assert_eq!(counts.values(), [2]);
}

#[test]
fn every_nth_counts_the_commands_its_other_selectors_match() {
    let mut faults = Faults::new(plan("eio:every=3,dir=read"), 1);
    let counts = FaultCounts::new(1);
    let failed: Vec<usize> = (0..12u64)
        .filter(|&i| {
            let command = if i % 2 == 0 { read(i, 8) } else { write(i, 8) };
            faults.decide(command, 0, &counts).fails()
        })
        .collect::<Vec<u64>>()
        .into_iter()
        .map(|i| i as usize)
        .collect();
    // Reads are commands 0, 2, 4, ...: every third read is 4, 10.
    assert_eq!(failed, [4, 10]);
    assert_eq!(counts.values(), [2]);
}

#[test]
fn probabilities_come_from_the_seed_alone() {
    let run = |seed: u64| {
        let mut faults = Faults::new(plan("slow:add=1ms; eio:p=0.3"), seed);
        let counts = FaultCounts::new(2);
        let failed: Vec<u64> = (1..=1000u64)
            .filter(|&n| faults.decide(read(n * 8, 8), n, &counts).fails())
            .collect();
        (failed, counts.values())
    };
    let (first, counts) = run(7);
    assert_eq!(run(7).0, first, "same seed, same faults");
    assert_ne!(run(8).0, first, "another seed, other faults");
    assert_eq!(counts, [1000, first.len() as u64]);
    // 0.3 of 1000, within four standard deviations (14.5).
    assert!((242..=358).contains(&first.len()), "{}", first.len());
    // Fault 1 matches every command: its Nth draw is the Nth command's, whatever the clock
    // or the other faults say.
    assert!(first.iter().all(|&n| draw(7, 1, n) < 0.3));
    assert_eq!(draw(7, 1, 1), draw(7, 1, 1));
}

#[test]
fn a_torn_write_keeps_a_prefix_and_fails() {
    let mut faults = Faults::new(plan("torn:keep=2; torn:sectors=1000..1001"), 1);
    let counts = FaultCounts::new(2);
    let mut decide = |c| faults.decide(c, 0, &counts).fate;
    assert_eq!(decide(write(0, 8)), Fate::Torn { keep: 2 });
    // Never all of it: a 2-sector write keeps 1, a 1-sector write none.
    assert_eq!(decide(write(0, 2)), Fate::Torn { keep: 1 });
    assert_eq!(decide(write(0, 1)), Fate::Torn { keep: 0 });
    // Both tear: the shorter prefix (half of 16 is 8, the first's 2 is less).
    assert_eq!(decide(write(992, 16)), Fate::Torn { keep: 2 });
    assert_eq!(decide(read(0, 8)), Fate::Served);
    assert_eq!(counts.values(), [4, 1]);
    // An eio of the same command wins: nothing is written.
    let mut faults = Faults::new(plan("eio; torn"), 1);
    assert_eq!(faults.decide(write(0, 8), 0, &counts).fate, Fate::Failed);
}

#[test]
fn a_latency_spike_covers_its_window_and_range() {
    let mut faults = Faults::new(
        plan("slow:from=2s,for=1s,add=200ms; slow:sectors=0..64,add=10ms"),
        1,
    );
    let counts = FaultCounts::new(2);
    let mut extra = |c, at| faults.decide(c, at, &counts).extra;
    assert_eq!(extra(read(64, 8), 2 * S - 1), 0);
    assert_eq!(extra(read(64, 8), 2 * S), 200 * MS);
    assert_eq!(extra(read(0, 8), 3 * S - 1), 210 * MS);
    assert_eq!(extra(read(0, 8), 3 * S), 10 * MS);
    assert_eq!(counts.values(), [2, 2]);
}

#[test]
fn stalls_hold_replies_until_they_end() {
    let parsed = plan("stall:at=1s,for=2s; stall:command=3,for=500ms; stall:at=2900ms,for=1s");
    let mut faults = Faults::new(parsed.clone(), 1);
    let counts = FaultCounts::new(3);
    let mut stalls = Stalls::new(timed_stalls(&parsed));
    assert_eq!(stalls.release(S - 1, 0), (S - 1, None), "before the stall");
    // Overlapping stalls chain: held from 1 s until 3.9 s.
    assert_eq!(stalls.release(S, 0), (3_900 * MS, Some(0)));
    assert_eq!(stalls.release(S - 10, 20), (3_900 * MS, Some(0)));
    assert_eq!(stalls.release(3_900 * MS, 0), (3_900 * MS, None));
    // The third command's arrival begins a stall of its own.
    for (n, at) in [(1, 5 * S), (2, 5 * S), (3, 6 * S)] {
        let verdict = faults.decide(read(0, 8), at, &counts);
        assert_eq!(verdict.stall, (n == 3).then_some((1, 6 * S, 6_500 * MS)));
        if let Some(window) = verdict.stall {
            stalls.add(window);
        }
    }
    assert_eq!(stalls.release(6_400 * MS, 0), (6_500 * MS, Some(1)));
    assert_eq!(stalls.held(6_500 * MS), None);
    assert_eq!(
        counts.values(),
        [0, 0, 0],
        "stalls count the replies they hold"
    );
}
