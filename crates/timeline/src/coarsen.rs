//! Keeping a timeline small: spans merged as they are recorded, and coarsened when there are
//! too many.
//!
//! Every closed span or instant goes through a [`Store`]. The store keeps, per lane and kind,
//! the last span open to merging; a new span of the same lane and kind that starts less than
//! the resolution after it ends joins it (its count, the time its parts cover and why they
//! ended are summed), otherwise the old one is kept and the new one waits in its place. The
//! resolution is, for the per-request streams (service and waits), at least the base
//! resolution ([`BASE_RESOLUTION`]); for the per-decision kinds (slices, budgets, batches,
//! instants) it is zero until the store coarsens.
//!
//! When the marks kept exceed the cap, the store coarsens: the resolution doubles (starting
//! from the base resolution) and every kind of every lane is merged again at it, until at most
//! three quarters of the cap remain (or everything of a kind on a lane is one mark). Memory
//! is thus bounded by the cap plus one span per lane and kind, whatever the length of the run.

use std::collections::BTreeMap;

use ioslice_core::Nanos;

use crate::kind::MarkKind;
use crate::label::Label;
use crate::text;
use crate::Sampling;

/// Back-to-back requests of a lane, and its waits, merge across gaps shorter than this:
/// longer than a host's reaction to a completion (tens of microseconds), shorter than a seek.
pub const BASE_RESOLUTION: Nanos = 250_000;

/// The most marks a timeline keeps by default: at most about 2.5 MB of HTML
/// ([`BYTES_PER_MARK`]); a page of several timelines takes its cap from [`cap_for`].
pub const DEFAULT_CAP: usize = 10_000;

/// About the most HTML one mark takes (its `<rect>` and its `<title>`; 190 to 230 bytes in
/// the seed runs).
pub const BYTES_PER_MARK: usize = 250;

/// The cap for each of `timelines` timelines on one page of at most about `bytes` (at least
/// 100 marks each).
pub fn cap_for(bytes: usize, timelines: usize) -> usize {
    (bytes / timelines.max(1) / BYTES_PER_MARK).max(100)
}

/// About the most a mark of the detail takes, compressed (raw deflate in base64; 11 to 12
/// bytes in seed 000's runs).
pub const DETAIL_BYTES_PER_MARK: usize = 12;

/// The most marks a detail keeps, whatever its share of a page: bounds the recorder's
/// memory.
pub const DETAIL_MAX_CAP: usize = 150_000;

/// The detail's cap for each of `timelines` timelines on one page whose details take at
/// most about `bytes` (at least 1000 marks, at most [`DETAIL_MAX_CAP`]).
pub fn detail_cap_for(bytes: usize, timelines: usize) -> usize {
    (bytes / timelines.max(1) / DETAIL_BYTES_PER_MARK).clamp(1000, DETAIL_MAX_CAP)
}

/// A span (or an instant, `start == end`) on a lane, or several merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// The lane, as numbered while recording.
    pub lane: u32,
    /// What it is.
    pub kind: MarkKind,
    /// Start.
    pub start: Nanos,
    /// End.
    pub end: Nanos,
    /// The events it stands for (requests, for service).
    pub count: u64,
    /// The time its parts cover.
    pub covered: Nanos,
    /// How many spans were merged into it.
    pub parts: u64,
    /// What a lone span says.
    pub label: Label,
    /// Why its parts ended (their direction, for service), with how many.
    pub reasons: Vec<(&'static str, u64)>,
}

impl Span {
    /// One span of one event, ended for `reason` (or none: `""`).
    pub fn new(
        lane: u32,
        kind: MarkKind,
        start: Nanos,
        end: Nanos,
        label: Label,
        reason: &'static str,
    ) -> Self {
        Self {
            lane,
            kind,
            start,
            end: end.max(start),
            count: 1,
            covered: end.saturating_sub(start),
            parts: 1,
            label,
            reasons: if reason.is_empty() {
                Vec::new()
            } else {
                vec![(reason, 1)]
            },
        }
    }

    fn key(&self) -> (u32, MarkKind) {
        (self.lane, self.kind)
    }

    fn near(&self, other: &Span, gap: Nanos) -> bool {
        other.start < self.end.saturating_add(gap) && self.start < other.end.saturating_add(gap)
    }

    fn absorb(&mut self, other: Span) {
        self.start = self.start.min(other.start);
        self.end = self.end.max(other.end);
        self.count = self.count.saturating_add(other.count);
        self.covered = self.covered.saturating_add(other.covered);
        self.parts = self.parts.saturating_add(other.parts);
        for (reason, count) in other.reasons {
            match self.reasons.iter_mut().find(|(known, _)| *known == reason) {
                Some((_, total)) => *total = total.saturating_add(count),
                None => self.reasons.push((reason, count)),
            }
        }
    }

    /// What hovering it says; `gap` is the resolution it was merged at.
    pub fn describe(&self, gap: Nanos) -> String {
        if self.parts == 1 && (self.count == 1 || self.kind != MarkKind::Service) {
            return self.label.render();
        }
        let (one, many) = self.kind.noun();
        let noun = if self.count == 1 { one } else { many };
        let length = self.end.saturating_sub(self.start);
        let mut out = format!(
            "{} {noun} over {} from {}",
            self.count,
            text::duration(length),
            text::instant(self.start)
        );
        if self.parts == 1 {
            out.push_str(", back to back");
        } else {
            let share = if length == 0 {
                100
            } else {
                (u128::from(self.covered.min(length)) * 100 / u128::from(length)) as u64
            };
            out.push_str(&format!(
                ", covering {share}% of it (merged across gaps below {})",
                text::duration(gap)
            ));
        }
        if !self.reasons.is_empty() {
            let mut reasons = self.reasons.clone();
            reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let listed: Vec<String> = reasons
                .iter()
                .map(|(reason, count)| format!("{reason} {count}"))
                .collect();
            out.push_str(": ");
            out.push_str(&listed.join(", "));
        }
        out
    }
}

/// The overview's store and, when asked for, the detail's: every span goes to both.
#[derive(Debug)]
pub(crate) struct Stores {
    /// The marks drawn at first.
    pub overview: Store,
    /// A finer record of the same spans, for zooming in.
    pub detail: Option<Store>,
}

impl Stores {
    /// Keep a closed span in each store.
    pub fn push(&mut self, span: Span) {
        if let Some(detail) = &mut self.detail {
            detail.push(span.clone());
        }
        self.overview.push(span);
    }
}

/// The spans kept so far, the one open to merging per lane and kind, and the resolution.
#[derive(Debug)]
pub(crate) struct Store {
    cap: usize,
    base: Nanos,
    resolution: Nanos,
    coarsenings: u32,
    recorded: u64,
    horizon: Nanos,
    marks: Vec<Span>,
    pending: BTreeMap<(u32, MarkKind), Span>,
}

impl Store {
    /// A store that keeps at most `cap` marks.
    pub fn new(cap: usize, base: Nanos) -> Self {
        Self {
            cap: cap.max(1),
            base,
            resolution: 0,
            coarsenings: 0,
            recorded: 0,
            horizon: 0,
            marks: Vec::new(),
            pending: BTreeMap::new(),
        }
    }

    /// The gap below which spans of `kind` merge now.
    pub fn gap(&self, kind: MarkKind) -> Nanos {
        if kind.streams() {
            self.base.max(self.resolution)
        } else {
            self.resolution
        }
    }

    /// Keep a closed span.
    pub fn push(&mut self, span: Span) {
        self.recorded = self.recorded.saturating_add(1);
        self.horizon = self.horizon.max(span.end);
        let gap = self.gap(span.kind);
        match self.pending.get_mut(&span.key()) {
            Some(open) if open.near(&span, gap) => open.absorb(span),
            Some(open) => {
                let done = std::mem::replace(open, span);
                self.marks.push(done);
                if self.marks.len() + self.pending.len() > self.cap {
                    self.coarsen();
                }
            }
            None => {
                self.pending.insert(span.key(), span);
                if self.marks.len() + self.pending.len() > self.cap {
                    self.coarsen();
                }
            }
        }
    }

    /// Every span kept, by start time, and what was done to keep them under the cap.
    pub fn finish(mut self) -> (Vec<Span>, Sampling) {
        let pending = std::mem::take(&mut self.pending);
        self.marks.extend(pending.into_values());
        if self.marks.len() > self.cap {
            self.coarsen();
            let pending = std::mem::take(&mut self.pending);
            self.marks.extend(pending.into_values());
        }
        self.marks
            .sort_by_key(|span| (span.start, span.lane, span.kind, span.end));
        let sampling = Sampling {
            cap: u64::try_from(self.cap).unwrap_or(u64::MAX),
            base_resolution: self.base,
            resolution: self.resolution,
            coarsenings: self.coarsenings,
            recorded: self.recorded,
        };
        (self.marks, sampling)
    }

    /// Double the resolution and merge everything again at it, until at most three quarters
    /// of the cap remain or nothing more can merge.
    fn coarsen(&mut self) {
        let target = self.cap - self.cap / 4;
        loop {
            self.resolution = if self.resolution == 0 {
                self.base.max(1)
            } else {
                self.resolution.saturating_mul(2)
            };
            self.coarsenings = self.coarsenings.saturating_add(1);
            self.remerge();
            if self.marks.len() + self.pending.len() <= target || self.resolution > self.horizon {
                break;
            }
        }
    }

    fn remerge(&mut self) {
        let mut all = std::mem::take(&mut self.marks);
        all.extend(std::mem::take(&mut self.pending).into_values());
        all.sort_by_key(|span| (span.lane, span.kind, span.start, span.end));
        let mut merged: Vec<Span> = Vec::with_capacity(all.len());
        for span in all {
            match merged.last_mut() {
                Some(last) if last.key() == span.key() && last.near(&span, self.gap(span.kind)) => {
                    last.absorb(span)
                }
                _ => merged.push(span),
            }
        }
        let mut rest = merged.into_iter().peekable();
        while let Some(span) = rest.next() {
            let last_of_key = match rest.peek() {
                Some(next) => next.key() != span.key(),
                None => true,
            };
            if last_of_key {
                self.pending.insert(span.key(), span);
            } else {
                self.marks.push(span);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(lane: u32, start: Nanos, end: Nanos) -> Span {
        Span::new(
            lane,
            MarkKind::Service,
            start,
            end,
            Label::Text(format!("r{start}")),
            "read",
        )
    }

    #[test]
    fn back_to_back_requests_merge_below_the_base_resolution() {
        let mut store = Store::new(100, 1_000);
        store.push(service(1, 0, 10_000));
        store.push(service(1, 10_500, 20_000));
        store.push(service(2, 20_000, 30_000));
        store.push(service(1, 40_000, 50_000));
        let (spans, sampling) = store.finish();
        assert_eq!(spans.len(), 3);
        assert_eq!(
            (spans[0].start, spans[0].end, spans[0].count),
            (0, 20_000, 2)
        );
        assert_eq!(spans[0].covered, 19_500);
        assert_eq!(spans[0].reasons, vec![("read", 2)]);
        assert_eq!(spans[1].lane, 2);
        assert_eq!((spans[2].start, spans[2].count), (40_000, 1));
        assert_eq!(spans[2].describe(1_000), "r40000");
        assert_eq!(sampling.recorded, 4);
        assert_eq!(sampling.coarsenings, 0);
        assert_eq!(
            spans[0].describe(1_000),
            "2 requests over 20.0 µs from 0.000000 s, covering 97% of it \
             (merged across gaps below 1.00 µs): read 2"
        );
    }

    #[test]
    fn caps_share_a_page() {
        assert_eq!(detail_cap_for(8_000_000, 8), 83_333);
        assert_eq!(detail_cap_for(8_000_000, 1), DETAIL_MAX_CAP);
        assert_eq!(detail_cap_for(1_000, 8), 1000);
        assert_eq!(cap_for(5_000_000, 4), 5_000);
        assert_eq!(cap_for(5_000_000, 0), 20_000);
        assert_eq!(cap_for(1_000, 3), 100);
    }

    #[test]
    fn decisions_do_not_merge_until_coarsened() {
        let mut store = Store::new(100, 1_000);
        store.push(Span::new(
            0,
            MarkKind::Preempt,
            5,
            5,
            Label::Text("a".into()),
            "x",
        ));
        store.push(Span::new(
            0,
            MarkKind::Preempt,
            6,
            6,
            Label::Text("b".into()),
            "x",
        ));
        let (spans, _) = store.finish();
        assert_eq!(spans.len(), 2);
    }

    #[test]
    fn the_cap_holds_by_doubling_the_resolution() {
        let mut store = Store::new(50, 1_000);
        for i in 0..10_000u64 {
            let lane = (i % 2) as u32;
            store.push(service(lane, i * 10_000, i * 10_000 + 4_000));
            store.push(Span::new(
                lane,
                MarkKind::Preempt,
                i * 10_000,
                i * 10_000,
                Label::Text(String::new()),
                "p",
            ));
        }
        let (spans, sampling) = store.finish();
        assert!(spans.len() <= 50, "{} marks", spans.len());
        assert!(sampling.resolution > 10_000);
        assert!(sampling.coarsenings > 0);
        assert_eq!(sampling.recorded, 20_000);
        let requests: u64 = spans
            .iter()
            .filter(|span| span.kind == MarkKind::Service)
            .map(|span| span.count)
            .sum();
        assert_eq!(requests, 10_000);
        assert!(spans.windows(2).all(|pair| pair[0].start <= pair[1].start));
    }
}
