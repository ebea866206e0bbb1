//! The sweep's points as the page reads them: grouped by their axis values (the seeds of
//! one combination together), each axis's values with the labels the page writes
//! ([`super::units`]), and the lines a chart draws over the first axis, one per value of
//! the others, each value the mean and spread over seeds.

use std::collections::HashMap;

use ioslice_report::charts::sweep::Spread;

use super::axis::Axis;
use super::figures::PointResult;
use super::store::Merged;
use super::units;

/// The points by their axis values, and the axes' labels.
pub struct View<'a> {
    /// The axes, in order.
    pub axes: &'a [Axis],
    /// Each axis's values as the page writes them.
    labels: Vec<Vec<String>>,
    by_key: HashMap<Vec<String>, Vec<&'a PointResult>>,
}

/// Axis values of a point, in axis order.
pub fn key(point: &PointResult) -> Vec<String> {
    point
        .axes
        .values()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

impl<'a> View<'a> {
    /// The view of a merged sweep.
    pub fn of(merged: &'a Merged) -> Self {
        let definition = merged.definition;
        let mut schedulers = vec![definition.settings.sched.clone()];
        if let Some(axis) = definition.axes.iter().find(|a| a.name == "sched") {
            schedulers.extend(axis.values.iter().cloned());
        }
        let mut by_key: HashMap<Vec<String>, Vec<&PointResult>> = HashMap::new();
        for point in &merged.points {
            by_key.entry(key(point)).or_default().push(point);
        }
        View {
            axes: &definition.axes,
            labels: definition
                .axes
                .iter()
                .map(|axis| units::labels(axis, &schedulers))
                .collect(),
            by_key,
        }
    }

    /// The x axis: its name, its values and their labels (`point`, `all` with no axis).
    pub fn x(&self) -> (&str, Vec<String>, Vec<String>) {
        match self.axes.first() {
            Some(axis) => (&axis.name, axis.values.clone(), self.labels[0].clone()),
            None => ("point", vec!["all".to_string()], vec!["all".to_string()]),
        }
    }

    /// The label of value `value` of axis `index`.
    pub fn label(&self, index: usize, value: &str) -> String {
        self.axes
            .get(index)
            .and_then(|axis| axis.values.iter().position(|v| v == value))
            .map_or_else(|| value.to_string(), |at| self.labels[index][at].clone())
    }

    /// `sched=bfq iodepth=4` for `values` of the axes from `from` on, labelled; `all` for none.
    pub fn name(&self, from: usize, values: &[String]) -> String {
        let parts: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, value)| {
                format!(
                    "{}={}",
                    self.axes[from + i].name,
                    self.label(from + i, value)
                )
            })
            .collect();
        if parts.is_empty() {
            "all".to_string()
        } else {
            parts.join(" ")
        }
    }

    /// Every combination of the values of the axes from `from` on, the first outermost.
    pub fn combinations(&self, from: usize) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = vec![Vec::new()];
        for axis in self.axes.iter().skip(from) {
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    axis.values.iter().map(move |value| {
                        let mut next = prefix.clone();
                        next.push(value.clone());
                        next
                    })
                })
                .collect();
        }
        out
    }

    /// The spread over seeds of `value` at the point of `values` (every axis's, in order),
    /// over the seeds where it has one.
    pub fn spread(
        &self,
        values: &[String],
        value: impl Fn(&PointResult) -> Option<f64>,
    ) -> Option<Spread> {
        let points = self.by_key.get(values)?;
        Spread::of(&points.iter().filter_map(|p| value(p)).collect::<Vec<_>>())
    }

    /// The values of the point at x value `x` and `others` for the remaining axes.
    pub fn at(&self, x: &str, others: &[String]) -> Vec<String> {
        let mut values = Vec::new();
        if !self.axes.is_empty() {
            values.push(x.to_string());
        }
        values.extend(others.iter().cloned());
        values
    }
}
