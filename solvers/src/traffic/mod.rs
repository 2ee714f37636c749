//! Traffic processes: MMPP (stats, superposition, splitting, fitting), GE,
//! and their arrival generators for simulation.

use crate::Registry;

pub mod ge;
pub mod ipp;
pub mod mmpp;
pub mod sources;

pub fn register(r: &mut Registry) {
    mmpp::register(r);
    ge::register(r);
}
