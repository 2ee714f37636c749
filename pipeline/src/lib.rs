//! The repro pipeline: manifests in, figures out.
//!
//! One folder per stage, in the order the data passes through them:
//! [`manifest`] (load + validate) -> [`plan`] (tasks) -> [`execute`] (run what
//! is not cached) -> [`measure`] (replications combined, error measures) ->
//! [`render`] (figures, tables, index.html). A stage uses earlier stages and
//! [`shared`], never a later stage or the crate root. The commands that call
//! the stages in order are the binary's (`main.rs`, `commands/`).
//!
//! Architecture invariant: the pipeline is the only crate that knows both the
//! solvers and the store; solvers never see the store, the store never sees a
//! solver, and reports only renders what the pipeline hands it.

pub mod execute;
pub mod manifest;
pub mod measure;
pub mod plan;
pub mod render;
pub mod shared;

pub use shared::{exit, BadInput, InputError, CODE_VERSION};
