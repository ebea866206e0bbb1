//! The tables of `ioslice seeds`: per scenario file, a row per judged figure (post, ioslice,
//! ratio, whether it holds), then how many hold, predictions and calibration apart; at the
//! end the same count per directory of scenarios (one per post). As text for a terminal or
//! as Markdown for docs/experiments.md.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::Line;

/// Figures that hold, out of those judged, predictions and calibration apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    predicted: (usize, usize),
    calibrated: (usize, usize),
}

impl Tally {
    fn add(&mut self, line: &Line) {
        let held = line.judged.iter().filter(|j| j.holds).count();
        let slot = if line.figure.calibration {
            &mut self.calibrated
        } else {
            &mut self.predicted
        };
        slot.0 += held;
        slot.1 += line.judged.len();
    }

    fn merge(&mut self, other: Tally) {
        self.predicted.0 += other.predicted.0;
        self.predicted.1 += other.predicted.1;
        self.calibrated.0 += other.calibrated.0;
        self.calibrated.1 += other.calibrated.1;
    }

    /// `40 of 54 hold: predictions 38 of 50, calibration 2 of 4`.
    fn sentence(self) -> String {
        let held = self.predicted.0 + self.calibrated.0;
        let judged = self.predicted.1 + self.calibrated.1;
        let mut text = format!("{held} of {judged} hold");
        if self.calibrated.1 > 0 {
            let _ = write!(
                text,
                ": predictions {} of {}, calibration {} of {}",
                self.predicted.0, self.predicted.1, self.calibrated.0, self.calibrated.1
            );
        }
        text
    }
}

/// Every line's table, file by file in the order given, and the count per directory.
pub fn render(lines: &[Line], markdown: bool) -> String {
    let mut out = String::new();
    let mut files: Vec<&Path> = Vec::new();
    for line in lines {
        if !files.contains(&line.file.as_path()) {
            files.push(&line.file);
        }
    }
    let mut directories: BTreeMap<String, Tally> = BTreeMap::new();
    for file in files {
        let of_file: Vec<&Line> = lines.iter().filter(|l| l.file == file).collect();
        let tally = file_table(&mut out, file, &of_file, markdown);
        let directory = file
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        directories.entry(directory).or_default().merge(tally);
    }
    summary(&mut out, &directories, markdown);
    out
}

/// One file's table; what holds in it.
fn file_table(out: &mut String, file: &Path, lines: &[&Line], markdown: bool) -> Tally {
    let mut tally = Tally::default();
    let header = [
        "scheduler",
        "run",
        "figure",
        "post",
        "ioslice",
        "ratio",
        "holds",
        "note",
    ];
    let mut rows: Vec<[String; 8]> = Vec::new();
    for line in lines {
        tally.add(line);
        for judged in &line.judged {
            let ratio = if judged.post > 0.0 {
                format!("{:.2}", judged.ioslice / judged.post)
            } else {
                "-".into()
            };
            rows.push([
                line.figure.scheduler.clone(),
                run_text(line),
                judged.figure.clone(),
                number(judged.post),
                number(judged.ioslice),
                ratio,
                if judged.holds { "yes" } else { "no" }.into(),
                judged.note.clone(),
            ]);
        }
    }
    if markdown {
        let _ = writeln!(out, "#### `{}`\n", file.display());
        markdown_table(out, &header, &rows);
        let _ = writeln!(out, "\n{}.\n", tally.sentence());
    } else {
        let _ = writeln!(out, "{}", file.display());
        text_table(out, &header, &rows);
        let _ = writeln!(out, "  {}\n", tally.sentence());
    }
    tally
}

/// The count per directory of scenarios, and over all of them.
fn summary(out: &mut String, directories: &BTreeMap<String, Tally>, markdown: bool) {
    let mut all = Tally::default();
    let mut rows: Vec<[String; 2]> = Vec::new();
    for (directory, tally) in directories {
        all.merge(*tally);
        rows.push([directory.clone(), tally.sentence()]);
    }
    rows.push(["all".into(), all.sentence()]);
    if markdown {
        markdown_table(out, &["scenarios", "figures"], &rows);
    } else {
        text_table(out, &["scenarios", "figures"], &rows);
    }
}

/// `clients=2 --cgroup=test1:rbps=8M (calibration)`, or `-` for a run of the file as it is.
fn run_text(line: &Line) -> String {
    let mut words: Vec<String> = Vec::new();
    if let Some(clients) = line.figure.clients {
        words.push(format!("clients={clients}"));
    }
    words.extend(
        line.figure
            .options
            .iter()
            .map(|(key, value)| format!("--{key}={value}")),
    );
    if line.figure.calibration {
        words.push("(calibration)".into());
    }
    if words.is_empty() {
        "-".into()
    } else {
        words.join(" ")
    }
}

/// Whole numbers from 100 up, one decimal below.
fn number(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn markdown_table<const N: usize>(out: &mut String, header: &[&str; N], rows: &[[String; N]]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(N));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|cell| cell.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

fn text_table<const N: usize>(out: &mut String, header: &[&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let mut text = String::from(" ");
        for (cell, width) in cells.iter().zip(widths) {
            let _ = write!(text, " {cell:width$}");
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}
