//! What a reader does with the page, done in headless Chromium: a script appended to the
//! page acts as the reader (picks a smoothing window, zooms the timeline) once the page has
//! loaded, measures what the browser laid out and drew, and leaves it as JSON in a
//! `<pre id="probe">` that the test reads from the DOM Chromium dumps.
//!
//! - No legend entry overlaps its chart's plotting area.
//! - The smoothing control changes the drawn series, and the view control switches to the
//!   share of bytes done.
//! - A cfq run whose overview was coarsened as a page of many runs coarsens it, opened at
//!   one second (`#tl-0=1-2`), scrolls to its timeline and draws from its finer record one
//!   cgroup in service at a time (the overview alone shows several at once); zooming in
//!   rewrites the address, and zooming back out removes the timeline's part of it.
//!
//! Skipped, saying why, when no Chromium is installed.

mod common;

use common::browser::probe_page;
use common::{simulate_capped, TWO_GROUPS};
use ioslice_report::{render_html, Report};
use serde_json::Value;

/// Measures the legends and works the first bandwidth chart's controls.
const CHARTS_PROBE: &str = r##"<script>
window.addEventListener("load", function () {
  var legends = { charts: 0, entries: 0, overlapping: [] };
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    legends.charts++;
    var plot = client(svg);
    svg.parentNode.querySelectorAll("ul.legend li").forEach(function (li) {
      var r = li.getBoundingClientRect();
      var box = { l: r.left, t: r.top, r: r.right, b: r.bottom };
      if (r.width > 0 && r.height > 0) legends.entries++;
      if (overlap(box, plot)) legends.overlapping.push(svg.getAttribute("aria-label") + ": " + li.textContent);
    });
  });
  var fig = document.querySelector("figure.ts");
  function shown() {
    return [].filter.call(fig.querySelectorAll("g.ts-layer"), function (g) {
      return getComputedStyle(g).display !== "none";
    }).map(function (g) {
      return {
        view: g.getAttribute("data-view"),
        window: g.getAttribute("data-window-ns"),
        caption: g.querySelector("text.ts-window-label").textContent,
        points: [].map.call(g.querySelectorAll("polyline"), function (p) { return p.getAttribute("points"); })
      };
    });
  }
  var windows = fig.querySelector("select.ts-window"), view = fig.querySelector("select.ts-view");
  var before = shown();
  var chosen = windows.options[0].value;
  windows.value = chosen;
  windows.dispatchEvent(new Event("change"));
  var after = shown();
  view.value = "share";
  view.dispatchEvent(new Event("change"));
  var share = shown();
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify({ legends: legends, before: before, chosen: chosen, after: after, share: share, windowDisabled: windows.disabled });
  document.body.appendChild(pre);
});
</script></body>"##;

/// Waits for the first timeline's finer record, counts cgroups in service over the second
/// in view, then zooms in and back out.
const TIMELINE_PROBE: &str = r##"<script>
window.addEventListener("load", function () {
  var section = document.getElementById("tl-0");
  var scroll = { y: window.scrollY, top: section.getBoundingClientRect().top, height: window.innerHeight, page: document.documentElement.scrollHeight };
  var tries = 0;
  function groups(layer) {
    var spans = [].map.call(section.querySelectorAll("#tl-0-" + layer + " rect.tl-group"), function (r) {
      return { lane: Math.floor(Number(r.getAttribute("y")) / 28), x: Number(r.getAttribute("x")), w: Number(r.getAttribute("width")) };
    });
    var worst = 0, served = 0;
    for (var t = 1e6; t <= 2e6; t += 1000) {
      var lanes = {};
      spans.forEach(function (s) { if (s.x < t && t < s.x + s.w) lanes[s.lane] = true; });
      var n = Object.keys(lanes).length;
      worst = Math.max(worst, n);
      if (n > 0) served++;
    }
    return { rects: spans.length, worst: worst, served: served };
  }
  function probe() {
    if (section.getAttribute("data-detail") !== "shown" && tries++ < 400) {
      setTimeout(probe, 25);
      return;
    }
    var result = { scroll: scroll, detail: section.getAttribute("data-detail"), fine: groups("fine"), coarse: groups("coarse"), opened: location.hash };
    document.getElementById("tl-0-in").click();
    result.zoomedIn = location.hash;
    document.getElementById("tl-0-reset").click();
    result.reset = location.hash;
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = JSON.stringify(result);
    document.body.appendChild(pre);
  }
  probe();
});
</script></body>"##;

/// The page of `report` with `probe` appended, loaded at `fragment` in a 1400×900 window;
/// the probe's JSON.
fn probe(report: &Report, probe: &str, fragment: &str) -> Option<Value> {
    probe_page(&render_html(report), probe, fragment, 20_000)
}

/// A cfq run of two weighted cgroups, its overview capped hard (as a page of many runs caps
/// each) and its finer record kept.
fn coarsened_cfq_run() -> Report {
    let (_, run) = simulate_capped(
        TWO_GROUPS,
        "groups.fio",
        "cfq",
        "sim:sata-7200",
        (150, 100_000),
    );
    let timeline = run.timeline.as_ref().expect("a timeline");
    assert!(
        timeline.sampling.resolution > 0,
        "the overview is coarsened"
    );
    assert!(timeline.detail.is_some(), "with a finer record");
    Report {
        runs: vec![run],
        comparisons: Vec::new(),
    }
}

#[test]
fn legends_stay_out_of_the_plots_and_the_smoothing_window_changes_the_lines() {
    let report = Report {
        runs: vec![
            simulate_capped(
                TWO_GROUPS,
                "groups.fio",
                "cfq",
                "sim:sata-7200",
                (10_000, 10_000),
            )
            .1,
        ],
        comparisons: common::comparisons(),
    };
    let Some(result) = probe(&report, CHARTS_PROBE, "") else {
        return;
    };
    let legends = &result["legends"];
    // bandwidth per job and per cgroup, percentiles, CDF; two comparison charts.
    assert_eq!(legends["charts"], 6, "{legends}");
    assert!(
        legends["entries"].as_u64().unwrap_or(0) >= 6 * 2,
        "{legends}"
    );
    assert_eq!(
        legends["overlapping"],
        Value::Array(Vec::new()),
        "{legends}"
    );

    let before = result["before"].as_array().expect("layers");
    let after = result["after"].as_array().expect("layers");
    assert_eq!(before.len(), 1, "one layer shown: {before:?}");
    assert_eq!(after.len(), 1, "one layer shown: {after:?}");
    assert_eq!(after[0]["window"], result["chosen"]);
    assert_ne!(before[0]["window"], after[0]["window"]);
    assert_ne!(before[0]["points"], after[0]["points"], "the lines changed");
    assert!(
        before[0]["caption"]
            .as_str()
            .is_some_and(|c| c.contains("moving average over")),
        "the chart says its window: {}",
        before[0]["caption"]
    );
    assert!(after[0]["caption"]
        .as_str()
        .is_some_and(|c| c.contains("as recorded")));
    let share = result["share"].as_array().expect("layers");
    assert_eq!(share.len(), 1);
    assert_eq!(share[0]["view"], "share");
    assert_eq!(
        result["windowDisabled"], true,
        "no window for the share view"
    );
}

#[test]
fn a_coarsened_timeline_at_one_second_shows_one_cgroup_in_service_at_a_time() {
    let Some(result) = probe(&coarsened_cfq_run(), TIMELINE_PROBE, "#tl-0=1-2") else {
        return;
    };
    assert_eq!(result["detail"], "shown", "{result}");
    let fine = &result["fine"];
    assert_eq!(
        fine["worst"], 1,
        "one cgroup at a time from the finer record: {result}"
    );
    assert!(fine["served"].as_u64().unwrap_or(0) > 500, "{result}");
    assert!(
        result["coarse"]["worst"].as_u64().unwrap_or(0) >= 2,
        "the overview alone shows both in service at once: {result}"
    );
    let scroll = &result["scroll"];
    assert!(
        scroll["y"].as_f64().unwrap_or(0.0) > 0.0,
        "scrolled: {scroll}"
    );
    // At the top of the window, or as near as the end of the page lets it come.
    let top = scroll["top"].as_f64().unwrap_or(f64::MAX);
    let height = scroll["height"].as_f64().unwrap_or(0.0);
    let at_end = scroll["y"].as_f64().unwrap_or(0.0) + height
        >= scroll["page"].as_f64().unwrap_or(f64::MAX) - 2.0;
    assert!(
        top > -2.0 && top < height && (top < 2.0 || at_end),
        "the timeline is in view: {scroll}"
    );
    assert_eq!(result["opened"], "#tl-0=1-2");
    assert_eq!(
        result["zoomedIn"], "#tl-0=1.25-1.75",
        "the address follows the zoom"
    );
    assert_eq!(
        result["reset"], "",
        "the whole run needs no part in the address"
    );
}
