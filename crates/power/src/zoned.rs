//! Zoned devices in the crash harness (issue 29; `nandlab crash --zoned`): cases on the zoned
//! mapping (`ssd.mapping.kind = "zoned"`, one zoned namespace over the device) whose host
//! writes each zone only at its write pointer and resets zones, and the check of the zones a
//! mount rebuilds.
//!
//! The host keeps a write pointer per zone (the LBAs it has issued since the zone's last
//! reset). A write picks a zone of the workload's span and writes 1 to `write_pages_max`
//! pages at its write pointer (up to the zone's capacity; a full zone is reset instead); a
//! trim resets a zone: a TRIM of its written LBAs, which erases its blocks inside the request
//! (the NVMe host interface's Reset, [`nandlab_ftl::nvme`]); reads and flushes are as in the
//! standard workload. At queue depth > 1 several writes of one zone are outstanding (as Zone
//! Appends granted their LBAs in order) and complete out of order.
//!
//! The mount ([`nandlab_ftl::power::recover`]) rebuilds every zone from the OOB of its pages:
//! its write pointer is one past its last intact page (never back over acknowledged data: a
//! write whose program was torn or never ran, below a later intact one, leaves a hole that
//! reads as unwritten), and the zone is Empty, Full (written to its capacity) or Closed (an
//! open zone is closed by a power loss, ZNS 1.1 §2.1.1.4). The device loaded from the mount
//! ([`nandlab_ftl::Ssd::load_recovered`]) must hold exactly those write pointers, and the host
//! of the next cycle starts from them (as a host reads them with Report Zones at power-on).

use super::crash::{DrawnCase, Mutation, pick};
use super::oracle::Oracle;
use super::{CrashCase, CrashDevice, CrashWorkload, CutPoint, Issued, MappingKind, payload};
use nandlab_core::{Lpa, SimRng};
use nandlab_ftl::host::zns::{ZoneState, ZonedConfig, Zones};
use nandlab_ftl::power::Recovered;
use nandlab_ftl::power::RecoveryVariant;
use nandlab_ftl::{HostRequest, Ssd};
use serde::Serialize;

/// The host's view of a zoned device under a crash workload.
#[derive(Clone, Debug)]
pub(crate) struct ZonedHost {
    /// Zone size and capacity (LBAs = pages).
    size: u64,
    capacity: u64,
    /// Page (LBA) size in bytes.
    page: u32,
    /// Per zone, LBAs issued since its last reset.
    pointers: Vec<u64>,
}

impl ZonedHost {
    /// The host of `ssd` when it is zoned, starting from the device's write pointers.
    pub(crate) fn of(ssd: &Ssd) -> Option<Self> {
        let (size, capacity) = ssd.zoned_layout()?;
        Some(ZonedHost {
            size,
            capacity,
            page: ssd.page_size_bytes(),
            pointers: ssd.zone_write_pointers()?,
        })
    }

    /// The next request of the workload: `roll` picks its kind as in the standard workload,
    /// `lpa` (drawn in the span) its zone. Returns the request, what it is and its bytes.
    pub(crate) fn request(
        &mut self,
        roll: f64,
        lpa: Lpa,
        w: &CrashWorkload,
        rng: &mut SimRng,
        oracle: &mut Oracle,
        version: &mut u64,
    ) -> (HostRequest, Issued, Option<Vec<u8>>) {
        let page = self.page;
        let bytes = |lba: u64| lba * u64::from(page);
        let zone = (u64::from(lpa.0) / self.size) as usize;
        let start = zone as u64 * self.size;
        let wp = self.pointers[zone];
        if roll < w.flush_probability {
            let cover = oracle.flush_issued();
            return (HostRequest::flush(), Issued::Flush(cover), None);
        }
        let reset = roll < w.flush_probability + w.trim_probability;
        let read = !reset && roll < w.flush_probability + w.trim_probability + w.read_probability;
        if read || (reset && wp == 0) {
            let r = HostRequest::read(bytes(u64::from(lpa.0)), u64::from(page));
            return (r, Issued::Read, None);
        }
        if reset || wp == self.capacity {
            // a reset: a TRIM of the zone's written LBAs
            let marks = (start..start + wp)
                .map(|l| {
                    let l = Lpa(l as u32);
                    (l, oracle.trim_issued(l))
                })
                .collect();
            self.pointers[zone] = 0;
            let r = HostRequest::trim(bytes(start), bytes(wp));
            return (r, Issued::Reset(marks), None);
        }
        let pages = (1 + rng.below(u64::from(w.write_pages_max))).min(self.capacity - wp) as u32;
        let lpa = Lpa((start + wp) as u32);
        self.pointers[zone] += u64::from(pages);
        let first = *version + 1;
        let mut data = Vec::with_capacity((pages * page) as usize);
        for i in 0..pages {
            *version += 1;
            oracle.write_issued(Lpa(lpa.0 + i), *version);
            data.extend(payload::encode(Lpa(lpa.0 + i), *version, page as usize));
        }
        let mut r = HostRequest::write(bytes(u64::from(lpa.0)), u64::from(pages * page));
        let fua = w.fua_probability > 0.0 && rng.chance(w.fua_probability);
        if fua {
            r = r.with_fua();
        }
        let issued = Issued::Write {
            lpa,
            pages,
            first,
            fua,
        };
        (r, issued, Some(data))
    }
}

/// The zones a mount rebuilt, summed over mounts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZoneCounts {
    /// Zones after the mounts: empty, closed (partly written: every open zone is closed by
    /// the power loss), full.
    pub empty: u64,
    pub closed: u64,
    pub full: u64,
    /// Holes: pages below a zone's rebuilt write pointer with no intact data (a write torn or
    /// never programmed below a later intact one), padded when the device is loaded.
    pub holes: u64,
}

impl ZoneCounts {
    /// Adds `other`.
    pub fn add(&mut self, other: &ZoneCounts) {
        self.empty += other.empty;
        self.closed += other.closed;
        self.full += other.full;
        self.holes += other.holes;
    }
}

/// The write pointer of every zone of `ssd`'s layout as the mount `recovered` finds them: one
/// past the zone's last intact page (0: none); `None` when `ssd` is not zoned.
pub(crate) fn remount_pointers(ssd: &Ssd, recovered: &Recovered) -> Option<Vec<u64>> {
    let (size, capacity) = ssd.zoned_layout()?;
    let zones = recovered.map.len() as u64 / size;
    Some(
        (0..zones)
            .map(|z| {
                (0..capacity)
                    .rev()
                    .find(|&p| recovered.map[(z * size + p) as usize].is_some())
                    .map_or(0, |p| p + 1)
            })
            .collect(),
    )
}

/// The zone states a controller reports after a mount with write pointers `pointers`
/// ([`Zones::restore`]: Full at capacity, else Closed, Empty when nothing was written), and
/// the holes below the pointers; an error when a restored zone breaks the state machine's
/// invariants or its write pointer is not the mount's.
pub(crate) fn zone_counts(
    ssd: &Ssd,
    recovered: &Recovered,
    pointers: &[u64],
) -> Result<ZoneCounts, String> {
    let (size, capacity) = ssd.zoned_layout().ok_or("not a zoned device")?;
    let mut config = ZonedConfig::new(pointers.len() as u32, size);
    config.zone_capacity_lbas = capacity;
    let mut zones = Zones::new(config).map_err(|e| e.to_string())?;
    let mut counts = ZoneCounts::default();
    for (z, &wp) in pointers.iter().enumerate() {
        let z32 = z as u32;
        if wp > 0 {
            zones.restore(z32, wp);
        }
        if zones.write_pointer(z32) != zones.start_lba(z32) + wp {
            return Err(format!(
                "zone {z}: write pointer {} after the mount, expected {}",
                zones.write_pointer(z32),
                zones.start_lba(z32) + wp
            ));
        }
        match zones.state(z32) {
            ZoneState::Empty => counts.empty += 1,
            ZoneState::Closed => counts.closed += 1,
            ZoneState::Full => counts.full += 1,
            other => return Err(format!("zone {z}: {other:?} after a mount")),
        }
        let start = z as u64 * size;
        counts.holes += (0..wp)
            .filter(|&p| recovered.map[(start + p) as usize].is_none())
            .count() as u64;
    }
    zones.check_invariants();
    Ok(counts)
}

/// A zoned case ([`super::crash::Draw::Zoned`]) from stream `power.crash.zoned` of (seed, index): an SLC
/// device of 1-3 dies × 1-2 planes × 12 blocks of 8 pages on the zoned mapping, zones of a
/// divisor of its planes (capacity below the size with 3), no write buffer (the zoned
/// mapping takes none), power-loss protection in a third of the cases (every completed write
/// is then durable), queue depth 1-4, multiplane merging and cache mode; a workload over 2-6
/// zones. `mutation` may only break the mount ([`Mutation::SkipNewestPage`],
/// [`Mutation::NoSequence`]); the others are left out.
pub fn draw_zoned(seed: u64, index: u64, mutation: Mutation) -> DrawnCase {
    let mut rng = SimRng::stream(
        seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        "power.crash.zoned",
    );
    let dies = 1 + rng.below(3) as u32;
    let planes = 1 + rng.below(2) as u32;
    let total = dies * planes;
    let divisors: Vec<u32> = (1..=total).filter(|d| total.is_multiple_of(*d)).collect();
    let zone_planes = pick(&mut rng, &divisors);
    let (blocks, pages) = (12u32, 8u32);
    let mut device = CrashDevice::default();
    device.set_mapping(MappingKind::Zoned);
    device.set("nand.geometry.dies_per_chip", dies);
    device.set("nand.geometry.planes_per_die", planes);
    device.set("nand.geometry.blocks_per_plane", blocks);
    device.set("nand.geometry.pages_per_block", pages);
    device.set("ssd.mapping.zone_planes", zone_planes);
    device.set("ssd.host.queue_depth", pick(&mut rng, &[1, 1, 2, 4]));
    if planes > 1 && rng.chance(1.0 / 3.0) {
        device.set("ssd.scheduler.multiplane", true);
    }
    device.set("ssd.scheduler.cache", rng.chance(0.25));
    let zones = total / zone_planes * blocks;
    let zone_size = u64::from(zone_planes * pages).next_power_of_two() as u32;
    let used = (2 + rng.below(5) as u32).min(zones);
    let workload = CrashWorkload {
        requests: 40 + rng.below(161) as u32,
        lpa_span: used * zone_size,
        flush_probability: pick(&mut rng, &[0.05, 0.1, 0.2]),
        trim_probability: pick(&mut rng, &[0.0, 0.03, 0.08]),
        read_probability: 0.1,
        write_pages_max: 1 + rng.below(3) as u32,
        fua_probability: pick(&mut rng, &[0.0, 0.0, 0.2]),
    };
    let hold_up = rng.chance(1.0 / 3.0).then_some(1e6);
    DrawnCase {
        index,
        case: CrashCase {
            device,
            workload,
            seed: rng.below(u64::MAX) | 1,
            cut_point: CutPoint::End,
            paired_damage_probability: 0.0,
            hold_up_energy_uj: hold_up,
            recovery: match mutation {
                Mutation::NoSequence => RecoveryVariant::NoSequence,
                Mutation::SkipNewestPage => RecoveryVariant::SkipNewestPage,
                _ => RecoveryVariant::Correct,
            },
        },
        cycles: 1 + rng.below(4),
    }
}

#[cfg(test)]
mod tests {
    use super::super::TEST_BUILD;
    use super::super::crash::{Draw, Mutation, crash_by, draw_case_by, run_drawn};
    use std::ops::ControlFlow;

    /// A few hundred cut–recover cycles on zoned devices keep the contract: every durable
    /// write is readable after each mount, the mounts rebuild closed and full zones (and
    /// holes left by writes that completed out of order), and the device loaded from a mount
    /// holds the mount's write pointers (checked by the harness at every cycle).
    #[test]
    fn zoned_devices_keep_the_contract() {
        let s = crash_by(1, 300, Mutation::None, Draw::Zoned, TEST_BUILD, |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        assert!(s.cycles >= 300 && s.cases_zoned == s.cases, "{s:?}");
        assert_eq!(s.violations.total(), 0, "{:?}", s.first_failure);
        let z = s.zones.clone().expect("zone counts");
        assert!(
            z.closed > 0 && z.full > 0 && z.empty > 0 && z.holes > 0,
            "{z:?}"
        );
        assert!(s.torn_programs > 0 && s.interrupted_erases > 0, "{s:?}");
        assert!(s.cases_deep_queue > 0 && s.cases_multiplane > 0, "{s:?}");
    }

    /// The oracle still sees a broken mount on zoned devices, and a zoned case reproduces
    /// from (seed, index).
    #[test]
    fn the_zoned_draw_catches_a_broken_mount() {
        let s = crash_by(
            1,
            300,
            Mutation::SkipNewestPage,
            Draw::Zoned,
            TEST_BUILD,
            |_| ControlFlow::Continue(()),
        )
        .unwrap();
        assert!(s.violations.total() > 0, "{s:?}");
        let f = s.first_failure.expect("a failure");
        assert_eq!(run_drawn(&f.drawn, TEST_BUILD).unwrap(), f.outcome);
        assert_eq!(
            draw_case_by(1, 7, Mutation::None, Draw::Zoned, TEST_BUILD),
            draw_case_by(1, 7, Mutation::None, Draw::Zoned, TEST_BUILD)
        );
    }
}
