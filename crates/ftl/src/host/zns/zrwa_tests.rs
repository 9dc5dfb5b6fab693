//! The ZRWA rules (`zrwa.rs`), one test per rule: allocation, window writes and overwrites,
//! implicit and explicit flushes, the statuses, the resources, and the config's range checks.

use super::*;

const ZONE: u64 = 100;

/// A namespace of `count` zones of capacity 80 with a ZRWA of `size` LBAs flushed in units
/// of `unit`, `resources` ZRWA resources (0: the default).
fn zrwa_zones(count: u32, size: u64, unit: u64, resources: u32) -> Zones {
    let mut config = ZonedConfig::new(count, ZONE);
    config.zone_capacity_lbas = 80;
    config.zrwa = Some(ZrwaConfig {
        size_lbas: size,
        flush_granularity_lbas: unit,
        resources,
    });
    Zones::new(config).expect("valid geometry")
}

fn open_zrwa(z: &mut Zones, zone: u32) -> Result<ZoneChange, NvmeStatus> {
    z.manage(ZoneAction::OpenZrwa, u64::from(zone) * ZONE)
}

#[test]
fn a_zone_with_a_zrwa_takes_writes_anywhere_in_its_window_and_overwrites() {
    let mut z = zrwa_zones(4, 16, 4, 0);
    assert_eq!(
        open_zrwa(&mut z, 0).unwrap().to,
        ZoneState::ExplicitlyOpened
    );
    assert!(z.has_zrwa(0));
    // out of order, overwriting, inside [wp, wp + 16): the write pointer stays at 0
    for (lba, lbas) in [(8, 4), (0, 2), (8, 2), (15, 1), (3, 5)] {
        let g = z.write(lba, lbas).unwrap();
        assert_eq!(g.zrwa_commit, Some((0, 0)), "write at {lba}");
        assert_eq!(g.first_lba, lba);
    }
    assert_eq!(z.write_pointer(0), 0);
    z.check_invariants();
    // without a ZRWA, the next zone takes writes at its write pointer only
    assert_eq!(z.write(ZONE + 3, 1), Err(NvmeStatus::ZoneInvalidWrite));
}

#[test]
fn a_write_into_the_implicit_flush_range_advances_the_pointer_by_whole_units() {
    let mut z = zrwa_zones(4, 16, 4, 0);
    open_zrwa(&mut z, 0).unwrap();
    // LBAs 16..18 are 3 past the window [0, 16): one unit of 4 commits LBAs 0..4
    let g = z.write(16, 3).unwrap();
    assert_eq!(g.zrwa_commit, Some((0, 4)));
    assert_eq!(z.write_pointer(0), 4);
    // up to the end of the implicit flush range (wp + 32 = 36): 16 more, 4 units
    let g = z.write(30, 6).unwrap();
    assert_eq!(g.zrwa_commit, Some((4, 16)));
    assert_eq!(z.write_pointer(0), 20);
    // below the pointer, or past the implicit flush range: Zone Invalid Write
    assert_eq!(z.write(19, 1), Err(NvmeStatus::ZoneInvalidWrite));
    assert_eq!(z.write(40, 13), Err(NvmeStatus::ZoneInvalidWrite));
    assert_eq!(z.write_pointer(0), 20, "a refused write changes nothing");
    z.check_invariants();
}

#[test]
fn an_explicit_flush_commits_whole_units_from_the_pointer() {
    let mut z = zrwa_zones(4, 16, 4, 0);
    open_zrwa(&mut z, 0).unwrap();
    z.write(0, 12).unwrap();
    let flush = |z: &mut Zones, lba| z.manage(ZoneAction::FlushZrwa, lba);
    // the command's LBA is the last one committed: 8 LBAs, two units
    let c = flush(&mut z, 7).unwrap();
    assert_eq!((c.written_lbas, c.committed_lbas), (0, 8));
    assert_eq!(z.write_pointer(0), 8);
    // not a whole unit, below the pointer, or past the window: Invalid Field
    assert_eq!(flush(&mut z, 9), Err(NvmeStatus::InvalidField));
    assert_eq!(flush(&mut z, 7), Err(NvmeStatus::InvalidField));
    assert_eq!(flush(&mut z, 8 + 16), Err(NvmeStatus::InvalidField));
    // a zone without a ZRWA: Invalid Zone Operation
    z.write(ZONE, 4).unwrap();
    assert_eq!(
        flush(&mut z, ZONE + 3),
        Err(NvmeStatus::InvalidZoneOperation)
    );
    z.check_invariants();
}

#[test]
fn flushing_to_the_capacity_fills_the_zone_and_frees_its_zrwa() {
    let mut z = zrwa_zones(4, 16, 4, 1);
    open_zrwa(&mut z, 0).unwrap();
    assert_eq!(z.zrwa_resources_held(), 1);
    for first in (0..64).step_by(16) {
        z.write(first + 16, 16).unwrap();
    }
    assert_eq!(z.write_pointer(0), 64);
    z.write(64, 16).unwrap();
    // the window [64, 80) ends at the capacity: the explicit flush of it fills the zone
    let c = z.manage(ZoneAction::FlushZrwa, 79).unwrap();
    assert_eq!((c.committed_lbas, c.to), (16, ZoneState::Full));
    assert!(!z.has_zrwa(0));
    assert_eq!(z.zrwa_resources_held(), 0);
    assert_eq!(z.write(79, 1), Err(NvmeStatus::ZoneIsFull));
    // in the implicit flush range but past the capacity: Zone Boundary Error
    open_zrwa(&mut z, 1).unwrap();
    for first in (0..64).step_by(16) {
        z.write(ZONE + first + 16, 16).unwrap();
    }
    assert_eq!(z.write(ZONE + 78, 4), Err(NvmeStatus::ZoneBoundaryError));
    assert_eq!(z.write_pointer(1), ZONE + 64);
    z.check_invariants();
}

#[test]
fn resources_allocation_states_appends_and_select_all() {
    let mut z = zrwa_zones(4, 16, 4, 2);
    open_zrwa(&mut z, 0).unwrap();
    open_zrwa(&mut z, 1).unwrap();
    assert_eq!(
        open_zrwa(&mut z, 2),
        Err(NvmeStatus::ZrwaResourcesUnavailable)
    );
    assert_eq!(z.state(2), ZoneState::Empty, "refused: nothing changed");
    // a Reset (or a Finish) gives the resource back
    z.manage(ZoneAction::Reset, 0).unwrap();
    assert!(!z.has_zrwa(0));
    open_zrwa(&mut z, 2).unwrap();
    z.manage(ZoneAction::Finish, ZONE).unwrap();
    assert_eq!(z.zrwa_resources_held(), 1);
    // from Empty only
    z.write(3 * ZONE, 4).unwrap();
    assert_eq!(
        open_zrwa(&mut z, 3),
        Err(NvmeStatus::InvalidZoneStateTransition)
    );
    // Zone Append to a zone with a ZRWA
    assert_eq!(z.append(2 * ZONE, 1), Err(NvmeStatus::InvalidZoneOperation));
    // a Close keeps the ZRWA (the zone stays active), a write reopens it
    z.manage(ZoneAction::Close, 2 * ZONE).unwrap();
    assert_eq!(z.state(2), ZoneState::Closed);
    z.write(2 * ZONE + 5, 1).unwrap();
    assert_eq!(z.state(2), ZoneState::ImplicitlyOpened);
    // not with Select All
    assert_eq!(
        z.manage_all(ZoneAction::OpenZrwa),
        Err(NvmeStatus::InvalidField)
    );
    // a namespace without a ZRWA
    let mut plain = Zones::new(ZonedConfig::new(2, ZONE)).unwrap();
    assert_eq!(
        plain.manage(ZoneAction::OpenZrwa, 0),
        Err(NvmeStatus::InvalidField)
    );
    z.check_invariants();
}

#[test]
fn the_default_resources_are_the_active_limit_or_every_zone() {
    let mut z = zrwa_zones(3, 16, 4, 0);
    for zone in 0..3 {
        open_zrwa(&mut z, zone).unwrap();
    }
    let mut config = ZonedConfig::new(4, ZONE);
    (config.max_open_zones, config.max_active_zones) = (2, 2);
    config.zrwa = Some(ZrwaConfig {
        size_lbas: 8,
        flush_granularity_lbas: 8,
        resources: 0,
    });
    let mut z = Zones::new(config).unwrap();
    open_zrwa(&mut z, 0).unwrap();
    open_zrwa(&mut z, 1).unwrap();
    z.manage(ZoneAction::Close, ZONE).unwrap();
    assert_eq!(
        open_zrwa(&mut z, 2),
        Err(NvmeStatus::ZrwaResourcesUnavailable)
    );
}

#[test]
fn zrwa_keys_out_of_range_name_the_key() {
    let check = |size, unit, resources| {
        let mut config = ZonedConfig::new(4, ZONE);
        config.zone_capacity_lbas = 80;
        config.zrwa = Some(ZrwaConfig {
            size_lbas: size,
            flush_granularity_lbas: unit,
            resources,
        });
        config.validate().err().map(|e| e.key)
    };
    assert_eq!(check(16, 4, 0), None);
    assert_eq!(check(80, 80, 4), None);
    assert_eq!(check(16, 0, 0), Some("zrwa.flush_granularity_lbas"));
    assert_eq!(check(16, 81, 0), Some("zrwa.flush_granularity_lbas"));
    assert_eq!(check(0, 4, 0), Some("zrwa.size_lbas"));
    assert_eq!(check(18, 4, 0), Some("zrwa.size_lbas"));
    assert_eq!(check(84, 4, 0), Some("zrwa.size_lbas"));
    assert_eq!(check(16, 4, 5), Some("zrwa.resources"));
}
