//! The HTML fragment: escaped, self-contained, one `<rect>` per mark, ids under its prefix.

use ioslice_core::TraceSink;
use ioslice_timeline::{render_html, Lane, LaneKind, Mark, Timeline, TimelineRecorder};

mod common;
use common::{complete, dispatch, MS};

/// Two processes taking turns at the device, `turns` times.
fn alternating(names: Vec<String>, turns: u64) -> Timeline {
    let mut recorder = TimelineRecorder::new(names);
    for id in 0..turns {
        let process = (id % 2) as u32 + 1;
        recorder.record(id * 5 * MS, &dispatch(id, process));
        recorder.record(id * 5 * MS + 4 * MS, &complete(id, process));
    }
    recorder.finish()
}

/// Every `id="…"` value in `html`.
fn ids(html: &str) -> Vec<&str> {
    html.split(" id=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

#[test]
fn names_and_labels_are_escaped() {
    let mut timeline = alternating(vec!["a<b&\"c".into(), "plain".into()], 4);
    timeline.marks[0].label = "</title><script>alert(1)</script>".into();
    let html = render_html(&timeline, "run<1>&\"x\"");
    assert!(html.contains("a&lt;b&amp;&quot;c"));
    assert!(!html.contains("a<b&\"c"));
    assert!(html.contains("&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("id=\"run&lt;1&gt;&amp;&quot;x&quot;\""));
    assert!(html.contains("(\"run\\u003c1\\u003e\\u0026\\\"x\\\"\","));
    assert_eq!(html.matches("<script>").count(), 1);
}

#[test]
fn one_rect_per_mark() {
    let timeline = alternating(vec!["a".into(), "b".into()], 40);
    assert_eq!(timeline.marks.len(), 40);
    let html = render_html(&timeline, "t");
    assert_eq!(html.matches("<rect").count(), timeline.marks.len());
    assert_eq!(html.matches("<title>").count(), 40 + timeline.lanes.len());
    assert_eq!(html.matches("class=\"tl-service\"").count(), 40);
}

#[test]
fn every_id_starts_with_the_prefix_and_two_timelines_share_none() {
    let timeline = alternating(vec!["a".into(), "b".into()], 6);
    let first = render_html(&timeline, "runA");
    let second = render_html(&timeline, "runB");
    let (first_ids, second_ids) = (ids(&first), ids(&second));
    assert!(first_ids.len() >= 6);
    assert!(first_ids.iter().all(|id| id.starts_with("runA")));
    assert!(second_ids.iter().all(|id| id.starts_with("runB")));
    assert!(first_ids.iter().all(|id| !second_ids.contains(id)));
    assert!(first.starts_with("<section id=\"runA\""));
    assert!(first.trim_end().ends_with("</section>"));
}

#[test]
fn the_fragment_needs_nothing_from_outside() {
    let html = render_html(&alternating(vec!["a".into(), "b".into()], 6), "t");
    for outside in ["src=", "href=", "@import", "url(", "<link", "https://"] {
        assert!(!html.contains(outside), "{outside}");
    }
    // The only address is SVG's namespace (in the markup and in the script).
    assert_eq!(
        html.matches("http://").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
}

#[test]
fn the_axis_legend_and_note_are_drawn() {
    let timeline = alternating(vec!["a".into(), "b".into()], 600);
    let html = render_html(&timeline, "t");
    assert!(html.contains(">0.0 s</text>") || html.contains(">0 s</text>"));
    assert!(html.contains("requests at the device"));
    assert!(html.contains(&timeline.sampling_note()));
    assert!(html.contains("marks from 600 recorded"));
}

#[test]
fn instants_and_empty_timelines_render() {
    let empty = render_html(&Timeline::default(), "e");
    assert_eq!(empty.matches("<rect").count(), 0);
    assert!(empty.contains("<svg"));
    let timeline = Timeline {
        lanes: vec![Lane {
            name: "device".into(),
            kind: LaneKind::Device,
            group: None,
        }],
        marks: vec![Mark {
            lane: 0,
            start: MS,
            end: MS,
            kind: "preempt".into(),
            label: "now".into(),
            count: 1,
            coverage: 1000,
        }],
        duration: 2 * MS,
        sampling: Default::default(),
        detail: None,
    };
    let html = render_html(&timeline, "i");
    // An instant is drawn a nanosecond wide, its stroke makes it visible.
    assert!(html.contains("<rect class=\"tl-preempt\" x=\"1000\" y=\"0\" width=\"0.001\""));
}
