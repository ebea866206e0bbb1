//! [`Tee`]: one run's events handed to two sinks, either of which a run may lack (a trace
//! file beside a report's recorders, or two recorders).

use super::{TraceEvent, TraceSink};
use crate::{GroupTree, Nanos};

/// Hands every event to its first sink, then to its second, whichever it has.
#[derive(Debug, Default)]
pub struct Tee<A, B> {
    /// The first sink, if any.
    pub first: Option<A>,
    /// The second sink, if any.
    pub second: Option<B>,
}

impl<A, B> Tee<A, B> {
    /// A tee to both sinks.
    pub fn both(first: A, second: B) -> Self {
        Self {
            first: Some(first),
            second: Some(second),
        }
    }
}

impl<A: TraceSink, B: TraceSink> TraceSink for Tee<A, B> {
    fn start(&mut self, groups: &GroupTree) {
        if let Some(first) = self.first.as_mut() {
            first.start(groups);
        }
        if let Some(second) = self.second.as_mut() {
            second.start(groups);
        }
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        if let Some(first) = self.first.as_mut() {
            first.record(time, event);
        }
        if let Some(second) = self.second.as_mut() {
            second.record(time, event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceLog;

    #[test]
    fn both_sinks_see_every_event_and_a_missing_one_is_skipped() {
        let event = TraceEvent::Outranked {
            process: crate::ProcessId(1),
            outranked: true,
        };
        let (mut first, mut second) = (TraceLog::default(), TraceLog::default());
        let mut tee = Tee::both(&mut first, &mut second);
        tee.record(5, &event);
        assert_eq!(first.events, vec![(5, event.clone())]);
        assert_eq!(second.events, first.events);
        let mut only: Tee<&mut TraceLog, TraceLog> = Tee {
            first: Some(&mut first),
            second: None,
        };
        only.record(7, &event);
        assert_eq!(first.events.len(), 2);
    }
}
