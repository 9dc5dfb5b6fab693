//! Phase-change memory device and PCM write buffer (SPEC P-series, paper 003).
//!
//! Not built yet: the crate reserves the layer in the workspace layout of DESIGN.md. Nothing
//! in nandlab depends on it.
