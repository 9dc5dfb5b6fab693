//! Properties of the superblock allocator (`mapping/superblock.rs`) on whole runs: random
//! one-page writes and trims on small devices leave the tables consistent and every group's
//! host and GC superblocks in lockstep.

use super::Ssd;
use super::test_device::small_slc;
use crate::address::BlockId;
use crate::host::{HostOp, HostRequest};
use crate::mapping::Mapper;
use crate::mapping::page::PageFtl;
use proptest::prelude::*;

/// Pages written into each member of the superblock of the group starting at `first` (a closed
/// member is full), and the member written next.
fn written(
    ftl: &PageFtl,
    ssd: &Ssd,
    frontiers: &[Option<BlockId>],
    cursor: u32,
    first: u32,
) -> (Vec<u32>, u32) {
    let ppb = ssd.flash.blocks.pages_per_block();
    let pages = (first..first + ftl.map.superpage)
        .map(|p| match frontiers[p as usize] {
            Some(b) => ssd.flash.blocks.next_page(b),
            None => ppb,
        })
        .collect();
    (pages, cursor)
}

/// Lockstep: members before the cursor hold one page more than the others.
fn in_lockstep(pages: &[u32], cursor: u32) -> bool {
    let k = pages[pages.len() - 1];
    pages
        .iter()
        .enumerate()
        .all(|(m, &n)| n == if (m as u32) < cursor { k + 1 } else { k })
        || pages.iter().all(|&n| n == pages[0])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn superblocks_stay_in_lockstep_and_consistent(
        dies in 1u32..=2,
        wide in any::<bool>(),
        four_planes in any::<bool>(),
        depth in 1u32..=8,
        ops in proptest::collection::vec((0u32..10_000, 0u8..10), 50..600),
    ) {
        let planes = if four_planes { 4 } else { 2 };
        let w = if wide { planes } else { 2 };
        let mut c = small_slc(dies, planes, 8);
        c.ftl.scheduler.multiplane = true;
        c.ftl.gc.copyback = false;
        c.ftl.scheduler.superpage_planes = w;
        c.ftl.host.queue_depth = depth;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let pages = ssd.logical_capacity_bytes() / 512;
        // fill, then the random writes (one in ten a trim)
        let requests: Vec<HostRequest> = (0..pages)
            .map(|p| HostRequest::new(HostOp::Write, p * 512, 512))
            .chain(ops.iter().map(|&(x, kind)| {
                let op = if kind == 0 { HostOp::Trim } else { HostOp::Write };
                HostRequest::new(op, u64::from(x) % pages * 512, 512)
            }))
            .collect();
        let report = ssd.run(requests).unwrap();
        ssd.check_consistency().unwrap();
        // the random writes (more than the spare space) make GC move pages
        if ops.len() >= 300 {
            prop_assert!(report.counters.gc_page_copies > 0, "{:?}", report.counters);
        }
        let Mapper::Page(ftl) = &ssd.mapper else { unreachable!("page mapping") };
        let groups = ftl.map.stripe.len() as u32 / w;
        for g in 0..groups {
            for (frontiers, cursors) in [(&ftl.map.host_frontier, &ftl.map.host_next), (&ftl.map.gc_frontier, &ftl.map.gc_next)] {
                let (pages, cursor) = written(ftl, &ssd, frontiers, cursors[g as usize], g * w);
                prop_assert!(in_lockstep(&pages, cursor), "group {g}: pages {pages:?}, cursor {cursor}");
            }
        }
    }
}
