//! Kyber's scheduling domains: the four kinds of request it keeps apart (read, write,
//! discard, other), each with its most tokens, its dispatch batch and, for all but
//! "other", a default latency target.
//!
//! The values are the kernel's (`block/kyber-iosched.c`, Linux 6.x: `kyber_depth`,
//! `kyber_batch_size`, `kyber_latency_targets`).

use crate::time::{ms, SECOND};
use crate::{Direction, Nanos, Request};

/// A scheduling domain, in the order dispatch rotates through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Domain {
    /// Reads.
    Read,
    /// Writes, sync and async alike.
    Write,
    /// Discards.
    Discard,
    /// Everything else (flushes and the like); no latency target. Empty here too.
    Other,
}

/// How many domains there are.
pub const DOMAINS: usize = 4;

/// Domains that keep latency histograms and have a target: all but [`Domain::Other`].
pub const MEASURED: usize = 3;

impl Domain {
    /// Every domain, in rotation order.
    pub const ALL: [Domain; DOMAINS] = [Self::Read, Self::Write, Self::Discard, Self::Other];

    /// The domain a request belongs to, by its operation.
    pub fn of(request: &Request) -> Self {
        match request.direction {
            Direction::Read => Self::Read,
            Direction::Write => Self::Write,
            Direction::Discard => Self::Discard,
        }
    }

    /// Index into per-domain arrays (rotation order).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The domain after this one in the rotation, wrapping to read after other.
    pub fn next(self) -> Self {
        Self::ALL[(self.index() + 1) % DOMAINS]
    }

    /// Its name, as the decision trace prints it ([`crate::TraceEvent::DomainDepth`]); the
    /// kernel's trace points print the same in capitals.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Discard => "discard",
            Self::Other => "other",
        }
    }

    /// The most requests of this domain at the device at once, device-wide: the token
    /// depth it starts with and never grows past.
    pub fn max_depth(self) -> usize {
        match self {
            Self::Read => 256,
            Self::Write => 128,
            Self::Discard => 64,
            Self::Other => 16,
        }
    }

    /// Requests dispatched from this domain in a row before the rotation moves on.
    pub fn batch(self) -> usize {
        match self {
            Self::Read => 16,
            Self::Write => 8,
            Self::Discard | Self::Other => 1,
        }
    }

    /// The kernel's default latency target: read 2 ms, write 10 ms, discard 5 s;
    /// `None` for other, which is not measured.
    pub fn default_target(self) -> Option<Nanos> {
        match self {
            Self::Read => Some(ms(2)),
            Self::Write => Some(ms(10)),
            Self::Discard => Some(5 * SECOND),
            Self::Other => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProcessId, RequestId};

    #[test]
    fn rotation_wraps_and_directions_map_to_their_domains() {
        assert_eq!(Domain::Read.next(), Domain::Write);
        assert_eq!(Domain::Other.next(), Domain::Read);
        let write = Request::new(RequestId(1), ProcessId(1), Direction::Write, 0, 8);
        let sync_write = Request {
            sync: true,
            ..write.clone()
        };
        assert_eq!(Domain::of(&write), Domain::Write);
        assert_eq!(Domain::of(&sync_write), Domain::Write);
        let read = Request::new(RequestId(2), ProcessId(1), Direction::Read, 0, 8);
        assert_eq!(Domain::of(&read), Domain::Read);
    }
}
