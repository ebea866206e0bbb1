//! Error numbers by name, and fio's rule for which errors a job may go on after.
//!
//! fio's `continue_on_error=` says for which kinds of I/O (read, write, verify) a job goes on
//! after an error, and `ignore_error=` which errors those are; without `ignore_error=` only
//! `EIO` and `EILSEQ` are "non-fatal". An `EILSEQ` counts as a verify error whatever the
//! direction. (fio's `td_non_fatal_error`, read from its documentation and behaviour.)
//!
//! The numbers are Linux's (the same on every architecture Linux shares with x86-64 for these
//! names); the engine's tests check them against the C library's.

use crate::pattern::DataDirection;

/// Names and Linux numbers of the errors a block I/O can meet.
pub const ERRNOS: &[(&str, i32)] = &[
    ("EPERM", 1),
    ("ENOENT", 2),
    ("EINTR", 4),
    ("EIO", 5),
    ("ENXIO", 6),
    ("EBADF", 9),
    ("EAGAIN", 11),
    ("ENOMEM", 12),
    ("EACCES", 13),
    ("EFAULT", 14),
    ("EBUSY", 16),
    ("ENODEV", 19),
    ("EINVAL", 22),
    ("EFBIG", 27),
    ("ENOSPC", 28),
    ("EROFS", 30),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("ENOLINK", 67),
    ("EOVERFLOW", 75),
    ("EILSEQ", 84),
    ("EOPNOTSUPP", 95),
    ("ESHUTDOWN", 108),
    ("ETIMEDOUT", 110),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
    ("ENOMEDIUM", 123),
    ("EMEDIUMTYPE", 124),
    ("ECANCELED", 125),
];

/// `EIO`.
pub const EIO: i32 = 5;
/// `EILSEQ`: fio's verify failures.
pub const EILSEQ: i32 = 84;

/// The name of an error number (`EIO`), if it is one of [`ERRNOS`].
pub fn name(errno: i32) -> Option<&'static str> {
    ERRNOS
        .iter()
        .find(|&&(_, n)| n == errno)
        .map(|&(name, _)| name)
}

/// An error given by name (`ENOSPC`) or number (`28`), as `ignore_error=` takes them.
pub fn parse(text: &str) -> Option<i32> {
    let text = text.trim();
    if let Ok(number) = text.parse::<i32>() {
        return (number > 0).then_some(number);
    }
    ERRNOS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|&(_, number)| number)
}

/// The kinds of error fio tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An error on a read.
    Read = 0,
    /// An error on a write.
    Write = 1,
    /// A verify failure (`EILSEQ`).
    Verify = 2,
}

impl ErrorKind {
    /// The kind of an error `errno` on an I/O in `direction`.
    pub fn of(direction: DataDirection, errno: i32) -> Self {
        match (errno, direction) {
            (EILSEQ, _) => Self::Verify,
            (_, DataDirection::Read) => Self::Read,
            _ => Self::Write,
        }
    }
}

/// `ignore_error=READ:WRITE:VERIFY`, each list of names or numbers separated by commas: the
/// errors a job goes on after, per kind. An empty list keeps fio's default (`EIO`, `EILSEQ`).
pub fn parse_ignore_error(text: &str) -> Option<[Vec<i32>; 3]> {
    let lists: Vec<&str> = text.split(':').collect();
    if lists.len() > 3 {
        return None;
    }
    let mut parsed: [Vec<i32>; 3] = Default::default();
    for (kind, list) in lists.iter().enumerate() {
        for item in list.split(',').filter(|item| !item.trim().is_empty()) {
            parsed[kind].push(parse(item)?);
        }
    }
    Some(parsed)
}

/// Whether a job with `continue_on_error` (none, read, write, io, verify, all) and
/// `ignore_error` goes on after error `errno` on an I/O in `direction`.
pub fn goes_on(
    continue_on_error: &str,
    ignore_error: &[Vec<i32>; 3],
    direction: DataDirection,
    errno: i32,
) -> bool {
    let kind = ErrorKind::of(direction, errno);
    let covered = match continue_on_error {
        "all" => true,
        "io" => kind != ErrorKind::Verify,
        "read" => kind == ErrorKind::Read,
        "write" => kind == ErrorKind::Write,
        "verify" => kind == ErrorKind::Verify,
        _ => false,
    };
    let list = &ignore_error[kind as usize];
    covered
        && if list.is_empty() {
            errno == EIO || errno == EILSEQ
        } else {
            list.contains(&errno)
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataDirection::{Read, Write};

    #[test]
    fn only_eio_and_eilseq_are_non_fatal_by_default() {
        let none: [Vec<i32>; 3] = Default::default();
        assert!(goes_on("all", &none, Read, EIO));
        assert!(goes_on("all", &none, Write, EILSEQ), "a verify error");
        assert!(
            !goes_on("all", &none, Write, 28),
            "ENOSPC is fatal by default"
        );
        assert!(!goes_on("none", &none, Read, EIO));
        assert!(goes_on("read", &none, Read, EIO) && !goes_on("read", &none, Write, EIO));
        assert!(goes_on("write", &none, Write, EIO) && !goes_on("write", &none, Read, EIO));
        assert!(goes_on("io", &none, Read, EIO) && !goes_on("io", &none, Read, EILSEQ));
        assert!(goes_on("verify", &none, Read, EILSEQ) && !goes_on("verify", &none, Read, EIO));
    }

    #[test]
    fn ignore_error_lists_the_errors_per_kind() {
        // fio's example: EAGAIN on reads, ENOSPC and 122 (EDQUOT) on writes.
        let lists = parse_ignore_error("EAGAIN,ENOSPC:122").expect("parses");
        assert_eq!(lists, [vec![11, 28], vec![122], vec![]]);
        assert!(goes_on("all", &lists, Read, 28));
        assert!(
            !goes_on("all", &lists, Read, EIO),
            "the list replaces the default"
        );
        assert!(goes_on("all", &lists, Write, 122));
        assert!(
            goes_on("all", &lists, Write, EILSEQ),
            "verify keeps its default"
        );
        assert_eq!(
            parse_ignore_error("EIO:EINVAL:").map(|l| l[1].clone()),
            Some(vec![22])
        );
        assert!(parse_ignore_error("EBOGUS").is_none());
        assert!(parse_ignore_error("1:2:3:4").is_none());
        assert_eq!(name(22), Some("EINVAL"));
        assert_eq!(parse("einval"), Some(22));
    }
}
