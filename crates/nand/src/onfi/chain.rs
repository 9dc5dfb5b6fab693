//! The bridge between the transaction interface and the ONFI interface: the exact cycle
//! sequence (command chain) of a [`FlashOp`], and a summary of a chain for cross-checks.
//!
//! Chains, for targets `t1 … tn` (n planes, `B` bytes per plane, column 0), `W` = wait ready:
//!
//! | op | chain |
//! |---|---|
//! | read | `00h t_i 32h` (i < n), `00h tn 30h W`, output |
//! | program | `80h t_i DataIn(B) 11h` (i < n), `80h tn DataIn(B) 10h W 70h DataOut(1)` |
//! | erase | `60h row(t_i) D1h` (i < n), `60h row(tn) D0h W 70h DataOut(1)` |
//! | copyback | `00h s_i 32h`, `00h sn 35h W`, `85h d_i 11h`, `85h dn 10h W 70h DataOut(1)` |
//!
//! | (block mode) | `C8h row(t) C9h` (match) or `C8h row(t) CAh` (storage); no op kind |
//! | page-open | `C0h t C1h W DataOut(V)` (V: the verification window) |
//! | page-open-cache | `C0h t C2h W` |
//! | page-close | `C3h W` (then `DataOut(V)` of a page that moved up from Latch 1) |
//! | search (k keys) | `C4h t DataIn(16 k) C5h W DataOut(64 k)` |
//! | gather (c chunks) | `C6h t DataIn(8) C7h W DataOut(c (64 + E))` (E: chunk ECC bytes) |
//!
//! where "output" is `DataOut(B)` for one plane and `06h t_i E0h DataOut(B)` per plane for
//! several. Cache ops depend on their [`ChainPosition`] in a stream of cache ops on one die:
//! a cache program ends with 15h instead of 10h unless it is the last (or alone); a cache read
//! is pipelined: the first senses its page (30h), each later one starts sensing its page with
//! 31h and then outputs the *previous* op's data, and the last also ends with `3Fh W` and
//! outputs its own data. A cache op alone has the legacy chain.
//!
//! Chains encode what they are given: call [`FlashOp::validate`] first. Channel, chip and die
//! of the targets select the die the chain is sent to and are not encoded.

use super::address::AddressLayout;
use super::commands as op;
use super::cycle::Cycle;
use crate::geometry::{Geometry, PageAddress};
use crate::op::{FlashOp, OpKind, RegisterMode};
use crate::timing::TimingModel;

/// Where an op sits in a stream of cache-mode ops on one die (ignored for legacy ops).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChainPosition<'a> {
    /// On its own: the legacy chain.
    #[default]
    Alone,
    /// Opens a stream.
    First,
    /// Inside a stream, after `previous` (whose data a cache read outputs).
    Middle { previous: &'a FlashOp },
    /// Closes a stream after `previous`.
    Last { previous: &'a FlashOp },
}

/// The command chain of `op` on its own (see the module docs).
pub fn command_chain(op: &FlashOp, geometry: &Geometry, timing: &TimingModel) -> Vec<Cycle> {
    command_chain_at(op, geometry, timing, ChainPosition::Alone)
}

/// The command chain of `op` at `position` in a stream of cache ops.
pub fn command_chain_at(
    op: &FlashOp,
    geometry: &Geometry,
    timing: &TimingModel,
    position: ChainPosition<'_>,
) -> Vec<Cycle> {
    let layout = AddressLayout::new(geometry, timing);
    let mut out = Vec::with_capacity(16 * op.targets.len().max(1));
    let bytes = transfer_bytes(op, geometry);
    let cached = op.mode == RegisterMode::Cache;
    match op.kind {
        OpKind::Read => {
            let (confirm, previous, last) = match (cached, position) {
                (false, _) | (true, ChainPosition::Alone) => (op::READ_CONFIRM, None, true),
                (true, ChainPosition::First) => (op::READ_CONFIRM, None, false),
                (true, ChainPosition::Middle { previous }) => {
                    (op::CACHE_READ, Some(previous), false)
                }
                (true, ChainPosition::Last { previous }) => (op::CACHE_READ, Some(previous), true),
            };
            read_setup(&layout, &op.targets, confirm, &mut out);
            out.push(Cycle::WaitReady);
            if let Some(previous) = previous {
                data_output(
                    &layout,
                    &previous.targets,
                    transfer_bytes(previous, geometry),
                    &mut out,
                );
            }
            if last {
                if previous.is_some() {
                    out.push(Cycle::Command(op::CACHE_READ_END));
                    out.push(Cycle::WaitReady);
                }
                data_output(&layout, &op.targets, bytes, &mut out);
            }
        }
        OpKind::Program => {
            let streaming = matches!(
                position,
                ChainPosition::First | ChainPosition::Middle { .. }
            );
            let confirm = if cached && streaming {
                op::CACHE_PROGRAM_CONFIRM
            } else {
                op::PROGRAM_CONFIRM
            };
            for (i, target) in op.targets.iter().enumerate() {
                out.push(Cycle::Command(op::PROGRAM));
                layout.push_page_address(target, 0, &mut out);
                out.push(Cycle::DataIn { bytes });
                out.push(Cycle::Command(queue_or(
                    i,
                    op.targets.len(),
                    op::MULTIPLANE_PROGRAM_QUEUE,
                    confirm,
                )));
            }
            wait_and_status(&mut out);
        }
        OpKind::Erase => {
            for (i, target) in op.targets.iter().enumerate() {
                out.push(Cycle::Command(op::ERASE));
                layout.push_row_address(target, &mut out);
                out.push(Cycle::Command(queue_or(
                    i,
                    op.targets.len(),
                    op::MULTIPLANE_ERASE_QUEUE,
                    op::ERASE_CONFIRM,
                )));
            }
            wait_and_status(&mut out);
        }
        OpKind::Copyback => {
            read_setup(&layout, &op.targets, op::COPYBACK_READ_CONFIRM, &mut out);
            out.push(Cycle::WaitReady);
            for (i, destination) in op.destinations.iter().enumerate() {
                out.push(Cycle::Command(op::COPYBACK_PROGRAM));
                layout.push_page_address(destination, 0, &mut out);
                out.push(Cycle::Command(queue_or(
                    i,
                    op.destinations.len(),
                    op::MULTIPLANE_PROGRAM_QUEUE,
                    op::PROGRAM_CONFIRM,
                )));
            }
            wait_and_status(&mut out);
        }
        OpKind::PageOpen | OpKind::PageClose | OpKind::Search | OpKind::Gather => {
            search_chain(op, &layout, timing, &mut out);
        }
    }
    out
}

/// The vendor-command chains of SiM ops (see the module docs).
fn search_chain(op: &FlashOp, layout: &AddressLayout, timing: &TimingModel, out: &mut Vec<Cycle>) {
    use crate::search::format::{
        CHUNK_BYTES, CHUNK_MASK_BYTES, MATCH_BITMAP_BYTES, SEARCH_KEY_BYTES,
    };
    let target = &op.targets[0];
    let setup = |command: u8, data_in: u32, confirm: u8, out: &mut Vec<Cycle>| {
        out.push(Cycle::Command(command));
        layout.push_page_address(target, 0, out);
        if data_in > 0 {
            out.push(Cycle::DataIn { bytes: data_in });
        }
        out.push(Cycle::Command(confirm));
        out.push(Cycle::WaitReady);
    };
    match op.kind {
        OpKind::PageOpen if op.mode == RegisterMode::Cache => {
            setup(op::SIM_PAGE_OPEN, 0, op::SIM_PAGE_OPEN_CACHE_CONFIRM, out);
        }
        OpKind::PageOpen => {
            setup(op::SIM_PAGE_OPEN, 0, op::SIM_PAGE_OPEN_CONFIRM, out);
            out.push(Cycle::DataOut {
                bytes: timing.page_open_transfer_bytes,
            });
        }
        OpKind::PageClose => {
            out.push(Cycle::Command(op::SIM_PAGE_CLOSE));
            out.push(Cycle::WaitReady);
        }
        OpKind::Search => {
            let keys = op.search_keys.max(1);
            setup(
                op::SIM_SEARCH,
                SEARCH_KEY_BYTES * keys,
                op::SIM_SEARCH_CONFIRM,
                out,
            );
            out.push(Cycle::DataOut {
                bytes: MATCH_BITMAP_BYTES * keys,
            });
        }
        _ => {
            setup(
                op::SIM_GATHER,
                CHUNK_MASK_BYTES,
                op::SIM_GATHER_CONFIRM,
                out,
            );
            let chunks = op.chunk_mask.count_ones().max(1);
            out.push(Cycle::DataOut {
                bytes: chunks * (CHUNK_BYTES + timing.chunk_ecc_bytes),
            });
        }
    }
}

/// The chain of a whole stream of cache ops of one kind on one die, each at its position.
pub fn cache_stream_chain(
    ops: &[FlashOp],
    geometry: &Geometry,
    timing: &TimingModel,
) -> Vec<Cycle> {
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let position = match (i, ops.len()) {
            (_, 1) => ChainPosition::Alone,
            (0, _) => ChainPosition::First,
            (i, n) if i + 1 == n => ChainPosition::Last {
                previous: &ops[i - 1],
            },
            (i, _) => ChainPosition::Middle {
                previous: &ops[i - 1],
            },
        };
        out.extend(command_chain_at(op, geometry, timing, position));
    }
    out
}

fn transfer_bytes(op: &FlashOp, geometry: &Geometry) -> u32 {
    op.transfer_bytes.unwrap_or(geometry.page_size_bytes)
}

/// The queue command for every plane but the last, `confirm` for the last.
fn queue_or(index: usize, count: usize, queue: u8, confirm: u8) -> u8 {
    if index + 1 < count { queue } else { confirm }
}

/// `00h t_i 32h` for every plane but the last, `00h tn <confirm>` for the last.
fn read_setup(layout: &AddressLayout, targets: &[PageAddress], confirm: u8, out: &mut Vec<Cycle>) {
    for (i, target) in targets.iter().enumerate() {
        out.push(Cycle::Command(op::READ));
        layout.push_page_address(target, 0, out);
        out.push(Cycle::Command(queue_or(
            i,
            targets.len(),
            op::MULTIPLANE_READ_QUEUE,
            confirm,
        )));
    }
}

/// Data output of every plane of `targets`: directly for one plane, after 06h-E0h for several.
fn data_output(layout: &AddressLayout, targets: &[PageAddress], bytes: u32, out: &mut Vec<Cycle>) {
    if let [_single] = targets {
        out.push(Cycle::DataOut { bytes });
        return;
    }
    for target in targets {
        out.push(Cycle::Command(op::CHANGE_READ_COLUMN));
        layout.push_page_address(target, 0, out);
        out.push(Cycle::Command(op::CHANGE_READ_COLUMN_CONFIRM));
        out.push(Cycle::DataOut { bytes });
    }
}

fn wait_and_status(out: &mut Vec<Cycle>) {
    out.push(Cycle::WaitReady);
    out.push(Cycle::Command(op::READ_STATUS));
    out.push(Cycle::DataOut { bytes: 1 });
}

/// Counts of a chain's cycles, in the units of the stage model.
///
/// A status read (70h, or 78h and its row address, with the status bytes after it) counts once
/// in `status_reads` and in no other field; every other command, address cycle and data byte
/// counts in its field. Waits count nowhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChainSummary {
    pub commands: u32,
    pub address_cycles: u32,
    pub data_in_bytes: u64,
    pub data_out_bytes: u64,
    pub status_reads: u32,
}

/// Summarizes `cycles` (see [`ChainSummary`]).
pub fn chain_summary(cycles: &[Cycle]) -> ChainSummary {
    let mut summary = ChainSummary::default();
    let mut in_status = false;
    for cycle in cycles {
        match *cycle {
            Cycle::Command(op::READ_STATUS | op::READ_STATUS_ENHANCED) => {
                summary.status_reads += 1;
                in_status = true;
            }
            Cycle::Command(_) => {
                summary.commands += 1;
                in_status = false;
            }
            Cycle::Address(_) if in_status => {}
            Cycle::Address(_) => summary.address_cycles += 1,
            Cycle::DataIn { bytes } => summary.data_in_bytes += u64::from(bytes),
            Cycle::DataOut { .. } if in_status => {}
            Cycle::DataOut { bytes } => summary.data_out_bytes += u64::from(bytes),
            Cycle::WaitReady => {}
        }
    }
    summary
}
