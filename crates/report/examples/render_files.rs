//! Render report files into one page, as `ioslice report` will: each file a report, a run
//! or comparison record, or fio-format JSON.
//!
//!     cargo run -p ioslice-report --example render_files -- OUT.html FILE...

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or("usage: render_files OUT.html FILE...")?;
    let mut report = ioslice_report::Report::default();
    for path in args {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        report.extend(ioslice_report::Report::read(&text, &path)?);
    }
    std::fs::write(&out, ioslice_report::render_html(&report)).map_err(|e| format!("{out}: {e}"))
}
