//! `verify_dump`: the block read back and the block expected, written to files in the
//! current directory named as fio names them (`FILE.OFFSET.received`, `FILE.OFFSET.expected`,
//! FILE being the file's last path component), for looking at a corruption later.
//!
//! Called by a job's thread when one of its checks fails.

use std::path::Path;

/// Write both blocks; the lines to add to the failure's message, saying where they went
/// (or why they could not be written).
pub(crate) fn write(file: &str, offset: u64, received: &[u8], expected: &[u8]) -> String {
    let base = Path::new(file).file_name().map_or_else(
        || "block".to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut lines = String::new();
    for (what, bytes) in [("received", received), ("expected", expected)] {
        let name = format!("{base}.{offset}.{what}");
        match std::fs::write(&name, bytes) {
            Ok(()) => lines.push_str(&format!("\n       {what} data dumped as {name}")),
            Err(e) => lines.push_str(&format!("\n       cannot dump {what} data to {name}: {e}")),
        }
    }
    lines
}
