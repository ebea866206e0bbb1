//! The two stable renderings of a trace event: a blktrace-like text line and a JSON object
//! on one line. Both come from one list of fields per event, so they carry the same keys and
//! values.
//!
//! Text: the time in seconds with nine decimals (as blkparse prints it), the event's name
//! padded to 12 columns, then `key=value` pairs separated by spaces:
//!
//! ```text
//!     0.012000000 idle_start   queue=p1:BE4 group=/ kind=queue window_ns=8000000
//! ```
//!
//! JSON lines: one object per line, `time_ns` (nanoseconds since the start of the run) and
//! `event` first, then the same keys, numbers as numbers, flags as `true`/`false`:
//!
//! ```text
//! {"time_ns":12000000,"event":"idle_start","queue":"p1:BE4","group":"/","kind":"queue","window_ns":8000000}
//! ```
//!
//! A line may start with a label (`target` in JSON, `[label]` in text) when several traces
//! share one file.
//!
//! The keys, by event (durations end in `_ns`; a queue is `p<process>:<priority>` for a
//! process's sync queue or `async:<priority>` for a group's async queue, a priority `RT0`–`RT7`,
//! `BE0`–`BE7` or `IDLE`, a group its path with `/` for the root):
//!
//! | event | keys |
//! |---|---|
//! | `insert` | `rq process group prio dir sync sector sectors` |
//! | `merge` | `rq into position` (`back`, `front`) |
//! | `coalesce` | `into absorbed` |
//! | `dispatch` | `rq process group prio dir sync sector sectors merged` |
//! | `complete` | `rq process group prio dir sync sector sectors merged latency_ns service_ns error` (errno, 0 for none) |
//! | `fifo_expired` | `rq late_ns` |
//! | `batch_start` | `class` (`read`, `write`, `sync`, `async`) `start` (`expired`, `fifo_head`, `sorted`) `starved` |
//! | `inject` | `rq queue group holder holder_group` |
//! | `slice_start` | `queue group` |
//! | `slice_timer` | `queue group length_ns` |
//! | `slice_end` | `queue group reason dispatched` |
//! | `budget_start` | `queue group budget timeout_ns raising` |
//! | `budget_end` | `queue group reason service budget charged next_budget` |
//! | `preempt` | `queue group by by_group reason` |
//! | `idle_start` | `queue group kind` (`queue`, `group`, `anticipation`, `linger`) `window_ns` |
//! | `idle_end` | `queue group kind reason` |
//! | `raise_start` | `queue group kind` (`interactive`, `soft_rt`) `coefficient duration_ns` |
//! | `raise_end` | `queue group kind reason` (`expired`, `too_much_service`, `large_burst`, `handed_over`) |
//! | `group_start` | `group class workload` (`async`, `sync_noidle`, `sync`) `slice_ns resumed` |
//! | `group_end` | `group charge unit` (`ns`, `requests`) |
//! | `group_move` | `queue group to` (`group` the group it leaves, `to` the one it joins) |
//! | `hold` | `rq process group dir bytes wait_ns` |
//! | `release` | `rq process group dir waited_ns` |
//! | `outranked` | `process outranked` |
//! | `queue_merge` | `process from from_group into into_group` |
//! | `queue_split` | `process from from_group` |
//! | `domain_depth` | `domain from depth p99 congested` |
//!
//! `slice_end` and `budget_end` reasons: `slice_expired`, `budget_timeout`,
//! `budget_exhausted`, `no_more_requests`, `idle_timeout`, `preempted`, `process_exited`,
//! `cooperator`, `wait_busy_done`, `idle_class`. `preempt` reasons: `idle_class`,
//! `sync_over_async`, `slice_used`, `real_time`, `sync_noidle`, `should_not_idle`,
//! `close_to_head`, `hole_recovery`, `higher_class_or_weight`, `idling_in_vain`. `idle_end`
//! reasons: `request_arrived`, `timer`, `preempted`, `service_ended`, `process_exited`,
//! `close_request`, `other_requests`, `think_time`, `exit_likely`, `outranked`, `released`.

use std::fmt::Write as _;
use std::str::FromStr;

use super::names::{
    batch_class, batch_start, idle_end, idle_kind, preempt_reason, priority_class, raise_end,
    raise_kind, service_end, workload,
};
use super::{ChargeUnit, QueueRef, RequestInfo, TraceEvent};
use crate::merge::MergeKind;
use crate::{Direction, GroupId, GroupTree, Nanos};

/// How a trace is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// One blktrace-like line per event.
    Text,
    /// One JSON object per line.
    Json,
}

impl FromStr for TraceFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            _ => Err(format!(
                "unknown trace format '{text}': expected text or json"
            )),
        }
    }
}

/// Group names by id, as events print them (`/` for the root).
#[derive(Debug, Clone, Default)]
pub struct TraceNames {
    groups: Vec<String>,
}

impl TraceNames {
    /// The names of a run's groups.
    pub fn of(groups: &GroupTree) -> Self {
        Self {
            groups: groups.iter().map(|(_, group)| group.label()).collect(),
        }
    }

    fn group(&self, group: GroupId) -> String {
        match self.groups.get(group.index()) {
            Some(name) => name.clone(),
            None if group == GroupId::ROOT => "/".to_string(),
            None => format!("#{}", group.0),
        }
    }
}

/// Append `event`, `time` nanoseconds into the run, as one text line (with its newline).
pub fn render_text(
    time: Nanos,
    event: &TraceEvent,
    names: &TraceNames,
    label: Option<&str>,
    out: &mut String,
) {
    render(TraceFormat::Text, time, event, names, label, out);
}

/// Append `event`, `time` nanoseconds into the run, as one JSON line (with its newline).
pub fn render_json(
    time: Nanos,
    event: &TraceEvent,
    names: &TraceNames,
    label: Option<&str>,
    out: &mut String,
) {
    render(TraceFormat::Json, time, event, names, label, out);
}

/// Append `event` in `format`.
pub fn render(
    format: TraceFormat,
    time: Nanos,
    event: &TraceEvent,
    names: &TraceNames,
    label: Option<&str>,
    out: &mut String,
) {
    match format {
        TraceFormat::Text => {
            if let Some(label) = label {
                let _ = write!(out, "[{label}] ");
            }
            let _ = write!(
                out,
                "{:5}.{:09} {:<12}",
                time / 1_000_000_000,
                time % 1_000_000_000,
                event.name()
            );
            fields(event, names, &mut Text(out));
            out.push('\n');
        }
        TraceFormat::Json => {
            out.push('{');
            if let Some(label) = label {
                out.push_str("\"target\":");
                json_string(out, label);
                out.push(',');
            }
            let _ = write!(out, "\"time_ns\":{time},\"event\":\"{}\"", event.name());
            fields(event, names, &mut Json(out));
            out.push_str("}\n");
        }
    }
}

/// Where an event's fields go.
trait Fields {
    fn number(&mut self, key: &str, value: u64);
    fn signed(&mut self, key: &str, value: i64);
    fn word(&mut self, key: &str, value: &str);
    fn flag(&mut self, key: &str, value: bool);
}

struct Text<'a>(&'a mut String);

impl Fields for Text<'_> {
    fn number(&mut self, key: &str, value: u64) {
        let _ = write!(self.0, " {key}={value}");
    }

    fn signed(&mut self, key: &str, value: i64) {
        let _ = write!(self.0, " {key}={value}");
    }

    fn word(&mut self, key: &str, value: &str) {
        let _ = write!(self.0, " {key}={value}");
    }

    fn flag(&mut self, key: &str, value: bool) {
        let _ = write!(self.0, " {key}={value}");
    }
}

struct Json<'a>(&'a mut String);

impl Fields for Json<'_> {
    fn number(&mut self, key: &str, value: u64) {
        let _ = write!(self.0, ",\"{key}\":{value}");
    }

    fn signed(&mut self, key: &str, value: i64) {
        let _ = write!(self.0, ",\"{key}\":{value}");
    }

    fn word(&mut self, key: &str, value: &str) {
        let _ = write!(self.0, ",\"{key}\":");
        json_string(self.0, value);
    }

    fn flag(&mut self, key: &str, value: bool) {
        let _ = write!(self.0, ",\"{key}\":{value}");
    }
}

fn json_string(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn queue_name(queue: &QueueRef) -> String {
    match queue.process {
        Some(process) => format!("p{}:{}", process.0, queue.priority),
        None => format!("async:{}", queue.priority),
    }
}

fn queue(out: &mut dyn Fields, names: &TraceNames, prefix: &str, queue: &QueueRef) {
    let (key, group) = match prefix {
        "" => ("queue".to_string(), "group".to_string()),
        prefix => (prefix.to_string(), format!("{prefix}_group")),
    };
    out.word(&key, &queue_name(queue));
    out.word(&group, &names.group(queue.group));
}

fn request(out: &mut dyn Fields, names: &TraceNames, request: &RequestInfo) {
    out.number("rq", request.id.0);
    out.number("process", u64::from(request.process.0));
    out.word("group", &names.group(request.group));
    out.word("prio", &request.priority.to_string());
    out.word("dir", direction(request.direction));
    out.flag("sync", request.sync);
    out.number("sector", request.sector);
    out.number("sectors", u64::from(request.sectors));
}

fn direction(direction: Direction) -> &'static str {
    match direction {
        Direction::Read => "R",
        Direction::Write => "W",
        Direction::Discard => "D",
    }
}

fn fields(event: &TraceEvent, names: &TraceNames, out: &mut dyn Fields) {
    match event {
        TraceEvent::Insert { request: rq } => request(out, names, rq),
        TraceEvent::Merge {
            request,
            into,
            position,
        } => {
            out.number("rq", request.0);
            out.number("into", into.0);
            out.word(
                "position",
                match position {
                    MergeKind::Back => "back",
                    MergeKind::Front => "front",
                },
            );
        }
        TraceEvent::Coalesce { into, absorbed } => {
            out.number("into", into.0);
            out.number("absorbed", absorbed.0);
        }
        TraceEvent::Dispatch {
            request: rq,
            merged,
        } => {
            request(out, names, rq);
            out.number("merged", u64::from(*merged));
        }
        TraceEvent::Complete {
            request: rq,
            merged,
            latency,
            service,
            error,
        } => {
            request(out, names, rq);
            out.number("merged", u64::from(*merged));
            out.number("latency_ns", *latency);
            out.number("service_ns", *service);
            out.number("error", error.map_or(0, |e| u64::from(e.unsigned_abs())));
        }
        TraceEvent::FifoExpired { request, late } => {
            out.number("rq", request.0);
            out.number("late_ns", *late);
        }
        TraceEvent::BatchStart {
            class,
            start,
            starved,
        } => {
            out.word("class", batch_class(*class));
            out.word("start", batch_start(*start));
            out.flag("starved", *starved);
        }
        TraceEvent::Inject {
            request,
            queue: from,
            holder,
        } => {
            out.number("rq", request.0);
            queue(out, names, "", from);
            queue(out, names, "holder", holder);
        }
        TraceEvent::SliceStart { queue: q } => queue(out, names, "", q),
        TraceEvent::SliceTimer { queue: q, length } => {
            queue(out, names, "", q);
            out.number("length_ns", *length);
        }
        TraceEvent::SliceEnd {
            queue: q,
            reason,
            dispatched,
        } => {
            queue(out, names, "", q);
            out.word("reason", service_end(*reason));
            out.number("dispatched", *dispatched);
        }
        TraceEvent::BudgetStart {
            queue: q,
            budget,
            timeout,
            raising,
        } => {
            queue(out, names, "", q);
            out.number("budget", *budget);
            out.number("timeout_ns", *timeout);
            out.number("raising", *raising);
        }
        TraceEvent::BudgetEnd {
            queue: q,
            reason,
            service,
            budget,
            charged,
            next_budget,
        } => {
            queue(out, names, "", q);
            out.word("reason", service_end(*reason));
            out.number("service", *service);
            out.number("budget", *budget);
            out.number("charged", *charged);
            out.number("next_budget", *next_budget);
        }
        TraceEvent::Preempt {
            queue: q,
            by,
            reason,
        } => {
            queue(out, names, "", q);
            queue(out, names, "by", by);
            out.word("reason", preempt_reason(*reason));
        }
        TraceEvent::IdleStart {
            queue: q,
            kind,
            window,
        } => {
            queue(out, names, "", q);
            out.word("kind", idle_kind(*kind));
            out.number("window_ns", *window);
        }
        TraceEvent::IdleEnd {
            queue: q,
            kind,
            reason,
        } => {
            queue(out, names, "", q);
            out.word("kind", idle_kind(*kind));
            out.word("reason", idle_end(*reason));
        }
        TraceEvent::RaiseStart {
            queue: q,
            kind,
            coefficient,
            duration,
        } => {
            queue(out, names, "", q);
            out.word("kind", raise_kind(*kind));
            out.number("coefficient", *coefficient);
            out.number("duration_ns", *duration);
        }
        TraceEvent::RaiseEnd {
            queue: q,
            kind,
            reason,
        } => {
            queue(out, names, "", q);
            out.word("kind", raise_kind(*kind));
            out.word("reason", raise_end(*reason));
        }
        TraceEvent::GroupStart {
            group,
            class,
            workload,
            slice,
            resumed,
        } => {
            out.word("group", &names.group(*group));
            out.word("class", priority_class(*class));
            out.word("workload", self::workload(*workload));
            out.number("slice_ns", *slice);
            out.flag("resumed", *resumed);
        }
        TraceEvent::GroupEnd {
            group,
            charge,
            unit,
        } => {
            out.word("group", &names.group(*group));
            out.number("charge", *charge);
            out.word(
                "unit",
                match unit {
                    ChargeUnit::Time => "ns",
                    ChargeUnit::Requests => "requests",
                },
            );
        }
        TraceEvent::GroupMove { queue: q, to } => {
            queue(out, names, "", q);
            out.word("to", &names.group(*to));
        }
        TraceEvent::Hold {
            request,
            process,
            group,
            direction: dir,
            bytes,
            wait,
        } => {
            out.number("rq", request.0);
            out.number("process", u64::from(process.0));
            out.word("group", &names.group(*group));
            out.word("dir", direction(*dir));
            out.number("bytes", *bytes);
            out.number("wait_ns", *wait);
        }
        TraceEvent::Release {
            request,
            process,
            group,
            direction: dir,
            waited,
        } => {
            out.number("rq", request.0);
            out.number("process", u64::from(process.0));
            out.word("group", &names.group(*group));
            out.word("dir", direction(*dir));
            out.number("waited_ns", *waited);
        }
        TraceEvent::Outranked { process, outranked } => {
            out.number("process", u64::from(process.0));
            out.flag("outranked", *outranked);
        }
        TraceEvent::QueueMerge {
            process,
            from,
            into,
        } => {
            out.number("process", u64::from(process.0));
            queue(out, names, "from", from);
            queue(out, names, "into", into);
        }
        TraceEvent::QueueSplit { process, from } => {
            out.number("process", u64::from(process.0));
            queue(out, names, "from", from);
        }
        TraceEvent::DomainDepth {
            domain,
            from,
            depth,
            p99,
            congested,
        } => {
            out.word("domain", domain);
            out.number("from", u64::from(*from));
            out.number("depth", u64::from(*depth));
            out.number("p99", u64::from(*p99));
            out.flag("congested", *congested);
        }
        TraceEvent::LatencyScale {
            parent,
            by,
            up,
            cookie,
        } => {
            out.word("parent", &names.group(*parent));
            out.word("by", &by.map_or("timer".to_string(), |g| names.group(g)));
            out.word("dir", if *up { "up" } else { "down" });
            out.number("cookie", u64::from(*cookie));
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
            out.number("from_ppm", *from_ppm);
            out.number("vrate_ppm", *vrate_ppm);
            out.signed("busy_level", i64::from(*busy_level));
            out.number("read_missed_ppm", *read_missed_ppm);
            out.number("write_missed_ppm", *write_missed_ppm);
            out.number("rq_wait_pct", *rq_wait_pct);
            out.number("shortages", u64::from(*shortages));
            out.number("lagging", u64::from(*lagging));
        }
        TraceEvent::LatencyDepth { group, from, depth } => {
            let depth_word = |d: &Option<u32>| d.map_or("max".to_string(), |d| d.to_string());
            out.word("group", &names.group(*group));
            out.word("from", &depth_word(from));
            out.word("depth", &depth_word(depth));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::IdleKind;
    use crate::{IoPriority, ProcessId, RequestId};

    fn names() -> TraceNames {
        let mut groups = GroupTree::default();
        groups.ensure("a/b").unwrap();
        TraceNames::of(&groups)
    }

    #[test]
    fn text_and_json_carry_the_same_fields() {
        let queue = QueueRef {
            process: Some(ProcessId(3)),
            group: GroupId(2),
            priority: IoPriority::default(),
        };
        let event = TraceEvent::IdleStart {
            queue,
            kind: IdleKind::Queue,
            window: 8_000_000,
        };
        let mut text = String::new();
        render_text(12_000_000_001, &event, &names(), None, &mut text);
        assert_eq!(
            text,
            "   12.000000001 idle_start   queue=p3:BE4 group=a/b kind=queue window_ns=8000000\n"
        );
        let mut json = String::new();
        render_json(12_000_000_001, &event, &names(), Some("f\"1"), &mut json);
        assert_eq!(
            json,
            "{\"target\":\"f\\\"1\",\"time_ns\":12000000001,\"event\":\"idle_start\",\"queue\":\"p3:BE4\",\"group\":\"a/b\",\"kind\":\"queue\",\"window_ns\":8000000}\n"
        );
        let merge = TraceEvent::Merge {
            request: RequestId(5),
            into: RequestId(4),
            position: MergeKind::Front,
        };
        let mut text = String::new();
        render_text(0, &merge, &names(), Some("x"), &mut text);
        assert_eq!(
            text,
            "[x]     0.000000000 merge        rq=5 into=4 position=front\n"
        );
    }

    #[test]
    fn formats_parse() {
        assert_eq!("JSON".parse::<TraceFormat>(), Ok(TraceFormat::Json));
        assert_eq!("text".parse::<TraceFormat>(), Ok(TraceFormat::Text));
        let message = "xml".parse::<TraceFormat>().unwrap_err();
        assert!(message.contains("'xml'") && message.contains("text or json"));
    }
}
