//! The zone state machine against the ZNS specification's, transition by transition, and the
//! resource limits, write pointer rules and Zone Append ordering.

use super::*;
use proptest::prelude::*;

const ZONE: u64 = 100;

fn zones(count: u32, capacity: u64, max_open: u32, max_active: u32) -> Zones {
    let mut config = ZonedConfig::new(count, ZONE);
    config.zone_capacity_lbas = capacity;
    config.max_open_zones = max_open;
    config.max_active_zones = max_active;
    Zones::new(config).expect("valid geometry")
}

/// Zone 0 of a fresh 4-zone namespace brought into `state` by host commands (or, for ZSRO and
/// ZSO, by the device).
fn zone_in(state: ZoneState) -> Zones {
    let mut z = zones(4, 80, 0, 0);
    match state {
        ZoneState::Empty => {}
        ZoneState::ImplicitlyOpened => {
            z.write(0, 10).unwrap();
        }
        ZoneState::ExplicitlyOpened => {
            z.manage(ZoneAction::Open, 0).unwrap();
        }
        ZoneState::Closed => {
            z.write(0, 10).unwrap();
            z.manage(ZoneAction::Close, 0).unwrap();
        }
        ZoneState::Full => {
            z.write(0, 80).unwrap();
        }
        ZoneState::ReadOnly | ZoneState::Offline => {
            z.write(0, 10).unwrap();
            z.fail_zone(0, state);
        }
    }
    assert_eq!(z.state(0), state);
    z.check_invariants();
    z
}

use NvmeStatus as S;
use ZoneState::*;

/// The specification's zone state machine (ZNS 1.1 §2.1.1, Figure 6, and the Zone Management
/// Send actions of §3.4.3), written out as a table: from each state, the outcome of each
/// action on zone 0.
#[test]
fn every_transition_follows_the_state_machine() {
    type Outcome = Result<ZoneState, NvmeStatus>;
    let invalid = Err(S::InvalidZoneStateTransition);
    let table: [(ZoneState, [Outcome; 5]); 7] = [
        //           Close,          Finish,     Open,                    Reset,       Offline
        (
            Empty,
            [invalid, Ok(Full), Ok(ExplicitlyOpened), Ok(Empty), invalid],
        ),
        (
            ImplicitlyOpened,
            [
                Ok(Closed),
                Ok(Full),
                Ok(ExplicitlyOpened),
                Ok(Empty),
                invalid,
            ],
        ),
        // opened explicitly with nothing written: a close empties it again
        (
            ExplicitlyOpened,
            [
                Ok(Empty),
                Ok(Full),
                Ok(ExplicitlyOpened),
                Ok(Empty),
                invalid,
            ],
        ),
        (
            Closed,
            [
                Ok(Closed),
                Ok(Full),
                Ok(ExplicitlyOpened),
                Ok(Empty),
                invalid,
            ],
        ),
        (Full, [invalid, Ok(Full), invalid, Ok(Empty), invalid]),
        (ReadOnly, [invalid, invalid, invalid, invalid, Ok(Offline)]),
        (Offline, [invalid, invalid, invalid, invalid, Ok(Offline)]),
    ];
    let actions = [
        ZoneAction::Close,
        ZoneAction::Finish,
        ZoneAction::Open,
        ZoneAction::Reset,
        ZoneAction::Offline,
    ];
    for (from, outcomes) in table {
        for (action, expected) in actions.iter().zip(outcomes) {
            let mut z = zone_in(from);
            let got = z.manage(*action, 0).map(|change| change.to);
            assert_eq!(got, expected, "{action:?} from {from:?}");
            // a refused action leaves the zone as it was
            let now = expected.unwrap_or(from);
            assert_eq!(z.state(0), now, "{action:?} from {from:?}");
            z.check_invariants();
        }
    }
}

#[test]
fn writes_by_state() {
    let cases = [
        (Empty, Ok(ImplicitlyOpened)),
        (ImplicitlyOpened, Ok(ImplicitlyOpened)),
        (ExplicitlyOpened, Ok(ExplicitlyOpened)),
        (Closed, Ok(ImplicitlyOpened)),
        (Full, Err(S::ZoneIsFull)),
        (ReadOnly, Err(S::ZoneIsReadOnly)),
        (Offline, Err(S::ZoneIsOffline)),
    ];
    for (from, expected) in cases {
        let mut z = zone_in(from);
        let wp = z.write_pointer(0);
        let got = z.write(wp, 1).map(|_| z.state(0));
        assert_eq!(got, expected, "write to a zone in {from:?}");
        z.check_invariants();
        // reads fail only offline
        let read = z.read(0, 1);
        assert_eq!(read.is_err(), from == Offline, "read from {from:?}");
    }
}

#[test]
fn writes_start_at_the_write_pointer_and_stop_at_capacity() {
    let mut z = zones(4, 80, 0, 0);
    assert_eq!(z.write(1, 1), Err(S::ZoneInvalidWrite));
    let g = z.write(0, 30).unwrap();
    assert_eq!(
        (g.zone, g.first_lba, g.lbas, g.filled_zone),
        (0, 0, 30, false)
    );
    assert_eq!(z.write_pointer(0), 30);
    assert_eq!(
        z.write(20, 1),
        Err(S::ZoneInvalidWrite),
        "behind the pointer"
    );
    assert_eq!(
        z.write(31, 1),
        Err(S::ZoneInvalidWrite),
        "ahead of the pointer"
    );
    assert_eq!(
        z.write(30, 51),
        Err(S::ZoneBoundaryError),
        "past the capacity"
    );
    let g = z.write(30, 50).unwrap();
    assert!(g.filled_zone);
    assert_eq!(z.state(0), Full);
    assert_eq!(z.open_zones(), 0);
    assert_eq!(z.active_zones(), 0);
    // the LBAs between capacity and zone size are never writable but are readable
    assert_eq!(z.read(80, 20), Ok(()));
    assert_eq!(z.write(100, 1).map(|g| g.zone), Ok(1), "next zone's start");
    // the report puts a full zone's pointer at its capacity
    assert_eq!(z.descriptor(0).write_pointer_lba, 80);
    // out of the namespace, zero-length and cross-zone commands
    assert_eq!(z.write(400, 1), Err(S::LbaOutOfRange));
    assert_eq!(z.read(399, 2), Err(S::LbaOutOfRange));
    assert_eq!(z.write(101, 0), Err(S::InvalidField));
    assert_eq!(z.read(90, 20), Err(S::ZoneBoundaryError));
    assert_eq!(z.counters().lbas_written, 81);
    assert_eq!(z.counters().filled, 1);
    z.check_invariants();
}

#[test]
fn cross_zone_reads_when_allowed() {
    let mut config = ZonedConfig::new(3, ZONE);
    config.cross_zone_read = true;
    let mut z = Zones::new(config).unwrap();
    assert_eq!(z.read(90, 120), Ok(()));
    z.fail_zone(2, Offline);
    assert_eq!(
        z.read(90, 120),
        Err(S::ZoneIsOffline),
        "the range reaches zone 2"
    );
    assert_eq!(z.read(90, 20), Ok(()));
}

/// Appends queued together (QD > 1) are granted in submission order: each gets the pointer
/// the previous one left, and the host learns its LBA from the grant.
#[test]
fn appends_return_consecutive_lbas_in_submission_order() {
    let mut z = zones(2, 100, 0, 0);
    let sizes = [3u64, 1, 8, 4, 16];
    let mut expected = 100;
    for size in sizes {
        let g = z.append(100, size).unwrap();
        assert_eq!(g.first_lba, expected);
        assert_eq!(g.zone, 1);
        expected += size;
    }
    assert_eq!(z.write_pointer(1), 100 + sizes.iter().sum::<u64>());
    assert_eq!(z.counters().appends, sizes.len() as u64);
    // an append must name the zone's start, and fit the zone
    assert_eq!(z.append(101, 1), Err(S::InvalidField));
    assert_eq!(z.append(100, 69), Err(S::ZoneBoundaryError));
    assert_eq!(z.append(100, 0), Err(S::InvalidField));
    assert_eq!(z.append(100, 68).map(|g| g.filled_zone), Ok(true));
    assert_eq!(z.append(100, 1), Err(S::ZoneIsFull));
}

#[test]
fn append_size_limit() {
    let mut config = ZonedConfig::new(2, ZONE);
    config.zone_append_max_lbas = 8;
    let mut z = Zones::new(config).unwrap();
    assert_eq!(z.append(0, 9), Err(S::InvalidField));
    assert!(z.append(0, 8).is_ok());
    // plain writes are not bound by the append limit
    assert!(z.write(8, 50).is_ok());
}

#[test]
fn open_limit_refuses_without_auto_close() {
    let mut z = zones(6, 100, 2, 0);
    let mut config = z.config().clone();
    config.auto_close = false;
    z = Zones::new(config).unwrap();
    z.write(0, 1).unwrap();
    z.write(100, 1).unwrap();
    assert_eq!(z.write(200, 1), Err(S::TooManyOpenZones));
    assert_eq!(z.manage(ZoneAction::Open, 200), Err(S::TooManyOpenZones));
    assert_eq!(z.state(2), Empty);
    assert_eq!(z.counters().statuses.get(S::TooManyOpenZones), 2);
    // closing one frees a resource
    z.manage(ZoneAction::Close, 0).unwrap();
    assert!(z.write(200, 1).is_ok());
    z.check_invariants();
}

#[test]
fn auto_close_takes_the_oldest_implicitly_opened_zone() {
    let mut z = zones(6, 100, 2, 0);
    z.write(100, 1).unwrap(); // zone 1 opened first
    z.write(0, 1).unwrap(); // then zone 0
    let g = z.write(200, 1).unwrap();
    assert_eq!(g.closed_zone, Some(1));
    assert_eq!(z.state(1), Closed);
    assert_eq!(z.state(0), ImplicitlyOpened);
    assert_eq!(z.counters().auto_closes, 1);
    // explicitly opened zones are never closed by the device
    let mut z = zones(6, 100, 2, 0);
    z.manage(ZoneAction::Open, 0).unwrap();
    z.manage(ZoneAction::Open, 100).unwrap();
    assert_eq!(z.write(200, 1), Err(S::TooManyOpenZones));
    // an explicit open also makes room by closing an implicitly opened zone
    let mut z = zones(6, 100, 2, 0);
    z.write(0, 1).unwrap();
    z.manage(ZoneAction::Open, 100).unwrap();
    let change = z.manage(ZoneAction::Open, 200).unwrap();
    assert_eq!(change.to, ExplicitlyOpened);
    assert_eq!(z.state(0), Closed);
    z.check_invariants();
}

#[test]
fn active_limit_counts_closed_zones() {
    let mut z = zones(6, 100, 2, 3);
    z.write(0, 1).unwrap();
    z.write(100, 1).unwrap();
    z.write(200, 1).unwrap(); // closes zone 0: 2 open, 3 active
    assert_eq!(z.active_zones(), 3);
    assert_eq!(z.write(300, 1), Err(S::TooManyActiveZones));
    assert_eq!(z.manage(ZoneAction::Open, 300), Err(S::TooManyActiveZones));
    // reopening a closed zone needs no new active resource
    assert!(z.write(1, 1).is_ok());
    // finishing or resetting one frees its resources
    z.manage(ZoneAction::Finish, 100).unwrap();
    assert!(z.write(300, 1).is_ok());
    assert_eq!(z.state_counts(), [2, 2, 0, 1, 0, 1, 0]);
    z.check_invariants();
}

#[test]
fn select_all_applies_to_the_states_it_selects() {
    let mut z = zones(5, 100, 0, 0);
    z.write(0, 5).unwrap();
    z.write(100, 100).unwrap(); // full
    z.manage(ZoneAction::Open, 200).unwrap();
    z.write(300, 5).unwrap();
    z.manage(ZoneAction::Close, 300).unwrap();
    let closed = z.manage_all(ZoneAction::Close).unwrap();
    // zone 0 closes; zone 2 (opened, unwritten) goes back to empty
    let moved: Vec<(u32, ZoneState)> = closed.iter().map(|c| (c.zone, c.to)).collect();
    assert_eq!(moved, vec![(0, Closed), (2, Empty)]);
    let reset = z.manage_all(ZoneAction::Reset).unwrap();
    let moved: Vec<(u32, u64)> = reset.iter().map(|c| (c.zone, c.written_lbas)).collect();
    assert_eq!(moved, vec![(0, 5), (1, 100), (3, 5)]);
    assert_eq!(z.counters().resets, 3);
    assert_eq!(z.resets_of(1), 1);
    assert_eq!(z.lbas_written_to(1), 100);
    assert!((0..5).all(|zone| z.state(zone) == Empty));
    // Open all stops at the first refusal, keeping what it opened
    let mut z = zones(4, 100, 2, 0);
    let mut config = z.config().clone();
    config.auto_close = false;
    z = Zones::new(config).unwrap();
    for zone in 0..3 {
        z.write(zone * 100, 1).unwrap();
        z.manage(ZoneAction::Close, zone * 100).unwrap();
    }
    assert_eq!(z.manage_all(ZoneAction::Open), Err(S::TooManyOpenZones));
    assert_eq!(
        (z.state(0), z.state(1), z.state(2)),
        (ExplicitlyOpened, ExplicitlyOpened, Closed)
    );
    z.check_invariants();
}

#[test]
fn report_zones_filters_by_state() {
    let mut z = zones(4, 60, 0, 0);
    z.write(0, 10).unwrap();
    z.write(100, 60).unwrap();
    let all = z.report(ReportFilter::All, 0, usize::MAX);
    assert_eq!(all.len(), 4);
    assert_eq!(
        all[0],
        ZoneDescriptor {
            zone: 0,
            state: ImplicitlyOpened,
            start_lba: 0,
            capacity_lbas: 60,
            write_pointer_lba: 10
        }
    );
    let empty = z.report(ReportFilter::State(Empty), 0, usize::MAX);
    assert_eq!(empty.iter().map(|d| d.zone).collect::<Vec<_>>(), vec![2, 3]);
    assert_eq!(z.report(ReportFilter::State(Empty), 3, 10).len(), 1);
    assert_eq!(z.report(ReportFilter::All, 0, 2).len(), 2);
    assert_eq!(
        z.report(ReportFilter::State(Full), 0, 9)[0].write_pointer_lba,
        160
    );
}

#[test]
fn management_names_a_zone_by_its_start() {
    let mut z = zones(2, 100, 0, 0);
    assert_eq!(z.manage(ZoneAction::Open, 5), Err(S::InvalidField));
    assert_eq!(z.manage(ZoneAction::Open, 200), Err(S::LbaOutOfRange));
    assert_eq!(z.counters().statuses.refused(), 2);
}

#[test]
fn bad_geometry_names_the_key() {
    let key = |f: fn(&mut ZonedConfig)| {
        let mut c = ZonedConfig::new(8, 64);
        c.max_active_zones = 4;
        c.max_open_zones = 4;
        f(&mut c);
        c.validate().err().map(|e| e.key)
    };
    assert_eq!(key(|_| {}), None);
    assert_eq!(key(|c| c.zone_count = 0), Some("zone_count"));
    assert_eq!(key(|c| c.zone_size_lbas = 0), Some("zone_size_lbas"));
    assert_eq!(
        key(|c| c.zone_capacity_lbas = 65),
        Some("zone_capacity_lbas")
    );
    assert_eq!(
        key(|c| c.zone_capacity_lbas = 0),
        Some("zone_capacity_lbas")
    );
    assert_eq!(key(|c| c.max_open_zones = 5), Some("max_open_zones"));
    assert_eq!(key(|c| c.max_open_zones = 0), Some("max_open_zones"));
    assert_eq!(key(|c| c.max_active_zones = 9), Some("max_active_zones"));
    assert_eq!(
        key(|c| c.zone_append_max_lbas = 65),
        Some("zone_append_max_lbas")
    );
    assert_eq!(
        key(|c| c.zone_size_lbas = u64::MAX / 2),
        Some("zone_size_lbas")
    );
    let e = ZonedConfig::new(8, 64).validate();
    assert!(e.is_ok());
    let mut c = ZonedConfig::new(8, 64);
    c.zone_capacity_lbas = 65;
    assert_eq!(
        c.validate().unwrap_err().to_string(),
        "zone_capacity_lbas: 65 LBAs (use 1 to the zone size, 64)"
    );
}

#[derive(Clone, Debug)]
enum Command {
    Write {
        zone: u32,
        lbas: u64,
        at_pointer: bool,
    },
    Append {
        zone: u32,
        lbas: u64,
    },
    Manage {
        zone: u32,
        action: ZoneAction,
    },
    ManageAll {
        action: ZoneAction,
    },
    Fail {
        zone: u32,
        offline: bool,
    },
}

fn command() -> impl Strategy<Value = Command> {
    let action = prop_oneof![
        Just(ZoneAction::Close),
        Just(ZoneAction::Finish),
        Just(ZoneAction::Open),
        Just(ZoneAction::Reset),
        Just(ZoneAction::Offline),
    ];
    prop_oneof![
        8 => (0u32..6, 1u64..40, prop::bool::weighted(0.9))
            .prop_map(|(zone, lbas, at_pointer)| Command::Write { zone, lbas, at_pointer }),
        4 => (0u32..6, 1u64..40).prop_map(|(zone, lbas)| Command::Append { zone, lbas }),
        4 => (0u32..6, action.clone()).prop_map(|(zone, action)| Command::Manage { zone, action }),
        1 => action.prop_map(|action| Command::ManageAll { action }),
        1 => (0u32..6, any::<bool>()).prop_map(|(zone, offline)| Command::Fail { zone, offline }),
    ]
}

proptest! {
    /// Whatever the host sends, the resource counts match the zones' states, the limits hold,
    /// write pointers move only by granted writes, and every command is answered once.
    #[test]
    fn any_command_sequence_keeps_the_invariants(
        commands in prop::collection::vec(command(), 1..200),
        max_open in 0u32..4,
        extra_active in 0u32..3,
        auto_close in any::<bool>(),
    ) {
        let mut config = ZonedConfig::new(6, ZONE);
        config.zone_capacity_lbas = 90;
        config.max_open_zones = max_open;
        config.max_active_zones = if max_open == 0 { 0 } else { (max_open + extra_active).min(6) };
        config.auto_close = auto_close;
        let mut z = Zones::new(config).unwrap();
        let mut granted = 0u64;
        let mut answered = 0u64;
        for c in commands {
            match c {
                Command::Write { zone, lbas, at_pointer } => {
                    let wp = z.write_pointer(zone);
                    let before = z.state(zone);
                    let result = z.write(if at_pointer { wp } else { wp + 1 }, lbas);
                    answered += 1;
                    if let Ok(g) = result {
                        prop_assert!(at_pointer);
                        prop_assert_eq!(g.first_lba, wp);
                        granted += g.lbas;
                        prop_assert_eq!(z.write_pointer(zone), wp + lbas);
                    } else {
                        prop_assert_eq!(z.write_pointer(zone), wp);
                        prop_assert_eq!(z.state(zone), before);
                    }
                }
                Command::Append { zone, lbas } => {
                    let wp = z.write_pointer(zone);
                    answered += 1;
                    if let Ok(g) = z.append(z.start_lba(zone), lbas) {
                        prop_assert_eq!(g.first_lba, wp);
                        granted += g.lbas;
                    }
                }
                Command::Manage { zone, action } => {
                    answered += 1;
                    let _ = z.manage(action, z.start_lba(zone));
                }
                Command::ManageAll { action } => {
                    answered += 1;
                    let _ = z.manage_all(action);
                }
                Command::Fail { zone, offline } => {
                    z.fail_zone(zone, if offline { Offline } else { ReadOnly });
                }
            }
            z.check_invariants();
        }
        prop_assert_eq!(z.counters().lbas_written, granted);
        let statuses = &z.counters().statuses;
        prop_assert_eq!(statuses.refused() + statuses.get(S::Success), answered);
        let total: u64 = (0..6).map(|zone| z.lbas_written_to(zone)).sum();
        prop_assert_eq!(total, granted);
    }
}
