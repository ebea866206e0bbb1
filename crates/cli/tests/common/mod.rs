//! What the CLI tests share: running the binary and reading what it said, and whether fio is
//! there to compare with.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Run `ioslice` with `args` from the repository root (so `scenarios/…` paths work), its
/// reports dated at 1970's start (`SOURCE_DATE_EPOCH=0`) so that runs compare byte for byte.
pub fn ioslice(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .env("SOURCE_DATE_EPOCH", "0")
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("the binary runs")
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A user error: exit status 2, one line on stderr that says `what`, and no panic.
pub fn assert_user_error(output: &Output, what: &[&str]) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for needle in what {
        assert!(err.contains(needle), "'{needle}' missing from: {err}");
    }
}

/// Whether fio is installed; without it, says that the test is skipped and why. (Only the
/// tests that compare with fio call it.)
#[allow(dead_code)]
pub fn have_fio() -> bool {
    match Command::new("fio").arg("--version").output() {
        Ok(out) if out.status.success() => true,
        _ => {
            eprintln!("skipped: fio is not installed (apt-get install fio)");
            false
        }
    }
}
