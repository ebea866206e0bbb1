//! An `include` of something that is not a job file ends in a one-line error, not in
//! reading forever: `/dev/zero` never ends, and read whole it exhausts memory.

use ioslice_fio::jobfile::{parse_str, ParseOptions};

#[test]
fn an_endless_include_is_refused() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    let error = parse_str(
        "[j]\ninclude /dev/zero\n",
        "jobs.fio",
        &ParseOptions::default(),
    )
    .expect_err("/dev/zero is no job file")
    .to_string();
    assert_eq!(
        error,
        "jobs.fio:2: cannot read included file '/dev/zero': a character device: expected a regular file"
    );
}
