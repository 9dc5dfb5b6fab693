//! NAND flash chip model at NANDFlashSim fidelity (SPEC N1–N12; paper 003).
//!
//! Layers of this crate, top (what a user calls) to bottom:
//! - [`NandSim`]: the event-driven model of the flash chips behind one controller (channels,
//!   dies, planes), driven through the *transaction interface*: submit a [`FlashOp`], collect
//!   [`Completion`]s. Ops become command chains of stages (CLE, ALE, TIR, TOR, TIN, TON, BER,
//!   status); bus stages hold the channel, cell stages hold the die.
//! - [`onfi`]: the *low-level ONFI command interface*: a die state machine that validates every
//!   command/address/data cycle.
//! - no scheduler: the order and merging of ops (die-first / plane-first / FCFS, multiplane,
//!   cache mode) is decided by the controller's scheduler, `nandlab_ftl::sched`.
//! - configuration ([`NandConfig`], [`preset()`]), [`Geometry`], [`timing`], [`energy`].

pub mod cell;
pub mod config;
pub mod energy;
pub mod error;
pub mod geometry;
pub mod onfi;
pub mod op;
pub mod preset;
pub mod reliability;
pub mod search;
pub mod sim;
pub mod stage;
pub mod timing;

pub use cell::{CellType, PageLayout, PageType};
pub use config::{NandConfig, ReliabilityConfig};
pub use error::{NandError, NandResult};
pub use geometry::{BlockId, DieId, Geometry, PageAddress, PlaneId, Ppa};
pub use op::{FlashOp, OpKind, RegisterMode};
pub use preset::{preset, preset_names};
pub use search::{BlockMode, ChunkMask, MatchBitmap, SearchConfig, SearchKey};
pub use sim::{Completion, NandSim, NandStats};
pub use stage::Stage;
