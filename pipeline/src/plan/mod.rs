//! Planning: manifests × sweep points × series × replications -> tasks.
//!
//! A task's key is the SHA-256 of the canonical JSON of
//! `{solver, version, params, seed, fidelity}`, plus `code` (the content hash
//! of its files) for a program a manifest declares; two experiments that need the
//! same computation share one task. Cosmetic fields (labels, titles) never
//! enter a key. Analytic tasks have seed 0 and fidelity "any", so `--quick`
//! and full runs share them.

pub mod code_changes;
mod rows;

pub use rows::{plan_rows, plan_rows_iter};

use crate::manifest::{limits, Manifest};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use solvers::{Fidelity, Kind, Registry};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub key: String,
    /// Shared by every task of a series (one allocation, not one per task).
    pub solver: Arc<str>,
    pub solver_version: u32,
    pub kind: Kind,
    /// Merged parameters as canonical JSON text (keys sorted). Kept as text,
    /// not as a `serde_json::Value`: a plan at the task limit holds a million
    /// of them, and the text is what the key, the store and `repro solve` use.
    pub params: String,
    pub seed: u64,
    pub replication: u32,
    pub fidelity: TaskFidelity,
}

impl Task {
    pub fn params_json(&self) -> String {
        self.params.clone()
    }

    /// The parameters as the JSON value a solver takes.
    pub fn params_value(&self) -> Json {
        serde_json::from_str(&self.params).expect("the planner wrote valid JSON")
    }

    /// The command that reruns exactly this task.
    pub fn solve_command(&self) -> String {
        let mut cmd = format!(
            "repro solve {} --params '{}'",
            self.solver,
            self.params.replace('\'', "'\\''")
        );
        if self.kind == Kind::Simulation {
            cmd.push_str(&format!(" --seed {}", self.seed));
            if self.fidelity == TaskFidelity::Quick {
                cmd.push_str(" --quick");
            }
        }
        cmd
    }
}

/// A task's fidelity, part of its key: a simulation's profile, or `Any` for
/// an analytic task (the same under `--quick` and full). Stored and keyed as
/// "quick", "full" or "any".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskFidelity {
    Quick,
    Full,
    Any,
}

impl TaskFidelity {
    /// The fidelity a task of `kind` gets in a run at `fidelity`.
    pub fn of(kind: Kind, fidelity: Fidelity) -> Self {
        match (kind, fidelity) {
            (Kind::Analytic, _) => TaskFidelity::Any,
            (Kind::Simulation, Fidelity::Quick) => TaskFidelity::Quick,
            (Kind::Simulation, Fidelity::Full) => TaskFidelity::Full,
        }
    }

    /// The profile the solver runs with (analytic tasks ignore it).
    pub fn profile(self) -> Fidelity {
        match self {
            TaskFidelity::Quick => Fidelity::Quick,
            TaskFidelity::Full | TaskFidelity::Any => Fidelity::Full,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskFidelity::Quick => "quick",
            TaskFidelity::Full => "full",
            TaskFidelity::Any => "any",
        }
    }
}

impl std::str::FromStr for TaskFidelity {
    type Err = String;
    /// A stored task's fidelity text (the store keeps it as text).
    fn from_str(s: &str) -> Result<Self, String> {
        [TaskFidelity::Quick, TaskFidelity::Full, TaskFidelity::Any]
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("fidelity {s:?} is not one of quick, full, any"))
    }
}

impl std::fmt::Display for TaskFidelity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a task is used: one (experiment, point, series, replication).
/// Compact (no per-use text): a plan at the limit holds a million of these.
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    pub experiment: Arc<str>,
    pub version: i64,
    pub point_index: usize,
    pub series: Arc<str>,
    pub replication: u32,
    /// Index of the task in [`Plan::tasks`].
    pub task: usize,
}

#[derive(Debug, Default)]
pub struct Plan {
    /// Unique tasks by key, in first-use order.
    pub tasks: Vec<Task>,
    pub uses: Vec<Use>,
}

impl Plan {
    /// The key of the task a use refers to.
    pub fn task_key(&self, u: &Use) -> &str {
        &self.tasks[u.task].key
    }
}

/// A run that would plan more tasks than [`limits::MAX_TASKS`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "this run would plan {tasks} tasks; the limit is {} tasks per run (largest:{}); \
     run fewer manifests at once",
    limits::MAX_TASKS,
    largest(.manifests)
)]
pub struct PlanError {
    pub tasks: u64,
    /// Each manifest with its number of tasks, largest first.
    pub manifests: Vec<(PathBuf, u64)>,
}

/// The three largest manifests of a [`PlanError`], each ` FILE with N`.
fn largest(manifests: &[(PathBuf, u64)]) -> String {
    manifests
        .iter()
        .take(3)
        .map(|(p, n)| format!(" {} with {n}", p.display()))
        .collect()
}

/// Seed of replication `r` of a simulation task: derived from the solver, the
/// parameters, the series' base seed and r, so every point gets its own stream.
pub fn derive_seed(solver: &str, params: &str, base_seed: u64, replication: u32) -> u64 {
    let h = Sha256::digest(
        format!("seed\x1f{solver}\x1f{params}\x1f{base_seed}\x1f{replication}").as_bytes(),
    );
    // Keep seeds within i64 so the store holds them exactly.
    u64::from_le_bytes(h[..8].try_into().expect("8 bytes")) >> 1
}

/// `code`: the solver's [`solvers::Solver::code_hash`] (declared programs only).
pub fn task_key(
    solver: &str,
    version: u32,
    code: Option<&str>,
    params: &str,
    seed: u64,
    fidelity: TaskFidelity,
) -> String {
    hex::encode(KeyText::new(solver, version, code, fidelity).digest(params, seed))
}

/// The canonical key text around the parameters and seed, built once per
/// series: the planner hashes a million of these at the task limit.
struct KeyText {
    head: String,
    tail: String,
}

impl KeyText {
    fn new(solver: &str, version: u32, code: Option<&str>, fidelity: TaskFidelity) -> Self {
        // Built by hand so the text is canonical whatever serde_json's map
        // order is. `code` comes first in key order, and only when there is
        // one, so the keys of compiled-in solvers are what they always were.
        let code = code.map_or(String::new(), |c| format!("\"code\":{},", json!(c)));
        KeyText {
            head: format!(
                "{{{code}\"fidelity\":{},\"params\":",
                json!(fidelity.as_str())
            ),
            tail: format!(",\"solver\":{},\"version\":{version}}}", json!(solver)),
        }
    }

    /// The first 16 bytes of the SHA-256 of the key text (32 hex digits).
    fn digest(&self, params: &str, seed: u64) -> [u8; 16] {
        let mut h = Sha256::new();
        h.update(self.head.as_bytes());
        h.update(params.as_bytes());
        h.update(b",\"seed\":");
        h.update(seed.to_string().as_bytes());
        h.update(self.tail.as_bytes());
        h.finalize()[..16].try_into().expect("16 bytes")
    }
}

fn borrowed(p: &BTreeMap<String, Json>) -> impl Iterator<Item = (&str, &Json)> {
    p.iter().map(|(k, v)| (k.as_str(), v))
}

/// Tasks of one manifest under a fidelity: points × replications summed over series.
pub fn task_count(m: &Manifest, registry: &Registry, fidelity: Fidelity) -> u64 {
    let per_point: u64 = m
        .series
        .iter()
        .map(|s| match m.solver(&s.solver, registry).map(|x| x.kind()) {
            Some(Kind::Simulation) if fidelity == Fidelity::Quick => {
                u64::from(s.quick_replications.unwrap_or(s.replications))
            }
            Some(Kind::Simulation) => u64::from(s.replications),
            _ => 1,
        })
        .sum();
    (m.points.len() as u64).saturating_mul(per_point)
}

/// Replications per (experiment, series, point index) beyond a series' own
/// count: the rounds of a precision target or of `check --resolve`. A count
/// only adds replications (`r` = the series' count .. the given count, each
/// with its own derived seed), so earlier rounds' tasks keep their keys.
pub type MoreReplications = HashMap<(String, String, usize), u32>;

/// Expands manifests into tasks. The number of tasks is computed first and
/// checked against [`limits::MAX_TASKS`] before anything is allocated.
pub fn plan(
    manifests: &[Manifest],
    registry: &Registry,
    fidelity: Fidelity,
) -> Result<Plan, PlanError> {
    plan_with(manifests, registry, fidelity, &MoreReplications::new())
}

/// [`plan`] with more replications at some points (simulation series only;
/// bounded by each series' `max_replications`, checked where they are decided).
pub fn plan_with(
    manifests: &[Manifest],
    registry: &Registry,
    fidelity: Fidelity,
    more: &MoreReplications,
) -> Result<Plan, PlanError> {
    let all: Vec<&Manifest> = manifests.iter().collect();
    plan_of(&all, registry, fidelity, more)
}

/// A round of more replications: plans again only the manifests `replan`
/// selects (those that asked for more), under `more`, and puts their uses in
/// place of their old ones; the other manifests' uses and every task already
/// planned stay as they are (`more` only adds replications, so no task falls
/// out). The uses stay grouped by manifest in manifest order, and the tasks
/// new to the plan are appended in the order a whole new [`plan_with`] would
/// first use them. Returns those new tasks and, per manifest, whether its
/// uses (its plan rows) changed.
pub fn grow(
    plan: &mut Plan,
    manifests: &[Manifest],
    registry: &Registry,
    fidelity: Fidelity,
    more: &MoreReplications,
    replan: impl Fn(&Manifest) -> bool,
) -> Result<(Vec<Task>, Vec<bool>), PlanError> {
    let chosen: Vec<&Manifest> = manifests.iter().filter(|m| replan(m)).collect();
    let part = plan_of(&chosen, registry, fidelity, more)?;
    // Where each task of the partial plan is (or goes) in the whole plan.
    let mut at: Vec<usize> = Vec::with_capacity(part.tasks.len());
    let mut new = Vec::new();
    {
        let known: HashMap<&str, usize> = plan
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.key.as_str(), i))
            .collect();
        for t in &part.tasks {
            match known.get(t.key.as_str()) {
                Some(&i) => at.push(i),
                None => {
                    at.push(plan.tasks.len() + new.len());
                    new.push(t.clone());
                }
            }
        }
    }
    plan.tasks.extend(new.iter().cloned());
    // Each manifest's uses, old or new, in manifest order.
    let mut old = std::mem::take(&mut plan.uses).into_iter().peekable();
    let mut fresh = part.uses.into_iter().peekable();
    let mut changed = Vec::with_capacity(manifests.len());
    for m in manifests {
        let mine = |u: &Use| *u.experiment == *m.id;
        let before: Vec<Use> = std::iter::from_fn(|| old.next_if(mine)).collect();
        if !replan(m) {
            plan.uses.extend(before);
            changed.push(false);
            continue;
        }
        let after: Vec<Use> = std::iter::from_fn(|| fresh.next_if(mine))
            .map(|u| Use {
                task: at[u.task],
                ..u
            })
            .collect();
        changed.push(before != after);
        plan.uses.extend(after);
    }
    debug_assert!(old.next().is_none() && fresh.next().is_none());
    Ok((new, changed))
}

fn plan_of(
    manifests: &[&Manifest],
    registry: &Registry,
    fidelity: Fidelity,
    more: &MoreReplications,
) -> Result<Plan, PlanError> {
    let counts: Vec<(PathBuf, u64)> = manifests
        .iter()
        .map(|m| (m.path.clone(), task_count(m, registry, fidelity)))
        .collect();
    let total = counts.iter().fold(0u64, |a, (_, n)| a.saturating_add(*n));
    if total > limits::MAX_TASKS {
        let mut manifests = counts;
        manifests.sort_by_key(|m| std::cmp::Reverse(m.1));
        return Err(PlanError {
            tasks: total,
            manifests,
        });
    }
    let mut plan = Plan {
        tasks: Vec::with_capacity(total as usize),
        uses: Vec::with_capacity(total as usize),
    };
    // Keys are 32 hex digits: index them as numbers, not as a second copy of the text.
    let mut index: HashMap<u128, usize> = HashMap::with_capacity(total as usize);
    struct Prepared<'a> {
        solver: std::sync::Arc<dyn solvers::Solver>,
        name: Arc<str>,
        series: Arc<str>,
        base: BTreeMap<&'a str, &'a Json>,
        fid: TaskFidelity,
        reps: u32,
        seed: u64,
        key_text: KeyText,
    }
    for m in manifests {
        let experiment: Arc<str> = Arc::from(m.id.as_str());
        let prepared: Vec<Prepared> = m
            .series
            .iter()
            .map(|s| {
                let solver = m.solver(&s.solver, registry).expect("validated at load");
                let kind = solver.kind();
                // Borrowed: merging costs no copy of names or values per task.
                let mut base: BTreeMap<&str, &Json> = borrowed(&m.params).collect();
                base.extend(borrowed(&s.params));
                let mut reps = s.replications;
                if fidelity == Fidelity::Quick && kind == Kind::Simulation {
                    base.extend(borrowed(&s.quick_params));
                    reps = s.quick_replications.unwrap_or(reps);
                }
                let fid = TaskFidelity::of(kind, fidelity);
                let reps = match kind {
                    Kind::Analytic => 1,
                    Kind::Simulation => reps,
                };
                Prepared {
                    key_text: KeyText::new(
                        &s.solver,
                        solver.version(),
                        solver.code_hash().as_deref(),
                        fid,
                    ),
                    solver,
                    name: Arc::from(s.solver.as_str()),
                    series: Arc::from(s.name.as_str()),
                    base,
                    fid,
                    reps,
                    seed: s.seed,
                }
            })
            .collect();
        for point in 0..m.points.len() {
            for p in &prepared {
                let kind = p.solver.kind();
                let mut params = p.base.clone();
                m.points.borrow_into(point, &mut params);
                let pjson = serde_json::to_string(&params).expect("params serialise");
                let reps = match kind {
                    Kind::Simulation if !more.is_empty() => more
                        .get(&(m.id.clone(), p.series.to_string(), point))
                        .map_or(p.reps, |n| (*n).max(p.reps)),
                    _ => p.reps,
                };
                for r in 0..reps {
                    let seed = match kind {
                        Kind::Analytic => 0,
                        Kind::Simulation => derive_seed(&p.name, &pjson, p.seed, r),
                    };
                    let digest = p.key_text.digest(&pjson, seed);
                    let num = u128::from_be_bytes(digest);
                    let task = *index.entry(num).or_insert_with(|| {
                        plan.tasks.push(Task {
                            key: hex::encode(digest),
                            solver: p.name.clone(),
                            solver_version: p.solver.version(),
                            kind,
                            params: pjson.clone(),
                            seed,
                            replication: r,
                            fidelity: p.fid,
                        });
                        plan.tasks.len() - 1
                    });
                    plan.uses.push(Use {
                        experiment: experiment.clone(),
                        version: m.version,
                        point_index: point,
                        series: p.series.clone(),
                        replication: r,
                        task,
                    });
                }
            }
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const M: &str = r#"
id: a
title: t
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, n: 12 }
sweep: { m: [2, 3] }
series:
  model: { solver: credit.ctmc, label: "the model" }
  sim: { solver: credit.sim, replications: 3, quick: { replications: 2, params: { batch_len: 100 } } }
"#;

    fn load(text: &str, name: &str) -> Manifest {
        crate::manifest::parse(Path::new(name), text, &Registry::with_all()).unwrap()
    }

    #[test]
    fn tasks_keys_and_sharing() {
        let r = Registry::with_all();
        let a = load(M, "a.yaml");
        let b = load(
            &M.replace("id: a", "id: b")
                .replace("the model", "another label"),
            "b.yaml",
        );
        let p = plan(&[a.clone(), b], &r, Fidelity::Full).unwrap();
        // 2 points × (1 model + 3 replications), shared between a and b.
        assert_eq!(p.tasks.len(), 8);
        assert_eq!(p.uses.len(), 16);
        let q = plan(&[a], &r, Fidelity::Quick).unwrap();
        assert_eq!(q.tasks.len(), 6);
        // Analytic tasks are shared between profiles; simulations are not.
        let full_keys: Vec<_> = p.tasks.iter().map(|t| &t.key).collect();
        let shared = q
            .tasks
            .iter()
            .filter(|t| full_keys.contains(&&t.key))
            .count();
        assert_eq!(shared, 2);
        let sim = q.tasks.iter().find(|t| t.kind == Kind::Simulation).unwrap();
        assert_eq!(sim.params_value()["batch_len"], json!(100));
        assert!(sim.solve_command().contains("--quick"));
    }

    /// Growing a plan by the manifests that asked for more gives every
    /// manifest the rows a whole new plan gives it, and the same new tasks
    /// in the same order.
    #[test]
    fn growing_the_manifests_that_asked_is_planning_all_again() {
        let r = Registry::with_all();
        let a = load(M, "a.yaml");
        let b = load(&M.replace("id: a", "id: b"), "b.yaml");
        let c = load(
            &M.replace("id: a", "id: c").replace("n: 12", "n: 13"),
            "c.yaml",
        );
        let all = [a, b, c];
        let mut p = plan(&all, &r, Fidelity::Quick).unwrap();
        let mut more = MoreReplications::new();
        let key = |m: &str, point| (m.to_string(), "sim".to_string(), point);
        // Round 1: a and b (which share tasks) ask; round 2: only c.
        let rounds = [
            vec![(key("a", 0), 5), (key("b", 0), 5), (key("b", 1), 4)],
            vec![(key("c", 1), 3)],
        ];
        for asked in rounds {
            let ids: Vec<String> = asked.iter().map(|(k, _)| k.0.clone()).collect();
            more.extend(asked);
            let before: Vec<String> = p.tasks.iter().map(|t| t.key.clone()).collect();
            let whole = plan_with(&all, &r, Fidelity::Quick, &more).unwrap();
            let (new, changed) = grow(&mut p, &all, &r, Fidelity::Quick, &more, |m| {
                ids.contains(&m.id)
            })
            .unwrap();
            for (m, changed) in all.iter().zip(&changed) {
                assert_eq!(plan_rows(&p, m), plan_rows(&whole, m), "{}", m.id);
                assert_eq!(*changed, ids.contains(&m.id), "{}", m.id);
            }
            let expected: Vec<&str> = whole
                .tasks
                .iter()
                .filter(|t| !before.contains(&t.key))
                .map(|t| t.key.as_str())
                .collect();
            let got: Vec<&str> = new.iter().map(|t| t.key.as_str()).collect();
            assert_eq!(got, expected);
            assert!(!got.is_empty());
            assert_eq!(p.tasks.len(), whole.tasks.len());
        }
    }

    #[test]
    fn seeds_differ_by_point_and_replication_and_are_stable() {
        let s1 = derive_seed("credit.sim", "{\"m\":2}", 1, 0);
        assert_eq!(s1, derive_seed("credit.sim", "{\"m\":2}", 1, 0));
        assert_ne!(s1, derive_seed("credit.sim", "{\"m\":3}", 1, 0));
        assert_ne!(s1, derive_seed("credit.sim", "{\"m\":2}", 1, 1));
        assert_ne!(s1, derive_seed("credit.sim", "{\"m\":2}", 2, 0));
        assert!(s1 <= i64::MAX as u64);
    }

    #[test]
    fn integral_floats_do_not_change_keys() {
        let r = Registry::with_all();
        let a = load(M, "a.yaml");
        let b = load(&M.replace("n: 12", "n: 12.0"), "a.yaml");
        let ka: Vec<_> = plan(&[a], &r, Fidelity::Full)
            .unwrap()
            .tasks
            .into_iter()
            .map(|t| t.key)
            .collect();
        let kb: Vec<_> = plan(&[b], &r, Fidelity::Full)
            .unwrap()
            .tasks
            .into_iter()
            .map(|t| t.key)
            .collect();
        assert_eq!(ka, kb);
    }
}
