//! The page in a real browser: headless Chromium renders a report with a cgroup run (its
//! bandwidth stacked per cgroup and its decision timeline from the timeline recorder) and
//! two comparisons, takes screenshots that must not be blank, and dumps the DOM after the
//! page's scripts ran, in which every chart must have drawn data; no script may fail.
//!
//! Skipped, saying why, when no Chromium is installed (`apt-get install chromium`). With
//! `IOSLICE_SCREENSHOT_DIR` set, the screenshots are written there as well.

mod common;

use std::path::Path;

use common::browser::{chromium, file_url, run_chromium, script_errors};
use common::{comparisons, simulate, TWO_GROUPS};
use ioslice_report::{render_html, Report};

/// The share of pixels of a PNG that are not white.
fn non_white_share(png_path: &Path) -> f64 {
    let file = std::fs::File::open(png_path).expect("screenshot written");
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).expect("a frame");
    let channels = info.color_type.samples();
    let pixels = buffer[..info.buffer_size()].chunks(channels);
    let total = (info.width * info.height) as f64;
    let coloured = pixels
        .filter(|p| p.iter().take(3).any(|&c| c < 240))
        .count() as f64;
    coloured / total
}

/// Take a 1400×3000 screenshot of `page`; check it is not blank; keep a copy in
/// `IOSLICE_SCREENSHOT_DIR` when set.
fn screenshot(browser: &Path, dir: &Path, page: &Path, name: &str) {
    let shot = dir.join(name);
    let output = run_chromium(
        browser,
        &dir.join(format!("profile-{name}")),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,3000".to_string(),
        ],
        &file_url(page),
    );
    assert!(shot.is_file(), "no screenshot: {}", output.stderr);
    let share = non_white_share(&shot);
    assert!(
        share > 0.03,
        "{name} is nearly blank: {:.2} % not white",
        share * 100.0
    );
    if let Some(keep) = std::env::var_os("IOSLICE_SCREENSHOT_DIR") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).expect("screenshot directory");
        std::fs::copy(&shot, keep.join(name)).expect("screenshot copied");
    }
}

/// The DOM after the page's scripts ran, and the browser's log.
fn dump_dom(browser: &Path, dir: &Path, page: &Path, name: &str) -> (String, String) {
    let output = run_chromium(
        browser,
        &dir.join(format!("profile-{name}")),
        &[
            "--dump-dom".to_string(),
            "--enable-logging=stderr".to_string(),
            "--v=0".to_string(),
        ],
        &file_url(page),
    );
    (output.stdout, output.stderr)
}

#[test]
fn the_report_renders_in_chromium_with_every_chart_drawn() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: no chromium on the PATH (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, run) = simulate(TWO_GROUPS, "groups.fio", "cfq", "sim:sata-7200");
    assert!(run.timeline.as_ref().is_some_and(|t| !t.marks.is_empty()));
    let comparisons = comparisons();
    let full = Report {
        runs: vec![run],
        comparisons: comparisons.clone(),
    };
    let page = dir.path().join("report.html");
    std::fs::write(&page, render_html(&full)).expect("page written");
    let only_comparisons = dir.path().join("comparisons.html");
    std::fs::write(
        &only_comparisons,
        render_html(&Report {
            runs: Vec::new(),
            comparisons,
        }),
    )
    .expect("page written");

    screenshot(&browser, dir.path(), &page, "report-run.png");
    screenshot(
        &browser,
        dir.path(),
        &only_comparisons,
        "report-comparisons.png",
    );

    // The log does catch a failing script: a page that throws must show up in it.
    let probe = dir.path().join("probe.html");
    std::fs::write(
        &probe,
        "<!DOCTYPE html><html><body><p>probe</p><script>throw new Error(\"probe fails\");</script></body></html>",
    )
    .expect("probe written");
    let (_, probe_log) = dump_dom(&browser, dir.path(), &probe, "probe");
    assert!(
        !script_errors(&probe_log).is_empty(),
        "the browser's log shows no script error for a page that throws:\n{probe_log}"
    );

    let (dom, log) = dump_dom(&browser, dir.path(), &page, "report");
    let errors = script_errors(&log);
    assert!(errors.is_empty(), "script errors: {errors:#?}");
    let charts: Vec<&str> = dom.split("<svg class=\"chart chart-").skip(1).collect();
    // bandwidth, cgroups, percentiles, cdf; one plain comparison; one cgroup comparison cell.
    assert_eq!(charts.len(), 6, "charts in the DOM");
    for chart in charts {
        let body = chart.split("</svg>").next().unwrap_or("");
        let points: usize = body
            .split("data-points=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let shapes = body.matches("<polyline").count()
            + body.matches("<polygon").count()
            + body.matches("<rect").count()
            + body.matches("<circle").count();
        assert!(
            points > 0 && shapes > 1,
            "an empty chart: {}",
            &body[..body.len().min(120)]
        );
    }
    assert!(
        dom.contains("id=\"tl-0"),
        "the decision timeline is on the page"
    );
}
