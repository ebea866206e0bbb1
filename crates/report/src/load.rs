//! Reading report files back, for `ioslice report FILE...`: each file is a whole
//! [`Report`], one [`RunRecord`], one [`ComparisonRecord`] (as a run or a comparison wrote
//! them with serde), or fio-format JSON ([`RunRecord::from_fio_json`]); [`Report::read`]
//! tells which by the keys of the top-level object, and [`Report::extend`] puts several
//! together in the order given.

use serde_json::Value;

use crate::model::{ComparisonRecord, Report, RunRecord};

impl Report {
    /// The report in `text`, from a file named `name` (in errors): a report, a run record
    /// or a comparison record as serde wrote them, or fio-format JSON. Errors are one line
    /// naming the file and what was expected.
    pub fn read(text: &str, name: &str) -> Result<Report, String> {
        const EXPECTED: &str =
            "expected an ioslice report, run or comparison record (JSON), or fio's JSON output";
        let object = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|value| value.as_object().cloned());
        let Some(object) = object else {
            // fio may print warnings before its JSON; its reader skips them.
            return RunRecord::from_fio_json(text, name).map(Report::of_run);
        };
        let has = |key: &str| object.contains_key(key);
        let value = Value::Object(object.clone());
        let wrong = |what: &str, e: serde_json::Error| {
            format!("{name}: not a valid {what} ({e}); {EXPECTED}")
        };
        if has("runs") && has("comparisons") {
            serde_json::from_value(value).map_err(|e| wrong("report", e))
        } else if has("settings") && has("title") {
            serde_json::from_value(value)
                .map(Report::of_run)
                .map_err(|e| wrong("run record", e))
        } else if has("cells") {
            serde_json::from_value::<ComparisonRecord>(value)
                .map(|comparison| Report {
                    runs: Vec::new(),
                    comparisons: vec![comparison],
                })
                .map_err(|e| wrong("comparison record", e))
        } else {
            RunRecord::from_fio_json(text, name).map(Report::of_run)
        }
    }

    /// A report of one run.
    pub fn of_run(run: RunRecord) -> Report {
        Report {
            runs: vec![run],
            comparisons: Vec::new(),
        }
    }

    /// Add another report's runs and comparisons after this one's.
    pub fn extend(&mut self, other: Report) {
        self.runs.extend(other.runs);
        self.comparisons.extend(other.comparisons);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ComparisonCell;

    #[test]
    fn each_kind_of_file_is_told_apart() {
        let comparison = ComparisonRecord {
            title: "c".into(),
            cells: vec![ComparisonCell::default()],
            ..ComparisonRecord::default()
        };
        let text = serde_json::to_string(&comparison).expect("serializes");
        let read = Report::read(&text, "c.json").expect("reads");
        assert_eq!(read.comparisons, [comparison]);
        let mut whole = Report::default();
        whole.extend(read);
        let text = serde_json::to_string(&whole).expect("serializes");
        assert_eq!(Report::read(&text, "r.json").expect("reads"), whole);
        let fio = r#"{"fio version": "fio-3.33", "jobs": []}"#;
        assert_eq!(Report::read(fio, "f.json").expect("reads").runs.len(), 1);
        let error = Report::read("{\"runs\": 1, \"comparisons\": []}", "bad.json").unwrap_err();
        assert!(error.starts_with("bad.json: not a valid report"), "{error}");
        let error = Report::read("nothing", "n.txt").unwrap_err();
        assert!(error.starts_with("n.txt: "), "{error}");
    }
}
