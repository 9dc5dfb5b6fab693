//! YCSB (SPEC W3): the core workloads A–F with YCSB's request distributions (uniform,
//! scrambled Zipfian, latest, hotspot), FNV-64 key hashing and `user…` key names, carried over
//! from the reference Java implementation (brianfrankcooper/YCSB, `site.ycsb.generator`,
//! `site.ycsb.Utils`, `site.ycsb.workloads.CoreWorkload`) with its constants; plus a plain
//! Zipf(α) and the query-concentration table of the SiM paper (004, Table III).
//!
//! "Bit-compatible" covers the generators' math and hashing given the same uniform draws (see
//! [`random`] and [`workload`] for what that does and does not include).

pub mod generators;
pub mod random;
pub mod workload;
pub mod zipf;

pub use generators::{Hotspot, ScrambledZipfian, SkewedLatest, UniformLong, Zipfian};
pub use random::{JavaTlr, UniformSource, fnvhash64};
pub use workload::{
    YcsbDistribution, YcsbGenerator, YcsbOp, YcsbSpec, concentration_table, key_name, key_value,
    query_concentration,
};
pub use zipf::PlainZipf;

#[cfg(test)]
mod tests;
