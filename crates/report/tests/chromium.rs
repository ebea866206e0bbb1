//! The page in a real browser: headless Chromium renders a report with a cgroup run (its
//! bandwidth stacked per cgroup and its decision timeline from the timeline recorder) and
//! two comparisons, takes screenshots that must not be blank, and dumps the DOM after the
//! page's scripts ran, in which every chart must have drawn data; no script may fail.
//!
//! Skipped, saying why, when no Chromium is installed (`apt-get install chromium`). With
//! `IOSLICE_SCREENSHOT_DIR` set, the screenshots are written there as well.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{comparisons, simulate, TWO_GROUPS};
use ioslice_report::{render_html, Report};

/// The first Chromium on the PATH.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| {
            ["chromium", "chromium-browser", "google-chrome"]
                .into_iter()
                .map(move |name| dir.join(name))
        })
        .find(|candidate| candidate.is_file())
}

/// What a Chromium run printed.
struct Printed {
    stdout: String,
    stderr: String,
}

/// Run Chromium headless on `page` with `args`, in a profile of its own (`profile`, also
/// where its output goes: to files, so that a full pipe never stalls it), for at most 90 s.
fn run_chromium(browser: &Path, profile: &Path, args: &[String], page: &Path) -> Printed {
    std::fs::create_dir_all(profile).expect("profile directory");
    let (out_path, err_path) = (profile.join("stdout.txt"), profile.join("stderr.txt"));
    let file = |path: &Path| std::fs::File::create(path).expect("output file");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(file(&out_path))
        .stderr(file(&err_path))
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    while child.try_wait().expect("chromium runs").is_none() {
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium took more than 90 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let read = |path: &Path| {
        String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
    };
    Printed {
        stdout: read(&out_path),
        stderr: read(&err_path),
    }
}

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
        page,
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
        page,
    );
    (output.stdout, output.stderr)
}

/// Lines of the browser's log that report a script error.
fn script_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|line| line.contains("Uncaught") || line.contains(":ERROR:CONSOLE"))
        .collect()
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
