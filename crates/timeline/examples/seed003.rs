//! A page with seed-003's timelines (two sequential readers on the 2004 IDE disk) under
//! deadline, anticipatory and cfq, written to standard output:
//!
//! ```text
//! cargo run --release -p ioslice-timeline --example seed003 -- [SECONDS] > seed003.html
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_sim::simulation::{run_traced, SimConfig};
use ioslice_timeline::{render_html, TimelineRecorder};

fn main() -> ExitCode {
    let seconds: u64 = match std::env::args().nth(1).map(|text| text.parse()) {
        None => 3,
        Some(Ok(seconds)) if seconds > 0 => seconds,
        Some(_) => {
            eprintln!("usage: seed003 [SECONDS]");
            return ExitCode::FAILURE;
        }
    };
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/seed-003/read-sequential-4k.fio");
    let mut job_file = match parse_file(&path, &ParseOptions::default()) {
        Ok(job_file) => job_file,
        Err(error) => {
            eprintln!("{}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    };
    for job in &mut job_file.jobs {
        job.numjobs = 2;
        job.runtime = Some(seconds.saturating_mul(1_000_000_000));
    }
    let mut page = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>seed-003 timelines</title>\
         </head><body>\n",
    );
    for sched in ["deadline", "as", "cfq"] {
        let (Ok(scheduler), Ok(device)) = (sched.parse(), "sim:ide-2004".parse()) else {
            eprintln!("{sched}: not a scheduler and device this build knows");
            return ExitCode::FAILURE;
        };
        let config = SimConfig::new(1, scheduler, device);
        let mut recorder = TimelineRecorder::new(vec!["client.0".into(), "client.1".into()]);
        if let Err(error) = run_traced(&job_file, &config, &mut recorder) {
            eprintln!("{sched}: {error}");
            return ExitCode::FAILURE;
        }
        page.push_str(&format!("<h2>{sched}</h2>\n"));
        page.push_str(&render_html(&recorder.finish(), &format!("tl-{sched}")));
    }
    page.push_str("</body></html>\n");
    print!("{page}");
    ExitCode::SUCCESS
}
