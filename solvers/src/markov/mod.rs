//! Continuous-time Markov chains: the tools both the traffic processes
//! (`traffic/`: an MMPP's or MAP's stationary phase distribution) and the
//! queues (`queueing/`, `systems/`: steady state of a queue's chain) use.
//! Imports no other solver module but the crate's contract, so `traffic`
//! and `queueing` depend on it, and `queueing` on `traffic`, never back.

pub mod ctmc;
