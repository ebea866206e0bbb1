//! Fuzzes the job-file parser: any bytes, read as (lossy) UTF-8, must parse or be refused,
//! never panic. Run with `cargo +nightly fuzz run jobfile` from the repository root.
#![no_main]

use ioslice_fio::jobfile::{check_supported, parse_str, ParseOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut options = ParseOptions::default();
    options.env.insert("FIO_BS".into(), "4k".into());
    if let Ok(file) = parse_str(&text, "fuzz.fio", &options) {
        let _ = check_supported(&file);
    }
});
