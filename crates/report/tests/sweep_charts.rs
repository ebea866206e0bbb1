//! A sweep's charts in headless Chromium: the lines over one axis draw a line and an error
//! bar per point of each series, the 3D bars draw three faces per bar, every mark inside its
//! chart, and the legends sit beside the plots, never over them. Skipped, saying why, when
//! no Chromium is installed.

mod common;

use common::browser::probe_page;
use ioslice_report::charts::sweep::{bars3d, lines, Grid, Spread, SweepLine};
use ioslice_report::html::standalone;

/// Per chart: its kind, polygons and polylines drawn, whether every one lies inside the
/// chart's box, and the legend entries over its plotting area.
const PROBE: &str = r##"<script>
window.addEventListener("load", function () {
  var charts = [];
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var plot = client(svg), box = svg.getBoundingClientRect(), overlapping = [], outside = 0;
    svg.parentNode.querySelectorAll("ul.legend li").forEach(function (li) {
      var r = li.getBoundingClientRect();
      if (overlap({ l: r.left, t: r.top, r: r.right, b: r.bottom }, plot)) overlapping.push(li.textContent);
    });
    var marks = svg.querySelectorAll("polygon, polyline");
    marks.forEach(function (m) {
      var r = m.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) outside++;
    });
    charts.push({ kind: svg.getAttribute("class"), polygons: svg.querySelectorAll("polygon").length,
                  width: Math.round(box.width), outside: outside, overlapping: overlapping });
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(charts);
  document.body.appendChild(pre);
});
</script></body>"##;

fn spread(mean: f64) -> Option<Spread> {
    Spread::of(&[mean * 0.9, mean, mean * 1.1])
}

#[test]
fn sweep_lines_and_3d_bars_render_inside_their_charts_with_legends_beside() {
    let depths: Vec<String> = ["1", "2", "4", "8"].iter().map(|s| s.to_string()).collect();
    let scheds: Vec<String> = ["cfq", "bfq"].iter().map(|s| s.to_string()).collect();
    let rows = vec![
        vec![spread(60.0), spread(120.0), spread(240.0), spread(390.0)],
        vec![spread(62.0), spread(125.0), None, spread(400.0)],
    ];
    let series: Vec<SweepLine> = scheds
        .iter()
        .zip(&rows)
        .map(|(name, values)| SweepLine {
            name: format!("sched={name}"),
            values: values.clone(),
        })
        .collect();
    let line_chart = lines("Total bandwidth", "MiB/s", "iodepth", &depths, &series);
    let grid = Grid {
        x: ("iodepth", &depths),
        z: ("sched", &scheds),
        cells: &rows,
    };
    let bar_chart = bars3d("Total bandwidth", "MiB/s", &grid);
    assert_eq!((line_chart.points, bar_chart.points), (7, 7));
    let body = format!("{}{}", line_chart.figure(), bar_chart.figure());
    let Some(charts) = probe_page(&standalone("sweep", &body), PROBE, "", 5_000) else {
        return;
    };
    let charts = charts.as_array().expect("charts");
    assert_eq!(charts.len(), 2);
    assert_eq!(charts[0]["kind"], "chart chart-sweep-lines");
    assert_eq!(charts[1]["kind"], "chart chart-sweep-bars3d");
    // Three faces per bar drawn (7 bars).
    assert_eq!(charts[1]["polygons"], 21);
    for chart in charts {
        let kind = &chart["kind"];
        assert!(
            chart["width"].as_u64().expect("width") > 400,
            "{kind}: drawn wide"
        );
        assert_eq!(chart["outside"], 0, "{kind}: every mark inside the chart");
        assert_eq!(chart["overlapping"], serde_json::json!([]), "{kind}");
    }
}
