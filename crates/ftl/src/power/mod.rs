//! Power loss (SPEC B2, issue 14): a trace of the decided flash ops that rebuilds the array at
//! any instant ([`trace`], [`image`]), what a cut does to it ([`cut`]), and the mount that
//! rebuilds the mapping from the pages' OOB ([`recovery`]). The driver that runs a device up
//! to a cut is on [`crate::Ssd`] (`start_power_trace`, `power_step`, `power_cut`); the crash
//! oracle is in `nandlab-lab` (`power`). See docs/power.md.
//!
//! Nothing here runs unless a power-loss experiment starts the trace: the FTL's hot path pays
//! one branch per decided op (`Emitter::push`) and per programmed page.

pub mod checkpoint;
pub mod cut;
pub mod image;
pub mod recovery;
pub mod trace;
pub mod trim_log;

pub use cut::{CutConfig, CutReport, DumpedPage, PowerCut};
pub use image::{FlashImage, PageImage};
pub use recovery::{Recovered, RecoveryReport, RecoveryVariant, Source, recover};
pub use trace::PageContent;
