//! Discrete-event simulation core shared by every simulator: event calendar,
//! seeded RNG streams, time-averaged statistics, batch means, independent
//! replications and Student-t confidence intervals, run lengths per fidelity.
//!
//! Invariant: a simulator's result depends only on its parameters and seed.
//! No global RNG, no clock-based seeds, no hash-map iteration order.

pub mod calendar;
pub mod fastln;
pub mod rng;
pub mod run;
pub mod stats;

pub use calendar::Calendar;
pub use fastln::FastLn;
pub use rng::Stream;
pub use run::RunLength;
pub use stats::{ci95, student_t_975, BatchStats, Tally, TimeAverage};
