//! A sweep's charts in headless Chromium: the lines over one axis draw a line and an error
//! bar per point of each series, the 3D bars draw three faces per bar, the per-job and
//! per-cgroup lines (many lines, long legend names) draw every line with its means in
//! `data-values`, every mark inside its chart, and the legends sit beside the plots, never
//! over them. Skipped, saying why, when no Chromium is installed.

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
                  polylines: svg.querySelectorAll("polyline").length, values: svg.getAttribute("data-values"),
                  legend: svg.parentNode.querySelectorAll("ul.legend li").length,
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
    // Per job: three jobs (two in cgroups) at each scheduler, six lines with long names;
    // per cgroup: each group's share.
    let jobs: Vec<SweepLine> = ["cfq", "bfq"]
        .iter()
        .flat_map(|sched| {
            [
                "reader in cgroup a",
                "writer in cgroup b",
                "reader in the root",
            ]
            .iter()
            .enumerate()
            .map(move |(j, job)| SweepLine {
                name: format!("{job}, sched={sched}"),
                values: (0..4)
                    .map(|x| spread(10.0 * (j as f64 + 1.0) + 5.0 * f64::from(x)))
                    .collect(),
            })
        })
        .collect();
    let shares: Vec<SweepLine> = ["cgroup a", "cgroup b", "cgroup /"]
        .iter()
        .zip([50.0, 30.0, 20.0])
        .map(|(name, share)| SweepLine {
            name: name.to_string(),
            values: (0..4).map(|_| spread(share)).collect(),
        })
        .collect();
    let job_chart = lines("Bandwidth per job", "MiB/s", "iodepth", &depths, &jobs);
    let share_chart = lines(
        "Share of bandwidth per cgroup",
        "% of the bandwidth",
        "iodepth",
        &depths,
        &shares,
    );
    assert_eq!((job_chart.points, share_chart.points), (24, 12));
    let body = format!(
        "{}{}{}{}",
        line_chart.figure(),
        bar_chart.figure(),
        job_chart.figure(),
        share_chart.figure()
    );
    let Some(charts) = probe_page(&standalone("sweep", &body), PROBE, "", 5_000) else {
        return;
    };
    let charts = charts.as_array().expect("charts");
    assert_eq!(charts.len(), 4);
    assert_eq!(charts[0]["kind"], "chart chart-sweep-lines");
    assert_eq!(charts[1]["kind"], "chart chart-sweep-bars3d");
    for (chart, lines) in [(&charts[2], &jobs), (&charts[3], &shares)] {
        assert_eq!(chart["kind"], "chart chart-sweep-lines");
        assert_eq!(chart["legend"], lines.len(), "a legend entry per line");
        assert!(
            chart["polylines"].as_u64().expect("polylines") >= lines.len() as u64,
            "every line drawn: {chart}"
        );
        // The chart's data is the lines' means, in legend order.
        let values: Vec<Vec<f64>> = chart["values"]
            .as_str()
            .expect("data-values")
            .split(';')
            .map(|line| line.split(' ').map(|v| v.parse().expect("mean")).collect())
            .collect();
        let means: Vec<Vec<f64>> = lines
            .iter()
            .map(|l| l.values.iter().map(|v| v.expect("value").mean).collect())
            .collect();
        assert_eq!(values, means);
    }
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
