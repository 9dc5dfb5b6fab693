//! Tests of the ONFI interface: hand-computed timings on the `mlc1` preset, every error path,
//! and every op kind × mode × plane count fed through the die via its command chain.

mod chains;
mod errors;
mod rules;
mod search;
mod timing;

use super::*;
use crate::config::NandConfig;
use crate::error::NandError;
use crate::geometry::{DieId, PageAddress};
use crate::op::FlashOp;
use crate::preset::preset;
use nandlab_core::SimTime;

pub(super) fn mlc1() -> NandConfig {
    preset("mlc1").expect("mlc1 preset")
}

pub(super) fn die(config: &NandConfig) -> OnfiDie {
    OnfiDie::new(config, DieId(0)).expect("die 0")
}

pub(super) fn at(plane: u32, block: u32, page: u32) -> PageAddress {
    PageAddress {
        plane,
        block,
        page,
        ..PageAddress::default()
    }
}

pub(super) fn ns(ns: u64) -> SimTime {
    SimTime::from_ns(ns)
}

/// The page address cycles of `address` at column 0 on `die`.
pub(super) fn page_cycles(die: &OnfiDie, address: PageAddress) -> Vec<Cycle> {
    let mut out = Vec::new();
    die.layout().push_page_address(&address, 0, &mut out);
    out
}

pub(super) fn row_cycles(die: &OnfiDie, address: PageAddress) -> Vec<Cycle> {
    let mut out = Vec::new();
    die.layout().push_row_address(&address, &mut out);
    out
}

/// `command, address…, confirm` as one list.
pub(super) fn setup(command: u8, address: Vec<Cycle>, confirm: Option<u8>) -> Vec<Cycle> {
    let mut out = vec![Cycle::Command(command)];
    out.extend(address);
    out.extend(confirm.map(Cycle::Command));
    out
}

/// Runs `cycles` and returns the error of the one that fails.
pub(super) fn failure(die: &mut OnfiDie, cycles: &[Cycle]) -> NandError {
    match die.run(SimTime::ZERO, cycles) {
        Ok(end) => panic!("{cycles:?} was accepted (ended at {end})"),
        Err(error) => error,
    }
}

pub(super) fn chain_of(op: &FlashOp, config: &NandConfig) -> Vec<Cycle> {
    command_chain(
        op,
        &config.geometry,
        &crate::timing::TimingModel::new(config),
    )
}

pub(super) fn message(die: &mut OnfiDie, cycles: &[Cycle]) -> String {
    failure(die, cycles).to_string()
}

pub(super) fn program_chain(die: &OnfiDie, address: PageAddress) -> Vec<Cycle> {
    command_chain(&FlashOp::program(address), &mlc1().geometry, die.timing())
}
