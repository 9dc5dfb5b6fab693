//! Tests of the zone layout and the zoned mapping.
use super::*;
use proptest::prelude::*;

fn geometry(channels: u32, dies: u32, planes: u32, blocks: u32, pages: u32) -> Geometry {
    let mut g = nandlab_nand::preset("slc").unwrap().geometry;
    g.channels = channels;
    g.chips_per_channel = 1;
    g.dies_per_chip = dies;
    g.planes_per_die = planes;
    g.blocks_per_plane = blocks;
    g.pages_per_block = pages;
    g
}

fn plane_first(g: &Geometry) -> Vec<PlaneId> {
    (0..g.total_planes()).map(PlaneId).collect()
}

#[test]
fn zones_are_superblocks_written_round_their_planes() {
    // 2 channels x 2 dies x 2 planes, 4 blocks of 8 pages; zones of 4 planes
    let g = geometry(2, 2, 2, 4, 8);
    let layout = ZoneLayout::new(&g, plane_first(&g), 4).unwrap();
    assert_eq!(layout.zone_count(), 2 * 4);
    assert_eq!(layout.zone_capacity_pages(), 32);
    assert_eq!(layout.zone_size_pages(), 32);
    // zone 0: block 0 of planes 0-3; zone 1: block 0 of planes 4-7; zone 2: block 1 of 0-3
    let blocks = |z| layout.blocks(z).map(|b| b.0).collect::<Vec<_>>();
    assert_eq!(blocks(0), vec![0, 4, 8, 12]);
    assert_eq!(blocks(1), vec![16, 20, 24, 28]);
    assert_eq!(blocks(2), vec![1, 5, 9, 13]);
    // pages 0-3 of zone 0 are offset 0 of its four blocks, page 4 offset 1 of the first
    let ppas: Vec<u32> = (0..5).map(|p| layout.ppa(0, p).0).collect();
    assert_eq!(ppas, vec![0, 32, 64, 96, 1]);
    assert_eq!(layout.locate(Ppa(97)), (0, 7));
}

#[test]
fn capacity_below_a_power_of_two_size() {
    let g = geometry(1, 1, 3, 4, 8);
    let layout = ZoneLayout::new(&g, plane_first(&g), 3).unwrap();
    assert_eq!(layout.zone_capacity_pages(), 24);
    assert_eq!(layout.zone_size_pages(), 32);
    let ns = layout.namespace(2, 3);
    assert_eq!(
        (ns.zone_count, ns.zone_size_lbas, ns.zone_capacity_lbas),
        (4, 32, 24)
    );
    assert_eq!((ns.max_open_zones, ns.max_active_zones), (2, 3));
    ns.validate().unwrap();
}

#[test]
fn planes_per_zone_must_divide_the_planes() {
    let g = geometry(1, 2, 2, 4, 8);
    for bad in [0, 3, 5] {
        let e = ZoneLayout::new(&g, plane_first(&g), bad).unwrap_err();
        assert_eq!(e.key, "planes_per_zone");
    }
    assert_eq!(
        ZoneLayout::new(&g, plane_first(&g), 3)
            .unwrap_err()
            .to_string(),
        "planes_per_zone: 3 does not divide the device's 4 planes (use a divisor of 4)"
    );
}

proptest! {
    /// Every page of every zone maps to its own flash page, `locate` inverts it, and a
    /// zone written from its start programs each of its blocks in page order.
    #[test]
    fn the_layout_is_a_bijection_written_in_page_order(
        channels in 1u32..3, dies in 1u32..3, planes in 1u32..5,
        blocks in 1u32..5, pages in 1u32..9, divisor_pick in 0usize..4,
        rotate in 0usize..8,
    ) {
        let g = geometry(channels, dies, planes, blocks, pages);
        let total = g.total_planes();
        let divisors: Vec<u32> = (1..=total).filter(|d| total.is_multiple_of(*d)).collect();
        let k = divisors[divisor_pick % divisors.len()];
        let mut stripe = plane_first(&g);
        let shift = rotate % stripe.len();
        stripe.rotate_left(shift);
        let layout = ZoneLayout::new(&g, stripe, k).unwrap();
        let mut seen = vec![false; g.total_pages() as usize];
        let mut next_offset = vec![0u32; g.total_blocks() as usize];
        for zone in 0..layout.zone_count() {
            let zone_blocks: Vec<u32> = layout.blocks(zone).map(|b| b.0).collect();
            for page in 0..layout.zone_capacity_pages() {
                let ppa = layout.ppa(zone, page);
                prop_assert!(!seen[ppa.index()], "page mapped twice");
                seen[ppa.index()] = true;
                prop_assert_eq!(layout.locate(ppa), (zone, page));
                let block = ppa.0 / pages;
                prop_assert!(zone_blocks.contains(&block));
                prop_assert_eq!(ppa.0 % pages, next_offset[block as usize]);
                next_offset[block as usize] += 1;
            }
        }
        prop_assert!(seen.iter().all(|&s| s), "every page belongs to a zone");
    }
}

/// A zone reset is one `trim_range` call over the zone (issue 29: the reset went one LBA at a
/// time). The range trim must leave the mapping and the block table as trims one page at a
/// time do: random writes at write pointers and TRIMs of random ranges (across zones, past
/// write pointers, over partly trimmed zones, over whole zones) against a model of the live
/// pages, with the full consistency check after each request.
#[test]
fn range_trims_keep_the_mapping_and_the_block_table_consistent() {
    use crate::config::{MappingKind, SsdConfig};
    use crate::host::HostRequest;
    let mut c = SsdConfig::from_preset("slc");
    c.device.overrides = Some(
        toml::from_str(
            "[geometry]\ndies_per_chip = 2\nplanes_per_die = 2\n\
             blocks_per_plane = 16\npages_per_block = 16\npage_size_bytes = 512\n",
        )
        .unwrap(),
    );
    (c.ftl.op_fraction, c.ftl.gc.threshold_blocks) = (0.4, 2);
    c.ftl.mapping.kind = MappingKind::Zoned;
    c.ftl.mapping.zone_planes = 2;
    let mut ssd = crate::Ssd::new(c, 1).unwrap();
    // zones of 2 planes × 16 pages: capacity = size = 32
    let zones = ssd.zone_write_pointers().unwrap().len() as u64;
    let (cap, size) = (32u64, 32u64);
    let mut next = vec![0u64; zones as usize];
    let mut live = vec![false; (zones * size) as usize];
    let mut seed = 12345u64;
    let mut rand = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for step in 0..400 {
        let zone = rand(zones);
        if rand(3) > 0 && next[zone as usize] < cap {
            let pages = 1 + rand(cap - next[zone as usize]).min(7);
            let lpa = zone * size + next[zone as usize];
            ssd.execute(&HostRequest::write(lpa * 512, pages * 512), None)
                .unwrap();
            for p in lpa..lpa + pages {
                live[p as usize] = true;
            }
            next[zone as usize] += pages;
        } else {
            let first = zone * size + rand(size);
            let pages = (1 + rand(2 * size)).min(zones * size - first);
            ssd.execute(&HostRequest::trim(first * 512, pages * 512), None)
                .unwrap();
            for p in first..first + pages {
                live[p as usize] = false;
            }
            // a zone whose written pages are all trimmed is erased: its pointer back to 0
            for z in 0..zones as usize {
                let start = z * size as usize;
                if next[z] > 0 && !live[start..start + next[z] as usize].iter().any(|&l| l) {
                    next[z] = 0;
                }
            }
        }
        ssd.check_consistency()
            .unwrap_or_else(|e| panic!("step {step}: {e}"));
        for (lpa, &l) in live.iter().enumerate() {
            let mapped = ssd.locate(Lpa(lpa as u32)).is_some();
            assert_eq!(mapped, l, "step {step}: lpa {lpa}");
        }
        let pointers = ssd.zone_write_pointers().unwrap();
        assert_eq!(pointers, next, "step {step}");
    }
}
