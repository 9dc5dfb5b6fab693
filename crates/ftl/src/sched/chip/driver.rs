//! The logical-unit scheduler: turns a stream of host requests into flash ops on a
//! [`NandSim`] (paper 003 §8.8; the "memory transaction" path of §6.1).
//!
//! Requests are split into page ops. Reads go to the page the layout assigns to their logical
//! address; writes are appended at a write pointer laid out by the same policy (flash cannot
//! be overwritten in place, so any chip-level writer is a log), erasing a block before its
//! first page is programmed again. Page ops wait in a FIFO per die; when a die can take an op,
//! the plane-first policy merges queued page ops that obey the plane addressing rule (same kind,
//! same page offset, one per plane; transfer sizes may differ) into one multiplane op. Merging,
//! register modes and die slots are the SSD's ([`crate::sched::merge`]): this driver only keeps
//! the queues. Interleaving lets several dies of a channel work at once; without it a channel
//! has one op in flight. The host keeps `queue_depth` requests outstanding (closed loop).

use super::workload::ChipRequest;
use crate::sched::merge::{DieSlots, Merge, Offer, Passing, PlaneSlot, register_mode};
use crate::sched::policy::{SchedulerPolicy, place};
use nandlab_core::{LatencyHistogram, SimTime};
use nandlab_nand::geometry::MAX_PLANES_PER_DIE;
use nandlab_nand::{
    Completion, DieId, FlashOp, NandError, NandResult, NandSim, OpKind, PageAddress,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How the host drives the chips.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverConfig {
    /// Where consecutive pages go and how ops are dispatched.
    pub policy: SchedulerPolicy,
    /// Use cache-mode reads and programs.
    pub cache: bool,
    /// Let the dies of a channel work at once (interleaved-die mode).
    pub interleave: bool,
    /// Requests outstanding at the host.
    pub queue_depth: u32,
    /// Planes merged into one multiplane op at most (plane-first only; 0 = all planes).
    pub max_planes_per_op: u32,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            policy: SchedulerPolicy::DieFirst,
            cache: false,
            interleave: true,
            queue_depth: 32,
            max_planes_per_op: 0,
        }
    }
}

/// Host-side results of a chip run (the chip's own counters are in `NandSim::stats`).
#[derive(Clone, Debug, Default)]
pub struct DriverStats {
    /// Read requests completed.
    pub read_requests: u64,
    /// Write requests completed.
    pub write_requests: u64,
    /// Bytes read by completed requests.
    pub read_bytes: u64,
    /// Bytes written by completed requests.
    pub write_bytes: u64,
    /// Read request latencies.
    pub read_latency: LatencyHistogram,
    /// Write request latencies.
    pub write_latency: LatencyHistogram,
    /// Erases the driver inserted before reusing a block of its log.
    pub erases_inserted: u64,
    /// Ops with more than one plane.
    pub multiplane_ops: u64,
    /// Ops submitted to the chip.
    pub ops: u64,
    /// Simulated time when the last request completed.
    pub end: SimTime,
}

#[derive(Clone, Copy, Debug)]
struct PageOp {
    request: u32,
    kind: OpKind,
    address: PageAddress,
    bytes: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct RequestSlot {
    write: bool,
    bytes: u32,
    start: SimTime,
    pending: u32,
}

/// Runs `requests` through the scheduler on `sim` until all complete.
pub fn run_requests(
    sim: &mut NandSim,
    config: &DriverConfig,
    requests: impl IntoIterator<Item = ChipRequest>,
) -> NandResult<DriverStats> {
    Driver::new(sim, config)?.run(requests.into_iter())
}

struct Driver<'a> {
    sim: &'a mut NandSim,
    config: DriverConfig,
    slots_rule: DieSlots,
    planes_per_op: usize,
    slots: Vec<RequestSlot>,
    free_slots: Vec<u32>,
    die_queues: Vec<VecDeque<PageOp>>,
    /// FCFS: the die of every queued page op, in arrival order (only its head may go).
    global_queue: VecDeque<u32>,
    die_in_flight: Vec<u32>,
    channel_in_flight: Vec<u32>,
    op_groups: Vec<[u32; MAX_PLANES_PER_DIE as usize]>,
    op_group_sizes: Vec<u8>,
    op_group_dies: Vec<u32>,
    free_groups: Vec<u32>,
    write_pointer: u64,
    op_buffer: FlashOp,
    /// Dies whose queue or capacity changed since the last dispatch.
    dirty_dies: Vec<u32>,
    die_dirty: Vec<bool>,
    /// Blocks the log has written since their last erase (programs may still be queued).
    block_written: Vec<bool>,
    completions: Vec<Completion>,
    stats: DriverStats,
}

/// The deepest host queue the driver accepts (its request table is allocated up front).
pub const MAX_QUEUE_DEPTH: u32 = 65_536;

impl<'a> Driver<'a> {
    fn new(sim: &'a mut NandSim, config: &DriverConfig) -> NandResult<Self> {
        if config.queue_depth == 0 || config.queue_depth > MAX_QUEUE_DEPTH {
            return Err(NandError::Config {
                key: "driver.queue_depth".into(),
                message: format!(
                    "{} requests; must be between 1 and {MAX_QUEUE_DEPTH}",
                    config.queue_depth
                ),
            });
        }
        let g = sim.geometry().clone();
        let planes = g.planes_per_die as usize;
        let planes_per_op = match config.policy {
            SchedulerPolicy::PlaneFirst if config.max_planes_per_op == 0 => planes,
            SchedulerPolicy::PlaneFirst => (config.max_planes_per_op as usize).min(planes),
            _ => 1,
        };
        let depth = config.queue_depth as usize;
        Ok(Driver {
            slots_rule: DieSlots::for_mode(config.cache, config.interleave),
            planes_per_op,
            slots: vec![RequestSlot::default(); depth],
            free_slots: (0..depth as u32).rev().collect(),
            die_queues: (0..g.total_dies()).map(|_| VecDeque::new()).collect(),
            global_queue: VecDeque::new(),
            die_in_flight: vec![0; g.total_dies() as usize],
            channel_in_flight: vec![0; g.channels as usize],
            op_groups: Vec::new(),
            op_group_sizes: Vec::new(),
            op_group_dies: Vec::new(),
            free_groups: Vec::new(),
            write_pointer: 0,
            block_written: vec![false; g.total_blocks() as usize],
            op_buffer: FlashOp::read(PageAddress::default()),
            dirty_dies: Vec::new(),
            die_dirty: vec![false; g.total_dies() as usize],
            completions: Vec::new(),
            stats: DriverStats::default(),
            config: config.clone(),
            sim,
        })
    }

    fn run(mut self, mut requests: impl Iterator<Item = ChipRequest>) -> NandResult<DriverStats> {
        let mut exhausted = false;
        loop {
            while !exhausted && !self.free_slots.is_empty() {
                match requests.next() {
                    Some(r) => self.admit(r)?,
                    None => exhausted = true,
                }
            }
            self.dispatch()?;
            self.completions.clear();
            let processed = self.sim.process_next(&mut self.completions);
            if processed.is_some_and(|t| t.is_end()) {
                return Err(NandError::EndOfTime {
                    limit: nandlab_core::time::END_OF_TIME_TEXT,
                    context: format!(
                        "after {} completed requests (timing parameters too large for this run)",
                        self.stats.read_requests + self.stats.write_requests
                    ),
                });
            }
            if processed.is_none() {
                if self.free_slots.len() == self.slots.len() && exhausted {
                    break;
                }
                // nothing in flight but requests wait: the scheduler is stuck (a bug)
                return Err(NandError::Unsupported {
                    message: "chip scheduler made no progress with requests outstanding".into(),
                });
            }
            for i in 0..self.completions.len() {
                let c = self.completions[i];
                self.on_completion(c);
            }
        }
        self.stats.end = self.sim.now();
        Ok(self.stats)
    }

    fn admit(&mut self, request: ChipRequest) -> NandResult<()> {
        let slot = self.free_slots.pop().expect("admit with a free slot");
        let page_bytes = u64::from(self.sim.geometry().page_size_bytes);
        let size = u64::from(request.size_bytes.max(1));
        let first = request.offset_bytes / page_bytes;
        let last = (request.offset_bytes + size - 1) / page_bytes;
        let now = self.sim.now();
        self.slots[slot as usize] = RequestSlot {
            write: request.write,
            bytes: request.size_bytes,
            start: now,
            pending: (last - first + 1) as u32,
        };
        let mut remaining = size;
        for logical in first..=last {
            let in_page = if logical == first {
                (page_bytes - request.offset_bytes % page_bytes).min(remaining)
            } else {
                page_bytes.min(remaining)
            };
            remaining -= in_page;
            if request.write {
                let address = self.next_write_address()?;
                self.enqueue(slot, OpKind::Program, address, in_page as u32);
            } else {
                let address = place(self.config.policy, self.sim.geometry(), logical);
                self.enqueue(slot, OpKind::Read, address, in_page as u32);
            }
        }
        Ok(())
    }

    /// The next page of the write log; erases its block first when it held data.
    fn next_write_address(&mut self) -> NandResult<PageAddress> {
        let g = self.sim.geometry();
        let address = place(self.config.policy, g, self.write_pointer);
        self.write_pointer += 1;
        let block = g.block_id(&address);
        if address.page == 0 {
            let written = std::mem::replace(&mut self.block_written[block.index()], false);
            if written || self.sim.blocks().block(block).last_page.is_some() {
                self.stats.erases_inserted += 1;
                self.enqueue(u32::MAX, OpKind::Erase, address, 0);
            }
        }
        self.block_written[block.index()] = true;
        Ok(address)
    }

    fn enqueue(&mut self, request: u32, kind: OpKind, address: PageAddress, bytes: u32) {
        let die = self.sim.geometry().die_id(&address).index();
        self.die_queues[die].push_back(PageOp {
            request,
            kind,
            address,
            bytes,
        });
        if self.config.policy == SchedulerPolicy::Fcfs {
            self.global_queue.push_back(die as u32);
        }
        self.mark_dirty(die);
    }

    fn die_can_take(&self, die: usize) -> bool {
        let channel = self.sim.geometry().channel_of_die(DieId(die as u32)) as usize;
        self.slots_rule
            .can_take(self.die_in_flight[die], self.channel_in_flight[channel])
    }

    fn dispatch(&mut self) -> NandResult<()> {
        if self.config.policy == SchedulerPolicy::Fcfs {
            while let Some(&die) = self.global_queue.front() {
                if !self.die_can_take(die as usize) {
                    break;
                }
                self.global_queue.pop_front();
                self.issue(die as usize)?;
            }
            return Ok(());
        }
        while let Some(die) = self.dirty_dies.pop() {
            let die = die as usize;
            self.die_dirty[die] = false;
            while !self.die_queues[die].is_empty() && self.die_can_take(die) {
                self.issue(die)?;
            }
        }
        Ok(())
    }

    fn mark_dirty(&mut self, die: usize) {
        if !self.die_dirty[die] {
            self.die_dirty[die] = true;
            self.dirty_dies.push(die as u32);
        }
    }

    /// Issues the head of `die`'s queue, merged with queued page ops of the same kind at the
    /// same page offset on other planes when the policy allows multiplane ops.
    fn issue(&mut self, die: usize) -> NandResult<()> {
        let head = self.die_queues[die]
            .pop_front()
            .expect("issue from a non-empty queue");
        let mut members = [head; MAX_PLANES_PER_DIE as usize];
        let mut count = 1usize;
        if self.planes_per_op > 1 {
            let mut merge = Merge::new(
                plane_slot(&head),
                self.planes_per_op,
                Passing::KeepWriteOrder,
            );
            let mut i = 0;
            while i < self.die_queues[die].len() && !merge.full() {
                let candidate = self.die_queues[die][i];
                match merge.offer(&plane_slot(&candidate), true) {
                    Offer::Join => {
                        members[count] = candidate;
                        count += 1;
                        self.die_queues[die].remove(i);
                    }
                    Offer::Pass => i += 1,
                    Offer::Stop => break,
                }
            }
            debug_assert_eq!(merge.members(), count);
        }
        // one FlashOp reused for every issue: no allocation per op in steady state
        let op = &mut self.op_buffer;
        op.kind = head.kind;
        op.targets.clear();
        op.targets
            .extend(members[..count].iter().map(|m| m.address));
        op.mode = register_mode(head.kind, self.config.cache);
        op.transfer_bytes = None;
        if head.kind != OpKind::Erase {
            // one transfer size per op: the members' mean, so that the bus moves their total
            let total: u32 = members[..count].iter().map(|m| m.bytes).sum();
            op.transfer_bytes = Some(total.div_ceil(count as u32));
        }
        let group = match self.free_groups.pop() {
            Some(g) => g,
            None => {
                self.op_groups.push([0; MAX_PLANES_PER_DIE as usize]);
                self.op_group_sizes.push(0);
                self.op_group_dies.push(0);
                (self.op_groups.len() - 1) as u32
            }
        };
        for (k, m) in members[..count].iter().enumerate() {
            self.op_groups[group as usize][k] = m.request;
        }
        self.op_group_sizes[group as usize] = count as u8;
        self.op_group_dies[group as usize] = die as u32;
        let now = self.sim.now();
        self.op_buffer.tag = u64::from(group);
        self.sim.submit(now, &self.op_buffer)?;
        self.stats.ops += 1;
        if count > 1 {
            self.stats.multiplane_ops += 1;
        }
        self.die_in_flight[die] += 1;
        let channel = self.sim.geometry().channel_of_die(DieId(die as u32)) as usize;
        self.channel_in_flight[channel] += 1;
        Ok(())
    }

    fn on_completion(&mut self, c: Completion) {
        let group = c.tag as usize;
        let die = self.op_group_dies[group] as usize;
        self.die_in_flight[die] -= 1;
        let channel = self.sim.geometry().channel_of_die(DieId(die as u32)) as usize;
        self.channel_in_flight[channel] -= 1;
        if self.config.interleave {
            self.mark_dirty(die);
        } else {
            let per_channel = self.sim.geometry().dies_per_channel() as usize;
            for d in channel * per_channel..(channel + 1) * per_channel {
                self.mark_dirty(d);
            }
        }
        for k in 0..usize::from(self.op_group_sizes[group]) {
            let request = self.op_groups[group][k];
            if request == u32::MAX {
                continue; // an erase the scheduler inserted
            }
            let slot = &mut self.slots[request as usize];
            slot.pending -= 1;
            if slot.pending == 0 {
                let latency = c.completed - slot.start;
                if slot.write {
                    self.stats.write_requests += 1;
                    self.stats.write_bytes += u64::from(slot.bytes);
                    self.stats.write_latency.record(latency);
                } else {
                    self.stats.read_requests += 1;
                    self.stats.read_bytes += u64::from(slot.bytes);
                    self.stats.read_latency.record(latency);
                }
                self.free_slots.push(request);
            }
        }
        self.free_groups.push(group as u32);
    }
}

/// A queued page op as the merging rule sees it.
#[inline]
fn plane_slot(op: &PageOp) -> PlaneSlot {
    PlaneSlot {
        kind: op.kind,
        plane: op.address.plane,
        page: op.address.page,
        target_page: 0,
    }
}
