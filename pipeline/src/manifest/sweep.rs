//! The sweep of a manifest, kept as its axes: points are computed from an
//! index on demand instead of being materialised, so a sweep at the
//! 10^6-point limit costs the memory of its axes' values, not of its points.

use super::Point;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// One entry of the `sweep` mapping: a single axis, or a zip group whose axes
/// vary together. `columns[a][i]` is the value of axis `names[a]` in row `i`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub names: Vec<String>,
    pub columns: Vec<Vec<Json>>,
}

impl Entry {
    fn len(&self) -> usize {
        self.columns.first().map_or(1, Vec::len)
    }
}

/// Every point of a sweep: the cartesian product of its entries, the first
/// entry varying slowest (the order in which the manifest lists them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Points {
    entries: Vec<Entry>,
    len: usize,
}

impl Points {
    /// `entries` must already be checked: their product within the point limit.
    pub(crate) fn new(entries: Vec<Entry>) -> Self {
        let len = entries.iter().map(Entry::len).product();
        Points { entries, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds the axis values of point `index` to `out` (no other allocation
    /// than the values themselves: the planner calls this once per point).
    pub fn extend_with(&self, index: usize, out: &mut BTreeMap<String, Json>) {
        let mut rest = index;
        for e in self.entries.iter().rev() {
            let n = e.len();
            let row = rest % n;
            rest /= n;
            for (name, col) in e.names.iter().zip(&e.columns) {
                out.insert(name.clone(), col[row].clone());
            }
        }
    }

    /// Like [`Points::extend_with`], borrowing the names and values.
    pub fn borrow_into<'a>(&'a self, index: usize, out: &mut BTreeMap<&'a str, &'a Json>) {
        let mut rest = index;
        for e in self.entries.iter().rev() {
            let n = e.len();
            let row = rest % n;
            rest /= n;
            for (name, col) in e.names.iter().zip(&e.columns) {
                out.insert(name.as_str(), &col[row]);
            }
        }
    }

    pub fn get(&self, index: usize) -> Option<Point> {
        if index >= self.len {
            return None;
        }
        let mut values = BTreeMap::new();
        self.extend_with(index, &mut values);
        Some(Point { index, values })
    }

    pub fn iter(&self) -> impl Iterator<Item = Point> + '_ {
        (0..self.len).filter_map(|i| self.get(i))
    }
}

impl<'a> IntoIterator for &'a Points {
    type Item = Point;
    type IntoIter = Box<dyn Iterator<Item = Point> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}
