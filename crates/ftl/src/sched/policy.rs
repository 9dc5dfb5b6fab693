//! Where the scheduler puts logical pages (SPEC N10, paper 003 §8.8).
//!
//! - die-first: consecutive pages stripe over the dies of every channel first, then planes;
//! - plane-first: consecutive pages fill the planes of one die first (so that the plane
//!   addressing rule lets them form multiplane ops), then move to the next die;
//! - FCFS: no striping: pages fill a block, then the next block of the same plane, then the
//!   next plane and die, and requests are dispatched strictly in arrival order.

use nandlab_nand::{Geometry, PageAddress};
use serde::{Deserialize, Serialize};

/// The order in which consecutive pages are spread over dies and planes (SPEC N10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerPolicy {
    /// Stripe consecutive pages over dies first, then planes.
    #[default]
    DieFirst,
    /// Fill the planes of a die first (multiplane ops), then the next die.
    PlaneFirst,
    /// No striping; requests dispatched strictly in arrival order (chip-level runs only).
    Fcfs,
}

impl SchedulerPolicy {
    /// The policy's name in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerPolicy::DieFirst => "die-first",
            SchedulerPolicy::PlaneFirst => "plane-first",
            SchedulerPolicy::Fcfs => "fcfs",
        }
    }
}

impl SchedulerPolicy {
    /// The SSD's page allocation order under this policy (`ftl.allocation_order`, fastest-varying
    /// level first): die-first stripes consecutive pages over channels, chips and dies before
    /// planes; plane-first fills the planes of one die first. `None` for FCFS, which has no
    /// striping and one queue for all dies: a chip-level baseline, not an SSD's scheduler.
    pub fn ssd_allocation_order(self) -> Option<&'static str> {
        match self {
            SchedulerPolicy::DieFirst => Some("channel-chip-die-plane"),
            SchedulerPolicy::PlaneFirst => Some("plane-channel-chip-die"),
            SchedulerPolicy::Fcfs => None,
        }
    }

    /// Whether the policy serves requests with multiplane ops (plane-first: "requests are
    /// collected into two pages upon arrival and served to multiple planes", paper 003 §8.8).
    pub fn merges_multiplane(self) -> bool {
        self == SchedulerPolicy::PlaneFirst
    }
}

impl std::str::FromStr for SchedulerPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "die-first" => Ok(SchedulerPolicy::DieFirst),
            "plane-first" => Ok(SchedulerPolicy::PlaneFirst),
            "fcfs" => Ok(SchedulerPolicy::Fcfs),
            other => Err(format!(
                "unknown scheduler `{other}` (expected die-first, plane-first or fcfs)"
            )),
        }
    }
}

/// Maps a logical page number (modulo the device's pages) to a physical page.
pub fn place(policy: SchedulerPolicy, g: &Geometry, logical_page: u64) -> PageAddress {
    let lp = logical_page % g.total_pages();
    let dies = u64::from(g.total_dies());
    let planes = u64::from(g.planes_per_die);
    let pages = u64::from(g.pages_per_block);
    let (die, plane, rest) = match policy {
        SchedulerPolicy::DieFirst => (lp % dies, (lp / dies) % planes, lp / (dies * planes)),
        SchedulerPolicy::PlaneFirst => ((lp / planes) % dies, lp % planes, lp / (dies * planes)),
        SchedulerPolicy::Fcfs => {
            let per_plane = u64::from(g.blocks_per_plane) * pages;
            let plane_index = lp / per_plane;
            (plane_index / planes, plane_index % planes, lp % per_plane)
        }
    };
    let die = die as u32;
    let dies_per_channel = g.dies_per_channel();
    PageAddress {
        channel: die / dies_per_channel,
        chip: (die % dies_per_channel) / g.dies_per_chip,
        die: die % g.dies_per_chip,
        plane: plane as u32,
        block: (rest / pages) as u32,
        page: (rest % pages) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_nand::preset;

    #[test]
    fn die_first_stripes_dies_then_planes() {
        let g = preset("qdp-slc").unwrap().geometry; // 4 dies x 2 planes
        let a: Vec<(u32, u32, u32)> = (0..9)
            .map(|i| {
                let p = place(SchedulerPolicy::DieFirst, &g, i);
                (p.die, p.plane, p.page)
            })
            .collect();
        assert_eq!(
            a,
            [
                (0, 0, 0),
                (1, 0, 0),
                (2, 0, 0),
                (3, 0, 0),
                (0, 1, 0),
                (1, 1, 0),
                (2, 1, 0),
                (3, 1, 0),
                (0, 0, 1)
            ]
        );
    }

    #[test]
    fn plane_first_fills_planes_of_a_die() {
        let g = preset("qdp-slc").unwrap().geometry;
        let a: Vec<(u32, u32, u32)> = (0..4)
            .map(|i| {
                let p = place(SchedulerPolicy::PlaneFirst, &g, i);
                (p.die, p.plane, p.page)
            })
            .collect();
        assert_eq!(a, [(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0)]);
    }

    #[test]
    fn the_ssd_orders_are_valid_allocation_orders() {
        use crate::config::{Level, parse_allocation_order};
        let order = |p: SchedulerPolicy| parse_allocation_order(p.ssd_allocation_order().unwrap());
        assert_eq!(order(SchedulerPolicy::DieFirst).unwrap()[3], Level::Plane);
        assert_eq!(order(SchedulerPolicy::PlaneFirst).unwrap()[0], Level::Plane);
        assert_eq!(SchedulerPolicy::Fcfs.ssd_allocation_order(), None);
        assert!(SchedulerPolicy::PlaneFirst.merges_multiplane());
        assert!(!SchedulerPolicy::DieFirst.merges_multiplane());
    }

    #[test]
    fn every_policy_is_a_bijection_on_a_small_device() {
        let mut c = preset("qdp-slc").unwrap();
        c.geometry.blocks_per_plane = 3;
        c.geometry.pages_per_block = 4;
        let g = c.geometry;
        for policy in [
            SchedulerPolicy::DieFirst,
            SchedulerPolicy::PlaneFirst,
            SchedulerPolicy::Fcfs,
        ] {
            let mut seen = std::collections::HashSet::new();
            for lp in 0..g.total_pages() {
                let a = place(policy, &g, lp);
                g.check(&a).unwrap();
                assert!(seen.insert(g.ppa(&a)), "{policy:?} maps two pages to {a}");
            }
        }
    }
}
