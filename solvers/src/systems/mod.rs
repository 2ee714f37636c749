//! One folder per modelled system, model and simulator side by side.

use crate::Registry;

pub mod credit;
pub mod fattree;
pub mod ibcc;
pub mod threshold;
pub mod torus;
pub mod wireless;

pub fn register(r: &mut Registry) {
    credit::register(r);
    fattree::register(r);
    ibcc::register(r);
    threshold::register(r);
    torus::register(r);
    wireless::register(r);
}
