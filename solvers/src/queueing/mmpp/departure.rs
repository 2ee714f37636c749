//! Departure process of MMPP/M/1 approximated by a two-state MMPP (placeholder).
use crate::traffic::mmpp::Mmpp2;
use crate::SolveError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepartureFit {
    pub mmpp: Mmpp2,
}

pub fn departure_mmpp2(_p: &Mmpp2, _mu: f64) -> Result<DepartureFit, SolveError> {
    Err(SolveError::Numerical("not yet".into()))
}
