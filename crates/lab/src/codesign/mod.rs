//! The co-designed stack of paper 000: the storage engine (`nandlab-engine`) on the SSD
//! (`nandlab-ftl` on `nandlab-nand`), wired through the engine's block-device and co-design
//! hint traits.

mod device;

pub use device::{POWER_LOST, SsdDevice};
