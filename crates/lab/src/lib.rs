//! The nandlab runner: the one place that wires the layers together.

/// The version string shared by the CLI and the Python package.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
