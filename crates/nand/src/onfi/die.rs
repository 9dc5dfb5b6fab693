//! [`OnfiDie`]: the state machine of one die behind the low-level ONFI command interface.
//!
//! Every cycle is validated against the die's [`Phase`]; a refused cycle returns an error and
//! changes nothing (the host may go on, or reset with FFh). Accepted cycles take bus time on the
//! die's interface (cycles to one die never overlap); confirm commands start a cell stage on the
//! array (see `array.rs`).

use super::address::AddressLayout;
use super::cycle::{ArrayStage, Cycle, CycleOutcome};
use super::state::{Phase, PlaneRegisters, Queue, Target, expected};
use crate::config::NandConfig;
use crate::error::{NandError, NandResult};
use crate::geometry::{BlockId, DieId, Geometry, PageAddress};
use crate::reliability::BlockTable;
use crate::stage::{PerStage, Stage};
use crate::timing::TimingModel;
use nandlab_core::SimTime;
use std::fmt::Display;

/// One die (ONFI logical unit) driven cycle by cycle.
///
/// The die keeps its own [`BlockTable`] over a one-die geometry (NOP, in-order programming,
/// endurance); errors from it name the global address of this die.
#[derive(Clone, Debug)]
pub struct OnfiDie {
    pub(super) id: DieId,
    /// Channel, chip and die of this die (plane, block and page 0).
    pub(super) base: PageAddress,
    pub(super) geometry: Geometry,
    pub(super) local_geometry: Geometry,
    pub(super) timing: TimingModel,
    pub(super) layout: AddressLayout,
    pub(super) blocks: BlockTable,
    pub(super) phase: Phase,
    pub(super) queue: Option<Queue>,
    /// Planes queued by 32h/11h/D1h; at most one per plane (the plane rule), so bounded by
    /// `planes_per_die`.
    pub(super) queued: Vec<Target>,
    pub(super) planes: Vec<PlaneRegisters>,
    /// The plane and column the next data output reads.
    pub(super) selection: Option<(u32, u32)>,
    /// Data output returns the status byte (after 70h or 78h-address).
    pub(super) status_output: bool,
    pub(super) interface_free: SimTime,
    pub(super) ready_at: SimTime,
    pub(super) array_busy_until: SimTime,
    /// Cell stages not yet finished at the last confirm: the running one and at most one
    /// cached behind it.
    pub(super) pending_array: Vec<ArrayStage>,
    pub(super) breakdown: PerStage<SimTime>,
    pub(super) erased_page_reads: u64,
    pub(super) features_set: u64,
    /// SiM: the device's `[search]` section, each local block's mode, each plane's latches,
    /// and the bytes of SiM output (window, bitmaps, chunks) the host may still read.
    pub(super) search: Option<crate::search::SearchConfig>,
    pub(super) block_modes: Vec<crate::search::BlockMode>,
    pub(super) sim_latches: Vec<super::search::SimLatches>,
    pub(super) sim_output: u32,
}

impl OnfiDie {
    /// Die `die` (dense index over the device) of a device configured by `config`.
    pub fn new(config: &NandConfig, die: DieId) -> NandResult<Self> {
        config.validate()?;
        let geometry = config.geometry.clone();
        if die.0 >= geometry.total_dies() {
            return Err(NandError::AddressOutOfRange {
                field: "die",
                value: u64::from(die.0),
                limit: u64::from(geometry.total_dies()),
                address: format!("die {}", die.0),
            });
        }
        let timing = TimingModel::new(config);
        let layout = AddressLayout::new(&geometry, &timing);
        layout.validate()?;
        let base = geometry.block_address(BlockId(
            die.0 * geometry.planes_per_die * geometry.blocks_per_plane,
        ))?;
        let local_geometry = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            ..geometry.clone()
        };
        let planes = geometry.planes_per_die as usize;
        let local_blocks = local_geometry.total_blocks() as usize;
        Ok(OnfiDie {
            id: die,
            base,
            blocks: BlockTable::new(&local_geometry, &config.reliability),
            local_geometry,
            geometry,
            timing,
            layout,
            phase: Phase::Idle,
            queue: None,
            queued: Vec::with_capacity(planes),
            planes: vec![PlaneRegisters::default(); planes],
            selection: None,
            status_output: false,
            interface_free: SimTime::ZERO,
            ready_at: SimTime::ZERO,
            array_busy_until: SimTime::ZERO,
            pending_array: Vec::with_capacity(2),
            breakdown: PerStage::default(),
            erased_page_reads: 0,
            features_set: 0,
            search: config.search.clone(),
            block_modes: if config.search.is_some() {
                vec![crate::search::BlockMode::Storage; local_blocks]
            } else {
                Vec::new()
            },
            sim_latches: vec![super::search::SimLatches::default(); planes],
            sim_output: 0,
        })
    }

    /// Takes one cycle from the host at `now` (or when the previous cycle ends, if later).
    pub fn cycle(&mut self, now: SimTime, cycle: Cycle) -> NandResult<CycleOutcome> {
        let start = now.max(self.interface_free);
        let outcome = match cycle {
            Cycle::Command(code) => self.command(start, code)?,
            Cycle::Address(byte) => self.address(start, byte)?,
            Cycle::DataIn { bytes } => self.data_in(start, bytes)?,
            Cycle::DataOut { bytes } => self.data_out(start, bytes)?,
            Cycle::WaitReady => self.outcome(start, start.max(self.ready_at), None, None),
        };
        debug_assert!(outcome.start <= outcome.end);
        debug_assert!(self.queued.len() <= self.planes.len());
        self.interface_free = outcome.end;
        if let Some(stage) = outcome.stage {
            self.breakdown.add(stage, outcome.duration());
        }
        if let Some(array) = outcome.array {
            self.breakdown.add(array.stage, array.end - array.start);
        }
        Ok(outcome)
    }

    /// Feeds `cycles` back to back from `now`; returns when the last one ends.
    pub fn run(&mut self, now: SimTime, cycles: &[Cycle]) -> NandResult<SimTime> {
        let mut time = now;
        for cycle in cycles {
            time = self.cycle(time, *cycle)?.end;
        }
        Ok(time)
    }

    /// Dense index of this die over the device.
    pub fn id(&self) -> DieId {
        self.id
    }
    pub fn layout(&self) -> &AddressLayout {
        &self.layout
    }
    pub fn timing(&self) -> &TimingModel {
        &self.timing
    }
    /// When R/B# is (or was last) ready.
    pub fn ready_at(&self) -> SimTime {
        self.ready_at
    }
    /// When the array finishes its last started cell stage.
    pub fn array_busy_until(&self) -> SimTime {
        self.array_busy_until
    }
    /// Time spent per stage: bus time of every accepted cycle and the cell stages started.
    pub fn breakdown(&self) -> &PerStage<SimTime> {
        &self.breakdown
    }
    /// Reads (30h, 31h, 35h) of pages holding no data since their block's erase.
    pub fn erased_page_reads(&self) -> u64 {
        self.erased_page_reads
    }
    /// Completed set-features (EFh) sequences.
    pub fn features_set(&self) -> u64 {
        self.features_set
    }

    /// Erase count of the block of `address` (an address on this die).
    pub fn erase_count(&self, address: &PageAddress) -> NandResult<u32> {
        let local = self.local_of(address)?;
        Ok(self
            .blocks
            .block(self.local_geometry.block_id(&local))
            .erase_count)
    }

    /// Whether `address` (on this die) holds data written since its block's erase.
    pub fn is_programmed(&self, address: &PageAddress) -> NandResult<bool> {
        Ok(self.blocks.is_programmed(&self.local_of(address)?))
    }

    fn local_of(&self, address: &PageAddress) -> NandResult<PageAddress> {
        self.geometry.check(address)?;
        if (address.channel, address.chip, address.die)
            != (self.base.channel, self.base.chip, self.base.die)
        {
            return Err(NandError::Unsupported {
                message: format!("{address} is not on die {}", self.id.0),
            });
        }
        Ok(self.local(address))
    }

    /// The address in the die's own block table.
    pub(super) fn local(&self, address: &PageAddress) -> PageAddress {
        PageAddress {
            channel: 0,
            chip: 0,
            die: 0,
            ..*address
        }
    }

    /// Rewrites the address of a block-table error to this die's global address.
    pub(super) fn globalize(&self, error: NandError) -> NandError {
        let fix = |address: PageAddress| PageAddress {
            channel: self.base.channel,
            chip: self.base.chip,
            die: self.base.die,
            ..address
        };
        match error {
            NandError::NopExceeded {
                address,
                count,
                limit,
            } => NandError::NopExceeded {
                address: fix(address),
                count,
                limit,
            },
            NandError::OutOfOrderProgram {
                address,
                page,
                last_page,
            } => NandError::OutOfOrderProgram {
                address: fix(address),
                page,
                last_page,
            },
            NandError::EnduranceExceeded {
                address,
                count,
                limit,
            } => NandError::EnduranceExceeded {
                address: fix(address),
                count,
                limit,
            },
            other => other,
        }
    }

    pub(super) fn outcome(
        &self,
        start: SimTime,
        end: SimTime,
        stage: Option<Stage>,
        array: Option<ArrayStage>,
    ) -> CycleOutcome {
        CycleOutcome {
            start,
            end,
            stage,
            array,
            ready_at: self.ready_at,
        }
    }

    /// The error for a cycle the current phase does not accept.
    pub(super) fn sequence_error(&self, got: impl Display) -> NandError {
        self.refuse(expected(&self.phase, self.queue), got)
    }

    pub(super) fn refuse(&self, expected: impl Into<String>, got: impl Display) -> NandError {
        NandError::CommandSequence {
            die: self.id.0,
            expected: expected.into(),
            got: got.to_string(),
        }
    }
}
