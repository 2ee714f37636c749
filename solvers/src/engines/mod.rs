//! Simulation engines shared by several systems (docs/design.md, "Simulation
//! engines").
//!
//! Each engine owns its entity state, events, loop and counters, and exports a
//! `Scenario`, `run` and `Counters`; it knows nothing of serde, JSON or the
//! registry. Plug-ins (routing, congestion control, arbitration) are traits
//! used as generic parameters of `run`. A system folder under `systems/`
//! parses parameters into a `Scenario`, picks the plug-ins and maps the
//! counters to an `Outcome`.
//!
//! - `flit/`: flit-level wormhole network (Wu ch.3 torus, Wu ch.4-5 fat-trees).
//! - `ibnet/`: packet-level InfiniBand network (Gran & Reinemo; Yan ch.3).
//! - `qnet/`: network of FIFO queueing entities (Wu ch.6-7 wireless).

// One line per engine, in alphabetical order (keeps merges trivial).
pub mod flit;
pub mod ibnet;
pub mod qnet;
