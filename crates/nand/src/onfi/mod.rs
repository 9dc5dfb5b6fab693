//! The low-level ONFI-style command interface of the chip model (SPEC N6a; paper 003 §6.1, §7.1).
//!
//! A host drives one die cycle by cycle ([`Cycle`]: command, address, data in/out, wait for
//! ready); the die's state machine ([`OnfiDie`], paper Fig. 7) validates every cycle, fails
//! loudly on a wrong sequence ([`crate::NandError::CommandSequence`] naming what it expected),
//! enforces the plane rule and the reliability constraints, and times each cycle by stage.
//! [`command_chain`] turns a transaction-interface [`crate::FlashOp`] into its exact cycles,
//! which is the bridge between the two interfaces (SPEC N6).
//!
//! Supported commands (see [`commands`]): page read (00h-30h), cache read (31h, 00h-31h, 3Fh),
//! multiplane read (00h-32h … 00h-30h), change read column (06h-E0h), program (80h-10h), cache
//! program (80h-15h), multiplane program (80h-11h …), erase (60h-D0h), multiplane erase
//! (60h-D1h …), copyback (00h-35h, 85h-10h, 85h-11h …), read status (70h, 78h), reset (FFh) and
//! set features (EFh); on a SiM device (a `[search]` section) the vendor commands C0h–CAh of
//! `search` (page-open, page-open-cache, page-close, search, gather, block mode). The address layout is in [`address`]; docs/onfi.md has an overview.
//!
//! Layout: `cycle` (what crosses the bus), `commands` (opcodes), `address` (encode/decode),
//! `die` (the die and its accessors), `sequence` (command, address and data
//! cycles), `array` (confirms and cell stages), `chain` (op to
//! cycles), `state` (phases and registers).

pub mod address;
mod array;
pub mod chain;
pub mod commands;
pub mod cycle;
mod die;
mod search;
mod sequence;
mod state;
#[cfg(test)]
mod tests;

pub use address::{AddressLayout, DieAddress};
pub use array::CACHE_COPY_TIME;
pub use chain::{
    ChainPosition, ChainSummary, cache_stream_chain, chain_summary, command_chain, command_chain_at,
};
pub use cycle::{ArrayStage, Cycle, CycleOutcome};
pub use die::OnfiDie;
