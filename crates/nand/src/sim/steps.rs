//! The step compiler: turns a [`FlashOp`] into the command chain the simulator executes.
//!
//! A chain is a list of [`Step`]s. Bus bursts hold the channel (one burst is a run of bus
//! stages a controller issues back to back: command, address, data); cell steps hold the die's
//! array; acquire/release steps take and give back die resources:
//!
//! - `INTERFACE`: the die accepts commands (held for the whole of a legacy op);
//! - `CACHE`: the cache registers (cache ops move data through them while the array works);
//! - `ARRAY`: the cell array and the data registers.
//!
//! Legacy ops hold all three from first to last step. Cache ops release the interface and
//! cache registers when their cell stage starts (program) or take the cache registers for their
//! data output (read), which lets the next op's bus stages overlap this op's cell stage.

use crate::op::{FlashOp, OpKind, RegisterMode};
use crate::search::state::SearchPlan;
use crate::stage::Stage;
use crate::timing::TimingModel;
use nandlab_core::SimTime;

pub(crate) const INTERFACE: u8 = 1;
pub(crate) const CACHE: u8 = 2;
pub(crate) const ARRAY: u8 = 4;
pub(crate) const ALL: u8 = INTERFACE | CACHE | ARRAY;

/// A run of bus stages issued back to back while holding the channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Burst {
    // cycle counts are small (a few per plane); u16 keeps `Step` at 24 bytes
    pub command_cycles: u16,
    pub address_cycles: u16,
    pub status_reads: u16,
    /// Data moves at the match-mode bus rate (SiM ops).
    pub match_rate: bool,
    pub data_in_bytes: u32,
    pub data_out_bytes: u32,
}

/// A cycle count as a burst field (counts are bounded by the validated geometry and timing).
#[inline]
fn cycles(n: u32) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

impl Burst {
    pub fn duration(&self, t: &TimingModel) -> SimTime {
        t.cle() * u64::from(self.command_cycles)
            + t.ale(u32::from(self.address_cycles))
            + self.transfer_time(t, self.data_in_bytes)
            + self.transfer_time(t, self.data_out_bytes)
            + t.status() * u64::from(self.status_reads)
    }

    /// Bus time of the data in and out (one test of the rate for both).
    #[inline]
    pub fn transfer_times(&self, t: &TimingModel) -> (SimTime, SimTime) {
        if self.match_rate {
            (
                t.match_transfer_time(self.data_in_bytes),
                t.match_transfer_time(self.data_out_bytes),
            )
        } else {
            (
                t.transfer_time(self.data_in_bytes),
                t.transfer_time(self.data_out_bytes),
            )
        }
    }

    /// Bus time of `bytes` of this burst's data.
    pub fn transfer_time(&self, t: &TimingModel, bytes: u32) -> SimTime {
        if self.match_rate {
            t.match_transfer_time(bytes)
        } else {
            t.transfer_time(bytes)
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Acquire(u8),
    Release(u8),
    Bus(Burst),
    /// A cell stage on `planes` planes at once (energy scales with the planes, time does not).
    Cell(Stage, SimTime, u32),
}

/// What the compiler needs beyond the op: per-plane array times and transfer size.
pub(crate) struct ChainInputs {
    pub transfer_bytes: u32,
    /// Longest TON over the op's planes (multiplane ops sense all planes at once).
    pub read_time: SimTime,
    /// Longest TIN over the op's destination pages.
    pub program_time: SimTime,
    /// Read-retry steps before the read decodes.
    pub read_retries: u32,
    /// Wait until the die is idle before starting (a cache op following cache ops of another
    /// kind: a cache-read pipeline and a cache-program pipeline must not interleave, or each
    /// would hold a register the other waits for).
    pub barrier: bool,
}

/// Compiles `op` into `steps` (cleared first; its capacity is reused). `search` is what a SiM
/// op does (read for kinds of [`OpKind::is_search`] only).
pub(crate) fn compile(
    op: &FlashOp,
    inputs: &ChainInputs,
    search: &SearchPlan,
    t: &TimingModel,
    steps: &mut Vec<Step>,
) {
    steps.clear();
    let planes = op.plane_count() as u32;
    let page_cycles = t.page_address_cycles;
    // 00h-addr-32h … 00h-addr-30h (or 80h-addr-data-11h … 10h): two commands and one address
    // per plane.
    let setup = |data_in_bytes: u32| Burst {
        command_cycles: cycles(2 * planes),
        address_cycles: cycles(page_cycles * planes),
        data_in_bytes,
        ..Burst::default()
    };
    let status = Burst {
        status_reads: 1,
        ..Burst::default()
    };
    let cached = op.mode == RegisterMode::Cache;
    match op.kind {
        OpKind::Read => {
            if cached {
                steps.push(Step::Acquire(INTERFACE));
            } else {
                steps.push(Step::Acquire(ALL));
            }
            steps.push(Step::Bus(setup(0)));
            if cached {
                steps.push(Step::Acquire(ARRAY));
                steps.push(Step::Release(INTERFACE));
            }
            push_sense(steps, inputs, t, planes, page_cycles);
            if cached {
                // the data register is copied into the cache register: the array is free for
                // the next op's sensing while this op's data goes out
                steps.push(Step::Acquire(CACHE));
                steps.push(Step::Release(ARRAY));
            }
            push_data_out(steps, inputs.transfer_bytes, planes, page_cycles);
            steps.push(Step::Release(if cached { CACHE } else { ALL }));
        }
        OpKind::Program => {
            let data = setup(inputs.transfer_bytes * planes);
            if cached {
                steps.push(Step::Acquire(INTERFACE | CACHE));
                steps.push(Step::Bus(data));
                steps.push(Step::Acquire(ARRAY));
                steps.push(Step::Release(INTERFACE | CACHE));
                steps.push(Step::Cell(Stage::Tin, inputs.program_time, planes));
                steps.push(Step::Release(ARRAY));
                steps.push(Step::Bus(status));
            } else {
                steps.extend_from_slice(&[
                    Step::Acquire(ALL),
                    Step::Bus(data),
                    Step::Cell(Stage::Tin, inputs.program_time, planes),
                    Step::Bus(status),
                    Step::Release(ALL),
                ]);
            }
        }
        OpKind::Erase => {
            steps.extend_from_slice(&[
                Step::Acquire(ALL),
                Step::Bus(Burst {
                    command_cycles: cycles(2 * planes),
                    address_cycles: cycles(t.block_address_cycles * planes),
                    ..Burst::default()
                }),
                Step::Cell(Stage::Ber, t.erase, planes),
                Step::Bus(status),
                Step::Release(ALL),
            ]);
        }
        OpKind::Copyback => {
            steps.push(Step::Acquire(ALL));
            // 00h-addr-32h … 00h-addr-35h
            steps.push(Step::Bus(setup(0)));
            push_sense(steps, inputs, t, planes, page_cycles);
            // 85h-addr-11h … 85h-addr-10h
            steps.push(Step::Bus(setup(0)));
            steps.push(Step::Cell(Stage::Tin, inputs.program_time, planes));
            steps.push(Step::Bus(status));
            steps.push(Step::Release(ALL));
        }
        OpKind::PageOpen | OpKind::PageClose | OpKind::Search | OpKind::Gather => {
            compile_search(op.kind, search, inputs.read_time, t, steps);
        }
    }
    if let (true, Some(Step::Acquire(first))) = (inputs.barrier, steps.first().copied())
        && first != ALL
    {
        steps[0] = Step::Release(ALL & !first);
        steps.insert(0, Step::Acquire(ALL));
    }
}

/// SiM ops (paper 004 §IV-B). Out of line: legacy ops never come here. Latch 2 and the matching logic are the `CACHE` resource, the
/// sense into Latch 1 the `ARRAY`: a page-open-cache senses while searches of the active page
/// go on. Commands carry the page address (one command cycle to open the sequence, one to
/// confirm); data moves at the match-mode rate.
#[inline(never)]
fn compile_search(
    kind: OpKind,
    plan: &SearchPlan,
    read_time: SimTime,
    t: &TimingModel,
    steps: &mut Vec<Step>,
) {
    let command = |data_in_bytes: u32| Burst {
        command_cycles: 2,
        address_cycles: cycles(t.page_address_cycles),
        data_in_bytes,
        match_rate: true,
        ..Burst::default()
    };
    let data_out = |bytes: u32| Burst {
        data_out_bytes: bytes,
        match_rate: true,
        ..Burst::default()
    };
    match kind {
        OpKind::PageOpen if plan.cached_sense => {
            steps.push(Step::Acquire(INTERFACE));
            steps.push(Step::Bus(command(0)));
            steps.push(Step::Acquire(ARRAY));
            steps.push(Step::Release(INTERFACE));
            steps.push(Step::Cell(Stage::Ton, read_time, 1));
            steps.push(Step::Release(ARRAY));
        }
        OpKind::PageOpen => {
            steps.push(Step::Acquire(ALL));
            steps.push(Step::Bus(command(0)));
            steps.push(Step::Cell(Stage::Ton, read_time, 1));
            steps.push(Step::Bus(data_out(plan.data_out_bytes)));
            steps.push(Step::Release(ALL));
        }
        OpKind::PageClose => {
            // waits for a page-open-cache still sensing (ARRAY) before moving Latch 1 up
            steps.push(Step::Acquire(ALL));
            let mut burst = Burst {
                command_cycles: 1,
                match_rate: true,
                ..Burst::default()
            };
            burst.data_out_bytes = plan.data_out_bytes;
            steps.push(Step::Bus(burst));
            steps.push(Step::Release(ALL));
        }
        OpKind::Search => {
            steps.push(Step::Acquire(INTERFACE | CACHE));
            steps.push(Step::Bus(command(plan.data_in_bytes)));
            steps.push(Step::Cell(
                Stage::Match,
                t.match_per_key * u64::from(plan.keys),
                1,
            ));
            steps.push(Step::Bus(data_out(plan.data_out_bytes)));
            steps.push(Step::Release(INTERFACE | CACHE));
        }
        OpKind::Gather if plan.sense => {
            steps.push(Step::Acquire(ALL));
            steps.push(Step::Bus(command(plan.data_in_bytes)));
            steps.push(Step::Cell(Stage::Ton, read_time, 1));
            steps.push(Step::Bus(data_out(plan.data_out_bytes)));
            steps.push(Step::Release(ALL));
        }
        OpKind::Gather => {
            steps.push(Step::Acquire(INTERFACE | CACHE));
            let mut burst = command(plan.data_in_bytes);
            burst.data_out_bytes = plan.data_out_bytes;
            steps.push(Step::Bus(burst));
            steps.push(Step::Release(INTERFACE | CACHE));
        }
        OpKind::Read | OpKind::Program | OpKind::Erase | OpKind::Copyback => {
            unreachable!("compile_search of a legacy op")
        }
    }
}

/// TON, repeated after each read-retry level change (EFh-addr-4 bytes, then the read command).
fn push_sense(
    steps: &mut Vec<Step>,
    inputs: &ChainInputs,
    _t: &TimingModel,
    planes: u32,
    page_cycles: u32,
) {
    steps.push(Step::Cell(Stage::Ton, inputs.read_time, planes));
    for _ in 0..inputs.read_retries {
        steps.push(Step::Bus(Burst {
            command_cycles: cycles(1 + 2 * planes),
            address_cycles: cycles(1 + page_cycles * planes),
            data_in_bytes: 4,
            ..Burst::default()
        }));
        steps.push(Step::Cell(Stage::Ton, inputs.read_time, planes));
    }
}

/// Data out of each plane: a single-plane read streams its register; a multiplane read selects
/// each plane with 06h-addr-E0h first.
fn push_data_out(steps: &mut Vec<Step>, bytes: u32, planes: u32, page_cycles: u32) {
    if planes == 1 {
        steps.push(Step::Bus(Burst {
            data_out_bytes: bytes,
            ..Burst::default()
        }));
    } else {
        for _ in 0..planes {
            steps.push(Step::Bus(Burst {
                command_cycles: 2,
                address_cycles: cycles(page_cycles),
                data_out_bytes: bytes,
                ..Burst::default()
            }));
        }
    }
}
