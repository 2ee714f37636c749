//! name -> solver. Each module registers its own solvers through a `register`
//! function, so adding a model touches only its own folder and one line here.

use crate::Solver;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct Registry {
    solvers: BTreeMap<&'static str, Arc<dyn Solver>>,
}

impl Registry {
    /// Every solver that ships with repro.
    pub fn with_all() -> Self {
        let mut r = Registry::default();
        crate::traffic::register(&mut r);
        crate::queueing::register(&mut r);
        crate::systems::register(&mut r);
        r
    }

    /// Adds a solver. Two solvers with one name is a programming error.
    pub fn add(&mut self, solver: impl Solver + 'static) {
        let name = solver.name();
        let prev = self.solvers.insert(name, Arc::new(solver));
        assert!(prev.is_none(), "solver `{name}` registered twice");
    }

    /// Adds a solver made at run time (a program a manifest declares) and
    /// returns the one it replaces under that name, if any: the caller
    /// decides whether a replacement is allowed (never of a compiled-in one).
    pub fn add_shared(&mut self, solver: Arc<dyn Solver>) -> Option<Arc<dyn Solver>> {
        self.solvers.insert(solver.name(), solver)
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Solver>> {
        self.solvers.get(name).cloned()
    }

    /// Solvers in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Solver>> {
        self.solvers.values()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.solvers.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_solver_is_documented_and_named_like_its_key() {
        let r = Registry::with_all();
        for s in r.iter() {
            let d = s.doc();
            assert!(!d.summary.is_empty(), "{} has no summary", s.name());
            assert!(!d.metrics.is_empty(), "{} lists no metrics", s.name());
            assert!(
                s.name().contains('.'),
                "{}: names are system.method",
                s.name()
            );
        }
    }
}

/// The parameter names a solver's typed parameter struct accepts, learnt from
/// the struct itself: `deny_unknown_fields` makes serde answer an unknown key
/// with the list of the fields it expects (`expected one of `a`, `b``).
/// `None` when the solver's answer does not have that shape.
#[cfg(test)]
pub(crate) fn accepted_params(solver: &dyn Solver) -> Option<Vec<String>> {
    use crate::{Fidelity, SolveError, TaskContext};
    const PROBE: &str = "__repro_probe_no_such_parameter__";
    let ctx = TaskContext::new(1, Fidelity::Quick);
    let params = serde_json::json!({ PROBE: 0 });
    let msg = match solver.solve(&params, &ctx) {
        Err(SolveError::BadParams(m)) => m,
        _ => return None,
    };
    let rest = msg.split(&format!("unknown field `{PROBE}`, ")).nth(1)?;
    if rest.starts_with("there are no fields") {
        return Some(Vec::new());
    }
    let rest = rest.strip_prefix("expected ")?;
    let rest = rest.strip_prefix("one of ").unwrap_or(rest);
    // serde_json appends " at line L column C"; the names are the backticked words before it.
    let rest = rest.split(" at line ").next().unwrap_or(rest);
    Some(
        rest.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

#[cfg(test)]
mod metric_tests {
    use super::*;

    /// Manifests are checked against `SolverDoc::metric_names` at load time:
    /// every entry of every solver's metric list must be in its form (names,
    /// `<k>` placeholders, remarks in parentheses, `series NAME`).
    #[test]
    fn metric_lists_are_names() {
        let r = Registry::with_all();
        for s in r.iter() {
            let names = s.doc().metric_names();
            assert!(!names.is_empty(), "{}", s.name());
            for n in &names {
                assert!(
                    n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '<' | '>')),
                    "{}: metric entry `{n}` is not a name",
                    s.name()
                );
            }
            for f in s.metric_facts() {
                assert!(
                    names.iter().any(|n| n == f.name()
                        || crate::metric_matches(f.name(), n)
                        || crate::metric_matches(n, f.name())),
                    "{}: fact about `{}`, which is no documented metric",
                    s.name(),
                    f.name()
                );
            }
        }
    }

    #[test]
    fn placeholders_match_runs_of_name_characters() {
        use crate::metric_matches as m;
        assert!(m("thr_F<k>_<j>", "thr_F1_2"));
        assert!(m("thr_F<k>_<j>", "thr_F12_0"));
        assert!(!m("thr_F<k>_<j>", "thr_F1_"));
        assert!(m("sent_<flow>", "sent_r1_A"));
        assert!(m("L", "L") && !m("L", "L1") && !m("L1", "L"));
        assert!(!m("U<k>", "U"));
    }
}

#[cfg(test)]
mod schema_tests {
    use super::*;

    /// docs/design.md, "Habits" 6: `SolverDoc.params` (what `repro list --solvers` prints
    /// and what manifests are checked against at load time) lists exactly the
    /// keys each solver's parameter struct accepts.
    #[test]
    fn documented_params_are_exactly_the_accepted_ones() {
        let r = Registry::with_all();
        let mut drift = Vec::new();
        for s in r.iter() {
            let mut doc: Vec<String> = s.doc().params.iter().map(|p| p.name.to_string()).collect();
            doc.sort();
            let Some(mut accepted) = accepted_params(s.as_ref()) else {
                drift.push(format!(
                    "{}: does not answer an unknown parameter with serde's list of fields \
                     (use #[serde(deny_unknown_fields)] and params::parse first)",
                    s.name()
                ));
                continue;
            };
            accepted.sort();
            if doc != accepted {
                drift.push(format!(
                    "{}: documented {doc:?}, accepted {accepted:?}",
                    s.name()
                ));
            }
        }
        assert!(drift.is_empty(), "{}", drift.join("\n"));
    }
}
