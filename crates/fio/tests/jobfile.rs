//! Behaviour of the job-file parser: sections and globals, includes, variables, value
//! syntax, the option table, and messages that name file and line.

use std::collections::BTreeMap;

use ioslice_core::{IoPriority, PriorityClass};
use ioslice_fio::jobfile::{
    check_discard, check_supported, parse_file, parse_str, JobFileError, ParseOptions,
};
use ioslice_fio::{BlockSize, Extent, IoEngine, JobFile, Pattern};
use proptest::prelude::*;

fn parse(text: &str) -> JobFile {
    parse_str(text, "jobs.fio", &ParseOptions::default()).expect("parses")
}

fn error(text: &str) -> String {
    parse_str(text, "jobs.fio", &ParseOptions::default())
        .expect_err("refused")
        .to_string()
}

#[test]
fn globals_apply_to_jobs_below_and_accumulate() {
    let file =
        parse("[global]\nbs=8k\nrw=randread\n[a]\n[global]\nrw=write\ndirect=1\n[b]\nbs=16k\n");
    let (a, b) = (&file.jobs[0], &file.jobs[1]);
    assert_eq!((a.pattern, a.direct), (Pattern::RandRead, false));
    assert_eq!(a.block_size[0], BlockSize::Fixed(8192));
    assert_eq!((b.pattern, b.direct), (Pattern::Write, true));
    assert_eq!(b.block_size[1], BlockSize::Fixed(16384));
    assert_eq!(b.options, [("bs".to_string(), "16k".to_string())]);
    assert_eq!(file.global_options.len(), 4);
    assert_eq!(a.origin.line, 4);
}

#[test]
fn comments_bare_keys_and_whitespace() {
    let file = parse("; head\n# also\n[j]  \n  time_based\nnumjobs = 2  ; two\nsize=1m # c\n");
    let job = &file.jobs[0];
    assert!(job.time_based);
    assert_eq!(job.numjobs, 2);
    assert_eq!(job.size, Some(Extent::Bytes(1 << 20)));
    assert_eq!(job.options[0], ("time_based".to_string(), String::new()));
}

#[test]
fn sizes_follow_kb_base_in_either_order() {
    let file = parse("[a]\nbs=4k\nsize=4KiB\nio_size=4kB\n[b]\nsize=4KiB\nbs=4k\nkb_base=1000\n");
    let (a, b) = (&file.jobs[0], &file.jobs[1]);
    assert_eq!(a.block_size[0], BlockSize::Fixed(4096));
    assert_eq!(
        a.size,
        Some(Extent::Bytes(4000)),
        "fio compatibility mode: KiB is 1000"
    );
    assert_eq!(a.io_size, Some(4096));
    assert_eq!(b.block_size[0], BlockSize::Fixed(4000));
    assert_eq!(b.size, Some(Extent::Bytes(4096)));
}

#[test]
fn ranges_splits_and_bssplit() {
    let file = parse(
        "[j]\nstartdelay=0-4\nbsrange=4k-16k\nrate=1m,500k\nrate_iops=10,,\nbs=,8k\nbssplit=4k/60:8k/40,1m\n",
    );
    let job = &file.jobs[0];
    assert_eq!(job.startdelay, (0, 4_000_000_000));
    assert_eq!(job.rate, [Some(1 << 20), Some(512_000), Some(512_000)]);
    assert_eq!(job.rate_iops, [Some(10), None, None]);
    assert_eq!(
        job.block_size[0],
        BlockSize::Split(vec![(4096, 60), (8192, 40)])
    );
    assert_eq!(job.block_size[1], BlockSize::Split(vec![(1 << 20, 100)]));
    let file = parse("[j]\nbsrange=4k-16k\nbssplit=,,4k/20:8k:16k\n");
    let job = &file.jobs[0];
    assert_eq!(
        job.block_size[0],
        BlockSize::Range {
            min: 4096,
            max: 16384
        }
    );
    assert_eq!(
        job.block_size[2],
        BlockSize::Split(vec![(4096, 20), (8192, 40), (16384, 40)])
    );
}

#[test]
fn times_with_units_and_defaults() {
    let job = &parse("[j]\nruntime=5m\nramp_time=2\nthinktime=2000\nstartdelay=1s\n").jobs[0];
    assert_eq!(job.runtime, Some(300_000_000_000));
    assert_eq!(job.ramp_time, 2_000_000_000);
    assert_eq!(job.thinktime, 2_000_000);
    assert_eq!(job.startdelay, (1_000_000_000, 1_000_000_000));
}

#[test]
fn rw_modifiers_and_aliases() {
    let file =
        parse("[a]\nrw=read:-8k\n[b]\nreadwrite=randread:8\n[c]\nrw=randrw\nrwmixwrite=30\n");
    assert_eq!(
        (file.jobs[0].pattern, file.jobs[0].offset_modifier),
        (Pattern::Read, -8192)
    );
    assert_eq!(
        (file.jobs[1].pattern, file.jobs[1].offset_modifier),
        (Pattern::RandRead, 8)
    );
    assert_eq!(file.jobs[2].rwmixread, 70);
}

#[test]
fn percent_extents_and_misc_fields() {
    let job = &parse(
        "[j]\nsize=50%\noffset=10%\nioengine=libaio\niodepth=32\nnrfiles=4\nbuffered=0\nsync=1\nloops=3\nnumber_ios=100\nrandseed=42\ncontinue_on_error=1\ncgroup=/a/b\ncgroup_weight=500\nstonewall\nnew_group\ngroup_reporting\nioscheduler=bfq\nfilesize=1m-4m\noffset_increment=1g\nio_limit=2m\nthinktime_blocks=4\n",
    )
    .jobs[0];
    assert_eq!(
        (job.size, job.offset),
        (Some(Extent::Percent(50)), Extent::Percent(10))
    );
    assert_eq!(
        (job.ioengine.clone(), job.effective_depth()),
        (IoEngine::Libaio, 32)
    );
    assert!(job.direct && job.sync_writes && job.stonewall && job.new_group && job.group_reporting);
    assert_eq!((job.nrfiles, job.loops, job.number_ios), (4, 3, Some(100)));
    assert_eq!(
        (job.randseed, job.continue_on_error),
        (Some(42), ioslice_fio::errno::ErrorKinds::ALL)
    );
    assert_eq!(
        (job.cgroup.as_deref(), job.cgroup_weight),
        (Some("/a/b"), Some(500))
    );
    assert_eq!(job.ioscheduler.as_deref(), Some("bfq"));
    assert_eq!(job.filesize, Some((1 << 20, 4 << 20)));
    assert_eq!(
        (job.offset_increment, job.io_size),
        (1 << 30, Some(2 << 20))
    );
    assert_eq!(job.thinktime_blocks, 4);
}

#[test]
fn priorities_map_to_ionice_classes() {
    let prio = |text: &str| parse(text).jobs[0].priority;
    let be = |level| IoPriority::new(PriorityClass::BestEffort, level);
    assert_eq!(prio("[j]\nprio=3\n"), be(3));
    assert_eq!(
        prio("[j]\nprioclass=1\nprio=2\n"),
        IoPriority::new(PriorityClass::RealTime, 2)
    );
    assert_eq!(
        prio("[j]\nprio=5\nprioclass=1\n"),
        IoPriority::new(PriorityClass::RealTime, 5)
    );
    assert_eq!(
        prio("[j]\nprioclass=3\n").map(|p| p.class),
        Some(PriorityClass::Idle)
    );
    assert_eq!(prio("[j]\n"), None);
    assert!(error("[j]\nprio=8\n").contains("jobs.fio:2: invalid value '8' for prio"));
}

#[test]
fn engines_and_check_supported() {
    let file = parse("[global]\nioengine=rbd\n[j]\nsize=1m\n");
    assert_eq!(file.jobs[0].ioengine, IoEngine::Unsupported("rbd".into()));
    let message = check_supported(&file).expect_err("refused").to_string();
    assert_eq!(
        message,
        "jobs.fio:2: ioengine=rbd is not supported: expected one of sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, posixaio, mmap, null, cpuio, exec, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, ftruncate, falloc"
    );
    let trim = parse("[j]\nsize=1m\n\nrw=trim\n");
    assert!(check_supported(&trim).is_ok(), "trim jobs run");
    assert!(check_discard(&trim, "sim:ssd", true).is_ok());
    assert_eq!(
        check_discard(&trim, "sim:sata-7200", false)
            .expect_err("refused")
            .to_string(),
        "jobs.fio:4: rw=trim: sim:sata-7200 takes no discards (EOPNOTSUPP; fio would stop the job at its first trim with \"Operation not supported\"): expected a device with TRIM, such as sim:ssd, sim:nvme or sim:null"
    );
    let read = parse("[j]\nsize=1m\n");
    assert!(check_discard(&read, "sim:sata-7200", false).is_ok());
    for engine in [
        "sync", "psync", "vsync", "pvsync", "pvsync2", "io_uring", "posixaio", "null", "mmap",
    ] {
        let file = parse(&format!("[j]\nioengine={engine}\n"));
        assert!(check_supported(&file).is_ok(), "{engine}");
    }
}

/// A size in zones without a `zonesize` is the engine's to resolve from its device: with an
/// engine ioslice does not run, the engine is what is refused; with one it runs, the missing
/// zone size.
#[test]
fn an_unsupported_engine_is_refused_before_a_size_in_zones() {
    assert_eq!(
        error("[global]\nioengine=io_uring_cmd\nsize=1z\n[j]\n"),
        "jobs.fio:2: ioengine=io_uring_cmd is not supported: expected one of sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, posixaio, mmap, null, cpuio, exec, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, ftruncate, falloc"
    );
    assert_eq!(
        error("[global]\nioengine=libaio\nsize=1z\n[j]\n"),
        "jobs.fio:3: size=1z is in zones but the job has no zonesize: expected a zonesize= such as 256m"
    );
}

/// fio caps the queue depth of its `FIO_SYNCIO` engines at 1 whatever `iodepth` says (it
/// prints "queue depth will be capped at 1"); the asynchronous ones keep `iodepth`. Each
/// engine keeps the name it was given, as fio's report does.
#[test]
fn engines_get_the_depth_fio_gives_them() {
    let depth_of = |engine: &str| {
        let job = &parse(&format!("[j]\nioengine={engine}\niodepth=16\n")).jobs[0];
        (job.ioengine.fio_name().to_string(), job.effective_depth())
    };
    for engine in [
        "sync",
        "psync",
        "vsync",
        "pvsync",
        "pvsync2",
        "mmap",
        "filecreate",
        "filestat",
        "filedelete",
        "dircreate",
        "dirstat",
        "dirdelete",
        "ftruncate",
        "falloc",
    ] {
        assert_eq!(depth_of(engine), (engine.to_string(), 1), "{engine}");
    }
    for engine in ["posixaio", "libaio", "io_uring", "null"] {
        assert_eq!(depth_of(engine), (engine.to_string(), 16), "{engine}");
    }
}

#[test]
fn filesystem_engines_run_for_real_and_are_refused_in_simulation() {
    use ioslice_fio::file_ops::{FileOp, StatType};
    use ioslice_fio::jobfile::check_simulable;
    let file = parse("[global]\nnrfiles=3\nfilesize=4k\n[j]\nioengine=filestat\nstat_type=statx\n");
    assert_eq!(file.jobs[0].ioengine, IoEngine::Namespace(FileOp::FileStat));
    assert_eq!(file.jobs[0].stat_type, StatType::Statx);
    assert!(check_supported(&file).is_ok());
    assert_eq!(
        check_simulable(&file).expect_err("refused").to_string(),
        "jobs.fio:5: ioengine=filestat cannot be simulated (the device model has no cost for a filesystem operation): expected a real --device DIR"
    );
    assert!(error("[j]\nioengine=filestat\nstat_type=fstat\n")
        .contains("jobs.fio:3: invalid value 'fstat' for stat_type"));
    for engine in ["ftruncate", "falloc", "dirdelete"] {
        let file = parse(&format!("[j]\nsize=1m\nioengine={engine}\n"));
        assert!(check_simulable(&file).is_err(), "{engine}");
    }
    for engine in ["psync", "mmap", "posixaio", "null"] {
        let file = parse(&format!("[j]\nsize=1m\nioengine={engine}\n"));
        assert!(check_simulable(&file).is_ok(), "{engine}");
    }
}

#[test]
fn variables_come_from_the_options() {
    let mut options = ParseOptions {
        ncpus: 8,
        mb_memory: 100,
        ..ParseOptions::default()
    };
    options.env.insert("BS".into(), "16k".into());
    let text = "[j]\nbs=${BS}\nnumjobs=$ncpus\nsize=5*1024*1024*$mb_memory/8\nio_size=64*$pagesize\nfilename=f.$jobnum\n";
    let job = &parse_str(text, "v.fio", &options).expect("parses").jobs[0];
    assert_eq!(job.block_size[0], BlockSize::Fixed(16384));
    assert_eq!(job.numjobs, 8);
    assert_eq!(job.size, Some(Extent::Bytes(5 * 1024 * 1024 * 100 / 8)));
    assert_eq!(job.io_size, Some(64 * 4096));
    assert_eq!(job.filename.as_deref(), Some("f.$jobnum"));
    let missing = parse_str("[j]\nrw=${NOPE}\n", "v.fio", &ParseOptions::default());
    assert_eq!(
        missing.expect_err("undefined").to_string(),
        "v.fio:2: environment variable 'NOPE' is not defined: expected it to be set for '${NOPE}'"
    );
}

#[test]
fn ignore_error_takes_fios_syntax_and_adds_the_kinds_it_lists() {
    use ioslice_fio::errno::ErrorKinds;
    let job = |text: &str| parse(text).jobs.remove(0);

    // fio's example: EAGAIN on reads, ENOSPC and 122 on writes; verify keeps the default.
    // A kind given errors is continued on even without continue_on_error= (fio 3.33 went on
    // past ENOSPC on writes with this line alone: exit 0, total_err 512).
    let example = job("[j]\nignore_error=EAGAIN,ENOSPC:122\n");
    assert_eq!(example.ignore_error, [vec![11], vec![28, 122], vec![]]);
    assert_eq!(example.continue_on_error, ErrorKinds::IO);

    // One list is the read list, added to continue_on_error=write.
    let read_only = job("[j]\ncontinue_on_error=write\nignore_error=ENOSPC\n");
    assert_eq!(read_only.ignore_error, [vec![28], vec![], vec![]]);
    assert_eq!(read_only.continue_on_error, ErrorKinds::IO);

    // Empty lists add nothing; verify plus a write list has no fio name.
    let write_verify = job("[j]\ncontinue_on_error=verify\nignore_error=,ENOSPC\n");
    assert_eq!(write_verify.ignore_error, [vec![], vec![28], vec![]]);
    assert_eq!(
        write_verify.continue_on_error,
        ErrorKinds::VERIFY.with(ioslice_fio::errno::ErrorKind::Write)
    );

    // Order matters, as in fio: continue_on_error= read after ignore_error= replaces the kinds
    // (fio stopped at ENOSPC), read before it keeps what ignore_error= adds (fio went on).
    let after = job("[j]\nignore_error=EAGAIN,ENOSPC:122\ncontinue_on_error=read\n");
    assert_eq!(after.continue_on_error, ErrorKinds::READ);
    let before = job("[j]\ncontinue_on_error=read\nignore_error=EAGAIN,ENOSPC:122\n");
    assert_eq!(before.continue_on_error, ErrorKinds::IO);
    let global = job("[global]\nignore_error=EAGAIN,ENOSPC:122\n[j]\ncontinue_on_error=read\n");
    assert_eq!(global.continue_on_error, ErrorKinds::READ);

    // Kinds the value does not name keep what [global] gave them (fio went on past ENOSPC on
    // writes); a kind named with an empty list is reset (fio stopped).
    let kept = job("[global]\nignore_error=,ENOSPC\n[j]\nignore_error=EAGAIN\n");
    assert_eq!(kept.ignore_error, [vec![11], vec![28], vec![]]);
    assert_eq!(kept.continue_on_error, ErrorKinds::IO);
    let reset = job("[global]\nignore_error=,ENOSPC\n[j]\nignore_error=EAGAIN,\n");
    assert_eq!(reset.ignore_error, [vec![11], vec![], vec![]]);

    // A bad value is one line naming it and fio's syntax.
    let expected = "expected up to three lists READ,WRITE,VERIFY separated by commas, each of error names or numbers separated by colons, such as EAGAIN,ENOSPC:122";
    assert_eq!(
        error("[j]\nignore_error=,EBOGUS\n"),
        format!("jobs.fio:2: invalid value ',EBOGUS' for ignore_error: {expected}")
    );
    assert_eq!(
        error("[j]\nrw=write\nignore_error=EIO,EIO,EIO,EIO\n"),
        format!("jobs.fio:3: invalid value 'EIO,EIO,EIO,EIO' for ignore_error: {expected}")
    );
}

#[test]
fn includes_are_relative_nested_and_bounded() {
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = temp.path();
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).expect("temp dir");
    std::fs::write(dir.join("main.fio"), "[j]\ninclude sub/a.fio\nrw=write\n").expect("write");
    std::fs::write(sub.join("a.fio"), "bs=8k\ninclude b.fio\n").expect("write");
    std::fs::write(sub.join("b.fio"), "size=1m\n").expect("write");
    std::fs::write(dir.join("loop.fio"), "[j]\ninclude loop.fio\n").expect("write");
    std::fs::write(
        dir.join("bad.fio"),
        "[j]\nbs=8k\ninclude sub/b.fio\nsize=huge\n",
    )
    .expect("write");
    let options = ParseOptions::default();
    let file = parse_file(&dir.join("main.fio"), &options).expect("parses");
    let job = &file.jobs[0];
    assert_eq!(
        (job.block_size[0].clone(), job.size),
        (BlockSize::Fixed(8192), Some(Extent::Bytes(1 << 20)))
    );
    assert_eq!(job.pattern, Pattern::Write);
    assert!(job.option_origins["size"].file.ends_with("sub/b.fio"));
    let cycle = parse_file(&dir.join("loop.fio"), &options).expect_err("cycle");
    assert!(
        matches!(cycle, JobFileError::IncludeDepth { .. }),
        "{cycle}"
    );
    let bad = parse_file(&dir.join("bad.fio"), &options)
        .expect_err("bad size")
        .to_string();
    assert!(bad.ends_with("bad.fio:4: invalid value 'huge' for size: expected a size or percentage such as 1g or 50%"), "{bad}");
    let missing = parse_str(
        "[j]\ninclude nowhere.fio\n",
        &dir.join("x.fio").display().to_string(),
        &options,
    );
    assert!(missing
        .expect_err("missing")
        .to_string()
        .contains("x.fio:2: cannot read included file"));
}

#[test]
fn errors_name_file_and_line() {
    assert_eq!(
        error("[j]\nsize=1m\n\n\n\n\nbs=fast\n"),
        "jobs.fio:7: invalid value 'fast' for bs: expected a size such as 4k or 1m"
    );
    assert_eq!(
        error("[j]\nsize=1m\nthis is not an option\n"),
        "jobs.fio:3: expected '[section]' or 'option=value', found 'this is not an option'"
    );
    assert!(error("bs=4k\n[j]\n").starts_with("jobs.fio:1: option 'bs' is outside any section"));
    assert!(error("[global]\nbs=4k\n").starts_with("jobs.fio: no jobs defined"));
    assert!(error("[j\n").starts_with("jobs.fio:1: expected '[section]'"));
    let missing = parse_file(
        std::path::Path::new("/nonexistent/jobs.fio"),
        &ParseOptions::default(),
    );
    assert_eq!(
        missing.expect_err("missing").to_string(),
        "/nonexistent/jobs.fio: cannot read: No such file or directory (os error 2)"
    );
}

#[test]
fn unknown_options_warn_or_fail_in_strict_mode() {
    let file = parse("[j]\nsize=1m\nthread\ndescription=hello\n\n\n\n\n\n\n\nexec_prerun=true\n");
    assert_eq!(file.warnings.len(), 1);
    assert_eq!(file.warnings[0].origin.line, 12);
    assert_eq!(
        format!(
            "{}:{}: {}",
            file.warnings[0].origin.file, file.warnings[0].origin.line, file.warnings[0].message
        ),
        "jobs.fio:12: option 'exec_prerun' is not supported by ioslice yet; ignored"
    );
    let strict = ParseOptions {
        strict: true,
        ..ParseOptions::default()
    };
    let err = parse_str("[j]\nexec_prerun=true\n", "jobs.fio", &strict).expect_err("strict");
    assert!(matches!(err, JobFileError::UnknownOption { .. }));
    assert!(err
        .to_string()
        .starts_with("jobs.fio:2: option 'exec_prerun' is not supported"));
    let global = parse("[global]\nexec_postrun=x\n[a]\n[b]\n");
    assert_eq!(global.warnings.len(), 1, "a global option warns once");
}

#[test]
fn verify_options_are_read_and_unrunnable_ones_refused_for_real_runs() {
    use ioslice_fio::jobfile::check_verify;
    use ioslice_fio::verify::VerifyKind;
    let file = parse("[j]\nrw=write\nverify=crc32c-intel\nverify_backlog=16\nverify_fatal=1\nverify_dump=1\ndo_verify=0\nverify_pattern=0xff\"ab\"\n");
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let verify = &file.jobs[0].verify;
    assert_eq!(verify.kind, Some(VerifyKind::Crc32c));
    assert_eq!(
        (verify.backlog, verify.fatal, verify.dump),
        (16, true, true)
    );
    assert!(!verify.do_verify && !verify.active());
    assert_eq!(verify.pattern.bytes, vec![0xff, b'a', b'b']);
    assert!(check_verify(&file).is_ok());
    let refused = |text: &str| {
        let file = parse(text);
        check_verify(&file).expect_err("refused").to_string()
    };
    assert_eq!(
        refused("[j]\nverify=crc64\n"),
        "jobs.fio:2: verify=crc64 is not supported: expected one of md5, crc32c, crc32c-intel, sha256, xxhash, pattern"
    );
    assert!(refused("[j]\nverify=pattern\n").contains("verify=pattern needs verify_pattern="));
    assert!(
        refused("[j]\nverify=md5\nruntime=1\ntime_based\nverify_only\n")
            .starts_with("jobs.fio:5: verify_only cannot be used with time_based")
    );
    assert!(refused("[j]\nioengine=null\nverify=md5\n")
        .starts_with("jobs.fio:3: verify= cannot check a job with ioengine=null"));
    let strict = ParseOptions {
        strict: true,
        ..ParseOptions::default()
    };
    let err = parse_str("[j]\nverify=blake3\n", "jobs.fio", &strict).expect_err("bad kind");
    assert!(err
        .to_string()
        .starts_with("jobs.fio:2: invalid value 'blake3' for verify: expected one of md5"));
}

#[test]
fn a_section_named_global_in_json_keeps_options_as_written() {
    let mut options = ParseOptions::default();
    options.env.insert("RW".into(), "read".into());
    let file = parse_str(
        "[global]\nrw=${RW}\n[j]\nname=renamed\n",
        "jobs.fio",
        &options,
    )
    .expect("parses");
    assert_eq!(
        file.global_options,
        [("rw".to_string(), "read".to_string())]
    );
    assert_eq!(file.jobs[0].name, "renamed");
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC*") {
        let _ = parse_str(&text, "p.fio", &ParseOptions::default());
    }

    #[test]
    fn option_like_lines_never_panic(lines in proptest::collection::vec(
        ("[a-z_]{1,12}", "[-0-9a-zA-Z%:,/()*+^$.{}]{0,16}"), 0..12)) {
        let mut text = String::from("[job]\n");
        for (key, value) in &lines {
            text.push_str(&format!("{key}={value}\n"));
        }
        let options = ParseOptions {
            env: BTreeMap::from([("A".to_string(), "4k".to_string())]),
            ..ParseOptions::default()
        };
        if let Ok(file) = parse_str(&text, "p.fio", &options) {
            let _ = check_supported(&file);
        }
    }

    #[test]
    fn known_options_with_arbitrary_values_never_panic(
        key in proptest::sample::select(vec!["bs", "bsrange", "bssplit", "size", "offset", "rw", "rate", "startdelay", "runtime", "prio", "prioclass", "filesize", "number_ios", "kb_base", "sync", "continue_on_error", "zonemode", "zonesize", "zonerange", "zoneskip"]),
        value in "[-0-9kKmMgGiIbB%:,/()*+^.zs]{0,20}",
    ) {
        let _ = parse_str(&format!("[j]\n{key}={value}\n"), "p.fio", &ParseOptions::default());
    }
}

#[test]
fn random_offset_options_are_acted_on_without_a_warning() {
    use ioslice_fio::distribution::{RandomDistribution, RandomGenerator};
    let file = parse("[j]\nrw=randread\nsize=1m\nnorandommap\nrandom_generator=lfsr\nrandom_distribution=pareto:0.7:0.5\n");
    let job = &file.jobs[0];
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    assert!(job.norandommap);
    assert_eq!(job.random_generator, RandomGenerator::Lfsr);
    assert_eq!(
        job.random_distribution,
        RandomDistribution::Pareto {
            h: 0.7,
            center: Some(0.5)
        }
    );
    assert_eq!(
        error("[j]\nrandom_generator=mt19937\n"),
        "jobs.fio:2: invalid value 'mt19937' for random_generator: expected one of tausworthe, lfsr, tausworthe64"
    );
    assert!(error("[j]\nrandom_distribution=zipf:1\n").contains("a zipf theta other than 1"));
}

/// fio uses `randseed=` whatever `randrepeat` says, in either order.
#[test]
fn randrepeat_keeps_a_randseed() {
    for text in [
        "[j]\nrandseed=42\nrandrepeat=0\n",
        "[j]\nrandrepeat=0\nrandseed=42\n",
    ] {
        assert_eq!(parse(text).jobs[0].randseed, Some(42), "{text}");
    }
    assert!(error("[j]\nrandrepeat=maybe\n").contains("a boolean"));
}
