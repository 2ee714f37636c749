//! Manifests, planning and execution.
