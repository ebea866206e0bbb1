//! Controllers' steps as instants: kyber resizing a domain's tokens and iocost moving the
//! device's vrate (on the device's lane), io.latency moving a parent's scale (on the
//! parent's lane, the device's for the root) and a group's depth (on the group's lane).
//! Each says what moved, from what to what, and why.

use ioslice_core::trace::TraceEvent;
use ioslice_core::GroupId;

use super::TimelineRecorder;
use crate::kind::MarkKind;
use crate::lanes::DEVICE;

/// A vrate in ppm as a percentage with one decimal.
fn percent(ppm: u64) -> String {
    format!("{}.{}%", ppm / 10_000, ppm % 10_000 / 1_000)
}

/// What an iocost period judged the device by.
fn vrate_reason(busy_level: i32, read_ppm: u64, write_ppm: u64, rq_wait_pct: u64) -> String {
    format!(
        "busy level {busy_level}: reads missing {}, writes missing {}, {rq_wait_pct}% waiting for a request slot",
        percent(read_ppm),
        percent(write_ppm)
    )
}

impl TimelineRecorder {
    /// The instant for a controller's step, if `event` is one.
    pub(super) fn control(&mut self, event: &TraceEvent) {
        let (lane, label) = match event {
            TraceEvent::DomainDepth {
                domain,
                from,
                depth,
                p99,
                congested,
            } => {
                let why = if *congested {
                    "some domain past its latency target"
                } else {
                    "every domain within its target"
                };
                let label = format!(
                    "kyber: {domain} tokens {from} → {depth} (p99 in quarter {p99} of the target; {why})"
                );
                (DEVICE, label)
            }
            TraceEvent::VrateAdjust {
                from_ppm,
                vrate_ppm,
                busy_level,
                read_missed_ppm,
                write_missed_ppm,
                rq_wait_pct,
                shortages,
                lagging,
            } => {
                let why = vrate_reason(
                    *busy_level,
                    *read_missed_ppm,
                    *write_missed_ppm,
                    *rq_wait_pct,
                );
                let label = format!(
                    "iocost: vrate {} → {} ({why}; {shortages} groups short of budget, {lagging} lagging)",
                    percent(*from_ppm),
                    percent(*vrate_ppm)
                );
                (DEVICE, label)
            }
            TraceEvent::LatencyScale {
                parent,
                by,
                up,
                cookie,
            } => {
                let lane = self.group_lane(*parent);
                let why = match by {
                    Some(child) if *up => {
                        format!("{} met its target", self.lanes.group_name(*child))
                    }
                    Some(child) => format!("{} missed its target", self.lanes.group_name(*child)),
                    None => "the timer".to_string(),
                };
                let way = if *up { "up" } else { "down" };
                (
                    lane,
                    format!("io.latency: scale {way} to cookie {cookie} ({why})"),
                )
            }
            TraceEvent::LatencyDepth { group, from, depth } => {
                let word = |d: &Option<u32>| d.map_or("unlimited".to_string(), |d| d.to_string());
                let lane = self.group_lane(*group);
                let label = format!("io.latency: depth {} → {}", word(from), word(depth));
                (lane, label)
            }
            _ => return,
        };
        self.instant(lane, MarkKind::Control, label, "");
    }

    /// A group's lane; the device's for the root.
    fn group_lane(&mut self, group: GroupId) -> u32 {
        if group == GroupId::ROOT {
            DEVICE
        } else {
            self.lanes.group(group)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vrates_read_as_percentages() {
        assert_eq!(percent(1_000_000), "100.0%");
        assert_eq!(percent(932_069), "93.2%");
        assert_eq!(
            vrate_reason(4, 60_000, 0, 2),
            "busy level 4: reads missing 6.0%, writes missing 0.0%, 2% waiting for a request slot"
        );
    }
}
