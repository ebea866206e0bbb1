//! The runs drawn together, in headless Chromium: a page of two simulated runs of one
//! reader (deadline and cfq) draws two series on one latency percentile chart, one CDF, one
//! bandwidth chart and one IOPS chart of its overlay, labelled by their schedulers, with legends beside
//! the plots and never over them. Skipped, saying why, when no Chromium is installed.

mod common;

use common::browser::probe_page;
use common::simulate;
use ioslice_report::{render_html, Report};

/// One O_DIRECT reader, for a line per run.
const ONE_READER: &str = "\
[global]
ioengine=psync
direct=1
bs=4k
runtime=2
time_based
[reader]
rw=randread
size=256m
filename=r
";

/// Per chart of the overlay: its lines drawn, its legend's entries, and the entries that
/// overlap its plotting area.
const PROBE: &str = r##"<script>
window.addEventListener("load", function () {
  var charts = [];
  document.querySelectorAll("#overlay svg.chart").forEach(function (svg) {
    var plot = client(svg), overlapping = [], legend = [];
    svg.parentNode.querySelectorAll("ul.legend li").forEach(function (li) {
      var r = li.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) legend.push(li.textContent);
      if (overlap({ l: r.left, t: r.top, r: r.right, b: r.bottom }, plot)) overlapping.push(li.textContent);
    });
    var lines = [].filter.call(svg.querySelectorAll("polyline"), function (p) {
      var layer = p.closest("g.ts-layer");
      var shown = !layer || getComputedStyle(layer).display !== "none";
      return shown && (layer || p.getAttribute("stroke-width") === "2");
    });
    var colours = {};
    lines.forEach(function (p) { colours[p.getAttribute("stroke").toLowerCase()] = true; });
    charts.push({ kind: svg.getAttribute("class"), lines: lines.length, colours: Object.keys(colours).length, legend: legend, overlapping: overlapping });
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(charts);
  document.body.appendChild(pre);
});
</script></body>"##;

#[test]
fn two_runs_share_a_latency_chart_and_a_bandwidth_chart_with_legends_beside_them() {
    let mut report = Report::default();
    for sched in ["deadline", "cfq"] {
        let (_, run) = simulate(ONE_READER, "one.fio", sched, "sim:sata-7200");
        report.extend(Report::of_run(run));
    }
    let Some(charts) = probe_page(&render_html(&report), PROBE, "", 10_000) else {
        return;
    };
    let charts = charts.as_array().expect("charts");
    let kinds: Vec<&str> = charts.iter().filter_map(|c| c["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "chart chart-percentiles",
            "chart chart-cdf",
            "chart chart-overlay",
            "chart chart-overlay-iops"
        ],
        "one latency percentile chart, one CDF, one bandwidth chart, one IOPS chart"
    );
    for chart in charts {
        let kind = &chart["kind"];
        assert_eq!(
            chart["legend"],
            serde_json::json!(["deadline", "cfq"]),
            "{kind}"
        );
        assert_eq!(chart["overlapping"], serde_json::json!([]), "{kind}");
        assert_eq!(chart["colours"], 2, "{kind}: a colour per run");
        assert_eq!(
            chart["lines"], 2,
            "{kind}: a line per run (the shown layer's)"
        );
    }
}
