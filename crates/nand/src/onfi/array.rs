//! Confirm commands: the end of a sequence, where the die checks the plane rule and the
//! reliability constraints and starts a cell stage (TON, TIN, BER) on its array.
//!
//! Timing rules:
//! - a cell stage starts when its confirm ends, or when the array finishes the stage before it
//!   (a cached operation), whichever is later;
//! - legacy confirms (30h, 35h, 10h, D0h) keep R/B# busy until their cell stage ends;
//! - cache confirms (31h, 3Fh, 15h) keep R/B# busy only until the data register is free (the
//!   previous cell stage has ended) plus [`CACHE_COPY_TIME`] to move data between the cache
//!   and data registers, then the host may transfer data while the array works;
//! - queue commands (32h, 11h, D1h) and E0h leave the die ready at once (tDBSY and tCCS are not
//!   modelled).

use super::commands as op;
use super::cycle::{ArrayStage, Cycle, CycleOutcome};
use super::die::OnfiDie;
use super::state::{Phase, PlaneRegisters, Queue, Target};
use crate::error::{NandError, NandResult};
use crate::stage::Stage;
use nandlab_core::SimTime;

/// Time to move a page between the cache and data registers (tCBSY/tRCBSY), modelled as zero:
/// the copy is much shorter than any bus transfer or cell stage.
pub const CACHE_COPY_TIME: SimTime = SimTime::ZERO;

impl OnfiDie {
    /// A command in [`Phase::Confirm`] (after 00h-, 06h- or 60h-address).
    pub(super) fn confirm(
        &mut self,
        start: SimTime,
        end: SimTime,
        command: u8,
        target: Target,
        code: u8,
    ) -> NandResult<CycleOutcome> {
        match (command, code) {
            (op::READ, op::READ_CONFIRM) => self.page_read(start, end, target, false),
            (op::READ, op::COPYBACK_READ_CONFIRM) => self.page_read(start, end, target, true),
            (op::READ, op::CACHE_READ) => {
                if !self.planes.iter().any(|p| p.sensed.is_some()) {
                    return Err(self.refuse(
                        "00h-address-30h (a page read) before the cache read 31h",
                        Cycle::Command(code),
                    ));
                }
                self.check_target(Queue::Read, &target)?;
                let targets = self.take_targets(target);
                let outcome = self.cache_read_step(start, end, &targets);
                self.return_targets(targets);
                Ok(outcome)
            }
            (op::READ, op::MULTIPLANE_READ_QUEUE) => self.enqueue(start, end, Queue::Read, target),
            (op::CHANGE_READ_COLUMN, op::CHANGE_READ_COLUMN_CONFIRM) => {
                self.change_read_column(start, end, target)
            }
            (op::ERASE, op::ERASE_CONFIRM) => self.erase(start, end, target),
            (op::SIM_PAGE_OPEN, op::SIM_PAGE_OPEN_CONFIRM) => {
                self.sim_page_open(start, end, target, false)
            }
            (op::SIM_PAGE_OPEN, op::SIM_PAGE_OPEN_CACHE_CONFIRM) => {
                self.sim_page_open(start, end, target, true)
            }
            (op::SIM_BLOCK_MODE, op::SIM_MODE_MATCH_CONFIRM | op::SIM_MODE_STORAGE_CONFIRM) => {
                self.sim_block_mode(start, end, target, code)
            }
            (op::ERASE, op::MULTIPLANE_ERASE_QUEUE) => {
                self.enqueue(start, end, Queue::Erase, target)
            }
            _ => Err(self.sequence_error(Cycle::Command(code))),
        }
    }

    /// A command in [`Phase::Data`] (after 80h- or 85h-address and data input).
    pub(super) fn data_confirm(
        &mut self,
        start: SimTime,
        end: SimTime,
        command: u8,
        target: Target,
        bytes_in: u32,
        code: u8,
    ) -> NandResult<CycleOutcome> {
        match (command, code) {
            (op::PROGRAM, _) if bytes_in == 0 => Err(self.sequence_error(Cycle::Command(code))),
            (op::PROGRAM, op::PROGRAM_CONFIRM) => self.program(start, end, target, false),
            (op::PROGRAM, op::CACHE_PROGRAM_CONFIRM) => self.program(start, end, target, true),
            (op::PROGRAM, op::MULTIPLANE_PROGRAM_QUEUE) => {
                self.enqueue(start, end, Queue::Program, target)
            }
            (op::COPYBACK_PROGRAM, op::PROGRAM_CONFIRM) => {
                self.copyback_program(start, end, target)
            }
            (op::COPYBACK_PROGRAM, op::MULTIPLANE_PROGRAM_QUEUE) => {
                self.enqueue(start, end, Queue::Copyback, target)
            }
            (op::SIM_SEARCH, op::SIM_SEARCH_CONFIRM) => {
                self.sim_search(start, end, target, bytes_in)
            }
            (op::SIM_GATHER, op::SIM_GATHER_CONFIRM) => {
                self.sim_gather(start, end, target, bytes_in)
            }
            _ => Err(self.sequence_error(Cycle::Command(code))),
        }
    }

    /// Checks one plane of a (possibly multiplane) operation against the planes queued before
    /// it and against the reliability constraints. Changes nothing.
    fn check_target(&self, kind: Queue, target: &Target) -> NandResult<()> {
        let address = &target.address;
        for queued in &self.queued {
            let other = &queued.address;
            if other.plane == address.plane {
                return Err(NandError::PlaneRule {
                    message: format!(
                        "plane {} addressed twice in one multiplane {} ({other} and {address})",
                        address.plane,
                        kind.name()
                    ),
                });
            }
            if kind != Queue::Erase && other.page != address.page {
                return Err(NandError::PlaneRule {
                    message: format!(
                        "{address} has page offset {} but {other} has {} (a multiplane {} needs \
                         the same page offset on every plane)",
                        address.page,
                        other.page,
                        kind.name()
                    ),
                });
            }
        }
        self.check_sim_latches(address)?;
        let local = self.local(address);
        match kind {
            Queue::Read => Ok(()),
            Queue::Program => self.blocks.check_program(&local),
            Queue::Copyback => {
                if self.planes[address.plane as usize]
                    .copyback_source
                    .is_none()
                {
                    let sources: Vec<String> = (0..self.planes.len())
                        .filter(|p| self.planes[*p].copyback_source.is_some())
                        .map(|p| p.to_string())
                        .collect();
                    return Err(NandError::PlaneRule {
                        message: format!(
                            "copyback destination {address} is not in the plane of a source \
                             (sources read with 35h are in plane {})",
                            sources.join(", ")
                        ),
                    });
                }
                self.blocks.check_program(&local)
            }
            Queue::Erase => self.blocks.check_erase(&local),
        }
        .map_err(|e| self.globalize(e))
    }

    /// 32h, 11h, D1h: one more plane queued; the die stays ready.
    fn enqueue(
        &mut self,
        start: SimTime,
        end: SimTime,
        kind: Queue,
        target: Target,
    ) -> NandResult<CycleOutcome> {
        self.check_target(kind, &target)?;
        self.queue = Some(kind);
        self.queued.push(target);
        self.phase = Phase::Idle;
        Ok(self.outcome(start, end, Some(Stage::Cle), None))
    }

    /// The queued planes and `target`, emptying the queue (its buffer is handed back with
    /// [`OnfiDie::return_targets`]).
    fn take_targets(&mut self, target: Target) -> Vec<Target> {
        let mut targets = std::mem::take(&mut self.queued);
        targets.push(target);
        self.queue = None;
        self.phase = Phase::Idle;
        targets
    }

    fn return_targets(&mut self, mut targets: Vec<Target>) {
        targets.clear();
        self.queued = targets;
    }

    /// Schedules a cell stage after the confirm ending at `end`.
    pub(super) fn start_array(
        &mut self,
        end: SimTime,
        stage: Stage,
        duration: SimTime,
    ) -> ArrayStage {
        let start = end.max(self.array_busy_until);
        let array = ArrayStage {
            stage,
            start,
            end: start + duration,
        };
        self.pending_array.retain(|s| s.end > end);
        self.pending_array.push(array);
        debug_assert!(self.pending_array.len() <= 2, "{:?}", self.pending_array);
        self.array_busy_until = array.end;
        array
    }

    fn longest_read(&mut self, targets: &[Target]) -> SimTime {
        let mut longest = SimTime::ZERO;
        for t in targets {
            longest = longest.max(if self.in_match_mode(&t.address) {
                self.timing.match_read
            } else {
                self.timing.read_time(t.address.page)
            });
            if !self.blocks.is_programmed(&self.local(&t.address)) {
                self.erased_page_reads += 1;
            }
        }
        longest
    }

    /// Selects the plane holding output data if it is the only one; with several, data output
    /// needs 06h-E0h first.
    fn select_single(&mut self) {
        let mut holding = (0..self.planes.len()).filter(|p| self.planes[*p].output.is_some());
        self.selection = match (holding.next(), holding.next()) {
            (Some(plane), None) => Some((plane as u32, 0)),
            _ => None,
        };
    }

    /// 30h (page read) and 35h (copyback read): TON; R/B# busy until it ends.
    fn page_read(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
        copyback: bool,
    ) -> NandResult<CycleOutcome> {
        self.check_target(Queue::Read, &target)?;
        let targets = self.take_targets(target);
        let duration = self.longest_read(&targets);
        let array = self.start_array(end, Stage::Ton, duration);
        self.ready_at = array.end;
        self.planes.fill(PlaneRegisters::default());
        for t in &targets {
            let registers = &mut self.planes[t.address.plane as usize];
            registers.output = Some(t.address);
            if copyback {
                registers.copyback_source = Some(t.address);
            } else {
                registers.sensed = Some(t.address);
            }
        }
        // one plane streams from the column of its address; several need 06h-E0h first
        self.selection = match targets.as_slice() {
            [single] => Some((single.address.plane, single.column)),
            _ => None,
        };
        self.return_targets(targets);
        Ok(self.outcome(start, end, Some(Stage::Cle), Some(array)))
    }

    /// 31h (sequential, from idle): the next page of every sensed plane.
    pub(super) fn sequential_cache_read(
        &mut self,
        start: SimTime,
        end: SimTime,
    ) -> NandResult<CycleOutcome> {
        let got = Cycle::Command(op::CACHE_READ);
        let mut targets = std::mem::take(&mut self.queued);
        for registers in &self.planes {
            let Some(sensed) = registers.sensed else {
                continue;
            };
            if sensed.page + 1 >= self.geometry.pages_per_block {
                self.queued = targets;
                return Err(self.refuse(
                    format!(
                        "3Fh (the sequential cache read 31h would read past the last page of \
                         {sensed})"
                    ),
                    got,
                ));
            }
            targets.push(Target {
                address: sensed.with_page(sensed.page + 1),
                column: 0,
            });
        }
        if targets.is_empty() {
            self.queued = targets;
            return Err(self.refuse(
                "00h-address-30h (a page read) before the cache read 31h",
                got,
            ));
        }
        let outcome = self.cache_read_step(start, end, &targets);
        self.return_targets(targets);
        Ok(outcome)
    }

    /// 31h: the sensed pages move to the cache registers (output), `targets` are sensed next.
    fn cache_read_step(
        &mut self,
        start: SimTime,
        end: SimTime,
        targets: &[Target],
    ) -> CycleOutcome {
        let copied = end.max(self.array_busy_until) + CACHE_COPY_TIME;
        for registers in self.planes.iter_mut() {
            *registers = PlaneRegisters {
                output: registers.sensed,
                ..PlaneRegisters::default()
            };
        }
        self.select_single();
        for t in targets {
            self.planes[t.address.plane as usize].sensed = Some(t.address);
        }
        let duration = self.longest_read(targets);
        let array = self.start_array(copied, Stage::Ton, duration);
        self.ready_at = copied;
        self.outcome(start, end, Some(Stage::Cle), Some(array))
    }

    /// 3Fh: the last sensed pages move to the cache registers; nothing new is sensed.
    pub(super) fn cache_read_end(
        &mut self,
        start: SimTime,
        end: SimTime,
    ) -> NandResult<CycleOutcome> {
        if !self.planes.iter().any(|p| p.sensed.is_some()) {
            return Err(self.refuse(
                "00h-address-30h and 31h (a cache read) before 3Fh",
                Cycle::Command(op::CACHE_READ_END),
            ));
        }
        for registers in self.planes.iter_mut() {
            *registers = PlaneRegisters {
                output: registers.sensed,
                ..PlaneRegisters::default()
            };
        }
        self.select_single();
        self.ready_at = end.max(self.array_busy_until) + CACHE_COPY_TIME;
        Ok(self.outcome(start, end, Some(Stage::Cle), None))
    }

    /// E0h: select the plane and column of `target` for data output; the plane must hold the
    /// addressed page.
    fn change_read_column(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
    ) -> NandResult<CycleOutcome> {
        let plane = target.address.plane;
        if self.planes[plane as usize].output != Some(target.address) {
            let held: Vec<String> = self
                .planes
                .iter()
                .filter_map(|p| p.output.map(|a| a.to_string()))
                .collect();
            let expected = if held.is_empty() {
                "a read before 06h-address-E0h".to_string()
            } else {
                format!(
                    "06h-address of a page held for output ({})",
                    held.join(", ")
                )
            };
            return Err(self.refuse(
                expected,
                format!(
                    "{} for {}",
                    Cycle::Command(op::CHANGE_READ_COLUMN_CONFIRM),
                    target.address
                ),
            ));
        }
        self.phase = Phase::Idle;
        self.selection = Some((plane, target.column));
        Ok(self.outcome(start, end, Some(Stage::Cle), None))
    }

    /// 10h and 15h after 80h: TIN of every plane; 15h frees R/B# once the data register is free.
    fn program(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
        cache: bool,
    ) -> NandResult<CycleOutcome> {
        self.check_target(Queue::Program, &target)?;
        let targets = self.take_targets(target);
        let array = self.program_targets(end, &targets);
        self.ready_at = if cache {
            array.start + CACHE_COPY_TIME
        } else {
            array.end
        };
        self.return_targets(targets);
        Ok(self.outcome(start, end, Some(Stage::Cle), Some(array)))
    }

    /// 10h after 85h: TIN of every destination, from the plane's copyback source.
    fn copyback_program(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
    ) -> NandResult<CycleOutcome> {
        self.check_target(Queue::Copyback, &target)?;
        let targets = self.take_targets(target);
        let array = self.program_targets(end, &targets);
        self.ready_at = array.end;
        self.planes.fill(PlaneRegisters::default());
        self.selection = None;
        self.return_targets(targets);
        Ok(self.outcome(start, end, Some(Stage::Cle), Some(array)))
    }

    /// Records the programs (checked before) and schedules their TIN.
    fn program_targets(&mut self, end: SimTime, targets: &[Target]) -> ArrayStage {
        let start = end.max(self.array_busy_until);
        let mut duration = SimTime::ZERO;
        for t in targets {
            let local = self.local(&t.address);
            duration = duration.max(if self.in_match_mode(&t.address) {
                self.timing.match_program
            } else {
                let erase_count = self
                    .blocks
                    .block(self.local_geometry.block_id(&local))
                    .erase_count;
                self.timing.program_time_at(&t.address, erase_count)
            });
            self.blocks.apply_program(&local, start);
        }
        self.start_array(end, Stage::Tin, duration)
    }

    /// D0h: BER of every queued block.
    fn erase(&mut self, start: SimTime, end: SimTime, target: Target) -> NandResult<CycleOutcome> {
        self.check_target(Queue::Erase, &target)?;
        let targets = self.take_targets(target);
        for t in &targets {
            let local = self.local(&t.address);
            self.blocks.apply_erase(&local);
        }
        let array = self.start_array(end, Stage::Ber, self.timing.erase);
        self.ready_at = array.end;
        self.return_targets(targets);
        Ok(self.outcome(start, end, Some(Stage::Cle), Some(array)))
    }
}
