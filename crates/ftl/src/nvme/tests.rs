use super::*;
use crate::config::{MappingKind, SsdConfig};
use crate::host::fdp::FdpStats;
use crate::host::fdp::RuhType;
use crate::host::zns::ZoneState;

/// An SLC device of 2 dies × 2 planes of 16 blocks of 16 pages of 512 bytes.
pub(super) fn device(mapping: MappingKind, queue_depth: u32) -> SsdConfig {
    sized(mapping, queue_depth, 16)
}

pub(super) fn sized(mapping: MappingKind, queue_depth: u32, blocks: u32) -> SsdConfig {
    let mut c = SsdConfig::from_preset("slc");
    c.device.overrides = Some(
        toml::from_str(&format!(
            "[geometry]\ndies_per_chip = 2\nplanes_per_die = 2\n\
             blocks_per_plane = {blocks}\npages_per_block = 16\npage_size_bytes = 512\n",
        ))
        .unwrap(),
    );
    c.ftl.mapping.kind = mapping;
    c.ftl.host.queue_depth = queue_depth;
    c.ftl.op_fraction = 0.4;
    c.ftl.gc.threshold_blocks = 2;
    c
}

fn zoned(planes: u32, qd: u32) -> Ssd {
    let mut c = device(MappingKind::Zoned, qd);
    c.ftl.mapping.zone_planes = planes;
    Ssd::new(c, 1).unwrap()
}

pub(super) fn host(ssd: &mut Ssd, namespaces: Vec<NamespaceConfig>) -> NvmeHost {
    let config = NvmeConfig {
        namespaces,
        queue_weights: vec![1],
        arbitration: Arbitration::RoundRobin,
    };
    NvmeHost::new(&config, ssd).unwrap()
}

fn zone_write(lba: u64, lbas: u64) -> NvmeCommand {
    NvmeCommand::Write { lba, lbas, pid: 0 }
}

const RESET_ALL: NvmeCommand = NvmeCommand::Zone {
    action: ZoneAction::Reset,
    zslba: 0,
    all: true,
};

#[test]
fn zoned_mapping_writes_with_waf_exactly_one_and_resets_erase_the_zone() {
    let mut ssd = zoned(2, 8);
    let mut open = NamespaceConfig::zoned(0);
    open.max_open_zones = 4;
    let mut h = host(&mut ssd, vec![open]);
    let z = h.zones(0).unwrap().config().clone();
    // 2 planes x 16 pages per zone, 2 groups x 16 blocks = 32 zones
    assert_eq!(
        (z.zone_count, z.zone_size_lbas, z.zone_capacity_lbas),
        (32, 32, 32)
    );
    let mut t = SimTime::ZERO;
    for round in 0..3u64 {
        // four zones at a time, 4-LBA writes interleaved across them, then reset them
        for group in 0..8u64 {
            for chunk in 0..8u64 {
                for k in 0..4u64 {
                    let zone = group * 4 + k;
                    let lba = zone * 32 + chunk * 4;
                    h.submit(0, 0, t, zone_write(lba, 4)).unwrap();
                    t += SimTime::from_us(20);
                }
            }
        }
        let done = h.drain(&mut ssd).unwrap();
        assert!(
            done.iter().all(|c| c.status == NvmeStatus::Success),
            "round {round}"
        );
        assert_eq!(
            h.zones(0)
                .unwrap()
                .report(
                    crate::host::zns::ReportFilter::State(ZoneState::Full),
                    0,
                    99
                )
                .len(),
            32
        );
        if round < 2 {
            h.submit(0, 0, ssd.now(), RESET_ALL).unwrap();
            let done = h.drain(&mut ssd).unwrap();
            assert_eq!(done[0].status, NvmeStatus::Success);
            t = ssd.now();
        }
    }
    ssd.check_consistency().unwrap();
    let r = ssd.report();
    assert_eq!(r.waf, 1.0);
    assert_eq!(r.counters.gc_page_copies, 0);
    // every block of the device erased twice (one reset of every zone per round)
    assert_eq!(r.counters.erases, 2 * 64);
}

#[test]
fn a_single_zone_reset_erases_its_blocks_and_its_latency_is_reported() {
    let mut ssd = zoned(4, 4);
    let mut h = host(&mut ssd, vec![NamespaceConfig::zoned(0)]);
    let cap = h.zones(0).unwrap().config().zone_capacity_lbas;
    h.submit(0, 0, SimTime::ZERO, zone_write(0, cap)).unwrap();
    h.drain(&mut ssd).unwrap();
    let erases = ssd.report().counters.erases;
    h.submit(
        0,
        0,
        ssd.now(),
        NvmeCommand::Zone {
            action: ZoneAction::Reset,
            zslba: 0,
            all: false,
        },
    )
    .unwrap();
    let done = h.drain(&mut ssd).unwrap();
    assert_eq!(done[0].status, NvmeStatus::Success);
    assert_eq!(
        ssd.report().counters.erases - erases,
        4,
        "one block per plane of the zone"
    );
    let report = h.zone_report(0);
    assert_eq!((report[0].resets, report[0].state.as_str()), (1, "empty"));
    // the reset waits for its four erases (on two dies: at least one erase time)
    let erase_us = ssd.nand().timing().erase.as_ps() as f64 / 1e6;
    assert!(report[0].reset_latency_us >= erase_us, "{report:?}");
    assert_eq!(
        done[0].latency().as_ps() / 1_000_000,
        report[0].reset_latency_us as u64
    );
    // the zone takes writes from its start again
    h.submit(0, 0, ssd.now(), zone_write(0, 8)).unwrap();
    assert_eq!(h.drain(&mut ssd).unwrap()[0].status, NvmeStatus::Success);
    ssd.check_consistency().unwrap();
}

#[test]
fn zone_appends_at_queue_depth_above_one_get_consecutive_lbas_in_fetch_order() {
    let mut ssd = zoned(0, 8);
    let config = NvmeConfig {
        namespaces: vec![NamespaceConfig::zoned(0)],
        queue_weights: vec![1, 1, 1],
        arbitration: Arbitration::RoundRobin,
    };
    let mut h = NvmeHost::new(&config, &mut ssd).unwrap();
    let zslba = 3 * 64;
    let mut sizes = HashMap::new();
    for i in 0..12u64 {
        let lbas = 1 + i % 2;
        let cid = h
            .submit(
                (i % 3) as u16,
                0,
                SimTime::ZERO,
                NvmeCommand::Append { zslba, lbas },
            )
            .unwrap();
        sizes.insert(cid, lbas);
    }
    let done = h.drain(&mut ssd).unwrap();
    assert!(done.iter().all(|c| c.status == NvmeStatus::Success));
    // eight in flight at once: the last of the first eight completes before the ninth starts
    assert!(done[7].completed > done[0].completed);
    // the granted ranges tile the zone from its start without overlap
    let mut ranges: Vec<(u64, u64)> = done
        .iter()
        .map(|c| (c.lba.unwrap(), sizes[&c.cid]))
        .collect();
    ranges.sort_unstable();
    let mut next = zslba;
    for (lba, lbas) in ranges {
        assert_eq!(lba, next);
        next += lbas;
    }
    assert_eq!(h.zones(0).unwrap().write_pointer(3), next);
    // round robin over three queues fetches cid 0, 1, 2, 3, ... in order: LBAs rise with cid
    let mut by_cid: Vec<_> = done.iter().map(|c| (c.cid, c.lba.unwrap())).collect();
    by_cid.sort_unstable();
    assert!(by_cid.windows(2).all(|w| w[0].1 < w[1].1));
    ssd.check_consistency().unwrap();
}

#[test]
fn zone_errors_are_statuses_counted_and_never_reach_the_device() {
    let mut ssd = zoned(2, 4);
    let mut ns = NamespaceConfig::zoned(0);
    ns.max_open_zones = 2;
    ns.max_active_zones = 2;
    let mut h = host(&mut ssd, vec![ns]);
    let open = |zslba| NvmeCommand::Zone {
        action: ZoneAction::Open,
        zslba,
        all: false,
    };
    let t = SimTime::ZERO;
    h.submit(0, 0, t, open(0)).unwrap();
    h.submit(0, 0, t, open(32)).unwrap();
    h.submit(0, 0, t, open(64)).unwrap(); // a third open zone: refused
    h.submit(0, 0, t, zone_write(64, 1)).unwrap(); // needs a third active zone: refused
    h.submit(0, 0, t, zone_write(5, 1)).unwrap(); // off the write pointer
    h.submit(0, 0, t, zone_write(0, 40)).unwrap(); // crosses the zone's end
    h.submit(0, 0, t, NvmeCommand::Append { zslba: 7, lbas: 1 })
        .unwrap(); // not a zone start
    h.submit(0, 0, t, zone_write(0, 32)).unwrap(); // fills zone 0
    h.submit(0, 0, t, zone_write(32, 1)).unwrap();
    let done = h.drain(&mut ssd).unwrap();
    let status: Vec<NvmeStatus> = {
        let mut d = done.clone();
        d.sort_by_key(|c| c.cid);
        d.iter().map(|c| c.status).collect()
    };
    use NvmeStatus::*;
    assert_eq!(
        status,
        vec![
            Success,
            Success,
            TooManyActiveZones,
            TooManyActiveZones,
            ZoneInvalidWrite,
            ZoneBoundaryError,
            InvalidField,
            Success,
            Success
        ]
    );
    h.submit(0, 0, ssd.now(), zone_write(32 * 31, 1)).unwrap(); // zone 0 full: 2 active still
    h.submit(0, 0, ssd.now(), zone_write(0, 1)).unwrap(); // write to a full zone
    h.drain(&mut ssd).unwrap();
    assert_eq!(h.statuses().get(ZoneIsFull), 1);
    assert_eq!(h.statuses().refused(), 6);
    assert_eq!(h.namespace_statuses(0).refused(), 6);
    // only the granted writes reached the flash
    assert_eq!(ssd.report().counters.flash_pages_programmed, 32 + 1 + 1);
    ssd.check_consistency().unwrap();
}

#[test]
fn conventional_and_zoned_namespaces_side_by_side() {
    let mut ssd = Ssd::new(device(MappingKind::Page, 4), 3).unwrap();
    let pages = ssd.logical_pages();
    let mut zns = NamespaceConfig::zoned(0);
    zns.zone_size_lbas = 64;
    zns.zone_capacity_lbas = 48;
    let mut h = host(&mut ssd, vec![NamespaceConfig::conventional(200), zns]);
    assert_eq!(h.namespace_lbas(0), 200);
    assert_eq!(h.namespace_lbas(1), (pages - 200) / 64 * 64);
    let mut t = SimTime::ZERO;
    let mut x = 7u64;
    for i in 0..400u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        h.submit(0, 0, t, zone_write((x >> 33) % 199, 1)).unwrap();
        // the zoned namespace: zone i % 4, sequential
        let zone = i % 4;
        if i / 4 < 48 {
            h.submit(0, 1, t, zone_write(zone * 64 + i / 4, 1)).unwrap();
        }
        t += SimTime::from_us(30);
    }
    h.submit(0, 0, t, NvmeCommand::Read { lba: 199, lbas: 2 })
        .unwrap(); // past ns 0
    h.submit(0, 1, t, NvmeCommand::Append { zslba: 0, lbas: 1 })
        .unwrap(); // zone 0 full
    h.submit(0, 0, t, NvmeCommand::Append { zslba: 0, lbas: 1 })
        .unwrap(); // not zoned
    h.drain(&mut ssd).unwrap();
    assert_eq!(h.namespace_statuses(0).get(NvmeStatus::Success), 400);
    assert_eq!(h.namespace_statuses(0).get(NvmeStatus::LbaOutOfRange), 1);
    assert_eq!(h.namespace_statuses(0).get(NvmeStatus::InvalidField), 1);
    assert_eq!(h.namespace_statuses(1).get(NvmeStatus::Success), 4 * 48);
    assert_eq!(h.namespace_statuses(1).get(NvmeStatus::ZoneIsFull), 1);
    // the zoned namespace's LBA 0 is the device's page 200
    assert!(ssd.locate(crate::address::Lpa(200)).is_some());
    assert!(ssd.locate(crate::address::Lpa(200 + 48)).is_none());
    ssd.check_consistency().unwrap();
}

/// The queue each command was fetched from, in fetch order (queue depth 1: fetch order is
/// completion order).
fn fetch_order(arbitration: Arbitration, weights: Vec<u32>) -> Vec<u16> {
    let mut ssd = Ssd::new(device(MappingKind::Page, 1), 3).unwrap();
    let config = NvmeConfig {
        namespaces: vec![NamespaceConfig::conventional(0)],
        queue_weights: weights.clone(),
        arbitration,
    };
    let mut h = NvmeHost::new(&config, &mut ssd).unwrap();
    for q in 0..weights.len() as u16 {
        for i in 0..8u64 {
            h.submit(q, 0, SimTime::ZERO, zone_write(u64::from(q) * 100 + i, 1))
                .unwrap();
        }
    }
    h.drain(&mut ssd).unwrap().iter().map(|c| c.queue).collect()
}

#[test]
fn round_robin_and_weighted_round_robin_arbitration() {
    let rr = fetch_order(Arbitration::RoundRobin, vec![3, 1]);
    assert_eq!(&rr[..6], &[0, 1, 0, 1, 0, 1]);
    let wrr = fetch_order(Arbitration::WeightedRoundRobin, vec![3, 1]);
    assert_eq!(&wrr[..8], &[0, 0, 0, 1, 0, 0, 0, 1]);
    // queue 0 drained: the rest is queue 1's
    assert!(wrr[10..].iter().all(|&q| q == 1));
}

#[test]
fn the_zoned_mapping_refuses_a_non_zoned_workload_with_one_line() {
    let mut ssd = zoned(0, 1);
    let e = ssd
        .run(vec![
            HostRequest::write(0, 512),
            HostRequest::write(512 * 5, 512),
        ])
        .unwrap_err()
        .to_string();
    assert!(e.contains("write pointer") && !e.contains('\n'), "{e}");
}

#[test]
fn bad_geometry_and_handles_are_one_line_errors_naming_the_key() {
    let mut c = device(MappingKind::Zoned, 1);
    c.ftl.mapping.zone_planes = 3;
    let e = Ssd::new(c, 1).unwrap_err().to_string();
    assert!(e.contains("ftl.zone_planes"), "{e}");
    let mut c = device(MappingKind::Page, 1);
    c.ftl.mapping.zone_planes = 2;
    assert!(
        Ssd::new(c, 1)
            .unwrap_err()
            .to_string()
            .contains("ftl.zone_planes")
    );
    let mut c = device(MappingKind::Zoned, 1);
    c.ftl.buffer.pages = 8;
    assert!(
        Ssd::new(c, 1)
            .unwrap_err()
            .to_string()
            .contains("ftl.write_buffer_pages")
    );

    let mut ssd = zoned(2, 1);
    let config = |namespaces| NvmeConfig {
        namespaces,
        queue_weights: vec![1],
        arbitration: Arbitration::RoundRobin,
    };
    let e = NvmeHost::new(&config(vec![NamespaceConfig::conventional(0)]), &mut ssd).unwrap_err();
    assert!(e.to_string().contains("ssd.nvme.namespaces[0].kind"), "{e}");
    let mut fdp = NamespaceConfig::conventional(0);
    fdp.fdp = Some(FdpConfig {
        reclaim_groups: 1,
        handles: vec![RuhType::PersistentlyIsolated; 4],
        reclaim_unit_bytes: 8192,
    });
    let mut page = Ssd::new(device(MappingKind::Page, 1), 1).unwrap();
    let e = NvmeHost::new(&config(vec![fdp]), &mut page).unwrap_err();
    assert!(
        e.to_string().contains("ssd.nvme.namespaces[0].fdp.handles"),
        "{e}"
    );
    let e = NvmeHost::new(
        &config(vec![NamespaceConfig::conventional(1 << 40)]),
        &mut page,
    )
    .unwrap_err();
    assert!(e.to_string().contains("ssd.nvme.namespaces[0].lbas"), "{e}");
}

/// Two tenants on one FDP namespace: a cold one writing its range once, interleaved with a hot
/// one overwriting a small range; `pids` are their placement identifiers. Returns the
/// namespace's FDP statistics, the device report and the page size.
fn two_tenants(pids: (u16, u16)) -> (FdpStats, crate::SsdReport, u64) {
    let mut c = sized(MappingKind::Page, 4, 32);
    c.ftl.mapping.placement_ids = 2;
    c.ftl.gc.threshold_blocks = 3;
    let mut ssd = Ssd::new(c, 5).unwrap();
    let mut ns = NamespaceConfig::conventional(0);
    ns.fdp = Some(FdpConfig {
        reclaim_groups: 1,
        handles: vec![RuhType::PersistentlyIsolated; 2],
        reclaim_unit_bytes: 16 * 512,
    });
    let mut h = host(&mut ssd, vec![ns]);
    let mut t = SimTime::ZERO;
    let mut x = 11u64;
    let mut cold = 0;
    for i in 0..4000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let hot = 300 + (x >> 33) % 100;
        h.submit(
            0,
            0,
            t,
            NvmeCommand::Write {
                lba: hot,
                lbas: 1,
                pid: pids.1,
            },
        )
        .unwrap();
        if i % 4 == 0 && cold < 300 {
            h.submit(
                0,
                0,
                t,
                NvmeCommand::Write {
                    lba: cold,
                    lbas: 1,
                    pid: pids.0,
                },
            )
            .unwrap();
            cold += 1;
        }
        t += SimTime::from_us(40);
    }
    let done = h.drain(&mut ssd).unwrap();
    assert!(done.iter().all(|c| c.status == NvmeStatus::Success));
    ssd.check_consistency().unwrap();
    (
        h.fdp_stats(0, &ssd).unwrap(),
        ssd.report(),
        u64::from(ssd.page_size_bytes()),
    )
}

#[test]
fn fdp_statistics_add_up_and_separate_handles_shield_a_cold_tenant() {
    let (shared, shared_report, page) = two_tenants((0, 0));
    let (isolated, isolated_report, _) = two_tenants((0, 1));
    for (s, r) in [(&shared, &shared_report), (&isolated, &isolated_report)] {
        assert_eq!(s.host_bytes_written, 4300 * page);
        // media bytes = host bytes + GC bytes
        assert_eq!(
            s.media_bytes_written,
            s.host_bytes_written + r.counters.gc_page_copies * page
        );
        assert_eq!(s.media_bytes_erased, r.counters.erases * 16 * page);
    }
    assert!(shared_report.counters.gc_page_copies > 0);
    // sharing reclaim units, GC keeps copying the cold tenant's pages out of the hot blocks
    assert!(shared.media_bytes_written > isolated.media_bytes_written);
    // isolated: the cold handle's data is never moved
    let cold = &isolated_report.placement[0];
    assert_eq!(cold.flash_pages_programmed, cold.host_pages_written);
    assert!(
        shared_report.waf > isolated_report.waf,
        "{} {}",
        shared_report.waf,
        isolated_report.waf
    );
}

#[test]
fn fdp_placement_identifiers_and_handle_updates() {
    let mut c = sized(MappingKind::Page, 1, 32);
    c.ftl.mapping.placement_ids = 3;
    c.ftl.gc.threshold_blocks = 4;
    c.ftl.op_fraction = 0.5;
    let mut ssd = Ssd::new(c, 5).unwrap();
    let mut ns = NamespaceConfig::conventional(0);
    ns.fdp = Some(FdpConfig {
        reclaim_groups: 1,
        handles: vec![RuhType::InitiallyIsolated; 2],
        reclaim_unit_bytes: 16 * 512,
    });
    let mut h = host(&mut ssd, vec![ns]);
    h.submit(
        0,
        0,
        SimTime::ZERO,
        NvmeCommand::Write {
            lba: 0,
            lbas: 4,
            pid: 1,
        },
    )
    .unwrap();
    h.submit(
        0,
        0,
        SimTime::ZERO,
        NvmeCommand::Write {
            lba: 9,
            lbas: 1,
            pid: 2,
        },
    )
    .unwrap();
    let done = h.drain(&mut ssd).unwrap();
    assert_eq!(done[1].status, NvmeStatus::InvalidField, "no handle 2");
    // handle 1's writes went to stream 1
    assert_eq!(ssd.report().placement[1].host_pages_written, 4);
    assert_eq!(h.update_handle(0, 1, ssd.now()), NvmeStatus::Success);
    let (events, _) = h.fdp(0).unwrap().events();
    assert_eq!(events.count(), 1, "reclaim unit not fully written");
    assert_eq!(h.fdp_stats(0, &ssd).unwrap().media_bytes_written, 16 * 512);
}

/// The LBAs a ZRWA flush commits reach the media as one write at the zone's write pointer
/// (the zoned mapping takes nothing else), and writes that stay in the window program nothing.
#[test]
fn zrwa_writes_reach_flash_when_the_window_is_flushed() {
    let mut ssd = zoned(2, 4);
    let mut ns = NamespaceConfig::zoned(0);
    ns.zrwa = Some(crate::host::zns::ZrwaConfig {
        size_lbas: 8,
        flush_granularity_lbas: 4,
        resources: 0,
    });
    let mut h = host(&mut ssd, vec![ns]);
    let zone = |action, zslba| NvmeCommand::Zone {
        action,
        zslba,
        all: false,
    };
    let run = |h: &mut NvmeHost, ssd: &mut Ssd, c: NvmeCommand| {
        h.submit(0, 0, ssd.now(), c).unwrap();
        let done = h.drain(ssd).unwrap();
        (done[0].status, ssd.report().counters.flash_pages_programmed)
    };
    let (s, _) = run(&mut h, &mut ssd, zone(ZoneAction::OpenZrwa, 0));
    assert_eq!(s, NvmeStatus::Success);
    // out of order and overwriting, inside the window [0, 8): nothing programmed
    for (lba, lbas) in [(5, 3), (0, 2), (1, 4), (2, 1)] {
        assert_eq!(
            run(&mut h, &mut ssd, zone_write(lba, lbas)),
            (NvmeStatus::Success, 0)
        );
    }
    assert!(ssd.locate(crate::address::Lpa(0)).is_none());
    // a write to 8..10 flushes one unit implicitly: LBAs 0..4 programmed
    assert_eq!(
        run(&mut h, &mut ssd, zone_write(8, 2)),
        (NvmeStatus::Success, 4)
    );
    // the explicit flush of 4..12 programs 8 more
    assert_eq!(
        run(&mut h, &mut ssd, zone(ZoneAction::FlushZrwa, 11)),
        (NvmeStatus::Success, 12)
    );
    for lpa in 0..12 {
        assert!(ssd.locate(crate::address::Lpa(lpa)).is_some(), "lba {lpa}");
    }
    assert_eq!(h.zones(0).unwrap().write_pointer(0), 12);
    // Zone Append to it: Invalid Zone Operation, never reaching the device
    let (s, programmed) = run(&mut h, &mut ssd, NvmeCommand::Append { zslba: 0, lbas: 1 });
    assert_eq!((s, programmed), (NvmeStatus::InvalidZoneOperation, 12));
    ssd.check_consistency().unwrap();
}

#[test]
fn zrwa_keys_are_one_line_errors_naming_the_key() {
    let zrwa = |size_lbas, flush_granularity_lbas| {
        Some(crate::host::zns::ZrwaConfig {
            size_lbas,
            flush_granularity_lbas,
            resources: 0,
        })
    };
    let error = |ns: NamespaceConfig, mapping| {
        let mut ssd = Ssd::new(device(mapping, 1), 1).unwrap();
        let config = NvmeConfig {
            namespaces: vec![ns],
            queue_weights: vec![1],
            arbitration: Arbitration::RoundRobin,
        };
        NvmeHost::new(&config, &mut ssd).unwrap_err().to_string()
    };
    let mut zoned = NamespaceConfig::zoned(0);
    zoned.zrwa = zrwa(6, 4);
    let e = error(zoned, MappingKind::Zoned);
    assert!(e.contains("ssd.nvme.namespaces[0].zrwa.size_lbas"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let mut conventional = NamespaceConfig::conventional(0);
    conventional.zrwa = zrwa(8, 4);
    let e = error(conventional, MappingKind::Page);
    assert!(e.contains("ssd.nvme.namespaces[0].kind"), "{e}");
}
