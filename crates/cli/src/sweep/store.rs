//! A sweep's directory: `sweep.json` (the job file, axes and seeds: what `--merge` needs),
//! `points/` with one small JSON file per finished point (written as it finishes, through a
//! temporary file and a rename, so a point file is whole or absent), and the merged
//! `results.json` and `report.html`. The merged document is made from the point files
//! alone, so an interrupted and resumed sweep gives the same bytes as one run straight.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::axis::Axis;
use super::figures::PointResult;
use super::grid::{points, Point};

/// What a sweep is, as `sweep.json` stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// The job file as given.
    pub job_file: String,
    /// The axes in order.
    pub axes: Vec<Axis>,
    /// The seeds in order.
    pub seeds: Vec<u64>,
    /// Everything else the points depend on; a directory's points are resumed only under
    /// the same.
    pub settings: Settings,
}

/// What every point of a sweep shares besides its axis values and seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// FNV-1a of the job file's bytes, hex.
    pub job_file_fnv1a: String,
    /// `--sched`.
    pub sched: String,
    /// `--set`.
    pub set: Vec<String>,
    /// `--device`, `--host`, `--cgroup`, `--controller`, `--kernel` as given.
    pub machine: Vec<String>,
}

/// FNV-1a (64 bits) of `bytes`, as 16 hex digits.
pub fn fnv1a(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// The merged document.
#[derive(Debug, Serialize)]
pub struct Merged<'a> {
    /// What the sweep is.
    #[serde(flatten)]
    pub definition: &'a Definition,
    /// How the page draws the seeds' spread.
    pub spread: &'static str,
    /// Every finished point, in grid order.
    pub points: Vec<PointResult>,
    /// The point files not found, in grid order.
    pub missing: Vec<String>,
}

/// The file names in a sweep directory.
pub struct Layout {
    dir: PathBuf,
}

impl Layout {
    /// The layout of `dir`.
    pub fn new(dir: &Path) -> Self {
        Layout {
            dir: dir.to_path_buf(),
        }
    }

    /// `DIR/sweep.json`.
    pub fn definition(&self) -> PathBuf {
        self.dir.join("sweep.json")
    }

    /// `DIR/points/NAME.json` of `point`.
    pub fn point(&self, point: &Point) -> PathBuf {
        self.dir.join("points").join(point.file_name())
    }

    /// `DIR/results.json`.
    pub fn results(&self) -> PathBuf {
        self.dir.join("results.json")
    }

    /// `DIR/report.html`.
    pub fn page(&self) -> PathBuf {
        self.dir.join("report.html")
    }

    /// `DIR/sweep.sbatch`, the Slurm job array.
    pub fn script(&self) -> PathBuf {
        self.dir.join("sweep.sbatch")
    }

    /// Create the directory and write the definition.
    pub fn start(&self, definition: &Definition) -> Result<(), String> {
        self.start_points()?;
        write_json(&self.definition(), definition)
    }

    /// Create the directory of the point files.
    pub fn start_points(&self) -> Result<(), String> {
        let points = self.dir.join("points");
        std::fs::create_dir_all(&points)
            .map_err(|e| format!("--out {}: cannot create: {e}", points.display()))
    }

    /// The definition `start` wrote.
    pub fn read_definition(&self) -> Result<Definition, String> {
        let path = self.definition();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a sweep definition: {e}", path.display()))
    }

    /// Refuse to resume in a directory whose sweep had other settings.
    pub fn check_resume(&self, settings: &Settings) -> Result<(), String> {
        if !self.definition().exists() {
            return Ok(());
        }
        let stored = self.read_definition()?;
        if &stored.settings != settings {
            return Err(format!(
                "--out {}: holds the points of a sweep with other settings (job file, --sched, --set, device, host, cgroups, controller or kernel): expected the same settings, or another directory",
                self.dir.display()
            ));
        }
        Ok(())
    }

    /// The finished result of `point`, if its file is there and is of this point.
    pub fn finished(&self, point: &Point) -> Option<PointResult> {
        let text = std::fs::read_to_string(self.point(point)).ok()?;
        let result: PointResult = serde_json::from_str(&text).ok()?;
        (result.axes == super::figures::axes_map(&point.values) && result.seed == point.seed)
            .then_some(result)
    }

    /// Store a finished point.
    pub fn store(&self, point: &Point, result: &PointResult) -> Result<(), String> {
        write_json(&self.point(point), result)
    }

    /// The merged document of every point file there is.
    pub fn merge(&self, definition: &Definition) -> (Vec<PointResult>, Vec<String>) {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for point in points(&definition.axes, &definition.seeds) {
            match self.finished(&point) {
                Some(result) => found.push(result),
                None => missing.push(point.file_name()),
            }
        }
        (found, missing)
    }
}

/// Write `value` as pretty JSON to `path` through a temporary file beside it.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| format!("{}: cannot encode: {e}", path.display()))?;
    text.push('\n');
    write_atomically(path, text.as_bytes())
}

/// Write `bytes` to `path` through a temporary file and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".part");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_of_known_inputs() {
        assert_eq!(fnv1a(b""), "cbf29ce484222325");
        assert_eq!(fnv1a(b"a"), "af63dc4c8601ec8c");
    }
}
