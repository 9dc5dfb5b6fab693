//! Adding a victim policy takes its own file plus one registration line: this test policy
//! ("oldest block first": the candidate closed longest ago, written here from scratch) is one
//! type implementing [`VictimPolicy`], plugged into a small device at build time with
//! `Ssd::with_victim_policy` (the registration line). Run end to end, it must give exactly the
//! report of the built-in `fifo` (same rule), a different one from `greedy`, and it must have
//! chosen every victim GC took.

use super::{Domain, VictimPolicy, candidates};
use crate::address::BlockId;
use crate::config::{GcPolicy, SsdConfig};
use crate::flash::blocks::BlockManager;
use crate::host::{HostOp, HostRequest};
use crate::ssd::Ssd;
use crate::stats::SsdReport;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The candidate closed longest ago; counts the victims GC took from it.
#[derive(Debug)]
struct OldestFirst {
    taken: Arc<AtomicU64>,
}

impl VictimPolicy for OldestFirst {
    fn peek(&self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        let mut oldest: Option<BlockId> = None;
        for b in candidates(blocks, domain) {
            if oldest.is_none_or(|o| blocks.closed_at(b) < blocks.closed_at(o)) {
                oldest = Some(b);
            }
        }
        oldest
    }

    fn taken(&mut self, _blocks: &BlockManager, _domain: Domain) {
        self.taken.fetch_add(1, Ordering::Relaxed);
    }
}

fn device(policy: GcPolicy) -> SsdConfig {
    let mut c = crate::ssd::test_device::small_slc(2, 2, 8);
    c.ftl.gc.policy = policy;
    c
}

/// Fills the device, then overwrites it with a skewed pattern (enough for many GCs).
fn workload(ssd: &Ssd) -> Vec<HostRequest> {
    let pages = ssd.logical_capacity_bytes() / 512;
    let fill = (0..pages).map(|p| HostRequest::new(HostOp::Write, p * 512, 512));
    let mut x = 7u64;
    let overwrite = (0..pages * 6).map(move |_| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let hot = !(x >> 33).is_multiple_of(4);
        let lpa = if hot {
            (x >> 40) % (pages / 5)
        } else {
            (x >> 40) % pages
        };
        HostRequest::new(HostOp::Write, lpa * 512, 512)
    });
    fill.chain(overwrite).collect()
}

fn run(mut ssd: Ssd) -> SsdReport {
    let requests = workload(&ssd);
    let report = ssd.run(requests).unwrap();
    ssd.check_consistency().unwrap();
    report
}

#[test]
fn a_policy_in_its_own_file_runs_a_device_end_to_end() {
    let taken = Arc::new(AtomicU64::new(0));
    let policy = Box::new(OldestFirst {
        taken: Arc::clone(&taken),
    });
    let plugged = run(Ssd::with_victim_policy(device(GcPolicy::Greedy), 1, policy).unwrap());
    assert!(plugged.counters.gc_runs > 10, "{:?}", plugged.counters);
    assert_eq!(
        taken.load(Ordering::Relaxed),
        plugged.counters.gc_runs,
        "every victim came from the plugged policy"
    );
    let fifo = run(Ssd::new(device(GcPolicy::Fifo), 1).unwrap());
    assert_eq!(
        format!("{plugged:?}"),
        format!("{fifo:?}"),
        "oldest-first is FIFO's rule"
    );
    let greedy = run(Ssd::new(device(GcPolicy::Greedy), 1).unwrap());
    assert_ne!(
        plugged.counters.gc_page_copies, greedy.counters.gc_page_copies,
        "the plugged policy, not the configured greedy one, chose the victims"
    );
}
