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
