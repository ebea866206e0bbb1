//! The decision timeline: what a scheduler did and why, over time, one lane per process
//! (and per queue and group where the policy has them), built from the decision trace
//! ([`ioslice_core::trace`]) by a [`TimelineRecorder`] and drawn as an HTML fragment by
//! [`render_html`].
//!
//! # Lanes
//!
//! The device's lane comes first (deadline's and anticipatory's batches and FIFO expiries),
//! then one per cgroup (cfq's group turns), one per process in id order (its requests at the
//! device, its queue's slices or budgets, idle windows and anticipation waits for it, weight
//! raising, holds by a limit, preemptions), then one per async queue (`async:BE4 /grp`: a
//! group's shared queue per priority). Process 0 is the simulator's flusher.
//!
//! # Down-sampling
//!
//! A 30 s run has tens of thousands of requests; the timeline keeps at most a cap of marks
//! (10,000 by default, about 2.5 MB of HTML; [`TimelineRecorder::with_cap`], and [`cap_for`]
//! to share a page between several timelines) so that the page stays small and fast:
//!
//! 1. Always, a lane's requests at the device that follow each other with a gap below the
//!    base resolution (250 µs: longer than a process's reaction to a completion, shorter
//!    than a seek) are one mark, labelled with their count and the share of the span they
//!    cover; so are its idle windows and anticipation waits.
//! 2. When the marks exceed the cap, the resolution doubles (from the base resolution up)
//!    and every kind of mark on every lane is merged again across gaps below it, until at
//!    most three quarters of the cap remain.
//!
//! The rule applied is in [`Timeline::sampling`] ([`Sampling::note`] says it in a sentence
//! for the page).
//!
//! Several runs on one page share its budget, so each timeline's overview may be coarsened
//! until marks hundreds of milliseconds apart merge, and a zoom to one second would show
//! every cgroup in service at once. A recorder made [`TimelineRecorder::with_detail`] also
//! keeps the same spans under a much larger cap ([`detail_cap_for`]); when the overview
//! was coarsened, the timeline carries that record as its [`Detail`], which the page embeds
//! compressed (raw deflate, base64: about 12 bytes a mark) and draws, for the marks in view,
//! once zoomed in. Nothing else is dropped: a merged mark counts what it stands for, and says
//! why its parts ended. The recorder builds spans as events come and keeps no event, so its
//! memory is bounded by the cap and what is open (requests at the device, held requests, one
//! span per lane and kind).
//!
//! # Drawing
//!
//! [`render_html`] draws one `<rect>` per mark, its `<title>` the label (the browser's
//! tooltip), coloured by kind ([`MarkKind::colour`]) in a band of its lane
//! ([`MarkKind::band`]); a mark merged across gaps is paler the less of it its parts
//! cover. The mouse wheel zooms about the pointer, dragging pans, a double click zooms
//! in, and buttons zoom in, out and back to the whole run; the axis follows in ms or s.
//! The page's address follows the zoom (`#ID=FROM-TO`, seconds), and an address with it
//! opens the timeline so zoomed and scrolled into view.
//!
//! ```
//! use ioslice_core::trace::{RequestInfo, TraceEvent};
//! use ioslice_core::{Direction, GroupId, IoPriority, ProcessId, RequestId, TraceSink};
//! use ioslice_timeline::{render_html, TimelineRecorder};
//!
//! let request = RequestInfo {
//!     id: RequestId(1),
//!     process: ProcessId(1),
//!     group: GroupId::ROOT,
//!     priority: IoPriority::default(),
//!     direction: Direction::Read,
//!     sync: true,
//!     sector: 0,
//!     sectors: 8,
//! };
//! let mut recorder = TimelineRecorder::new(vec!["reader".into()]);
//! recorder.record(0, &TraceEvent::Dispatch { request, merged: 0 });
//! let complete = TraceEvent::Complete {
//!     request,
//!     merged: 0,
//!     latency: 4_000_000,
//!     service: 4_000_000,
//!     error: None,
//! };
//! recorder.record(4_000_000, &complete);
//! let timeline = recorder.finish();
//! assert_eq!(timeline.marks.len(), 1);
//! assert_eq!(timeline.marks[0].kind, "service");
//! let html = render_html(&timeline, "run1");
//! assert!(html.starts_with("<section id=\"run1\""));
//! ```
//!
//! # Determinism
//!
//! The same events give the same timeline and the same HTML, byte for byte: every map is
//! ordered, and marks are sorted by start, lane and kind.
#![forbid(unsafe_code)]

mod coarsen;
mod detail;
mod html;
mod kind;
mod label;
mod lanes;
mod recorder;
mod text;

pub use coarsen::{
    cap_for, detail_cap_for, BASE_RESOLUTION, BYTES_PER_MARK, DEFAULT_CAP, DETAIL_BYTES_PER_MARK,
    DETAIL_MAX_CAP,
};
pub use html::{nice_step, render_html};
pub use kind::{Band, MarkKind};
pub use recorder::TimelineRecorder;
pub use text::escape_into;

use ioslice_core::Nanos;
use serde::{Deserialize, Serialize};

/// What one lane follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneKind {
    /// The device and the scheduler's own state (batches, FIFO expiries).
    Device,
    /// A process: its requests at the device, its holds by a limit.
    Process,
    /// A cgroup.
    Group,
    /// A queue shared by a group's processes (an async queue of one priority).
    Queue,
}

/// One lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    /// Its label.
    pub name: String,
    /// What it follows.
    pub kind: LaneKind,
    /// The cgroup of a process (from its first request) or of an async queue.
    #[serde(default)]
    pub group: Option<String>,
}

/// One mark on a lane: a span, or an instant when `end == start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// Index into [`Timeline::lanes`].
    pub lane: u32,
    /// Start, nanoseconds into the run.
    pub start: Nanos,
    /// End, nanoseconds into the run.
    pub end: Nanos,
    /// What it is (the mark's colour): a [`MarkKind::name`].
    pub kind: String,
    /// What hovering it says: the event and its reason.
    pub label: String,
    /// How many events it stands for (requests, for service), 1 unless merged.
    #[serde(default = "one")]
    pub count: u64,
    /// The share of the mark its parts cover, in thousandths (1000 unless merged across
    /// gaps).
    #[serde(default = "thousand")]
    pub coverage: u32,
}

fn one() -> u64 {
    1
}

fn thousand() -> u32 {
    1000
}

/// What was done to keep a timeline under its cap of marks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampling {
    /// The most marks the timeline keeps.
    pub cap: u64,
    /// Back-to-back requests of a lane (and its waits) with a gap below this were merged.
    pub base_resolution: Nanos,
    /// Marks of one kind on one lane with a gap below this were merged to keep under the
    /// cap; 0 when that was not needed.
    pub resolution: Nanos,
    /// How many times the resolution doubled.
    pub coarsenings: u32,
    /// Marks recorded before any merging.
    pub recorded: u64,
}

impl Sampling {
    /// The rule applied, as a sentence for the page.
    pub fn note(&self, kept: usize) -> String {
        let mut note = format!(
            "{kept} marks from {} recorded; back-to-back requests and waits of a lane less \
             than {} apart are one mark",
            self.recorded,
            text::duration(self.base_resolution)
        );
        if self.resolution > 0 {
            note.push_str(&format!(
                "; coarsened to stay under {} marks: marks of one kind on a lane less than {} \
                 apart are merged",
                self.cap,
                text::duration(self.resolution.max(self.base_resolution))
            ));
        }
        note.push('.');
        note
    }
}

/// A finer record of a timeline than its overview, for zooming in: the same spans merged
/// under a larger cap ([`TimelineRecorder::with_detail`]). In JSON its marks are stored as
/// base64 of raw deflate of their JSON (`deflated_marks`), a tenth of their plain size.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "detail::Stored", try_from = "detail::Stored")]
pub struct Detail {
    /// The marks, by start time.
    pub marks: Vec<Mark>,
    /// How they were down-sampled.
    pub sampling: Sampling,
}

/// A run's decision timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// The lanes, top to bottom.
    pub lanes: Vec<Lane>,
    /// The marks, by start time.
    pub marks: Vec<Mark>,
    /// The run's length, nanoseconds.
    pub duration: Nanos,
    /// How the marks were down-sampled.
    #[serde(default)]
    pub sampling: Sampling,
    /// A finer record, when one was kept and the marks above were coarsened: the page
    /// draws from it when zoomed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Detail>,
}

impl Timeline {
    /// The marks of one lane, by start time.
    pub fn marks_on(&self, lane: u32) -> impl Iterator<Item = &Mark> + '_ {
        self.marks.iter().filter(move |mark| mark.lane == lane)
    }

    /// The index of the first lane with this name.
    pub fn lane_named(&self, name: &str) -> Option<u32> {
        self.lanes
            .iter()
            .position(|lane| lane.name == name)
            .and_then(|index| u32::try_from(index).ok())
    }

    /// The kinds of mark present, in legend order.
    pub fn kinds(&self) -> Vec<MarkKind> {
        MarkKind::ALL
            .into_iter()
            .filter(|kind| self.marks.iter().any(|mark| mark.kind == kind.name()))
            .collect()
    }

    /// What [`Sampling::note`] says of this timeline.
    pub fn sampling_note(&self) -> String {
        self.sampling.note(self.marks.len())
    }
}
