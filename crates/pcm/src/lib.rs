//! Phase-change memory device and PCM write buffer (SPEC P1–P6, thesis 001).
//!
//! Not built yet: the crate reserves the layer in the workspace layout of DESIGN.md. Nothing
//! in nandlab depends on it.
