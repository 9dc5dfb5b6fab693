//! FDP keys out of range are one-line errors naming the key and what it accepts (issue 31: a
//! reclaim unit of 1 byte or 1 PB ran before); FDP on a zoned namespace is refused; a
//! placement identifier a namespace refuses is explained.

use super::tests::{device, sized};
use super::*;
use crate::config::{MappingKind, SsdConfig};
use crate::host::fdp::RuhType;

fn fdp_ns(groups: u16, handles: usize, runs: u64) -> NamespaceConfig {
    let mut ns = NamespaceConfig::conventional(0);
    ns.fdp = Some(FdpConfig {
        reclaim_groups: groups,
        handles: vec![RuhType::PersistentlyIsolated; handles],
        reclaim_unit_bytes: runs,
    });
    ns
}

fn build(c: &SsdConfig, ns: NamespaceConfig) -> Result<NvmeHost, String> {
    let mut ssd = Ssd::new(c.clone(), 1).unwrap();
    let config = NvmeConfig {
        namespaces: vec![ns],
        queue_weights: vec![1],
        arbitration: Arbitration::RoundRobin,
    };
    NvmeHost::new(&config, &mut ssd).map_err(|e| e.to_string())
}

/// A page-mapped device with 3 placement ids.
fn page() -> SsdConfig {
    let mut page = sized(MappingKind::Page, 1, 32);
    page.ftl.op_fraction = 0.5;
    page.ftl.mapping.placement_ids = 3;
    page.ftl.gc.threshold_blocks = 4;
    page
}

#[test]
fn reclaim_unit_sizes_out_of_range_name_the_key_and_the_range() {
    let page = page();
    let capacity = Ssd::new(page.clone(), 1).unwrap().logical_pages() * 512;
    let key = "ssd.nvme.namespaces[0].fdp.reclaim_unit_bytes";
    for runs in [1, 511, 513, capacity + 512, 1_000_000_000_000_000] {
        let e = build(&page, fdp_ns(1, 2, runs)).unwrap_err();
        let range =
            format!("a multiple of the 512-byte LBA from 512 to the device's {capacity} bytes");
        assert!(
            e.contains(key) && e.contains(&range) && !e.contains('\n'),
            "{runs}: {e}"
        );
    }
    let e = build(&page, fdp_ns(1, 2, 0)).unwrap_err();
    assert!(e.contains(key), "{e}");
    for runs in [512, 8192, capacity] {
        build(&page, fdp_ns(1, 2, runs)).unwrap();
    }
}

#[test]
fn reclaim_groups_handles_and_zoned_namespaces_are_checked() {
    let page = page();
    let e = build(&page, fdp_ns(0, 2, 8192)).unwrap_err();
    assert!(
        e.contains("fdp.reclaim_groups") && e.contains("at least 1"),
        "{e}"
    );
    let e = build(&page, fdp_ns(1, 0, 8192)).unwrap_err();
    assert!(
        e.contains("fdp.handles") && e.contains("use 1 to 128"),
        "{e}"
    );
    let e = build(&page, fdp_ns(1, 5, 8192)).unwrap_err();
    assert!(
        e.contains("fdp.handles") && e.contains("placement_ids is 3"),
        "{e}"
    );
    // FDP on a zoned namespace (the zoned mapping has 1 placement id: 1 handle fits)
    let mut zoned_fdp = fdp_ns(1, 1, 8192);
    zoned_fdp.kind = NamespaceKind::Zoned;
    let mut zoned_device = device(MappingKind::Zoned, 1);
    zoned_device.ftl.mapping.zone_planes = 2;
    let e = build(&zoned_device, zoned_fdp).unwrap_err();
    assert!(
        e.contains("ssd.nvme.namespaces[0].fdp") && e.contains("conventional"),
        "{e}"
    );
}

#[test]
fn a_refused_placement_identifier_is_explained() {
    let page = page();
    let h = build(&page, fdp_ns(1, 2, 8192)).unwrap();
    assert_eq!(h.placement_refusal(0, 1), None);
    let why = h.placement_refusal(0, 2).unwrap();
    assert!(why.contains("placement ids 0 to 1"), "{why}");
    let h = build(&page, fdp_ns(2, 1, 8192)).unwrap();
    assert_eq!(h.placement_refusal(0, 1 << 15), None);
    let why = h.placement_refusal(0, 1).unwrap();
    assert!(
        why.contains("top 1 bits") && why.contains("handle 0 to 0"),
        "{why}"
    );
    let h = build(&page, NamespaceConfig::conventional(0)).unwrap();
    assert_eq!(h.placement_refusal(0, 0), None);
    let why = h.placement_refusal(0, 1).unwrap();
    assert!(why.contains("ssd.nvme.namespaces[0].fdp"), "{why}");
}
