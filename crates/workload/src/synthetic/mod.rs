//! Synthetic block-I/O workloads (SPEC W1): sequential, random or shuffled offsets over an
//! address span, a read/write/trim mix, fixed request size and alignment, uniform, Zipf or
//! hot/cold address skew, and a closed-loop or open-loop (fixed, Poisson) arrival process.
//!
//! A [`SyntheticSpec`] is plain data (serde, unknown keys rejected); [`SyntheticSpec::validate`]
//! names the key of any bad value; [`SyntheticGenerator`] turns it into requests.

mod address;
mod generator;
mod spec;
mod uniform;

pub(crate) use address::Permutation;
pub use generator::SyntheticGenerator;
pub use spec::{AddressDistribution, ArrivalProcess, Pattern, SyntheticSpec};
pub use uniform::UniformRandomWrites;

#[cfg(test)]
mod tests;
