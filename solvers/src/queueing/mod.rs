//! Queueing building blocks: QBD / matrix-geometric, MMPP queues, GE/GE/1/N
//! and maximum entropy (CTMC steady state is in `markov/`).

use crate::Registry;

pub mod gege1n;
pub mod mm1k;
pub mod mmpp;
pub mod mmpp_sim;

pub fn register(r: &mut Registry) {
    mm1k::register(r);
    mmpp::register(r);
    mmpp_sim::register(r);
    gege1n::register(r);
}
