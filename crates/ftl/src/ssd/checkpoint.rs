//! Map checkpoints under a power-loss trace (`ftl.map_checkpoint_interval_pages`,
//! [`crate::power::checkpoint`]): taken every interval of pages decided, committed once
//! written and (unless the mutation says otherwise) once the data they map is on flash.

use super::Ssd;
use crate::address::Lpa;
use crate::mapping::Mapping;
use crate::power::checkpoint::{CheckpointOrder, MapCheckpoint, PendingCheckpoint};
use crate::power::trim_log::TrimLogMode;
use nandlab_nand::OpKind;
use std::sync::Arc;

impl Ssd {
    /// Makes the checkpoints commit as `order` says (`BeforeData`: the mutation that records
    /// a checkpoint as durable before the data it maps). Needs the power trace.
    pub fn set_checkpoint_order(&mut self, order: CheckpointOrder) {
        if let Some(trace) = self.flash.power_trace_mut() {
            trace.checkpoint_order = order;
        }
    }

    /// Makes a Flush log the trims decided before it (`OnFlush`) or forget them (`Skipped`:
    /// the `trim-log-skipped` mutation). Needs the power trace.
    pub fn set_trim_log_mode(&mut self, mode: TrimLogMode) {
        if let Some(trace) = self.flash.power_trace_mut() {
            trace.trim_log.mode = mode;
        }
    }

    /// Time to write one page of the metadata area (ps): the slowest program of a block's
    /// page types plus the page's transfer.
    pub(super) fn metadata_page_ps(&self) -> u64 {
        let timing = self.chip.nand.timing();
        let program = (0..self.layout.geometry.pages_per_block)
            .map(|p| timing.program_time(p))
            .max()
            .unwrap_or(nandlab_core::SimTime::ZERO);
        (program + timing.transfer_time(self.layout.geometry.page_size_bytes)).as_ps()
    }

    /// Lets the flushes held by the power trace's flush hook go on once the ops decided before them
    /// have completed.
    pub(super) fn flush_barrier_step(&mut self) {
        let Some(trace) = self.flash.power_trace_mut() else {
            return;
        };
        if trace.flush_barriers.is_empty() {
            return;
        }
        let mut released = Vec::new();
        let mut barriers = std::mem::take(&mut trace.flush_barriers);
        barriers.retain(|&(slot, through)| {
            let done = trace.done_through(through);
            if done {
                released.push(slot);
            }
            !done
        });
        trace.flush_barriers = barriers;
        for slot in released {
            self.op_done(slot);
        }
    }

    /// When the next write to the metadata area ends (ps): the trim log's oldest record being
    /// written, or the pages of the checkpoint being written (once written, a checkpoint
    /// waits for chip completions, which are events of their own).
    pub(super) fn metadata_next_ps(&self) -> Option<u64> {
        let trace = self.flash.power_trace()?;
        let checkpoint = trace
            .pending_checkpoint
            .as_ref()
            .map(|p| p.write_done_ps)
            .filter(|&t| t > self.now.as_ps());
        match (trace.trim_log.next_done_ps(), checkpoint) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Commits the trim-log records written by now (they join the image: a mount reads
    /// them) and lets the flushes waiting for them go on.
    pub(super) fn trim_log_step(&mut self) {
        let now_ps = self.now.as_ps();
        loop {
            let Some(trace) = self.flash.power_trace_mut() else {
                return;
            };
            let Some(done) = trace.trim_log.take_done(now_ps) else {
                return;
            };
            let image = trace.image.as_mut().expect("the trace has an image");
            let covered = image
                .checkpoint
                .as_ref()
                .is_some_and(|c| c.trims_through >= done.record.trims_through);
            if !covered {
                image.trim_log.push(Arc::new(done.record));
            }
            for slot in done.waiters {
                self.op_done(slot);
            }
        }
    }

    /// Trim-log records and pages written (committed) since the power trace started.
    pub fn trim_log_written(&self) -> (u64, u64) {
        self.flash.power_trace().map_or((0, 0), |t| {
            (t.trim_log.records_written, t.trim_log.pages_written)
        })
    }

    /// Commits the pending checkpoint if it may, and takes a new one if one is due (called
    /// after every step of the power driver).
    pub(super) fn checkpoint_step(&mut self) {
        let now_ps = self.now.as_ps();
        let write_sequence = self.flash.write_sequence;
        let Some(trace) = self.flash.power_trace_mut() else {
            return;
        };
        // the trace's own setting, given when it started (no whole-config read here)
        let interval = trace.checkpoint_interval_pages;
        if interval == 0 {
            return;
        }
        if let Some(pending) = &trace.pending_checkpoint {
            let data_on_flash = trace.checkpoint_order == CheckpointOrder::BeforeData
                || trace.done_through(pending.decided_through);
            if now_ps >= pending.write_done_ps && data_on_flash {
                let mut checkpoint = trace
                    .pending_checkpoint
                    .take()
                    .expect("pending checked")
                    .checkpoint;
                checkpoint.committed_ps = now_ps;
                let image = trace.image.as_mut().expect("the trace has an image");
                // the log is truncated: the checkpoint holds every trim decided before it
                let through = checkpoint.trims_through;
                image.trim_log.retain(|r| r.trims_through > through);
                image.checkpoint = Some(Arc::new(checkpoint));
                trace.checkpoints_committed += 1;
            }
        }
        if trace.pending_checkpoint.is_some()
            || write_sequence < trace.checkpoint_sequence + u64::from(interval)
        {
            return;
        }
        self.take_checkpoint();
    }

    /// Takes a checkpoint now (the snapshot: the map as decided now) and starts writing it.
    /// Also called when the trace starts (a mount, or a format, writes one of the state it
    /// starts from: the next mount reads it instead of scanning everything).
    pub(super) fn take_checkpoint(&mut self) {
        let now_ps = self.now.as_ps();
        let ppb = self.flash.blocks.pages_per_block();
        let Some((trace, oob)) = self.flash.power_trace_with_oob() else {
            return;
        };
        let image = trace.image.as_ref().expect("the trace has an image");
        let mut erases = image.erases.clone();
        let decided_through = trace.decided;
        for op in trace.dies.iter().chain(&trace.staged).flatten() {
            if op.kind == OpKind::Erase {
                erases[(op.source.0 / ppb) as usize] += 1;
            }
        }
        let map = (0..self.layout.logical_pages)
            .map(|l| {
                let ppa = self.mapper.locate(Lpa(l))?;
                let (_, sequence) = oob.get(ppa)?;
                Some((ppa, sequence))
            })
            .collect();
        let mut trimmed_at = trace.trimmed_at.clone();
        trimmed_at.resize(self.layout.logical_pages as usize, 0);
        let blocks = erases.len() as u64;
        let pages = MapCheckpoint::pages_for(
            u64::from(self.layout.logical_pages),
            blocks,
            self.layout.geometry.page_size_bytes,
        );
        // its pages: the slowest program plus the transfer each (a metadata area of its own)
        let write_ps = self.metadata_page_ps() * pages;
        let write_sequence = self.flash.write_sequence;
        let mut write_pointer = self.flash.blocks.write_pointers().to_vec();
        // the SLC cache's blocks are read whole at every mount: the map does not name the
        // cached writes (nor a folded page whose main-area program has not completed)
        for block in self.flash.slc_block_ids() {
            write_pointer[block as usize] = 0;
        }
        let trace = self.flash.power_trace_mut().expect("checked above");
        trace.checkpoint_sequence = write_sequence;
        trace.pending_checkpoint = Some(PendingCheckpoint {
            checkpoint: MapCheckpoint {
                map,
                trimmed_at,
                trims_through: trace.trim_log.trims_decided,
                write_pointer,
                erases,
                sequence: write_sequence,
                taken_ps: now_ps,
                committed_ps: 0,
                pages,
            },
            write_done_ps: now_ps + write_ps,
            decided_through,
        });
    }

    /// Checkpoints committed since the power trace started, and whether one was being written
    /// (or waited for its data) at this instant.
    pub fn checkpoint_state(&self) -> (u64, bool) {
        match self.flash.power_trace() {
            Some(t) => (t.checkpoints_committed, t.pending_checkpoint.is_some()),
            None => (0, false),
        }
    }
}
