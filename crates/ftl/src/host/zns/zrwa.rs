//! The Zone Random Write Area (ZRWA, NVMe Zoned Namespace Command Set 1.1, from TP4076): an
//! optional window of `size_lbas` LBAs (ZRWASZ) from a zone's write pointer that takes writes
//! in any order, overwrites included. A zone gets one with an Open Zone whose Zone Random
//! Write Area Allocation bit is set ([`super::ZoneAction::OpenZrwa`]), from the Empty state,
//! while one of the namespace's ZRWA resources (MAXZRWA) is left; it keeps it until a Reset,
//! a Finish, or its write pointer reaching the zone capacity.
//!
//! The write pointer of a zone with a ZRWA moves only by ZRWA flushes, in whole flush
//! granularity units (ZRWAFG), committing the LBAs it passes:
//! - implicitly, by a write that reaches into the Implicit ZRWA Flush Range, the
//!   `size_lbas` LBAs after the window: the pointer advances by the fewest whole units that
//!   bring the write's last LBA inside the window (or to the zone capacity);
//! - explicitly, by the Flush Explicit ZRWA action ([`super::ZoneAction::FlushZrwa`]), whose
//!   LBA is the last one to commit, in the window, with a whole number of units from the
//!   write pointer.
//!
//! Statuses, as QEMU's NVMe emulation (`hw/nvme/ctrl.c`) and NVMeVirt (`zns_read_write.c`,
//! `zns_mgmt_send.c`) answer them: a write below the write pointer or past the implicit flush
//! range, Zone Invalid Write; a Zone Append to a zone with a ZRWA, Invalid Zone Operation
//! (QEMU); an allocation with no resource left, ZRWA Resources Unavailable; an allocation
//! for a zone that is not Empty, Invalid Zone State Transition (NVMeVirt allocates from Empty
//! only); with Select All, Invalid Field; an explicit flush of a zone without a ZRWA, Invalid
//! Zone Operation (NVMeVirt); a flush LBA outside the window or not on a unit, Invalid Field
//! (QEMU).
//!
//! This module holds the namespace's ZRWA geometry and resources; [`super::Zones`] applies
//! the rules to its zones.

use super::{WriteGrant, ZoneChange, ZoneState, ZonedConfigError, Zones};
use crate::host::status::NvmeStatus;
use serde::{Deserialize, Serialize};

/// A zoned namespace's ZRWA (`[ssd.nvme.namespaces.zrwa]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZrwaConfig {
    /// ZRWASZ: LBAs of a zone's random write area (a whole number of flush units, at most the
    /// zone capacity).
    pub size_lbas: u64,
    /// ZRWAFG: the flush granularity in LBAs (the write pointer moves by whole units).
    pub flush_granularity_lbas: u64,
    /// MAXZRWA + 1: zones holding a ZRWA at once (0: the max active zones, or every zone
    /// without that limit, as QEMU sets it).
    #[serde(default)]
    pub resources: u32,
}

impl ZrwaConfig {
    /// Checks the geometry against zones of `capacity_lbas` (the error names the key, below
    /// the namespace's `zrwa` table).
    pub fn validate(&self, capacity_lbas: u64, zone_count: u32) -> Result<(), ZonedConfigError> {
        let bad = |key: &'static str, message: String| Err(ZonedConfigError { key, message });
        let (size, unit) = (self.size_lbas, self.flush_granularity_lbas);
        if unit == 0 || unit > capacity_lbas {
            return bad(
                "zrwa.flush_granularity_lbas",
                format!("{unit} LBAs (use 1 to the zone capacity, {capacity_lbas})"),
            );
        }
        if size == 0 || size > capacity_lbas || !size.is_multiple_of(unit) {
            return bad(
                "zrwa.size_lbas",
                format!(
                    "{size} LBAs (use a multiple of the {unit}-LBA flush granularity up to the zone capacity, {capacity_lbas})"
                ),
            );
        }
        if self.resources > zone_count {
            return bad(
                "zrwa.resources",
                format!(
                    "{} (the namespace has {zone_count} zones; 0 means the max active zones)",
                    self.resources
                ),
            );
        }
        Ok(())
    }
}

/// The ZRWA resources of a namespace and the geometry of its windows.
#[derive(Clone, Debug)]
pub(super) struct Zrwa {
    config: ZrwaConfig,
    /// Resources in all.
    resources: u32,
    /// Resources held by zones.
    held: u32,
}

impl Zrwa {
    /// The ZRWA of a namespace of `zone_count` zones with `max_active` active resources
    /// (0: no limit).
    pub(super) fn new(config: ZrwaConfig, zone_count: u32, max_active: u32) -> Self {
        let resources = match (config.resources, max_active) {
            (0, 0) => zone_count,
            (0, active) => active,
            (n, _) => n,
        };
        Zrwa {
            config,
            resources,
            held: 0,
        }
    }

    /// Resources held now.
    pub(super) fn held(&self) -> u32 {
        self.held
    }

    /// Takes a resource (ZRWA Resources Unavailable when none is left).
    pub(super) fn check_available(&self) -> Result<(), NvmeStatus> {
        if self.held >= self.resources {
            return Err(NvmeStatus::ZrwaResourcesUnavailable);
        }
        Ok(())
    }

    pub(super) fn take(&mut self) {
        debug_assert!(self.held < self.resources);
        self.held += 1;
    }

    pub(super) fn give_back(&mut self) {
        debug_assert!(self.held > 0);
        self.held -= 1;
    }

    /// A write of `lbas` LBAs from offset `first` in a zone whose write pointer is at offset
    /// `wp`, capacity `capacity`: how far the write pointer moves (the implicit flush), or
    /// Zone Invalid Write when the write starts below the pointer or ends past the implicit
    /// flush range.
    pub(super) fn write(
        &self,
        wp: u64,
        first: u64,
        lbas: u64,
        capacity: u64,
    ) -> Result<u64, NvmeStatus> {
        let (size, unit) = (self.config.size_lbas, self.config.flush_granularity_lbas);
        let end = first + lbas;
        if first < wp || end > wp + 2 * size {
            return Err(NvmeStatus::ZoneInvalidWrite);
        }
        let window_end = wp + size;
        if end <= window_end {
            return Ok(0);
        }
        let units = (end - window_end).div_ceil(unit);
        Ok((units * unit).min(capacity - wp))
    }

    /// Flush Explicit ZRWA up to offset `last` (inclusive) of a zone whose write pointer is at
    /// offset `wp`, capacity `capacity`: the LBAs committed.
    pub(super) fn flush(&self, wp: u64, last: u64, capacity: u64) -> Result<u64, NvmeStatus> {
        let window_end = (wp + self.config.size_lbas).min(capacity);
        if last < wp || last >= window_end {
            return Err(NvmeStatus::InvalidField);
        }
        let lbas = last - wp + 1;
        // (the last unit of a zone may be cut short by its capacity)
        if !lbas.is_multiple_of(self.config.flush_granularity_lbas) && last + 1 != capacity {
            return Err(NvmeStatus::InvalidField);
        }
        Ok(lbas)
    }
}

/// The ZRWA rules on a namespace's zones.
impl Zones {
    /// Whether `zone` holds a ZRWA.
    pub fn has_zrwa(&self, zone: u32) -> bool {
        self.zones[zone as usize].zrwa
    }

    /// ZRWA resources held by zones now.
    pub fn zrwa_resources_held(&self) -> u32 {
        self.zrwa.as_ref().map_or(0, Zrwa::held)
    }

    /// Open Zone with ZRWA allocation: from Empty only, with a resource left (and the open
    /// and active resources an Open takes).
    pub(super) fn open_zrwa(&mut self, zone: u32) -> Result<ZoneChange, NvmeStatus> {
        let from = self.zones[zone as usize].state;
        let Some(zrwa) = &self.zrwa else {
            return Err(NvmeStatus::InvalidField);
        };
        if from != ZoneState::Empty {
            return Err(NvmeStatus::InvalidZoneStateTransition);
        }
        zrwa.check_available()?;
        self.take_open_resource(true)?;
        if let Some(zrwa) = &mut self.zrwa {
            zrwa.take();
        }
        self.zones[zone as usize].zrwa = true;
        self.assign(zone, ZoneState::ExplicitlyOpened);
        Ok(ZoneChange {
            zone,
            from,
            to: ZoneState::ExplicitlyOpened,
            written_lbas: 0,
            committed_lbas: 0,
        })
    }

    /// A write of `lbas` LBAs from offset `first` of `zone`, which holds a ZRWA: anywhere in
    /// the window and the implicit flush range after it, within the zone capacity.
    pub(super) fn grant_zrwa(
        &mut self,
        zone: u32,
        first: u64,
        lbas: u64,
    ) -> Result<WriteGrant, NvmeStatus> {
        let capacity = self.config.zone_capacity_lbas;
        let wp = self.zones[zone as usize].written_lbas;
        let zrwa = self
            .zrwa
            .as_ref()
            .expect("a zone holds a ZRWA of its namespace");
        let moved = zrwa.write(wp, first, lbas, capacity)?;
        if first + lbas > capacity {
            return Err(NvmeStatus::ZoneBoundaryError);
        }
        let closed_zone = self.open_for_write(zone)?;
        self.zones[zone as usize].lbas_written_total += lbas;
        self.counters.lbas_written += lbas;
        let filled_zone = self.commit_zrwa(zone, moved);
        let start = self.start_lba(zone);
        Ok(WriteGrant {
            zone,
            first_lba: start + first,
            lbas,
            filled_zone,
            closed_zone,
            zrwa_commit: Some((start + wp, moved)),
        })
    }

    /// Flush Explicit ZRWA up to `lba` (inclusive).
    pub(super) fn flush_zrwa(&mut self, lba: u64) -> Result<ZoneChange, NvmeStatus> {
        let zone = self.zone_of(lba).ok_or(NvmeStatus::LbaOutOfRange)?;
        let z = self.zones[zone as usize];
        if !z.zrwa {
            return Err(NvmeStatus::InvalidZoneOperation);
        }
        let zrwa = self
            .zrwa
            .as_ref()
            .expect("a zone holds a ZRWA of its namespace");
        let capacity = self.config.zone_capacity_lbas;
        let committed_lbas = zrwa.flush(z.written_lbas, lba - self.start_lba(zone), capacity)?;
        self.commit_zrwa(zone, committed_lbas);
        Ok(ZoneChange {
            zone,
            from: z.state,
            to: self.zones[zone as usize].state,
            written_lbas: z.written_lbas,
            committed_lbas,
        })
    }

    /// Moves `zone`'s write pointer by `lbas` committed LBAs; at the capacity the zone is Full
    /// and its ZRWA released. Whether it filled the zone.
    fn commit_zrwa(&mut self, zone: u32, lbas: u64) -> bool {
        if lbas == 0 {
            return false;
        }
        let z = &mut self.zones[zone as usize];
        z.written_lbas += lbas;
        if z.written_lbas < self.config.zone_capacity_lbas {
            return false;
        }
        self.release_zrwa(zone);
        self.assign(zone, ZoneState::Full);
        self.counters.filled += 1;
        true
    }

    /// Gives `zone`'s ZRWA back, if it holds one.
    pub(super) fn release_zrwa(&mut self, zone: u32) {
        if std::mem::take(&mut self.zones[zone as usize].zrwa)
            && let Some(zrwa) = &mut self.zrwa
        {
            zrwa.give_back();
        }
    }
}
