//! The decision timeline: what a scheduler did and why, over time, one lane per process
//! (and per queue and group where the policy has them), built from the decision trace
//! ([`ioslice_core::trace`]) by a [`TimelineRecorder`] and drawn as an HTML fragment by
//! [`render_html`].
#![forbid(unsafe_code)]

use ioslice_core::trace::TraceEvent;
use ioslice_core::{GroupTree, Nanos, TraceSink};
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
}

/// One lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    /// Its label.
    pub name: String,
    /// What it follows.
    pub kind: LaneKind,
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
    /// What it is (the mark's colour).
    pub kind: String,
    /// What hovering it says: the event and its reason.
    pub label: String,
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
}

/// Builds a [`Timeline`] from a run's trace events.
#[derive(Debug, Default)]
pub struct TimelineRecorder {
    timeline: Timeline,
    process_names: Vec<String>,
    in_flight: std::collections::BTreeMap<u64, (u32, Nanos)>,
}

impl TimelineRecorder {
    /// A recorder whose process lanes are named `process_names[i]` for the process with
    /// index `i + 1` (the simulator's and the runner's numbering; 0 is the flusher).
    pub fn new(process_names: Vec<String>) -> Self {
        Self {
            process_names,
            ..Self::default()
        }
    }

    /// The timeline.
    pub fn finish(self) -> Timeline {
        self.timeline
    }

    fn lane_of_process(&mut self, index: usize) -> u32 {
        let name = self
            .process_names
            .get(index.wrapping_sub(1))
            .cloned()
            .unwrap_or_else(|| format!("process {index}"));
        match self
            .timeline
            .lanes
            .iter()
            .position(|lane| lane.name == name)
        {
            Some(found) => found as u32,
            None => {
                self.timeline.lanes.push(Lane {
                    name,
                    kind: LaneKind::Process,
                });
                (self.timeline.lanes.len() - 1) as u32
            }
        }
    }
}

impl TraceSink for TimelineRecorder {
    fn start(&mut self, _groups: &GroupTree) {}

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        self.timeline.duration = self.timeline.duration.max(time);
        match event {
            TraceEvent::Dispatch { request, .. } => {
                let lane = self.lane_of_process(request.process.0 as usize);
                self.in_flight.insert(request.id.0, (lane, time));
            }
            TraceEvent::Complete { request, .. } => {
                if let Some((lane, start)) = self.in_flight.remove(&request.id.0) {
                    self.timeline.marks.push(Mark {
                        lane,
                        start,
                        end: time,
                        kind: "service".into(),
                        label: format!("request {} at the device", request.id.0),
                    });
                }
            }
            _ => {}
        }
    }
}

/// The timeline as a self-contained HTML fragment (a `<section>` with its SVG and script);
/// every element id it uses starts with `id`.
pub fn render_html(timeline: &Timeline, id: &str) -> String {
    format!(
        "<section id=\"{id}\" class=\"timeline\"><p>{} lanes, {} marks</p></section>",
        timeline.lanes.len(),
        timeline.marks.len()
    )
}
