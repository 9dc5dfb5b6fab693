//! Phase-change memory for nandlab (SPEC P1–P5; thesis seed 001, chapters 2–3 and §5.1).
//!
//! - [`device`]: the PCM device model (banks, line reads, word writes, data-comparison write,
//!   Flip-N-Write, per-word endurance, energy per bit), usable synchronously (costs now) or as
//!   an [`nandlab_core::EventSource`].
//! - [`config`] and [`preset`]: the typed device config and its named presets with sources.
//!
//! Nothing here knows the FTL: the components speak in opaque physical-location ids and page
//! bytes, so a controller front end can call them.
#![warn(missing_docs)]

pub mod config;
pub mod dedup;
pub mod device;
pub mod error;
pub mod logbuf;
mod memory;
pub mod preset;

pub use config::PcmConfig;
pub use dedup::{DedupConfig, DedupLookup, Fingerprint, Location, RedundantWriteFinder};
pub use device::{AccessCost, PcmAddr, PcmCompletion, PcmDevice, PcmOpKind, PcmStats, WearSummary};
pub use error::{PcmError, PcmResult};
pub use logbuf::{
    DpramConfig, DpramLog, FlashPages, FlashShape, FlashWork, InPageLog, IplConfig, LogBuffer,
    LogRegionConfig, LogStats, PageNo, PcmLogRegion, SectorOverflow, WriteOutcome, WriteResult,
};
pub use preset::{parse_config, preset, preset_names};
