//! Reading a run back from fio-format JSON: fio's own output (3.x, `--output-format=json`
//! or `json+`) and ioslice's (`--output-format json`).
//!
//! Each `jobs[]` entry becomes a [`JobRecord`]: its name, its cgroup (the job's `cgroup`
//! option, else the global one), and per direction that saw I/O its bytes, bandwidth,
//! requests, runtime and completion latency. The latency's CDF comes from `clat_ns.bins`
//! (`json+`: latency value → count) when present, else from `clat_ns.percentile`; a job
//! with no completion percentiles (fio's `lat_percentiles=1`) uses `lat_ns`. fio's JSON has
//! no per-request record and no scheduler decisions, so the run has no bandwidth series and
//! no timeline, and the page says so. Anything before the first `{` (fio's warnings) is
//! skipped. Errors are one line naming the file and what was expected.

use serde_json::{Map, Value};

use crate::model::{DirectionRecord, JobRecord, LatencyRecord, Percentile, RunRecord};
use crate::settings::{DeviceSettings, SchedulerSettings, Settings};

const EXPECTED: &str = "expected the JSON output of fio (--output-format=json or json+) or ioslice";

impl RunRecord {
    /// Read a run from fio-format JSON: fio's own (`--output-format=json` or `json+`, 3.x)
    /// or ioslice's. `name` names the file in errors and titles. See the module
    /// documentation.
    pub fn from_fio_json(text: &str, name: &str) -> Result<RunRecord, String> {
        parse(text, name)
    }
}

/// Parse `text`, named `name` in errors and in the run's title.
pub fn parse(text: &str, name: &str) -> Result<RunRecord, String> {
    let start = text
        .find('{')
        .ok_or_else(|| format!("{name}: no JSON object found; {EXPECTED}"))?;
    let document: Value = serde_json::from_str(&text[start..])
        .map_err(|e| format!("{name}: not valid JSON ({e}); {EXPECTED}"))?;
    let top = document
        .as_object()
        .ok_or_else(|| format!("{name}: the JSON is not an object; {EXPECTED}"))?;
    let jobs = top
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{name}: no \"jobs\" array; {EXPECTED}"))?;
    let global = string_pairs(top.get("global options"));
    let global_cgroup = lookup(&global, "cgroup");
    let jobs = jobs
        .iter()
        .enumerate()
        .map(|(index, job)| {
            job_record(job, global_cgroup.as_deref())
                .map_err(|why| format!("{name}: jobs[{index}]: {why}; {EXPECTED}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let version = top
        .get("fio version")
        .and_then(Value::as_str)
        .map(str::to_string);
    let disks: Vec<&str> = top
        .get("disk_util")
        .and_then(Value::as_array)
        .map(|disks| {
            disks
                .iter()
                .filter_map(|d| d.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let first_job_options = top
        .get("jobs")
        .and_then(Value::as_array)
        .and_then(|jobs| jobs.first())
        .map(|job| string_pairs(job.get("job options")))
        .unwrap_or_default();
    let job_options = all_job_options(top.get("jobs"));
    let scheduler =
        lookup(&first_job_options, "ioscheduler").or_else(|| lookup(&global, "ioscheduler"));
    let seed = lookup(&global, "randseed").and_then(|s| s.parse().ok());
    let settings = Settings {
        job_file: name.to_string(),
        device: DeviceSettings {
            spec: if disks.is_empty() {
                "not recorded".to_string()
            } else {
                disks.join(", ")
            },
            summary: "as fio's disk_util names it; fio's JSON lists no device parameters"
                .to_string(),
            params: Vec::new(),
        },
        scheduler: match scheduler {
            Some(spec) => SchedulerSettings::named(&spec),
            None => SchedulerSettings {
                spec: "not recorded (the system's)".to_string(),
                name: None,
                tunables: Vec::new(),
            },
        },
        controller: None,
        host: Vec::new(),
        seed,
        version: version.clone(),
        options: global,
        job_options,
        groups: Vec::new(),
    };
    let title = match &version {
        Some(version) => format!("{name} ({version})"),
        None => name.to_string(),
    };
    Ok(RunRecord {
        title,
        settings,
        jobs,
        bandwidth: None,
        requests: None,
        timeline: None,
    })
}

/// Every job's `job options`, each name prefixed `JOB:` when there are several jobs.
fn all_job_options(jobs: Option<&Value>) -> Vec<(String, String)> {
    let jobs = jobs
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    jobs.iter()
        .flat_map(|job| {
            let name = job.get("jobname").and_then(Value::as_str).unwrap_or("job");
            string_pairs(job.get("job options"))
                .into_iter()
                .map(move |(key, value)| match jobs.len() {
                    1 => (key, value),
                    _ => (format!("{name}:{key}"), value),
                })
        })
        .collect()
}

/// An object of strings as pairs in order (numbers and booleans printed).
fn string_pairs(value: Option<&Value>) -> Vec<(String, String)> {
    value
        .and_then(Value::as_object)
        .map(|object| {
            object
                .iter()
                .map(|(key, value)| {
                    let text = match value {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (key.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn lookup(pairs: &[(String, String)], key: &str) -> Option<String> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

fn job_record(job: &Value, global_cgroup: Option<&str>) -> Result<JobRecord, String> {
    let job = job.as_object().ok_or("not an object")?;
    let name = job
        .get("jobname")
        .and_then(Value::as_str)
        .ok_or("no \"jobname\"")?;
    let options = string_pairs(job.get("job options"));
    let cgroup = lookup(&options, "cgroup")
        .or_else(|| global_cgroup.map(str::to_string))
        .unwrap_or_default();
    let mut directions = Vec::new();
    for direction in ["read", "write", "trim"] {
        let Some(d) = job.get(direction) else {
            continue;
        };
        let d = d
            .as_object()
            .ok_or_else(|| format!("\"{direction}\" is not an object"))?;
        let record = direction_record(direction, d)?;
        if record.total_ios > 0 || record.io_bytes > 0 {
            directions.push(record);
        }
    }
    Ok(JobRecord {
        name: name.to_string(),
        cgroup: cgroup.trim_matches('/').to_string(),
        directions,
    })
}

/// A whole number from a JSON number (fio prints some as floats).
fn number(object: &Map<String, Value>, key: &str) -> Option<u64> {
    let value = object.get(key)?;
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f.round() as u64)
    })
}

fn direction_record(direction: &str, d: &Map<String, Value>) -> Result<DirectionRecord, String> {
    let required = |key: &str| {
        number(d, key).ok_or_else(|| format!("\"{direction}\" has no number \"{key}\""))
    };
    let io_bytes = required("io_bytes")?;
    let total_ios = required("total_ios")?;
    let runtime_ms = required("runtime")?;
    let bw_bytes = number(d, "bw_bytes")
        .or_else(|| number(d, "bw").map(|kib| kib * 1024))
        .unwrap_or(0);
    let clat = d.get("clat_ns").and_then(Value::as_object);
    let lat = d.get("lat_ns").and_then(Value::as_object);
    let has_distribution =
        |o: &Map<String, Value>| o.contains_key("percentile") || o.contains_key("bins");
    let source = match (clat, lat) {
        (Some(c), _) if has_distribution(c) => Some(c),
        (_, Some(l)) if has_distribution(l) => Some(l),
        (c, l) => c.or(l),
    };
    let clat = match source {
        Some(o) => latency(o).map_err(|why| format!("\"{direction}\": {why}"))?,
        None => LatencyRecord::default(),
    };
    Ok(DirectionRecord {
        direction: direction.to_string(),
        io_bytes,
        bw_bytes,
        total_ios,
        runtime_ns: runtime_ms.saturating_mul(1_000_000),
        clat,
    })
}

fn latency(o: &Map<String, Value>) -> Result<LatencyRecord, String> {
    let mut percentiles = Vec::new();
    if let Some(map) = o.get("percentile").and_then(Value::as_object) {
        for (key, value) in map {
            let percent: f64 = key
                .parse()
                .map_err(|_| format!("percentile key \"{key}\" is not a number"))?;
            let value_ns = value
                .as_u64()
                .ok_or_else(|| format!("percentile {key} is not a whole number"))?;
            percentiles.push(Percentile { percent, value_ns });
        }
    }
    percentiles.sort_by(|a, b| a.percent.total_cmp(&b.percent));
    let mut bins = Vec::new();
    if let Some(map) = o.get("bins").and_then(Value::as_object) {
        for (key, value) in map {
            let value_ns: u64 = key
                .parse()
                .map_err(|_| format!("bin key \"{key}\" is not a whole number"))?;
            let count = value
                .as_u64()
                .ok_or_else(|| format!("bin {key} is not a whole number"))?;
            if count > 0 {
                bins.push((value_ns, count));
            }
        }
    }
    bins.sort_unstable();
    Ok(LatencyRecord {
        count: number(o, "N").unwrap_or(0),
        min_ns: number(o, "min").unwrap_or(0),
        max_ns: number(o, "max").unwrap_or(0),
        mean_ns: number(o, "mean").unwrap_or(0),
        percentiles,
        bins,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_and_what_is_expected() {
        let error = parse("hello", "a.json").unwrap_err();
        assert!(error.starts_with("a.json: no JSON object"), "{error}");
        assert!(error.contains("--output-format=json"));
        let error = parse("{\"x\": 1}", "b.json").unwrap_err();
        assert!(error.starts_with("b.json: no \"jobs\" array"), "{error}");
        let error = parse("{\"jobs\": [{\"read\": {}}]}", "c.json").unwrap_err();
        assert!(
            error.starts_with("c.json: jobs[0]: no \"jobname\""),
            "{error}"
        );
        assert!(!error.contains('\n'));
        let error = parse(
            "{\"jobs\": [{\"jobname\": \"j\", \"read\": {\"io_bytes\": 1}}]}",
            "d",
        )
        .unwrap_err();
        assert!(
            error.contains("\"read\" has no number \"total_ios\""),
            "{error}"
        );
    }

    #[test]
    fn bins_give_the_cdf_and_warnings_before_the_json_are_skipped() {
        let text = r#"note: both iodepth >= 1 and synchronous I/O engine are selected
{"fio version": "fio-3.33", "global options": {"cgroup": "/g"},
 "jobs": [{"jobname": "j", "job options": {},
   "read": {"io_bytes": 8192, "bw_bytes": 4096, "total_ios": 2, "runtime": 2000,
     "clat_ns": {"min": 100, "max": 300, "mean": 200.4, "N": 2,
       "percentile": {"50.000000": 100, "99.000000": 300},
       "bins": {"300": 1, "100": 1}}},
   "write": {"io_bytes": 0, "total_ios": 0, "runtime": 0}}]}"#;
        let run = parse(text, "r.json").expect("parses");
        assert_eq!(run.title, "r.json (fio-3.33)");
        assert_eq!(run.jobs[0].cgroup, "g");
        assert_eq!(run.jobs[0].directions.len(), 1);
        let clat = &run.jobs[0].directions[0].clat;
        assert_eq!(clat.bins, [(100, 1), (300, 1)]);
        assert_eq!(clat.mean_ns, 200);
        assert_eq!(clat.cdf(), [(100, 0.5), (300, 1.0)]);
        assert!(run.bandwidth.is_none() && run.timeline.is_none());
    }
}
