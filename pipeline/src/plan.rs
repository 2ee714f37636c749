//! Planning: manifests × sweep points × series × replications -> tasks.
//!
//! A task's key is the SHA-256 of the canonical JSON of
//! `{solver, version, params, seed, fidelity}`; two experiments that need the
//! same computation share one task. Cosmetic fields (labels, titles) never
//! enter a key. Analytic tasks have seed 0 and fidelity "any", so `--quick`
//! and full runs share them.

use crate::manifest::Manifest;
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use solvers::{Fidelity, Kind, Registry};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub key: String,
    pub solver: String,
    pub solver_version: u32,
    pub kind: Kind,
    /// Merged parameters (canonical: keys sorted).
    pub params: Json,
    pub seed: u64,
    pub replication: u32,
    /// "quick", "full" or "any" (analytic).
    pub fidelity: String,
}

impl Task {
    pub fn params_json(&self) -> String {
        serde_json::to_string(&self.params).expect("params serialise")
    }

    /// The command that reruns exactly this task.
    pub fn solve_command(&self) -> String {
        let mut cmd = format!(
            "repro solve {} --params '{}'",
            self.solver,
            self.params_json().replace('\'', "'\\''")
        );
        if self.kind == Kind::Simulation {
            cmd.push_str(&format!(" --seed {}", self.seed));
            if self.fidelity == "quick" {
                cmd.push_str(" --quick");
            }
        }
        cmd
    }
}

/// Where a task is used: one (experiment, point, series, replication).
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    pub experiment: String,
    pub version: i64,
    pub point: String,
    pub point_index: usize,
    pub series: String,
    pub replication: u32,
    pub task_key: String,
}

#[derive(Debug, Default)]
pub struct Plan {
    /// Unique tasks by key, in first-use order.
    pub tasks: Vec<Task>,
    pub uses: Vec<Use>,
}

fn sha_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
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

pub fn task_key(solver: &str, version: u32, params: &str, seed: u64, fidelity: &str) -> String {
    // Built by hand so the text is canonical whatever serde_json's map order is.
    let canon = format!(
        "{{\"fidelity\":{},\"params\":{params},\"seed\":{seed},\"solver\":{},\"version\":{version}}}",
        json!(fidelity),
        json!(solver)
    );
    sha_hex(&canon)[..32].to_string()
}

pub fn plan(manifests: &[Manifest], registry: &Registry, fidelity: Fidelity) -> Plan {
    let mut plan = Plan::default();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for m in manifests {
        for point in &m.points {
            for s in &m.series {
                let solver = registry.get(&s.solver).expect("validated at load");
                let kind = solver.kind();
                let mut params: BTreeMap<String, Json> = m.params.clone();
                params.extend(s.params.clone());
                let mut reps = s.replications;
                if fidelity == Fidelity::Quick && kind == Kind::Simulation {
                    params.extend(s.quick_params.clone());
                    reps = s.quick_replications.unwrap_or(reps);
                }
                params.extend(point.values.clone());
                let params = Json::Object(params.into_iter().collect());
                let pjson = serde_json::to_string(&params).expect("params serialise");
                let (fid, reps) = match kind {
                    Kind::Analytic => ("any", 1),
                    Kind::Simulation => (fidelity.as_str(), reps),
                };
                for r in 0..reps {
                    let seed = match kind {
                        Kind::Analytic => 0,
                        Kind::Simulation => derive_seed(&s.solver, &pjson, s.seed, r),
                    };
                    let key = task_key(&s.solver, solver.version(), &pjson, seed, fid);
                    if !index.contains_key(&key) {
                        index.insert(key.clone(), plan.tasks.len());
                        plan.tasks.push(Task {
                            key: key.clone(),
                            solver: s.solver.clone(),
                            solver_version: solver.version(),
                            kind,
                            params: params.clone(),
                            seed,
                            replication: r,
                            fidelity: fid.to_string(),
                        });
                    }
                    plan.uses.push(Use {
                        experiment: m.id.clone(),
                        version: m.version,
                        point: point.json(),
                        point_index: point.index,
                        series: s.name.clone(),
                        replication: r,
                        task_key: key,
                    });
                }
            }
        }
    }
    plan
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
        let p = plan(&[a.clone(), b], &r, Fidelity::Full);
        // 2 points × (1 model + 3 replications), shared between a and b.
        assert_eq!(p.tasks.len(), 8);
        assert_eq!(p.uses.len(), 16);
        let q = plan(&[a], &r, Fidelity::Quick);
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
        assert_eq!(sim.params["batch_len"], json!(100));
        assert!(sim.solve_command().contains("--quick"));
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
            .tasks
            .into_iter()
            .map(|t| t.key)
            .collect();
        let kb: Vec<_> = plan(&[b], &r, Fidelity::Full)
            .tasks
            .into_iter()
            .map(|t| t.key)
            .collect();
        assert_eq!(ka, kb);
    }
}
