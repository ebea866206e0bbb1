//! The runs drawn together, in headless Chromium: a page of two simulated runs of one
//! reader (deadline and cfq) draws two series on one latency percentile chart, one CDF and
//! one bandwidth chart of its overlay, labelled by their schedulers, with legends beside
//! the plots and never over them. Skipped, saying why, when no Chromium is installed.

mod common;

use common::browser::{chromium, file_url, run_chromium, script_errors};
use common::simulate;
use ioslice_report::{render_html, Report};
use serde_json::Value;

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
  function client(svg) {
    var plot = svg.getAttribute("data-plot").split(" ").map(Number);
    var box = svg.getBoundingClientRect();
    var sx = box.width / Number(svg.getAttribute("width"));
    var sy = box.height / Number(svg.getAttribute("height"));
    return { l: box.left + plot[0] * sx, t: box.top + plot[1] * sy, r: box.left + plot[2] * sx, b: box.top + plot[3] * sy };
  }
  function overlap(a, b) { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b; }
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
    let Some(browser) = chromium() else {
        eprintln!("skipped: no chromium on the PATH (apt-get install chromium)");
        return;
    };
    let mut report = Report::default();
    for sched in ["deadline", "cfq"] {
        let (_, run) = simulate(ONE_READER, "one.fio", sched, "sim:sata-7200");
        report.extend(Report::of_run(run));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("overlay.html");
    let html = render_html(&report).replacen("</body>", PROBE, 1);
    std::fs::write(&page, html).expect("page written");
    let printed = run_chromium(
        &browser,
        &dir.path().join("profile"),
        &[
            "--dump-dom".to_string(),
            "--enable-logging=stderr".to_string(),
            "--v=0".to_string(),
            "--virtual-time-budget=10000".to_string(),
            "--window-size=1400,900".to_string(),
        ],
        &file_url(&page),
    );
    let errors = script_errors(&printed.stderr);
    assert!(errors.is_empty(), "script errors: {errors:#?}");
    let json = printed
        .stdout
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .expect("the probe ran");
    let charts: Value = serde_json::from_str(json).expect("probe JSON");
    let charts = charts.as_array().expect("charts");
    let kinds: Vec<&str> = charts.iter().filter_map(|c| c["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "chart chart-percentiles",
            "chart chart-cdf",
            "chart chart-overlay"
        ],
        "one latency percentile chart, one CDF, one bandwidth chart"
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
