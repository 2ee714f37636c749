//! Run lengths: warm-up, number of batches and batch length, with defaults per
//! fidelity profile. The unit of `warmup` and `batch_len` (events, departures,
//! customers, time) is the simulator's own and is stated in its doc.

use crate::params::count;
use crate::{Fidelity, SolveError};

/// Most batches a run may ask for: simulators keep accumulators per batch
/// (80 bytes to a few KiB each), and the fuzz harness found `batches: 1e9`
/// asking for 80 GB.
pub const MAX_BATCHES: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunLength {
    pub warmup: u64,
    pub batches: u32,
    pub batch_len: u64,
}

impl RunLength {
    pub const fn new(warmup: u64, batches: u32, batch_len: u64) -> Self {
        RunLength {
            warmup,
            batches,
            batch_len,
        }
    }

    /// Overrides from the parameters where given, else the default for the fidelity.
    /// `batches` must be >= 2 (a CI needs two batches), `batch_len` >= 1.
    pub fn resolve(
        warmup: Option<f64>,
        batches: Option<f64>,
        batch_len: Option<f64>,
        fidelity: Fidelity,
        full: RunLength,
        quick: RunLength,
    ) -> Result<RunLength, SolveError> {
        let d = match fidelity {
            Fidelity::Full => full,
            Fidelity::Quick => quick,
        };
        Ok(RunLength {
            warmup: match warmup {
                Some(w) => count("warmup", w, 0)? as u64,
                None => d.warmup,
            },
            batches: match batches {
                Some(b) => {
                    let b = count("batches", b, 2)?;
                    if b > MAX_BATCHES {
                        return Err(SolveError::param(
                            "batches",
                            format!(
                                "{b} batches is over the limit of {MAX_BATCHES} (each keeps its own accumulators; a confidence interval gains nothing from more): use fewer, longer batches"
                            ),
                        ));
                    }
                    b as u32
                }
                None => d.batches,
            },
            batch_len: match batch_len {
                Some(l) => count("batch_len", l, 1)? as u64,
                None => d.batch_len,
            },
        })
    }
}
