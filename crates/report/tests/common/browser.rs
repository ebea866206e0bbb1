//! Driving headless Chromium: finding it, running it on a page with its own profile, and
//! reading its log for script errors.

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
