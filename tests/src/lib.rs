//! End-to-end tests live in `tests/tests/`; they drive the `repro` binary in temporary folders.
