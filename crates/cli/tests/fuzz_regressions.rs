//! Every input the fuzzer found a defect with, and every seed, replayed through the very
//! function its fuzz target runs (`fuzz/src/harness.rs`): each must return, without a panic,
//! within a bounded time. Inputs live in `fuzz/regressions/TARGET/` and `fuzz/seeds/TARGET/`.

#[allow(dead_code)]
#[path = "../../../fuzz/src/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Far above what any input takes (milliseconds): an input still running then is a hang.
const LIMIT: Duration = Duration::from_secs(60);

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    files
}

/// Run `target` on `data` in a thread of its own; the failure, if any, names the file.
fn replay(name: &str, target: fn(&[u8]), path: &Path) -> Result<(), String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (done, wait) = mpsc::channel();
    let runner = std::thread::spawn(move || {
        target(&data);
        let _ = done.send(());
    });
    match wait.recv_timeout(LIMIT) {
        Ok(()) => Ok(()),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let _ = runner.join();
            Err(format!("{name}: {} panicked", path.display()))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "{name}: {} still running after {LIMIT:?}",
            path.display()
        )),
    }
}

#[test]
fn every_regression_and_seed_returns_cleanly() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, target) in harness::TARGETS {
        for kind in ["regressions", "seeds"] {
            for path in inputs(kind, name) {
                count += 1;
                if let Err(failure) = replay(name, *target, &path) {
                    failures.push(failure);
                }
            }
        }
    }
    assert!(count > 0, "no inputs found under fuzz/");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
