//! Which Linux release's AS to behave as: the `version` tunable, and the behaviours that
//! changed between the releases modelled.
//!
//! AS lived from 2.6.0 to 2.6.32 (removed in 2.6.33). Its rules moved in three steps that the
//! stored kernel trees show (`drivers/block/as-iosched.c` to 2.6.11, `block/as-iosched.c`
//! after); each step is keyed by the first stored tree that has it, which bounds the release
//! that made the change:
//!
//! | from | behaviour | before |
//! |---|---|---|
//! | 2.6.18 (not in 2.6.11) | [`Anticipation::Cooperative`] | [`Anticipation::Original`] |
//! | 2.6.24 (not in 2.6.18) | a new async batch starts at its FIFO head | at the next request in elevator order |
//! | 2.6.27 (not in 2.6.24) | the last completion of a drained batch change starts the new batch's clock | the clock is not touched |
//!
//! The default, 2.6.32 (AS's last release), is what the module doc describes; 2.6.28 (seed
//! 004's kernel) behaves the same: its `as-iosched.c` differs from 2.6.32's in no rule.
//!
//! Sources: `drivers/block/as-iosched.c` of Linux 2.6.11 (`as_close_req`,
//! `as_can_break_anticipation`, `as_completed_request`, `as_dispatch_request`) and
//! `block/as-iosched.c` of 2.6.18, 2.6.24, 2.6.27 and 2.6.32. Our own code.

/// The newest release modelled, and the default: 2.6.32.
pub(super) const NEWEST: i64 = 20632;
/// The oldest release modelled: 2.6.10 (seed 003's kernel).
pub(super) const OLDEST: i64 = 20610;

/// The first release (as the stored trees bound it) with the cooperating-process rules.
const COOPERATIVE_FROM: u64 = 20618;
/// The first release (likewise) whose new async batch starts at its FIFO head.
const ASYNC_FIFO_HEAD_FROM: u64 = 20624;
/// The first release (likewise) that restarts the batch clock at the drain's last completion.
const CLOCK_AT_DRAIN_FROM: u64 = 20627;

/// The rules that decide whether to keep waiting for the anticipated process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anticipation {
    /// 2.6.10: a sync request is close only within 64 sectors of the head at first (the
    /// window doubling per millisecond waited from the second); a close request of another
    /// process restarts the anticipated process's think-time clock; an exited process is
    /// never waited for; a new process is not waited for when more than half of the
    /// anticipated new processes exited; and, last, any request (sync or not) nearer the
    /// head than the anticipated process's mean seek breaks the wait.
    Original,
    /// From 2.6.18: the close window starts at 8192 sectors and a request nearer than the
    /// mean seek counts as close (only sync requests); a close request stands in for the
    /// anticipated process's next one in its statistics; an exited process is waited for
    /// while cooperating requests usually rescued such waits.
    Cooperative,
}

/// What the `version` tunable selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behaviour {
    /// How a wait is broken.
    pub anticipation: Anticipation,
    /// A new async batch starts at its FIFO head (else at the next request in elevator
    /// order from where the last async request ended).
    pub async_batch_at_fifo_head: bool,
    /// When a class change waited for the device, its last completion starts the new
    /// batch's clock. Without it an async batch that waited keeps the expiry of the sync
    /// batch before it, already past, so with reads waiting it ends before its first write.
    pub clock_at_drain: bool,
}

impl Behaviour {
    /// The behaviour of release `version` (major·10000 + minor·100 + patch): the newest
    /// modelled release not after it.
    pub fn of(version: u64) -> Self {
        Self {
            anticipation: if version >= COOPERATIVE_FROM {
                Anticipation::Cooperative
            } else {
                Anticipation::Original
            },
            async_batch_at_fifo_head: version >= ASYNC_FIFO_HEAD_FROM,
            clock_at_drain: version >= CLOCK_AT_DRAIN_FROM,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_release_takes_the_newest_step_not_after_it() {
        let old = Behaviour::of(20610);
        assert_eq!(old.anticipation, Anticipation::Original);
        assert!(!old.async_batch_at_fifo_head && !old.clock_at_drain);
        assert_eq!(Behaviour::of(20617), old);
        let coop = Behaviour::of(20618);
        assert_eq!(coop.anticipation, Anticipation::Cooperative);
        assert!(!coop.async_batch_at_fifo_head && !coop.clock_at_drain);
        assert!(Behaviour::of(20624).async_batch_at_fifo_head);
        assert!(!Behaviour::of(20626).clock_at_drain);
        // 2.6.28 is 2.6.32.
        assert_eq!(Behaviour::of(20628), Behaviour::of(NEWEST as u64));
        assert!(Behaviour::of(20628).clock_at_drain);
    }
}
