//! Program and erase suspension (SPEC C1; timing in [`SuspendConfig`]).
//!
//! A read submitted with [`NandSim::submit_read_suspending`] at a die whose array is busy with
//! a legacy program or erase (one holding the whole die) suspends it: the op's cell stage goes
//! on for the suspend latency, then the op frees the die, the read (ordered just ahead of the
//! op) takes it, and the op waits to re-acquire the die, after which its cell stage resumes
//! with the time it had left plus the resume penalty. Reads that arrive before the op resumes
//! join the suspension. The op's original end event stays in the queue (the queue cannot
//! remove events) and is skipped when it pops.
//!
//! Cache-mode programs (which hold only the array while another op may hold the interface and
//! cache registers) are not suspended: letting a read ahead of such a pipeline could leave it
//! waiting for registers held by an op that waits for it.

use super::steps::{ALL, Step};
use super::{NOT_PROMOTED, NandSim, OpSlot};
use crate::config::SuspendConfig;
use crate::error::NandResult;
use crate::op::{FlashOp, OpKind};
use crate::stage::Stage;
use nandlab_core::SimTime;

/// [`SuspendConfig`] in simulated time.
#[derive(Clone, Copy, Debug)]
pub(super) struct SuspendTimes {
    program: SimTime,
    erase: SimTime,
    penalty: SimTime,
    max_reads: u32,
}

impl SuspendTimes {
    pub(super) fn new(config: &SuspendConfig) -> Self {
        SuspendTimes {
            program: SimTime::from_us_f64(config.program_suspend_us),
            erase: SimTime::from_us_f64(config.erase_suspend_us),
            penalty: SimTime::from_us_f64(config.resume_penalty_us),
            max_reads: config.max_suspended_reads,
        }
    }
}

impl NandSim {
    /// Submits `op` like [`NandSim::submit`]; if it is a read and the device has a
    /// `[suspend]` section, it may suspend a program or erase under way on its die (or join a
    /// suspension in progress there) and run ahead of it, within the op's budget of
    /// `suspend.max_suspended_reads`. Otherwise it queues as a plain submission would.
    pub fn submit_read_suspending(&mut self, now: SimTime, op: &FlashOp) -> NandResult<()> {
        if op.kind != OpKind::Read || self.suspend.is_none() {
            return self.submit(now, op);
        }
        op.validate(&self.geometry)?;
        let die = self.geometry.die_id(&op.targets[0]).index();
        self.promoted_order = self.let_read_ahead(now, die).unwrap_or(NOT_PROMOTED);
        let submitted = self.submit(now, op);
        // (also when refused: the order must not pass to the next op)
        self.promoted_order = NOT_PROMOTED;
        submitted
    }

    /// The order a read arriving at `die` now takes to run ahead of a suspended (or newly
    /// suspended) program or erase there, if any.
    fn let_read_ahead(&mut self, now: SimTime, die: usize) -> Option<u64> {
        let times = self.suspend?;
        if let Some(slot) = self.suspension_in_progress(die) {
            let o = &mut self.ops[slot as usize];
            o.start_budget();
            if o.reads_ahead >= times.max_reads {
                return None;
            }
            o.reads_ahead += 1;
            self.stats.suspended_reads += 1;
            return Some(o.order - 1);
        }
        let slot = self.suspendable_op(now, die)?;
        let o = &mut self.ops[slot as usize];
        o.start_budget();
        if o.reads_ahead >= times.max_reads {
            return None;
        }
        let Step::Cell(stage, _, planes) = o.steps[o.next - 1] else {
            unreachable!("suspendable_op returns ops in a cell stage");
        };
        let latency = if o.kind == OpKind::Erase {
            times.erase
        } else {
            times.program
        };
        // during the op's data-in (its cell stage merged with the burst and not begun) the
        // controller issues the suspend as soon as the array stage begins
        let begin = now.max(o.wake_at.saturating_sub(cell_time(o)));
        let stop = begin + latency;
        if stop >= o.wake_at {
            // it ends before it could stop: the read waits for it
            return None;
        }
        let remaining = o.wake_at - stop;
        let kind = o.kind;
        // the cell stage was counted whole when it started; the rest is counted on resume
        self.stats.remove_stage(kind, stage, remaining, planes);
        self.stats.suspensions += 1;
        self.stats.suspended_reads += 1;
        self.stale_events += 1;
        let o = &mut self.ops[slot as usize];
        let at = o.next;
        o.steps.splice(
            at..at,
            [
                Step::Release(ALL),
                Step::Acquire(ALL),
                Step::Cell(stage, remaining + times.penalty, planes),
            ],
        );
        o.resume_step = (at + 1) as u32;
        o.stale.push(o.wake_at);
        o.wake_at = stop;
        o.reads_ahead += 1;
        let order = o.order - 1;
        let sequence = o.sequence;
        self.queue.schedule(stop, slot);
        let d = &mut self.dies[die];
        d.suspended_slot = slot;
        d.suspended_sequence = sequence;
        Some(order)
    }

    /// The op suspended on `die` that has not re-acquired the die yet.
    fn suspension_in_progress(&self, die: usize) -> Option<u32> {
        let d = &self.dies[die];
        let o = self.ops.get(d.suspended_slot as usize)?;
        // the sequence tells the op from a later one in the same slot
        let current = o.sequence == d.suspended_sequence && o.next <= o.resume_step as usize;
        current.then_some(d.suspended_slot)
    }

    /// The legacy program or erase on `die` in its cell stage now, or in the data-in burst
    /// that leads straight into it (holding the whole die).
    fn suspendable_op(&self, now: SimTime, die: usize) -> Option<u32> {
        if self.dies[die].held != ALL {
            return None;
        }
        let found = self
            .ops
            .iter()
            .position(|o| o.die as usize == die && in_suspendable_cell(o, now))?;
        Some(found as u32)
    }

    /// Whether the event of `slot` at `time` is one a suspension made stale (and forgets it).
    pub(super) fn skip_stale(&mut self, slot: u32, time: SimTime) -> bool {
        let stale = &mut self.ops[slot as usize].stale;
        let Some(at) = stale.iter().position(|&t| t == time) else {
            return false;
        };
        stale.swap_remove(at);
        self.stale_events -= 1;
        true
    }
}

impl OpSlot {
    /// Resets the suspend budget the first time this op (not an earlier one in its slot) uses
    /// it.
    fn start_budget(&mut self) {
        if self.budget_sequence != self.sequence {
            self.budget_sequence = self.sequence;
            self.reads_ahead = 0;
        }
    }
}

/// Whether `o` is a program or erase (legacy: holding the whole die) whose array stage is
/// under way at `now`, or whose command and data burst is, with the array stage merged after
/// it (a cell step merged with the burst before it starts when that burst ends). An op whose
/// chain is over or that waits for a resource or the bus is not: its last started step is not
/// a cell stage.
fn in_suspendable_cell(o: &OpSlot, now: SimTime) -> bool {
    if !matches!(o.kind, OpKind::Program | OpKind::Erase) || o.next == 0 || o.next >= o.steps.len()
    {
        return false;
    }
    let Step::Cell(stage, _, _) = o.steps[o.next - 1] else {
        return false;
    };
    matches!(stage, Stage::Tin | Stage::Ber) && now < o.wake_at && holds_all(o)
}

/// The duration of the cell step `o` started last (see [`in_suspendable_cell`]).
fn cell_time(o: &OpSlot) -> SimTime {
    match o.steps[o.next - 1] {
        Step::Cell(_, duration, _) => duration,
        _ => unreachable!("suspendable ops are in a cell step"),
    }
}

/// Whether the steps `o` has started leave it holding the whole die.
fn holds_all(o: &OpSlot) -> bool {
    let mut held = 0u8;
    for step in &o.steps[..o.next] {
        match *step {
            Step::Acquire(mask) => held |= mask,
            Step::Release(mask) => held &= !mask,
            _ => {}
        }
    }
    held == ALL
}

#[cfg(test)]
mod tests {
    //! Hand-computed suspensions on `mlc1` (tWC 25 ns, 25 ns per byte, 2 KB pages, tR 50 us,
    //! tPROG 250 us LSB, tBERS 2,500 us): a legacy read alone takes 175 + 50,000 + 51,200 =
    //! 101,375 ns; a legacy LSB program 51,375 ns of command and data, 250 us TIN, 50 ns status.
    use super::*;
    use crate::config::SuspendConfig;
    use crate::geometry::PageAddress;
    use crate::preset::preset;
    use crate::sim::Completion;

    const READ_NS: u64 = 175 + 50_000 + 51_200;
    const PROGRAM_SETUP_NS: u64 = 25 + 125 + 51_200 + 25;
    const STATUS_NS: u64 = 50;

    fn page(block: u32, page: u32) -> PageAddress {
        PageAddress {
            channel: 0,
            chip: 0,
            die: 0,
            plane: 0,
            block,
            page,
        }
    }

    fn ns(v: u64) -> SimTime {
        SimTime::from_ns(v)
    }

    fn sim(max_reads: u32, penalty_us: f64) -> NandSim {
        let mut config = preset("mlc1").unwrap();
        config.suspend = Some(SuspendConfig {
            program_suspend_us: 10.0,
            erase_suspend_us: 100.0,
            resume_penalty_us: penalty_us,
            max_suspended_reads: max_reads,
            source: "test".into(),
        });
        NandSim::new(config, 1).unwrap()
    }

    /// Submits `ops` at their times (reads with suspension) and runs to the end; completions
    /// by tag.
    fn run(s: &mut NandSim, ops: &[(u64, FlashOp)]) -> Vec<Completion> {
        let mut done = Vec::new();
        for (i, (at_ns, op)) in ops.iter().enumerate() {
            let at = ns(*at_ns);
            while s.next_event_time().is_some_and(|t| t <= at) {
                s.process_next(&mut done);
            }
            let op = op.clone().with_tag(i as u64);
            if op.kind == OpKind::Read {
                s.submit_read_suspending(at, &op).unwrap();
            } else {
                s.submit(at, &op).unwrap();
            }
        }
        s.run_until_idle(&mut done);
        done.sort_by_key(|c| c.tag);
        done
    }

    #[test]
    fn a_read_suspends_a_program() {
        let mut s = sim(4, 5.0);
        // the program's TIN runs from 51,375 ns to 301,375 ns; the read arrives at 100 us
        let c = run(
            &mut s,
            &[
                (0, FlashOp::program(page(0, 0))),
                (100_000, FlashOp::read(page(1, 0))),
            ],
        );
        // the array stops 10 us later; the read then runs alone
        let stop = 110_000;
        assert_eq!(c[1].completed, ns(stop + READ_NS));
        // TIN had 301,375 - 110,000 ns left; it resumes after the read with a 5 us penalty
        let left = PROGRAM_SETUP_NS + 250_000 - stop;
        assert_eq!(
            c[0].completed,
            ns(stop + READ_NS + left + 5_000 + STATUS_NS)
        );
        // TIN counted once, plus the penalty
        let tin = s.stats().kind(OpKind::Program).stage_time.get(Stage::Tin);
        assert_eq!(tin, ns(250_000 + 5_000));
        assert_eq!(s.stats().suspensions, 1);
        assert_eq!(s.stats().suspended_reads, 1);
        assert_eq!(s.stale_events, 0);
    }

    #[test]
    fn a_read_during_data_in_suspends_the_program_when_its_array_stage_begins() {
        let mut s = sim(4, 0.0);
        // the program's command and data burst runs until 51,375 ns; the read comes at 1 us
        let c = run(
            &mut s,
            &[
                (0, FlashOp::program(page(0, 0))),
                (1_000, FlashOp::read(page(1, 0))),
            ],
        );
        // the suspend goes in when TIN begins and takes 10 us; the read then runs alone
        let stop = PROGRAM_SETUP_NS + 10_000;
        assert_eq!(c[1].completed, ns(stop + READ_NS));
        // TIN ran 10 us and resumes with its 240 us after the read
        assert_eq!(c[0].completed, ns(stop + READ_NS + 240_000 + STATUS_NS));
        let tin = s.stats().kind(OpKind::Program).stage_time.get(Stage::Tin);
        assert_eq!(tin, ns(250_000));
        assert_eq!(s.stats().suspensions, 1);
        assert_eq!(s.stale_events, 0);
    }

    #[test]
    fn a_read_suspends_an_erase() {
        let mut s = sim(4, 0.0);
        // erase: 125 ns of commands, BER 2,500 us; the read comes 1 ms in
        let c = run(
            &mut s,
            &[
                (0, FlashOp::erase(page(3, 0))),
                (1_000_000, FlashOp::read(page(1, 0))),
            ],
        );
        let stop = 1_100_000;
        assert_eq!(c[1].completed, ns(stop + READ_NS));
        assert_eq!(
            c[0].completed,
            ns(stop + READ_NS + (125 + 2_500_000 - stop) + STATUS_NS)
        );
        assert_eq!(
            s.stats().kind(OpKind::Erase).stage_time.get(Stage::Ber),
            ns(2_500_000)
        );
    }

    #[test]
    fn without_suspension_the_read_waits() {
        let mut s = NandSim::new(preset("mlc1").unwrap(), 1).unwrap();
        let mut done = Vec::new();
        s.submit(SimTime::ZERO, &FlashOp::program(page(0, 0)).with_tag(0))
            .unwrap();
        while s.next_event_time().is_some_and(|t| t <= ns(100_000)) {
            s.process_next(&mut done);
        }
        // no [suspend] section: the same as submit
        s.submit_read_suspending(ns(100_000), &FlashOp::read(page(1, 0)).with_tag(1))
            .unwrap();
        s.run_until_idle(&mut done);
        done.sort_by_key(|c| c.tag);
        let program_end = PROGRAM_SETUP_NS + 250_000 + STATUS_NS;
        assert_eq!(done[0].completed, ns(program_end));
        assert_eq!(done[1].completed, ns(program_end + READ_NS));
        assert_eq!(s.stats().suspensions, 0);
    }

    #[test]
    fn reads_join_a_suspension_within_the_budget() {
        let mut s = sim(2, 0.0);
        let c = run(
            &mut s,
            &[
                (0, FlashOp::program(page(0, 0))),
                (100_000, FlashOp::read(page(1, 0))),
                // arrives while the first read runs: joins the suspension
                (150_000, FlashOp::read(page(1, 1))),
                // over the budget of 2: waits for the program
                (160_000, FlashOp::read(page(1, 2))),
            ],
        );
        let stop = 110_000;
        assert_eq!(c[1].completed, ns(stop + READ_NS));
        assert_eq!(c[2].completed, ns(stop + 2 * READ_NS));
        let left = PROGRAM_SETUP_NS + 250_000 - stop;
        let program_end = stop + 2 * READ_NS + left + STATUS_NS;
        assert_eq!(c[0].completed, ns(program_end));
        assert_eq!(c[3].completed, ns(program_end + READ_NS));
        assert_eq!(s.stats().suspensions, 1);
        assert_eq!(s.stats().suspended_reads, 2);
    }

    #[test]
    fn no_suspension_when_the_op_ends_first() {
        let mut s = sim(4, 0.0);
        // 5 us before the TIN ends (301,375 ns): stopping takes 10 us, so the read waits
        let c = run(
            &mut s,
            &[
                (0, FlashOp::program(page(0, 0))),
                (296_375, FlashOp::read(page(1, 0))),
            ],
        );
        let program_end = PROGRAM_SETUP_NS + 250_000 + STATUS_NS;
        assert_eq!(c[0].completed, ns(program_end));
        assert_eq!(c[1].completed, ns(program_end + READ_NS));
        assert_eq!(s.stats().suspensions, 0);
    }

    #[test]
    fn a_resumed_program_can_be_suspended_again() {
        let mut s = sim(4, 0.0);
        let first_stop = 110_000;
        let resumed_at = first_stop + READ_NS;
        // the second read comes 1 us into the resumed TIN
        let c = run(
            &mut s,
            &[
                (0, FlashOp::program(page(0, 0))),
                (100_000, FlashOp::read(page(1, 0))),
                (resumed_at + 1_000, FlashOp::read(page(1, 1))),
            ],
        );
        let second_stop = resumed_at + 11_000;
        assert_eq!(c[2].completed, ns(second_stop + READ_NS));
        // the TIN's 250 us are done in three pieces around two reads
        let end = PROGRAM_SETUP_NS + 250_000 + 2 * READ_NS + STATUS_NS;
        assert_eq!(c[0].completed, ns(end));
        assert_eq!(s.stats().suspensions, 2);
        assert_eq!(s.stale_events, 0);
    }

    #[test]
    fn bad_suspend_config_names_the_key() {
        let mut config = preset("mlc1").unwrap();
        let mut suspend = SuspendConfig {
            program_suspend_us: -1.0,
            erase_suspend_us: 100.0,
            resume_penalty_us: 0.0,
            max_suspended_reads: 1,
            source: String::new(),
        };
        config.suspend = Some(suspend.clone());
        let key = |c: &crate::NandConfig| match c.validate() {
            Err(crate::NandError::Config { key, .. }) => key,
            other => panic!("{other:?}"),
        };
        assert_eq!(key(&config), "suspend.program_suspend_us");
        suspend.program_suspend_us = 1.0;
        suspend.max_suspended_reads = 0;
        config.suspend = Some(suspend);
        assert_eq!(key(&config), "suspend.max_suspended_reads");
    }
}
