//! Yan ch.5: entry threshold (ET) and arrival job threshold (AJT) queues.

use crate::Registry;

pub fn register(_r: &mut Registry) {}
