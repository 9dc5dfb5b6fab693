//! The controller's deadline batch scheduler for SiM searches (paper 004 §IV-E, SPEC S5;
//! `ftl.sim_batch_deadline_ns`) and [`Ssd::run_search`], which runs many SiM commands
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
//! The scheduler decides from the arrivals alone (as the online `search::DeadlineScheduler`
//! dispatches at the deadline): a dispatched batch queues on its die with the other ops, and a
//! search arriving after its batch's dispatch opens a new batch even while the earlier one still
//! waits in the die's queue.

use super::super::{Executed, Ssd};
use super::{SearchOp, SearchRequest};
use crate::error::{FtlError, FtlResult};
use nandlab_core::SimTime;
use nandlab_nand::SearchKey;
use std::collections::{HashMap, VecDeque};

/// Keys of a search command (0 for a gather).
fn key_count(request: &SearchRequest) -> usize {
    match &request.op {
        SearchOp::Search(keys) => keys.len(),
        SearchOp::Gather(_) => 0,
    }
}

/// One command the scheduler dispatches: a request as it is, or a batch of searches.
#[derive(Debug)]
struct Batch {
    dispatch: SimTime,
    request: SearchRequest,
    /// The requests in it (index into the caller's list) and the first of their bitmaps.
    members: Vec<(usize, usize)>,
}

impl Ssd {
    /// Runs SiM commands `requests` (each submitted at its arrival, or now) concurrently
    /// through the device's queue and returns one result per request, in order. Searches go
    /// through the deadline batch scheduler (`ftl.sim_batch_deadline_ns`; see the module
    /// docs): a request's latency runs from its own arrival to its batch's completion, and its
    /// data holds its own keys' bitmaps.
    pub fn run_search(&mut self, requests: &[SearchRequest]) -> FtlResult<Vec<Executed>> {
        self.run_search_chained(requests, |_, _| None)
    }

    /// [`Ssd::run_search`] with dependent commands: when a command completes, `next(index,
    /// &result)` may return a follow-up command (e.g. the gather of the value chunk a search
    /// found), which is submitted at that completion time (its `arrival` is ignored) and
    /// dispatched as it is (a follow-up search is not batched). It takes the next free request
    /// slot before any command of `requests` still waiting for one (a lookup in progress
    /// finishes before new ones start; FIFO among follow-ups). `index` numbers the commands:
    /// `0..requests.len()` for `requests`, then `requests.len()`, `requests.len() + 1`, … for
    /// the follow-ups in the order `next` returned them; a follow-up's completion calls `next`
    /// too (chains). The result has one entry per command in that numbering; a follow-up's
    /// latency runs from its predecessor's completion. A bad follow-up is an error naming it;
    /// the commands still in flight then complete in later calls, unreported.
    pub fn run_search_chained(
        &mut self,
        requests: &[SearchRequest],
        mut next: impl FnMut(usize, &Executed) -> Option<SearchRequest>,
    ) -> FtlResult<Vec<Executed>> {
        for (i, request) in requests.iter().enumerate() {
            self.check_search(request)
                .map_err(|e| FtlError::BadRequest {
                    message: format!("SiM request {i}: {e}"),
                })?;
        }
        // forget the commands of an earlier call that ended in an error: they complete
        // unreported
        let search = self.stages.search.as_mut().expect("checked: SiM region");
        search.in_flight.clear();
        search.finished.clear();
        let mut arrivals: Vec<SimTime> = requests
            .iter()
            .map(|r| r.arrival.unwrap_or(self.now).max(self.now))
            .collect();
        // each command's key count (bitmaps it owns in its batch's data)
        let mut key_counts: Vec<usize> = requests.iter().map(key_count).collect();
        let mut batches = self.plan_batches(requests, &arrivals);
        // the planned commands by dispatch time; follow-ups (all due) in the order issued
        let mut order: Vec<usize> = (0..batches.len()).collect();
        order.sort_by_key(|&b| (batches[b].dispatch, b));
        let mut next_planned = 0;
        let mut follow_ups: VecDeque<usize> = VecDeque::new();
        let mut out: Vec<Option<Executed>> = vec![None; requests.len()];
        let mut pending = batches.len();
        let mut arrival_scheduled = false;
        let mut finished = Vec::new();
        while pending > 0 {
            while self.host.requests.has_room() {
                // a follow-up takes a free slot before any planned command waiting for one
                let b = if let Some(b) = follow_ups.pop_front() {
                    b
                } else if let Some(&b) = order.get(next_planned) {
                    if batches[b].dispatch > self.now {
                        if !arrival_scheduled {
                            self.host.events.schedule(batches[b].dispatch, ());
                            arrival_scheduled = true;
                        }
                        break;
                    }
                    next_planned += 1;
                    b
                } else {
                    break;
                };
                let slot = self.admit_search(&batches[b].request, batches[b].dispatch)?;
                let search = self.stages.search.as_mut().expect("checked: SiM region");
                search.in_flight.push((slot, b));
            }
            let search = self.stages.search.as_mut().expect("checked: SiM region");
            std::mem::swap(&mut finished, &mut search.finished);
            for (b, completed, data) in finished.drain(..) {
                pending -= 1;
                let members = std::mem::take(&mut batches[b].members);
                // a batch of several searches: each member's own bitmaps; else all of it
                let mut data = Some(data);
                let parts: Vec<(usize, Vec<u8>)> = if let [(member, _)] = members[..] {
                    vec![(member, data.take().expect("one member"))]
                } else {
                    let d = data.as_deref().expect("data");
                    members
                        .iter()
                        .map(|&(member, first)| {
                            let own = if d.is_empty() {
                                Vec::new()
                            } else {
                                d[64 * first..64 * (first + key_counts[member])].to_vec()
                            };
                            (member, own)
                        })
                        .collect()
                };
                for (member, data) in parts {
                    let done = Executed {
                        latency: completed - arrivals[member],
                        completed,
                        data,
                    };
                    if let Some(follow) = next(member, &done) {
                        let index = out.len();
                        self.check_search(&follow)
                            .map_err(|e| FtlError::BadRequest {
                                message: format!(
                                    "SiM request {index} (follow-up of {member}): {e}"
                                ),
                            })?;
                        arrivals.push(completed);
                        key_counts.push(key_count(&follow));
                        batches.push(Batch {
                            dispatch: completed,
                            request: SearchRequest {
                                arrival: None,
                                ..follow
                            },
                            members: vec![(index, 0)],
                        });
                        follow_ups.push_back(batches.len() - 1);
                        pending += 1;
                        out.push(None);
                    }
                    out[member] = Some(done);
                }
            }
            let search = self.stages.search.as_mut().expect("checked: SiM region");
            std::mem::swap(&mut finished, &mut search.finished);
            if pending == 0 {
                break;
            }
            if !follow_ups.is_empty() && self.host.requests.has_room() {
                continue; // a follow-up to admit now
            }
            match self.step_sync()? {
                Some(true) => arrival_scheduled = false,
                Some(false) => {}
                None => return Err(self.stalled()),
            }
        }
        Ok(out
            .into_iter()
            .map(|e| e.expect("every command completed"))
            .collect())
    }

    /// A SiM command completed now with `data`: one of [`Ssd::run_search`] goes to its batch;
    /// any other (an open-loop one, [`Ssd::submit_search`]) is handed back with its data.
    pub(in crate::ssd) fn search_finished(&mut self, slot: u32, data: Vec<u8>) -> Option<Vec<u8>> {
        let now = self.now;
        let search = self.stages.search.as_mut().expect("SiM command");
        let Some(i) = search.in_flight.iter().position(|&(s, _)| s == slot) else {
            return Some(data);
        };
        let (_, batch) = search.in_flight.swap_remove(i);
        search.finished.push((batch, now, data));
        None
    }

    /// The scheduler's decisions: the commands to dispatch, each with its dispatch time.
    fn plan_batches(&mut self, requests: &[SearchRequest], arrivals: &[SimTime]) -> Vec<Batch> {
        let deadline = self
            .stages
            .search
            .as_ref()
            .expect("checked: SiM region")
            .batch_deadline;
        let keys_max = self
            .chip
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
            let SearchOp::Search(keys) = &request.op else {
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
                && let SearchOp::Search(batch_keys) = &mut batches[b].request.op
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
                request: SearchRequest {
                    arrival: None,
                    lpa: request.lpa,
                    op: SearchOp::Search(keys),
                },
                members: vec![(i, 0)],
            });
            if deadline > SimTime::ZERO && !full {
                open.insert(request.lpa.0, batches.len() - 1);
            }
        }
        let c = &mut self
            .stages
            .search
            .as_mut()
            .expect("checked: SiM region")
            .counters;
        c.batches += searches;
        c.merged_searches += merged;
        batches
    }
}
