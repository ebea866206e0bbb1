//! fio's own example job files (read from the shared corpus, never copied): each one either
//! parses and passes `check_supported`, or is refused with a message naming its file and
//! line. None may panic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ioslice_fio::jobfile::{check_supported, parse_file, JobFileError, ParseOptions};

/// The shared corpus beside the checkout: the first `shared/corpus/fio-examples` found
/// going up from this crate (a checkout may sit deeper than the shared directory's sibling).
fn corpus_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|dir| dir.join("shared/corpus/fio-examples"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| here.join("../../../shared/corpus/fio-examples"))
}

/// The variables the xNVMe and libcufile examples document in their headers; the
/// object-store examples' credentials (S3_KEY, …) are deliberately left undefined, so
/// those files are refused for naming an undefined variable.
fn options() -> ParseOptions {
    let env: BTreeMap<String, String> = [
        ("FIO_RW", "randread"),
        ("FIO_BS", "4k"),
        ("FIO_IODEPTH", "8"),
        ("FIO_DIR", "/tmp"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    ParseOptions {
        env,
        ncpus: 4,
        mb_memory: 8192,
        ..ParseOptions::default()
    }
}

fn check(path: &Path) -> Result<usize, JobFileError> {
    let file = parse_file(path, &options())?;
    check_supported(&file)?;
    Ok(file.jobs.len())
}

#[test]
fn every_example_parses_or_is_refused_with_file_and_line() {
    let dir = corpus_dir();
    let Ok(listing) = std::fs::read_dir(&dir) else {
        println!("skipped: no corpus at {}", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    paths.sort();
    let (mut parsed, mut refused) = (0, 0);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for path in &paths {
        match check(path) {
            Ok(_) => parsed += 1,
            Err(error) => {
                refused += 1;
                let message = error.to_string();
                let name = path.display().to_string();
                assert!(message.starts_with(&format!("{name}:")), "{message}");
                assert!(error.origin().is_some(), "no line in: {message}");
                assert!(!message.contains('\n'), "{message}");
                println!("refused {message}");
                *reasons.entry(kind(&error).to_string()).or_default() += 1;
            }
        }
    }
    println!(
        "{} files: {parsed} parsed, {refused} refused {reasons:?}",
        paths.len()
    );
    assert_eq!(parsed + refused, paths.len());
    // 41 before fio's filesystem engines (filecreate … falloc, eight examples) ran.
    assert!(parsed >= 49, "only {parsed} examples parse");
}

fn kind(error: &JobFileError) -> &'static str {
    match error {
        JobFileError::Unsupported { what, .. } if what.starts_with("ioengine") => "engine",
        JobFileError::Unsupported { what, .. } if what.contains("zonemode=zbd") => "zbd",
        JobFileError::Unsupported { .. } => "other unsupported",
        JobFileError::UndefinedVariable { .. } => "undefined variable",
        JobFileError::InvalidValue { .. } => "invalid value",
        _ => "other",
    }
}

#[test]
fn directly_relevant_examples_parse_and_run() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        println!("skipped: no corpus at {}", dir.display());
        return;
    }
    for name in [
        "1mbs_clients.fio",
        "aio-read.fio",
        "backwards-read.fio",
        "fio-rand-RW.fio",
        "fio-seq-read.fio",
        "iometer-file-access-server.fio",
        "ssd-test.fio",
        "tiobench-example.fio",
        "null.fio",
        "filecreate-ioengine.fio",
        "filestat-ioengine.fio",
        "filedelete-ioengine.fio",
        "dircreate-ioengine.fio",
        "dirstat-ioengine.fio",
        "dirdelete-ioengine.fio",
        "ftruncate.fio",
        "falloc.fio",
        "zbd-rand-write.fio",
        "zbd-rand-write-zone-reset-gc.fio",
        "zbd-seq-read.fio",
    ] {
        let path = dir.join(name);
        assert!(check(&path).is_ok(), "{name}: {:?}", check(&path));
    }
}

#[test]
fn examples_fill_the_fields_they_set() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        println!("skipped: no corpus at {}", dir.display());
        return;
    }
    let backwards = parse_file(&dir.join("backwards-read.fio"), &options()).expect("parses");
    assert_eq!(backwards.jobs[0].offset_modifier, -8192);
    let clients = parse_file(&dir.join("1mbs_clients.fio"), &options()).expect("parses");
    assert_eq!(clients.jobs.len(), 32);
    assert_eq!(clients.jobs[0].rate, [Some(1250); 3]);
    let iometer =
        parse_file(&dir.join("iometer-file-access-server.fio"), &options()).expect("parses");
    assert_eq!(iometer.jobs[0].rwmixread, 80);
    assert!(matches!(
        iometer.jobs[0].block_size[0],
        ioslice_fio::BlockSize::Split(_)
    ));
}

#[test]
fn runnable_examples_generate_io_without_panicking() {
    use ioslice_fio::pattern::{plan_files, IoPattern};
    use rand::SeedableRng;
    let dir = corpus_dir();
    let Ok(listing) = std::fs::read_dir(&dir) else {
        println!("skipped: no corpus at {}", dir.display());
        return;
    };
    let (mut generated, mut refused) = (0, 0);
    for path in listing.filter_map(|e| e.ok().map(|e| e.path())) {
        let Ok(file) = parse_file(&path, &options()) else {
            continue;
        };
        if check_supported(&file).is_err() {
            continue;
        }
        for job in &file.jobs {
            let plan = plan_files(job, 0, 1 << 34).and_then(|files| IoPattern::new(job, &files, 0));
            match plan {
                Ok(mut pattern) => {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
                    let count = std::iter::from_fn(|| pattern.next(&mut rng))
                        .take(1000)
                        .count();
                    assert!(
                        count > 0,
                        "{}: job {} issues nothing",
                        path.display(),
                        job.name
                    );
                    generated += 1;
                }
                Err(error) => {
                    println!("refused by the pattern planner: {error}");
                    assert!(error.to_string().contains(".fio:"), "{error}");
                    refused += 1;
                }
            }
        }
    }
    println!("jobs: {generated} generate I/O, {refused} refused by the pattern planner");
}
