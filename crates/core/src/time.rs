//! Time as the policies see it: a `u64` count of nanoseconds handed in by the driver.

/// Nanoseconds since the start of a run (virtual in the simulator, monotonic in the engine).
pub type Nanos = u64;

/// One microsecond in [`Nanos`].
pub const MICROSECOND: Nanos = 1_000;
/// One millisecond in [`Nanos`].
pub const MILLISECOND: Nanos = 1_000_000;
/// One second in [`Nanos`].
pub const SECOND: Nanos = 1_000_000_000;

/// Milliseconds to [`Nanos`], saturating.
pub const fn ms(milliseconds: u64) -> Nanos {
    milliseconds.saturating_mul(MILLISECOND)
}

/// Microseconds to [`Nanos`], saturating.
pub const fn us(microseconds: u64) -> Nanos {
    microseconds.saturating_mul(MICROSECOND)
}
