//! The controller's deadline batch scheduler for SiM searches (paper 004 §IV-E, SPEC S5;
//! `ftl.sim_batch_deadline_ns`) and [`Ssd::run_sim`], which runs many SiM commands
//! concurrently through the device.
//!
//! A search arriving at `t` for a page with no open batch opens one, dispatched at
//! `t + deadline`; every later search of the same page arriving by then joins it, up to the
//! chip's `batch_keys_max` keys (a batch that fills up is dispatched at the arrival of the
//! search that filled it). A dispatched batch is one search command of all its keys: one
//! page-open, one batched search and one page-close on the chip (k keys cost k × (key in,
//! match, bitmap out) but a single sense). Each request gets its own keys' bitmaps and
//! completes with the batch. Gathers are never batched. With deadline 0 every command is
//! dispatched at its arrival as it is.
//!
//! The scheduler decides from the arrivals alone (as `nandlab-search`'s `DeadlineScheduler`
//! dispatches at the deadline): a dispatched batch queues on its die with the other ops, and a
//! search arriving after its batch's dispatch opens a new batch even while the earlier one still
//! waits in the die's queue.

use super::super::{Executed, Ssd};
use super::{SimOp, SimRequest};
use crate::error::{FtlError, FtlResult};
use nandlab_core::SimTime;
use nandlab_nand::SearchKey;
use std::collections::HashMap;

/// One command the scheduler dispatches: a request as it is, or a batch of searches.
#[derive(Debug)]
struct Batch {
    dispatch: SimTime,
    request: SimRequest,
    /// The requests in it (index into the caller's list) and the first of their bitmaps.
    members: Vec<(usize, usize)>,
}

impl Ssd {
    /// Runs SiM commands `requests` (each submitted at its arrival, or now) concurrently
    /// through the device's queue and returns one result per request, in order. Searches go
    /// through the deadline batch scheduler (`ftl.sim_batch_deadline_ns`; see the module
    /// docs): a request's latency runs from its own arrival to its batch's completion, and its
    /// data holds its own keys' bitmaps.
    pub fn run_sim(&mut self, requests: &[SimRequest]) -> FtlResult<Vec<Executed>> {
        for (i, request) in requests.iter().enumerate() {
            self.check_sim(request).map_err(|e| FtlError::BadRequest {
                message: format!("SiM request {i}: {e}"),
            })?;
        }
        let arrivals: Vec<SimTime> = requests
            .iter()
            .map(|r| r.arrival.unwrap_or(self.now).max(self.now))
            .collect();
        let batches = self.plan_batches(requests, &arrivals);
        let mut order: Vec<usize> = (0..batches.len()).collect();
        order.sort_by_key(|&b| (batches[b].dispatch, b));
        let mut done: Vec<Option<(SimTime, Vec<u8>)>> = vec![None; batches.len()];
        let mut finished = 0;
        let mut next = 0;
        let mut arrival_scheduled = false;
        self.watch = None;
        while finished < batches.len() {
            while next < order.len() && self.requests.has_room() {
                let batch = &batches[order[next]];
                if batch.dispatch > self.now {
                    if !arrival_scheduled {
                        self.events.schedule(batch.dispatch, ());
                        arrival_scheduled = true;
                    }
                    break;
                }
                let slot = self.admit_sim(&batch.request, batch.dispatch)?;
                let sim = self.sim.as_mut().expect("checked: SiM region");
                sim.in_flight.push((slot, order[next]));
                next += 1;
            }
            let sim = self.sim.as_mut().expect("checked: SiM region");
            for (batch, completed, data) in sim.finished.drain(..) {
                done[batch] = Some((completed, data));
                finished += 1;
            }
            if finished == batches.len() {
                break;
            }
            match self.step_sync()? {
                Some(true) => arrival_scheduled = false,
                Some(false) => {}
                None => return Err(self.stalled()),
            }
        }
        let mut out: Vec<Option<Executed>> = vec![None; requests.len()];
        for (batch, result) in batches.iter().zip(done) {
            let (completed, data) = result.expect("every batch completed");
            for &(member, first) in &batch.members {
                let bytes = match &requests[member].op {
                    SimOp::Search(keys) if !data.is_empty() => {
                        data[64 * first..64 * (first + keys.len())].to_vec()
                    }
                    _ => data.clone(),
                };
                out[member] = Some(Executed {
                    latency: completed - arrivals[member],
                    completed,
                    data: bytes,
                });
            }
        }
        Ok(out
            .into_iter()
            .map(|e| e.expect("every request is in a batch"))
            .collect())
    }

    /// A SiM command of [`Ssd::run_sim`] completed now with `data`.
    pub(in crate::ssd) fn sim_finished(&mut self, slot: u32, data: Vec<u8>) {
        let now = self.now;
        let sim = self.sim.as_mut().expect("SiM command");
        if let Some(i) = sim.in_flight.iter().position(|&(s, _)| s == slot) {
            let (_, batch) = sim.in_flight.swap_remove(i);
            sim.finished.push((batch, now, data));
        }
    }

    /// The scheduler's decisions: the commands to dispatch, each with its dispatch time.
    fn plan_batches(&mut self, requests: &[SimRequest], arrivals: &[SimTime]) -> Vec<Batch> {
        let deadline = SimTime::from_ps(self.config.ftl.sim_batch_deadline_ns.saturating_mul(1000));
        let keys_max = self
            .nand
            .search_config()
            .map_or(1, |c| c.batch_keys_max as usize);
        let mut by_arrival: Vec<usize> = (0..requests.len()).collect();
        by_arrival.sort_by_key(|&i| (arrivals[i], i));
        let mut batches: Vec<Batch> = Vec::new();
        // the open batch of each page
        let mut open: HashMap<u32, usize> = HashMap::new();
        let mut merged = 0u64;
        let mut searches = 0u64;
        for i in by_arrival {
            let request = &requests[i];
            let at = arrivals[i];
            let SimOp::Search(keys) = &request.op else {
                batches.push(Batch {
                    dispatch: at,
                    request: request.clone(),
                    members: vec![(i, 0)],
                });
                continue;
            };
            if deadline > SimTime::ZERO
                && let Some(&b) = open.get(&request.lpa.0)
                && batches[b].dispatch >= at
                && let SimOp::Search(batch_keys) = &mut batches[b].request.op
                && batch_keys.len() + keys.len() <= keys_max
            {
                let first = batch_keys.len();
                batch_keys.extend_from_slice(keys);
                let full = batch_keys.len() == keys_max;
                batches[b].members.push((i, first));
                merged += 1;
                if full {
                    batches[b].dispatch = at;
                    open.remove(&request.lpa.0);
                }
                continue;
            }
            searches += 1;
            let keys: Vec<SearchKey> = keys.clone();
            let full = keys.len() == keys_max;
            batches.push(Batch {
                dispatch: if full { at } else { at + deadline },
                request: SimRequest {
                    arrival: None,
                    lpa: request.lpa,
                    op: SimOp::Search(keys),
                },
                members: vec![(i, 0)],
            });
            if deadline > SimTime::ZERO && !full {
                open.insert(request.lpa.0, batches.len() - 1);
            }
        }
        let c = &mut self.sim.as_mut().expect("checked: SiM region").counters;
        c.batches += searches;
        c.merged_searches += merged;
        batches
    }
}
