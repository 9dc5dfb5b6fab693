//! The event-driven chip model behind the transaction interface (SPEC N3–N7, N11).
//!
//! [`NandSim`] owns every channel, die and block of a device. A controller submits
//! [`FlashOp`]s; each becomes a chain of steps (see `steps.rs`) executed against three kinds of
//! resource: the channel's I/O bus (bus stages, granted first come first served), and each
//! die's interface, cache registers and array. Simulated time jumps from one step completion to
//! the next; nothing ticks idle cycles (the paper's cycle skipping).
//!
//! Functional state (erase counts, programmed pages) changes when an op is submitted; the
//! timing of the op is simulated afterwards. Constraint violations are returned by
//! [`NandSim::submit`] and leave the state unchanged.

pub mod power;
mod search_ops;
mod stats;
pub(crate) mod steps;
mod suspend;

pub use power::{InFlightOp, paired_lower_pages};
pub use stats::{Completion, KindStats, NandStats};

use crate::config::NandConfig;
use crate::energy::EnergyModel;
use crate::error::{NandError, NandResult};
use crate::geometry::{DieId, Geometry};
use crate::op::{FlashOp, OpKind, RegisterMode};
use crate::reliability::BlockTable;
use crate::search::BlockMode;
use crate::search::state::{SearchPlan, SearchState};
use crate::timing::TimingModel;
use nandlab_core::{EventQueue, SimRng, SimTime};
use std::collections::VecDeque;
use steps::{ChainInputs, Step};

/// Upper bound on ops in flight (submitted, not completed); beyond it `submit` fails.
pub const DEFAULT_MAX_OPS_IN_FLIGHT: usize = 1 << 20;

#[derive(Debug)]
struct OpSlot {
    kind: OpKind,
    planes: u32,
    tag: u64,
    /// Submission order (device-wide).
    sequence: u64,
    /// Place among the die's waiters: an op never overtakes an op of lower order on a
    /// resource. `2 × sequence + 1`, so that a read let ahead of a suspended program or erase
    /// can take the (even) order just below it (`suspend.rs`).
    order: u64,
    /// Time of the op's next event (the end of its current burst or cell step).
    wake_at: SimTime,
    /// Times of events of this op that a suspension made stale (skipped when they pop).
    stale: Vec<SimTime>,
    /// Reads served ahead of this op (suspend budget), valid while `budget_sequence` is the
    /// op's sequence (so submitting resets nothing), and the step index of the re-acquire that
    /// resumes it after its last suspension (read only for the op its die names as suspended).
    reads_ahead: u32,
    budget_sequence: u64,
    resume_step: u32,
    die: u32,
    channel: u32,
    submitted: SimTime,
    steps: Vec<Step>,
    /// Index of the next step to start.
    next: usize,
    wait_started: SimTime,
    bus_wait: SimTime,
    read_retries: u32,
    uncorrectable: bool,
}

#[derive(Debug, Default)]
struct Die {
    held: u8,
    /// Ops blocked on an acquire, sorted by submission order.
    waiters: VecDeque<u32>,
    ops_in_flight: u32,
    busy_since: SimTime,
    /// Kind of the last cache op submitted (cache pipelines of different kinds must not mix).
    last_cache_kind: Option<OpKind>,
    /// The program or erase last suspended on this die, by slot and sequence (reads join its
    /// suspension until it resumes); `u32::MAX` when none.
    suspended_slot: u32,
    suspended_sequence: u64,
}

/// A channel's I/O bus. A burst sets `busy_until`. When the op's next event is the end of its
/// burst, that event hands the bus over (as it always did); when the burst was merged with the
/// cell step after it, the op has no event at the burst's end, so a release event is scheduled
/// only if another op has to wait: an uncontended burst costs no event of its own.
#[derive(Debug, Default)]
struct Channel {
    busy_until: SimTime,
    /// The holder's next event is at `busy_until` and hands the bus over.
    holder_releases: bool,
    /// A release event is pending at `busy_until`.
    release_scheduled: bool,
    /// Ops ready for a bus burst, first come first served.
    waiters: VecDeque<u32>,
}

/// The stage times of one burst shape (`NandSim::start_burst`).
#[derive(Clone, Copy, Debug, Default)]
struct BurstTimes {
    burst: steps::Burst,
    /// CLE, ALE, TIR, TOR and status time in picoseconds.
    parts: [u64; 5],
    duration: SimTime,
}

impl BurstTimes {
    fn of(burst: steps::Burst, t: &TimingModel) -> Self {
        // the stage times in plain integer picoseconds: each is a few cycles times a cycle
        // time (far from overflowing), and every stage is accounted, zero or not
        let command = t.command_cycle.as_ps();
        let (tir, tor) = burst.transfer_times(t);
        let parts = [
            command * u64::from(burst.command_cycles),
            command * u64::from(burst.address_cycles),
            tir.as_ps(),
            tor.as_ps(),
            (command + t.transfer.as_ps()) * u64::from(burst.status_reads),
        ];
        BurstTimes {
            burst,
            parts,
            duration: SimTime::from_ps(parts.iter().sum()),
        }
    }
}

/// `NandSim::promoted_order` when the op being submitted keeps its own order.
const NOT_PROMOTED: u64 = u64::MAX;

/// Event payloads at or above this value are channel releases (`CHANNEL_EVENT + channel`);
/// below it they are op slots.
const CHANNEL_EVENT: u32 = 1 << 31;

/// The flash chips of one device: channels, dies, planes, blocks.
#[derive(Debug)]
pub struct NandSim {
    config: NandConfig,
    geometry: Geometry,
    timing: TimingModel,
    energy: EnergyModel,
    blocks: BlockTable,
    rng: SimRng,
    queue: EventQueue<u32>,
    now: SimTime,
    channels: Vec<Channel>,
    dies: Vec<Die>,
    ops: Vec<OpSlot>,
    free_ops: Vec<u32>,
    ready: VecDeque<u32>,
    max_ops_in_flight: usize,
    next_sequence: u64,
    stats: NandStats,
    /// Search-in-Memory state (block modes, stored bytes, latches); `None` without `[search]`.
    search: Option<SearchState>,
    /// The plan of the SiM op being submitted (set by `accept_search`, read by the step
    /// compiler): kept out of `ChainInputs` so that legacy ops do not build one.
    search_plan: SearchPlan,
    /// TIN depends on the page type only (no `[search]` match-mode blocks, no
    /// `timing.program_variation`): one test on the program path instead of two.
    plain_program_times: bool,
    /// Which blocks are in SLC mode (SPEC C3; `None` until the controller puts one there, so
    /// the read and program paths test one `Option` when the SLC cache is off).
    slc_blocks: Option<Vec<bool>>,
    /// Suspend timing (`[suspend]`); `None`: reads never suspend.
    suspend: Option<suspend::SuspendTimes>,
    /// Stale events still in the queue (see `OpSlot::stale`); 0 keeps the check off the
    /// event path.
    stale_events: u32,
    /// The order the op being submitted takes instead of its own (a read let ahead), or
    /// [`NOT_PROMOTED`].
    promoted_order: u64,
    /// The stage times of the last two burst shapes started (the timing never changes), and
    /// which entry the next new shape replaces.
    burst_times: [BurstTimes; 2],
    burst_times_next: usize,
}

impl NandSim {
    /// Builds the device; `seed` drives the raw-bit-error model and the per-page TIN spread
    /// (`timing.program_variation`), the only randomness.
    pub fn new(config: NandConfig, seed: u64) -> NandResult<Self> {
        config.validate()?;
        if config.memory_estimate_bytes() > crate::config::MEMORY_CHECK_THRESHOLD_BYTES {
            let budget =
                nandlab_core::memory::MemoryBudget::from_environment().map_err(|message| {
                    NandError::Config {
                        key: nandlab_core::memory::BUDGET_ENV.into(),
                        message,
                    }
                })?;
            config.check_memory(&budget)?;
        }
        let geometry = config.geometry.clone();
        let dies = geometry.total_dies() as usize;
        let channels = geometry.channels as usize;
        let energy = EnergyModel::new(&config);
        let timing = TimingModel::new(&config).with_seed(seed);
        Ok(NandSim {
            plain_program_times: config.search.is_none() && !timing.varies_program(),
            timing,
            energy: EnergyModel::new(&config),
            blocks: BlockTable::new(&geometry, &config.reliability),
            rng: SimRng::stream(seed, "nand.reliability"),
            queue: EventQueue::with_capacity(dies * 4),
            now: SimTime::ZERO,
            channels: (0..channels).map(|_| Channel::default()).collect(),
            dies: (0..dies)
                .map(|_| Die {
                    suspended_slot: u32::MAX,
                    ..Die::default()
                })
                .collect(),
            ops: Vec::new(),
            free_ops: Vec::new(),
            ready: VecDeque::new(),
            max_ops_in_flight: DEFAULT_MAX_OPS_IN_FLIGHT,
            next_sequence: 0,
            stats: NandStats::new(
                channels,
                dies,
                energy.stage_watts(),
                energy.match_stage_watts(),
            ),
            search: config
                .search
                .clone()
                .map(|s| SearchState::new(s, &geometry, seed)),
            search_plan: SearchPlan::default(),
            slc_blocks: None,
            suspend: config.suspend.as_ref().map(suspend::SuspendTimes::new),
            stale_events: 0,
            promoted_order: NOT_PROMOTED,
            // (a default burst has no cycles and no data: zero stage times, what `of` gives)
            burst_times: [BurstTimes::default(); 2],
            burst_times_next: 0,
            geometry,
            config,
        })
    }

    pub fn config(&self) -> &NandConfig {
        &self.config
    }
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    pub fn timing(&self) -> &TimingModel {
        &self.timing
    }
    pub fn blocks(&self) -> &BlockTable {
        &self.blocks
    }
    pub fn stats(&self) -> &NandStats {
        &self.stats
    }
    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn set_max_ops_in_flight(&mut self, limit: usize) {
        self.max_ops_in_flight = limit;
    }
    pub fn ops_in_flight(&self) -> usize {
        self.ops.len() - self.free_ops.len()
    }
    pub fn is_idle(&self) -> bool {
        self.ops_in_flight() == 0
    }

    /// Number of ops in flight on one die (submitted, not completed).
    #[inline]
    pub fn die_ops_in_flight(&self, die: DieId) -> u32 {
        self.dies[die.index()].ops_in_flight
    }

    /// Accepts `op` at time `now` (not before the last event processed). Checks addresses, the
    /// plane rule and the reliability constraints, updates the functional state, and starts
    /// the op's command chain.
    pub fn submit(&mut self, now: SimTime, op: &FlashOp) -> NandResult<()> {
        self.submit_with_data(now, op, None)
    }

    /// [`NandSim::submit`] for an op whose caller has range-checked its addresses already
    /// and builds it from a well-formed template (the FTL decodes each op's physical page
    /// once, `sched/scheduler.rs`): [`FlashOp::validate`] runs in debug builds only (issue 32:
    /// indexes checked once per op, not again here). Everything else is as [`NandSim::submit`].
    pub fn submit_prechecked(&mut self, now: SimTime, op: &FlashOp) -> NandResult<()> {
        debug_assert_eq!(op.validate(&self.geometry), Ok(()));
        self.submit_valid(now, op, None)
    }

    /// [`NandSim::submit`], storing `data` for a program of a match-mode page (SiM devices).
    fn submit_with_data(
        &mut self,
        now: SimTime,
        op: &FlashOp,
        data: Option<&[u8]>,
    ) -> NandResult<()> {
        op.validate(&self.geometry)?;
        self.submit_valid(now, op, data)
    }

    /// [`NandSim::submit_with_data`] of a validated op.
    fn submit_valid(&mut self, now: SimTime, op: &FlashOp, data: Option<&[u8]>) -> NandResult<()> {
        assert!(now >= self.now, "submit at {now} before now {}", self.now);
        self.now = now;
        if self.ops_in_flight() >= self.max_ops_in_flight {
            return Err(NandError::Capacity {
                what: "flash ops in flight",
                limit: self.max_ops_in_flight as u64,
            });
        }
        let inputs = self.accept(now, op, data)?;
        let first = op.targets[0];
        let die = self.geometry.die_id(&first).0;
        let channel = first.channel;
        let slot = match self.free_ops.pop() {
            Some(slot) => slot,
            None => {
                self.ops.push(OpSlot {
                    kind: op.kind,
                    planes: 0,
                    tag: 0,
                    sequence: 0,
                    die: 0,
                    channel: 0,
                    submitted: SimTime::ZERO,
                    steps: Vec::with_capacity(8),
                    order: 0,
                    wake_at: SimTime::ZERO,
                    stale: Vec::new(),
                    reads_ahead: 0,
                    budget_sequence: u64::MAX,
                    resume_step: u32::MAX,
                    next: 0,
                    wait_started: SimTime::ZERO,
                    bus_wait: SimTime::ZERO,
                    read_retries: 0,
                    uncorrectable: false,
                });
                (self.ops.len() - 1) as u32
            }
        };
        let o = &mut self.ops[slot as usize];
        o.kind = op.kind;
        o.planes = op.plane_count() as u32;
        o.tag = op.tag;
        o.sequence = self.next_sequence;
        o.order = if self.promoted_order == NOT_PROMOTED {
            2 * self.next_sequence + 1
        } else {
            self.promoted_order
        };
        self.next_sequence += 1;
        o.die = die;
        o.channel = channel;
        o.submitted = now;
        o.next = 0;
        o.bus_wait = SimTime::ZERO;
        o.read_retries = inputs.read_retries;
        o.uncorrectable = inputs.uncorrectable;
        steps::compile(
            op,
            &inputs.chain,
            &self.search_plan,
            &self.timing,
            &mut o.steps,
        );
        let d = &mut self.dies[die as usize];
        if d.ops_in_flight == 0 {
            d.busy_since = now;
        }
        d.ops_in_flight += 1;
        let k = self.stats.kind_mut(op.kind);
        k.units += u64::from(o.planes);
        if matches!(op.kind, OpKind::Read | OpKind::Program) {
            k.bytes_transferred += u64::from(inputs.chain.transfer_bytes) * u64::from(o.planes);
        }
        if op.kind.is_search() {
            let plan = &self.search_plan;
            k.bytes_transferred += u64::from(plan.data_in_bytes + plan.data_out_bytes);
        }
        // (the ready list is empty between events: the op starts at once, then whatever its
        // first steps woke)
        debug_assert!(self.ready.is_empty());
        let mut none = Vec::new();
        self.advance(slot, &mut none);
        self.run_ready_into(&mut none);
        debug_assert!(none.is_empty(), "an op completed at its submission");
        Ok(())
    }

    /// Checks and applies the functional effect of `op`; returns what its chain needs.
    fn accept(&mut self, now: SimTime, op: &FlashOp, data: Option<&[u8]>) -> NandResult<Accepted> {
        if op.kind.is_search() {
            return self.accept_search(now, op);
        }
        if let Some(search) = &self.search {
            search.check_legacy(op)?;
        } else if data.is_some() {
            return Err(NandError::SearchRule {
                message: "programs with data need a SiM device (a [search] config section)".into(),
            });
        }
        let mut read_time = SimTime::ZERO;
        let mut program_time = SimTime::ZERO;
        let mut retries = 0u32;
        let mut uncorrectable = false;
        match op.kind {
            OpKind::Read => {}
            OpKind::Program => {
                for t in &op.targets {
                    self.blocks.check_program(t)?;
                }
            }
            OpKind::Erase => {
                for t in &op.targets {
                    self.blocks.check_erase(t)?;
                }
            }
            OpKind::Copyback => {
                for t in &op.destinations {
                    self.blocks.check_program(t)?;
                }
            }
            OpKind::PageOpen | OpKind::PageClose | OpKind::Search | OpKind::Gather => {
                unreachable!("SiM ops are accepted by accept_search")
            }
        }
        if let Some(search) = &mut self.search {
            search.apply_legacy(op, data);
        }
        if matches!(op.kind, OpKind::Read | OpKind::Copyback) {
            for t in &op.targets {
                read_time = read_time.max(self.read_time(t));
                if !self.blocks.is_programmed(t) {
                    self.stats.erased_page_reads += 1;
                }
                match self.blocks.draw_read_retries(t, now, &mut self.rng) {
                    Some(r) => retries = retries.max(r),
                    None => {
                        retries = self.config.reliability.read_retry_max;
                        uncorrectable = true;
                    }
                }
                if self.blocks.read_disturb() {
                    self.blocks.apply_read(t);
                }
            }
        }
        match op.kind {
            OpKind::Program => {
                for t in &op.targets {
                    program_time = program_time.max(self.program_time(t));
                    self.blocks.apply_program(t, now);
                }
            }
            OpKind::Copyback => {
                for t in &op.destinations {
                    program_time = program_time.max(self.program_time(t));
                    self.blocks.apply_program(t, now);
                }
            }
            OpKind::Erase => {
                for t in &op.targets {
                    self.blocks.apply_erase(t);
                }
            }
            _ => {}
        }
        self.stats.read_retries += u64::from(retries);
        if uncorrectable {
            self.stats.uncorrectable_reads += 1;
        }
        let die = self.geometry.die_id(&op.targets[0]).index();
        let barrier = match op.mode {
            RegisterMode::Cache => {
                let previous = self.dies[die].last_cache_kind.replace(op.kind);
                previous.is_some_and(|p| p != op.kind)
            }
            RegisterMode::Legacy => {
                self.dies[die].last_cache_kind = None;
                false
            }
        };
        Ok(Accepted {
            chain: ChainInputs {
                transfer_bytes: op.transfer_bytes.unwrap_or(self.geometry.page_size_bytes),
                read_time,
                program_time,
                read_retries: retries,
                barrier,
            },
            read_retries: retries,
            uncorrectable,
        })
    }

    /// Checks and applies a SiM op (block mode, latches, arguments); the sense of a page-open or
    /// gather copies the stored bytes into a latch with the bit errors of the block's raw bit
    /// error rate now.
    fn accept_search(&mut self, now: SimTime, op: &FlashOp) -> NandResult<Accepted> {
        let Some(search) = &mut self.search else {
            return Err(NandError::SearchRule {
                message: format!(
                    "{} needs a SiM device (a [search] config section)",
                    op.kind.name()
                ),
            });
        };
        let plan = search.plan(op, &self.blocks)?;
        let target = op.targets[0];
        let rber = if plan.sense && self.blocks.error_model_enabled() {
            self.blocks.raw_bit_error_rate(&target, now)
        } else {
            0.0
        };
        search.apply(op, &plan, rber);
        self.search_plan = plan;
        let die = self.geometry.die_id(&target).index();
        self.dies[die].last_cache_kind = None;
        Ok(Accepted {
            chain: ChainInputs {
                transfer_bytes: 0,
                read_time: self.timing.match_read,
                program_time: SimTime::ZERO,
                read_retries: 0,
                barrier: false,
            },
            read_retries: 0,
            uncorrectable: false,
        })
    }

    /// Whether `address`'s block is in match mode (SiM devices).
    #[inline]
    fn in_match_mode(&self, address: &crate::geometry::PageAddress) -> bool {
        self.search
            .as_ref()
            .is_some_and(|s| s.mode(address) == BlockMode::Match)
    }

    /// Whether `address`'s block is in SLC mode ([`NandSim::set_block_slc`]).
    #[inline]
    fn in_slc_mode(&self, address: &crate::geometry::PageAddress) -> bool {
        self.slc_blocks
            .as_ref()
            .is_some_and(|b| b[self.geometry.block_id(address).index()])
    }

    /// Puts the block of `block` in SLC mode (one bit per cell: `timing.slc_read_us` and
    /// `slc_program_us` for its pages) or back in the preset's mode. The controller sets the
    /// mode while the block is erased (the data of an SLC block are the FTL's to place:
    /// the chip does not check page capacity). Refused on a device without SLC-mode times.
    pub fn set_block_slc(
        &mut self,
        block: &crate::geometry::PageAddress,
        slc: bool,
    ) -> NandResult<()> {
        if self.config.timing.slc_program_us.is_none() {
            return Err(crate::error::config_error(
                "timing.slc_program_us",
                format!(
                    "preset {} has no SLC-mode times (set timing.slc_read_us and slc_program_us)",
                    self.config.name
                ),
            ));
        }
        let blocks = self.geometry.total_blocks() as usize;
        let index = self.geometry.block_id(block).index();
        self.slc_blocks.get_or_insert_with(|| vec![false; blocks])[index] = slc;
        self.plain_program_times = false;
        Ok(())
    }

    /// Whether the block of `block` is in SLC mode.
    pub fn block_is_slc(&self, block: &crate::geometry::PageAddress) -> bool {
        self.in_slc_mode(block)
    }

    /// TON of `address`: SLC time in a match-mode or SLC-mode block, else by page type.
    #[inline]
    fn read_time(&self, address: &crate::geometry::PageAddress) -> SimTime {
        if self.in_slc_mode(address) {
            self.timing.slc_read
        } else if self.in_match_mode(address) {
            self.timing.match_read
        } else {
            self.timing.read_time(address.page)
        }
    }

    /// TIN of `address`: SLC time in a match-mode block, else by page type (spread per page
    /// when `timing.program_variation` is set).
    #[inline]
    fn program_time(&self, address: &crate::geometry::PageAddress) -> SimTime {
        if self.plain_program_times {
            self.timing.program_time(address.page)
        } else if self.in_slc_mode(address) {
            self.timing.slc_program
        } else if self.in_match_mode(address) {
            self.timing.match_program
        } else if self.timing.varies_program() {
            self.varied_program_time(address)
        } else {
            self.timing.program_time(address.page)
        }
    }

    /// TIN of `address` with a per-page spread (`timing.program_variation`): out of line so
    /// that the common path stays inlined.
    #[cold]
    #[inline(never)]
    fn varied_program_time(&self, address: &crate::geometry::PageAddress) -> SimTime {
        let erase_count = self
            .blocks
            .block(self.geometry.block_id(address))
            .erase_count;
        self.timing.program_time_at(address, erase_count)
    }

    /// Time of the next internal event, if any op is in flight.
    #[inline]
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// Processes the next event; completed ops are appended to `completed`. Returns the
    /// event's time, or `None` when nothing is in flight.
    pub fn process_next(&mut self, completed: &mut Vec<Completion>) -> Option<SimTime> {
        let (time, payload) = self.queue.pop()?;
        self.now = time;
        self.stats.events += 1;
        if self.stale_events > 0 && payload < CHANNEL_EVENT && self.skip_stale(payload, time) {
            return Some(time);
        }
        if payload >= CHANNEL_EVENT {
            let channel = (payload - CHANNEL_EVENT) as usize;
            debug_assert!(self.channels[channel].release_scheduled);
            self.channels[channel].release_scheduled = false;
            self.hand_over(channel);
        } else {
            let o = &self.ops[payload as usize];
            if let Step::Bus(_) = o.steps[o.next - 1] {
                // the end of a burst that was not merged with a cell step
                let channel = o.channel as usize;
                debug_assert!(self.channels[channel].holder_releases);
                self.channels[channel].holder_releases = false;
                self.hand_over(channel);
            }
            self.advance(payload, completed);
        }
        self.run_ready_into(completed);
        Some(time)
    }

    /// Processes events until nothing is in flight.
    pub fn run_until_idle(&mut self, completed: &mut Vec<Completion>) {
        while self.process_next(completed).is_some() {}
    }

    fn run_ready_into(&mut self, completed: &mut Vec<Completion>) {
        while let Some(slot) = self.ready.pop_front() {
            self.advance(slot, completed);
        }
    }

    /// Runs `slot`'s steps until one has to wait (a timed step started, or a resource is busy).
    fn advance(&mut self, slot: u32, completed: &mut Vec<Completion>) {
        loop {
            let o = &self.ops[slot as usize];
            let Some(step) = o.steps.get(o.next).copied() else {
                self.complete(slot, completed);
                return;
            };
            let die = o.die as usize;
            match step {
                Step::Acquire(mask) => {
                    let order = o.order;
                    let d = &self.dies[die];
                    if d.waiters.is_empty() {
                        // nobody waits: the op takes what it wants if it is free
                        if d.held & mask == 0 {
                            self.dies[die].held |= mask;
                            self.ops[slot as usize].next += 1;
                            continue;
                        }
                        self.dies[die].waiters.push_back(slot);
                        return;
                    }
                    if self.wait_last(slot, die, mask, order) {
                        return;
                    }
                    let d = &self.dies[die]; // older waiters keep their claim on what they wait for
                    let older = d
                        .waiters
                        .iter()
                        .take_while(|w| self.ops[**w as usize].order < order)
                        .count();
                    let blocked = d
                        .waiters
                        .iter()
                        .take(older)
                        .fold(0u8, |acc, w| acc | self.wanted(*w));
                    if (d.held | blocked) & mask == 0 {
                        self.dies[die].held |= mask;
                        self.ops[slot as usize].next += 1;
                    } else {
                        self.dies[die].waiters.insert(older, slot);
                        return;
                    }
                }
                Step::Release(mask) => {
                    debug_assert_eq!(self.dies[die].held & mask, mask, "release of unheld");
                    self.dies[die].held &= !mask;
                    self.ops[slot as usize].next += 1;
                    self.wake_die(die);
                }
                Step::Bus(_) => {
                    let channel = o.channel as usize;
                    let c = &mut self.channels[channel];
                    // a holder whose event hands the bus over keeps it until that event, even
                    // at the instant its burst ends (same-time requests queue behind it)
                    if c.busy_until > self.now || c.holder_releases || !c.waiters.is_empty() {
                        c.waiters.push_back(slot);
                        if !c.release_scheduled && !c.holder_releases {
                            c.release_scheduled = true;
                            let at = c.busy_until;
                            self.queue.schedule(at, CHANNEL_EVENT + channel as u32);
                        }
                        self.ops[slot as usize].wait_started = self.now;
                    } else {
                        self.start_burst(slot);
                    }
                    return;
                }
                Step::Cell(stage, duration, planes) => {
                    let kind = o.kind;
                    self.stats.add_stage(kind, stage, duration, planes);
                    let o = &mut self.ops[slot as usize];
                    o.next += 1;
                    o.wake_at = self.now + duration;
                    self.queue.schedule(o.wake_at, slot);
                    return;
                }
            }
        }
    }

    /// Queues `slot`'s acquire of `mask` last on `die` when it waits there whatever the
    /// waiters want: the usual case, where the op (of `order`) is younger than every waiter
    /// (orders grow with submission; only a read let ahead takes a lower one) and what it
    /// wants is held. Whether it did.
    #[inline]
    fn wait_last(&mut self, slot: u32, die: usize, mask: u8, order: u64) -> bool {
        let d = &self.dies[die];
        let last = d.held & mask != 0
            && d.waiters
                .back()
                .is_some_and(|w| self.ops[*w as usize].order < order);
        if last {
            self.dies[die].waiters.push_back(slot);
        }
        last
    }

    /// The resources an op blocked on an acquire is waiting for.
    fn wanted(&self, slot: u32) -> u8 {
        wanted(&self.ops[slot as usize])
    }

    /// Grants waiting acquires in order; an op may not overtake an earlier waiter that wants
    /// an overlapping resource.
    fn wake_die(&mut self, die: usize) {
        let ops = &mut self.ops;
        let d = &mut self.dies[die];
        let mut blocked = 0u8;
        let mut i = 0;
        while let Some(&waiter) = d.waiters.get(i) {
            let o = &mut ops[waiter as usize];
            let mask = wanted(o);
            if (d.held | blocked) & mask == 0 {
                d.held |= mask;
                o.next += 1;
                if i == 0 {
                    // (the usual grant: the first waiter; no shifting)
                    d.waiters.pop_front();
                } else {
                    d.waiters.remove(i);
                }
                self.ready.push_back(waiter);
            } else {
                blocked |= mask;
                i += 1;
            }
        }
    }

    /// The bus of `channel` is free now: the first waiter starts its burst; if others still
    /// wait and the new holder has no event at the end of its burst, a release is scheduled.
    fn hand_over(&mut self, channel: usize) {
        assert_eq!(
            self.channels[channel].busy_until, self.now,
            "bus handed over before its burst ended"
        );
        let Some(waiter) = self.channels[channel].waiters.pop_front() else {
            return;
        };
        let w = &mut self.ops[waiter as usize];
        w.bus_wait += self.now - w.wait_started;
        self.start_burst(waiter);
        let c = &mut self.channels[channel];
        if !c.waiters.is_empty() && !c.holder_releases {
            c.release_scheduled = true;
            let at = c.busy_until;
            self.queue.schedule(at, CHANNEL_EVENT + channel as u32);
        }
    }

    /// Starts the bus burst at `slot`'s current step. When a cell step follows directly (the
    /// die holds what it needs), it starts when the burst ends, so the op's next event is the
    /// end of that cell step: one event for both.
    fn start_burst(&mut self, slot: u32) {
        let o = &mut self.ops[slot as usize];
        let Step::Bus(burst) = o.steps[o.next] else {
            unreachable!("start_burst on a non-bus step");
        };
        o.next += 1;
        let kind = o.kind;
        let channel = o.channel as usize;
        // (a device's bursts are of a few shapes: a program's data and status bursts repeat
        // op after op, so the last two shapes' stage times are kept)
        let (parts, duration) = match self.burst_times.iter().find(|m| m.burst == burst) {
            Some(m) => (m.parts, m.duration),
            None => {
                let m = BurstTimes::of(burst, &self.timing);
                let i = self.burst_times_next;
                self.burst_times[i] = m;
                self.burst_times_next = i ^ 1;
                (m.parts, m.duration)
            }
        };
        self.stats.add_bus_stages(kind, parts);
        debug_assert_eq!(duration, burst.duration(&self.timing));
        let c = &mut self.channels[channel];
        // hard invariants (cheap): two bursts never overlap on a channel
        assert!(c.busy_until <= self.now, "burst on a busy bus");
        c.busy_until = self.now + duration;
        self.stats.channel_busy[channel] += duration;
        let o = &mut self.ops[slot as usize];
        let mut wake = self.now + duration;
        if let Some(&Step::Cell(stage, cell, planes)) = o.steps.get(o.next) {
            o.next += 1;
            self.stats.add_stage(kind, stage, cell, planes);
            wake += cell;
            // (only a cell step's end is ever read back: suspend.rs)
            o.wake_at = wake;
        } else {
            c.holder_releases = true;
        }
        self.queue.schedule(wake, slot);
    }

    fn complete(&mut self, slot: u32, completed: &mut Vec<Completion>) {
        let o = &self.ops[slot as usize];
        let c = Completion {
            tag: o.tag,
            kind: o.kind,
            planes: o.planes,
            submitted: o.submitted,
            completed: self.now,
            bus_wait: o.bus_wait,
            read_retries: o.read_retries,
            uncorrectable: o.uncorrectable,
        };
        let die = o.die as usize;
        debug_assert!(
            o.stale.is_empty(),
            "an op completed with stale events pending"
        );
        let k = self.stats.kind_mut(c.kind);
        k.ops += 1;
        k.latency.record(c.latency());
        k.latency_sum += c.latency();
        k.bus_wait += c.bus_wait;
        let d = &mut self.dies[die];
        d.ops_in_flight -= 1;
        if d.ops_in_flight == 0 {
            debug_assert_eq!(d.held, 0, "die idle with resources held");
            self.stats.die_busy[die] += self.now - d.busy_since;
        }
        self.free_ops.push(slot);
        completed.push(c);
    }

    /// Idle (standby) energy of every die up to now, in picojoules.
    pub fn idle_energy_pj(&self) -> f64 {
        self.stats
            .die_busy
            .iter()
            .zip(&self.dies)
            .map(|(busy, d)| {
                let mut busy = *busy;
                if d.ops_in_flight > 0 {
                    busy += self.now - d.busy_since;
                }
                self.energy.idle_pj(self.now.saturating_sub(busy))
            })
            .sum()
    }
}

/// The resources `o`, blocked on an acquire, is waiting for.
#[inline]
fn wanted(o: &OpSlot) -> u8 {
    match o.steps[o.next] {
        Step::Acquire(mask) => mask,
        _ => 0,
    }
}

struct Accepted {
    chain: ChainInputs,
    read_retries: u32,
    uncorrectable: bool,
}

#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod tests;

impl nandlab_core::EventSource for NandSim {
    type Completion = Completion;
    #[inline]
    fn next_event_time(&self) -> Option<SimTime> {
        NandSim::next_event_time(self)
    }
    #[inline]
    fn process_next(&mut self, completed: &mut Vec<Completion>) -> Option<SimTime> {
        NandSim::process_next(self, completed)
    }
}
