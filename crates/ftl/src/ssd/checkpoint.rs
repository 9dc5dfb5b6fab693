//! Map checkpoints under a power-loss trace (`ftl.map_checkpoint_interval_pages`,
//! [`crate::power::checkpoint`]): taken every interval of pages decided, committed once
//! written and (unless the mutation says otherwise) once the data they map is on flash.

use super::Ssd;
use crate::address::Lpa;
use crate::mapping::Mapping;
use crate::power::checkpoint::{CheckpointOrder, MapCheckpoint, PendingCheckpoint};
use nandlab_nand::OpKind;
use std::sync::Arc;

impl Ssd {
    /// Makes the checkpoints commit as `order` says (`BeforeData`: the mutation that records
    /// a checkpoint as durable before the data it maps). Needs the power trace.
    pub fn set_checkpoint_order(&mut self, order: CheckpointOrder) {
        if let Some(trace) = self.flash.emit.trace.as_mut() {
            trace.checkpoint_order = order;
        }
    }

    /// Notes a trim of `lpa` decided now (the checkpoint's trim log).
    pub(super) fn checkpoint_trim(&mut self, lpa: Lpa) {
        let sequence = self.flash.write_sequence;
        if let Some(trace) = self.flash.emit.trace.as_mut() {
            let trims = &mut trace.trimmed_at;
            if trims.len() <= lpa.index() {
                trims.resize(lpa.index() + 1, 0);
            }
            trims[lpa.index()] = sequence;
        }
    }

    /// Commits the pending checkpoint if it may, and takes a new one if one is due (called
    /// after every step of the power driver).
    pub(super) fn checkpoint_step(&mut self) {
        let interval = self.config.ftl.map_checkpoint_interval_pages;
        if interval == 0 {
            return;
        }
        let now_ps = self.now.as_ps();
        let oob = &self.flash.oob;
        let Some(trace) = self.flash.emit.trace.as_mut() else {
            return;
        };
        if let Some(pending) = &trace.pending_checkpoint {
            let data_on_flash = trace.checkpoint_order == CheckpointOrder::BeforeData
                || pending
                    .data_ops
                    .iter()
                    .enumerate()
                    .all(|(die, &ops)| oob.completed_ops(die) >= ops);
            if now_ps >= pending.write_done_ps && data_on_flash {
                let mut checkpoint = trace
                    .pending_checkpoint
                    .take()
                    .expect("pending checked")
                    .checkpoint;
                checkpoint.committed_ps = now_ps;
                let image = trace.image.as_mut().expect("the trace has an image");
                image.checkpoint = Some(Arc::new(checkpoint));
                trace.checkpoints_committed += 1;
            }
        }
        if trace.pending_checkpoint.is_some()
            || self.flash.write_sequence < trace.checkpoint_sequence + u64::from(interval)
        {
            return;
        }
        // the snapshot: the map as decided now
        let image = trace.image.as_ref().expect("the trace has an image");
        let ppb = self.flash.blocks.pages_per_block;
        let mut erases = image.erases.clone();
        let mut data_ops = Vec::with_capacity(trace.dies.len());
        for (die, ops) in trace.dies.iter().enumerate() {
            data_ops.push(image.base[die] + image.folded[die] + ops.len() as u64);
            for op in ops.iter().filter(|op| op.kind == OpKind::Erase) {
                erases[(op.source.0 / ppb) as usize] += 1;
            }
        }
        let map = (0..self.logical_pages)
            .map(|l| {
                let ppa = self.mapper.locate(Lpa(l))?;
                let (_, sequence) = oob.get(ppa)?;
                Some((ppa, sequence))
            })
            .collect();
        let mut trimmed_at = trace.trimmed_at.clone();
        trimmed_at.resize(self.logical_pages as usize, 0);
        let blocks = erases.len() as u64;
        let pages = MapCheckpoint::pages_for(
            u64::from(self.logical_pages),
            blocks,
            self.geometry.page_size_bytes,
        );
        // its pages: the slowest program plus the transfer each (a metadata area of its own)
        let timing = self.nand.timing();
        let program = (0..ppb)
            .map(|p| timing.program_time(p))
            .max()
            .unwrap_or(nandlab_core::SimTime::ZERO);
        let per_page = program + timing.transfer_time(self.geometry.page_size_bytes);
        let write_ps = per_page.as_ps() * pages;
        trace.checkpoint_sequence = self.flash.write_sequence;
        trace.pending_checkpoint = Some(PendingCheckpoint {
            checkpoint: MapCheckpoint {
                map,
                trimmed_at,
                write_pointer: self.flash.blocks.next_page.clone(),
                erases,
                sequence: self.flash.write_sequence,
                taken_ps: now_ps,
                committed_ps: 0,
                pages,
            },
            write_done_ps: now_ps + write_ps,
            data_ops,
        });
    }

    /// Checkpoints committed since the power trace started, and whether one was being written
    /// (or waited for its data) at this instant.
    pub fn checkpoint_state(&self) -> (u64, bool) {
        match self.flash.emit.trace.as_ref() {
            Some(t) => (t.checkpoints_committed, t.pending_checkpoint.is_some()),
            None => (0, false),
        }
    }
}
