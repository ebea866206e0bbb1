//! Driving headless Chromium: finding it, running it on a page with its own profile,
//! reading its log for script errors, and running a probe script on a page.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The first Chromium on the PATH.
pub fn chromium() -> Option<PathBuf> {
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
pub struct Printed {
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

/// `page` as a `file://` address.
pub fn file_url(page: &Path) -> String {
    format!("file://{}", page.display())
}

/// Run Chromium headless on `url` with `args`, in a profile of its own (`profile`, also
/// where its output goes: to files, so that a full pipe never stalls it), for at most 90 s.
pub fn run_chromium(browser: &Path, profile: &Path, args: &[String], url: &str) -> Printed {
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
        .arg(url)
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
            panic!("chromium took more than 90 s on {url}");
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

/// Lines of the browser's log that report a script error.
pub fn script_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|line| line.contains("Uncaught") || line.contains(":ERROR:CONSOLE"))
        .collect()
}

/// Functions a probe script may call: `client(svg)`, a chart's plotting area in page
/// coordinates (from its `data-plot` attribute), and `overlap(a, b)` of two such boxes.
pub const PLOT_GEOMETRY: &str = r##"<script>
function client(svg) {
  var plot = svg.getAttribute("data-plot").split(" ").map(Number);
  var box = svg.getBoundingClientRect();
  var sx = box.width / Number(svg.getAttribute("width"));
  var sy = box.height / Number(svg.getAttribute("height"));
  return { l: box.left + plot[0] * sx, t: box.top + plot[1] * sy, r: box.left + plot[2] * sx, b: box.top + plot[3] * sy };
}
function overlap(a, b) { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b; }
</script>"##;

/// Open `html` in Chromium (at `#fragment`, with `budget_ms` of virtual time) with
/// [`PLOT_GEOMETRY`] and `probe`, a script that writes its findings as JSON into a
/// `<pre id="probe">`, and return them; `None`, saying so, when there is no Chromium. A
/// script error fails the test.
pub fn probe_page(
    html: &str,
    probe: &str,
    fragment: &str,
    budget_ms: u32,
) -> Option<serde_json::Value> {
    let Some(browser) = chromium() else {
        eprintln!("skipped: no chromium on the PATH (apt-get install chromium)");
        return None;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("page.html");
    let scripts = format!("{PLOT_GEOMETRY}{probe}");
    std::fs::write(&page, html.replacen("</body>", &scripts, 1)).expect("page written");
    let printed = run_chromium(
        &browser,
        &dir.path().join("profile"),
        &[
            "--dump-dom".to_string(),
            "--enable-logging=stderr".to_string(),
            "--v=0".to_string(),
            format!("--virtual-time-budget={budget_ms}"),
            "--window-size=1400,900".to_string(),
        ],
        &format!("{}{fragment}", file_url(&page)),
    );
    let errors = script_errors(&printed.stderr);
    assert!(errors.is_empty(), "script errors: {errors:#?}");
    let json = printed
        .stdout
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("no probe in the DOM: {}", printed.stderr));
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    Some(serde_json::from_str(&json).expect("the probe's JSON"))
}
