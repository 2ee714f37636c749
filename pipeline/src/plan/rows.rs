//! The plan as the store keeps it: one row per (point, series, replication).

use super::Plan;
use crate::manifest::Manifest;
use store::PlanRow;

/// The plan rows of one experiment, as the store keeps them.
pub fn plan_rows(plan: &Plan, m: &Manifest) -> Vec<PlanRow> {
    plan_rows_iter(plan, m).collect()
}

/// The plan rows of one manifest, made one at a time (see
/// [`Store::replace_plan_rows`]).
pub fn plan_rows_iter<'a>(
    plan: &'a Plan,
    m: &'a Manifest,
) -> impl Iterator<Item = PlanRow> + Send + 'a {
    plan.uses
        .iter()
        .filter(|u| *u.experiment == *m.id)
        .map(|u| PlanRow {
            experiment: u.experiment.to_string(),
            version: u.version,
            point: m
                .points
                .get(u.point_index)
                .map(|p| p.json())
                .unwrap_or_default(),
            point_index: u.point_index as i64,
            series: u.series.to_string(),
            replication: u.replication as i64,
            task_key: plan.task_key(u).to_string(),
        })
}
