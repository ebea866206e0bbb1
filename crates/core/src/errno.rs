//! Error numbers by name: the errors a block I/O can meet, with Linux's numbers, shared by
//! the engine (which names the errno a request failed with) and the job-file reader (fio's
//! `ignore_error=` takes names or numbers).
//!
//! The numbers are Linux's (the same on every architecture Linux shares with x86-64 for these
//! names); the engine's tests check them against the C library's.

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

/// An error given by name (`ENOSPC`) or number, as `ignore_error=` takes them.
///
/// A number is decimal (`28`), or hexadecimal with `0x` (`0x1c`, as fio reads it since 3.38);
/// a negative number stands for its absolute value, as in fio. Names are those of [`ERRNOS`]
/// (fio also knows rarer ones; give those by number); unlike fio, ioslice takes them in any
/// case and with spaces around. Zero, an unknown name and a number followed by anything else
/// (which fio 3.33 reads up to the first non-digit) are `None`.
pub fn parse(text: &str) -> Option<i32> {
    let text = text.trim();
    let magnitude = text.strip_prefix('-').unwrap_or(text);
    let number = match magnitude
        .strip_prefix("0x")
        .or_else(|| magnitude.strip_prefix("0X"))
    {
        Some(hex) => i32::from_str_radix(hex, 16).ok(),
        None if magnitude.starts_with(|c: char| c.is_ascii_digit()) => magnitude.parse().ok(),
        None => None,
    };
    if let Some(number) = number {
        return (number > 0).then_some(number);
    }
    ERRNOS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|&(_, number)| number)
}
