//! Flexible Data Placement, the host interface's half (NVMe TP4146, part of NVMe 2.0c; SPEC
//! Z3): reclaim groups, reclaim unit handles of either isolation type, the placement
//! identifier a write carries, the reclaim unit each handle is filling and how much it can
//! still take, Reclaim Unit Handle Update (I/O Management Send), the FDP statistics log (host
//! and media bytes written, media bytes erased) and the FDP events log (reclaim unit not fully
//! written, media reallocated).
//!
//! [`Fdp`] decides what a placement identifier names and keeps the counters; the mapping
//! places each handle's data in its own write frontier ([`Fdp::stream`], one per handle and
//! reclaim group) and tells [`Fdp`] what the media did. The events log keeps the newest
//! [`FDP_EVENTS_MAX`] events, as QEMU's and FEMU's FDP emulations do.
//!
//! Where TP4146 leaves the controller a choice, this model says what it does:
//! - A write whose placement identifier names no handle or reclaim group is refused with
//!   Invalid Field in Command (QEMU instead places it with handle 0).
//! - A reclaim unit filled exactly moves its handle to a new unit without an event; a Reclaim
//!   Unit Handle Update on a partly written unit logs "reclaim unit not fully written" and
//!   counts the unit's unwritten bytes as media bytes written (the padding or GC a controller
//!   pays for it; QEMU counts the same).

use super::status::NvmeStatus;
use nandlab_core::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

/// Events kept in the FDP events log (QEMU and FEMU: 63).
pub const FDP_EVENTS_MAX: usize = 63;
/// Reclaim unit handles at most (FEMU's `NVME_FDP_MAXPIDS`).
pub const FDP_HANDLES_MAX: usize = 128;

/// What GC may do with a handle's data (Reclaim Unit Handle Type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuhType {
    /// 1h: isolated from other handles' data only while written by the host: GC may move it
    /// into reclaim units shared with other initially isolated handles.
    InitiallyIsolated,
    /// 2h: isolated for good: GC keeps it in reclaim units of its own handle.
    PersistentlyIsolated,
}

/// An FDP configuration (the fields of an FDP Configuration Descriptor the model uses).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdpConfig {
    /// Reclaim groups (NRG).
    pub reclaim_groups: u16,
    /// The reclaim unit handles, by type; the namespace's placement handle `i` names handle
    /// `i`.
    pub handles: Vec<RuhType>,
    /// Reclaim unit nominal size (RUNS) in bytes.
    pub reclaim_unit_bytes: u64,
}

/// An FDP configuration that cannot work, with the key at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FdpConfigError {
    /// The key (of [`FdpConfig`]).
    pub key: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FdpConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for FdpConfigError {}

impl FdpConfig {
    /// Checks the configuration; the error names the key.
    pub fn validate(&self) -> Result<(), FdpConfigError> {
        if self.reclaim_groups == 0 {
            return Err(FdpConfigError {
                key: "reclaim_groups",
                message: "at least 1".into(),
            });
        }
        if self.handles.is_empty() || self.handles.len() > FDP_HANDLES_MAX {
            return Err(FdpConfigError {
                key: "handles",
                message: format!(
                    "{} handles (use 1 to {FDP_HANDLES_MAX})",
                    self.handles.len()
                ),
            });
        }
        // the placement identifier is 16 bits: reclaim group bits + placement handle bits
        let bits = self.rgif() + bits_for(self.handles.len() as u32);
        if bits > 16 {
            return Err(FdpConfigError {
                key: "reclaim_groups",
                message: format!(
                    "{} reclaim groups and {} handles need {bits} bits; a placement identifier has 16",
                    self.reclaim_groups,
                    self.handles.len()
                ),
            });
        }
        if self.reclaim_unit_bytes == 0 {
            return Err(FdpConfigError {
                key: "reclaim_unit_bytes",
                message: "a reclaim unit holds at least 1 byte".into(),
            });
        }
        Ok(())
    }

    /// Reclaim Group Identifier Format: the high bits of a placement identifier that name the
    /// reclaim group (0 with one group).
    pub fn rgif(&self) -> u32 {
        bits_for(u32::from(self.reclaim_groups))
    }

    /// The placement identifier of handle `handle` in reclaim group `group`.
    pub fn placement_id(&self, group: u16, handle: u16) -> u16 {
        let rgif = self.rgif();
        if rgif == 0 {
            handle
        } else {
            (group << (16 - rgif)) | handle
        }
    }
}

/// Bits needed to number `count` things (0 for one).
fn bits_for(count: u32) -> u32 {
    32 - count.saturating_sub(1).leading_zeros()
}

/// What a placement identifier names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Reclaim group.
    pub group: u16,
    /// Reclaim unit handle.
    pub handle: u16,
}

/// An FDP event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FdpEventKind {
    /// 00h (host event): a handle moved to a new reclaim unit before the old one was full.
    RuNotFullyWritten,
    /// 80h (controller event): the controller moved valid data (GC).
    MediaReallocated,
}

/// One entry of the FDP events log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FdpEvent {
    /// What happened.
    pub kind: FdpEventKind,
    /// When (simulated time).
    pub time: SimTime,
    /// Where.
    pub group: u16,
    /// Which handle.
    pub handle: u16,
    /// Bytes concerned (unwritten bytes of the unit, or bytes moved).
    pub bytes: u64,
}

/// The FDP statistics log page (Log Page 22h), in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FdpStats {
    /// Host Bytes with Metadata Written (HBMW).
    pub host_bytes_written: u64,
    /// Media Bytes with Metadata Written (MBMW): host writes, GC moves and padding.
    pub media_bytes_written: u64,
    /// Media Bytes Erased (MBE).
    pub media_bytes_erased: u64,
}

/// A handle's state in one reclaim group (Reclaim Unit Handle Status descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RuhStatus {
    /// Placement identifier naming it.
    pub placement_id: u16,
    /// Reclaim group.
    pub group: u16,
    /// Handle.
    pub handle: u16,
    /// Reclaim Unit Available Media Writes: bytes the current unit can still take.
    pub available_bytes: u64,
    /// Reclaim units this handle has started in this group.
    pub units_started: u64,
}

/// The FDP state of an endurance group.
#[derive(Clone, Debug)]
pub struct Fdp {
    config: FdpConfig,
    /// Per (handle, group): bytes left in the current reclaim unit, units started.
    units: Vec<(u64, u64)>,
    stats: FdpStats,
    events: VecDeque<FdpEvent>,
    events_dropped: u64,
}

impl Fdp {
    /// The FDP state with every handle at the start of an empty reclaim unit.
    pub fn new(config: FdpConfig) -> Result<Self, FdpConfigError> {
        config.validate()?;
        let n = config.handles.len() * usize::from(config.reclaim_groups);
        Ok(Fdp {
            units: vec![(config.reclaim_unit_bytes, 1); n],
            config,
            stats: FdpStats::default(),
            events: VecDeque::with_capacity(FDP_EVENTS_MAX),
            events_dropped: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &FdpConfig {
        &self.config
    }

    /// What placement identifier `pid` names, or Invalid Field in Command.
    pub fn placement(&self, pid: u16) -> Result<Placement, NvmeStatus> {
        let rgif = self.config.rgif();
        let (group, handle) = if rgif == 0 {
            (0, pid)
        } else {
            (pid >> (16 - rgif), pid & (u16::MAX >> rgif))
        };
        if group >= self.config.reclaim_groups || usize::from(handle) >= self.config.handles.len() {
            return Err(NvmeStatus::InvalidField);
        }
        Ok(Placement { group, handle })
    }

    /// The write frontier (stream) the mapping keeps for `placement`: one per handle and
    /// reclaim group.
    pub fn stream(&self, placement: Placement) -> u16 {
        placement.handle * self.config.reclaim_groups + placement.group
    }

    /// The stream GC moves `placement`'s data to: its own for a persistently isolated
    /// handle; one shared stream (past the handles' streams) for all initially isolated ones.
    pub fn gc_stream(&self, placement: Placement) -> u16 {
        match self.config.handles[usize::from(placement.handle)] {
            RuhType::PersistentlyIsolated => self.stream(placement),
            RuhType::InitiallyIsolated => {
                self.config.handles.len() as u16 * self.config.reclaim_groups
            }
        }
    }

    /// Streams the mapping needs: one per handle and group, plus the shared GC stream of the
    /// initially isolated handles if there are any.
    pub fn streams(&self) -> u16 {
        let handles = self.config.handles.len() as u16 * self.config.reclaim_groups;
        let shared = self.config.handles.contains(&RuhType::InitiallyIsolated);
        handles + u16::from(shared)
    }

    /// A host write of `bytes` through `placement`: counted as host and media bytes, and the
    /// handle's reclaim unit fills (a full unit is replaced by a new one). Returns how many
    /// units it filled.
    pub fn host_write(&mut self, placement: Placement, bytes: u64) -> u64 {
        self.stats.host_bytes_written += bytes;
        self.stats.media_bytes_written += bytes;
        let ru_bytes = self.config.reclaim_unit_bytes;
        let index = self.unit_index(placement);
        let unit = &mut self.units[index];
        let mut left = bytes;
        let mut filled = 0;
        while left >= unit.0 {
            left -= unit.0;
            unit.0 = ru_bytes;
            unit.1 += 1;
            filled += 1;
        }
        unit.0 -= left;
        filled
    }

    /// Reclaim Unit Handle Update for placement identifier `pid` at `now`: the handle moves to
    /// a new reclaim unit; a partly written one is logged as not fully written and its
    /// unwritten bytes count as media bytes written.
    pub fn update_handle(&mut self, pid: u16, now: SimTime) -> Result<(), NvmeStatus> {
        let placement = self.placement(pid)?;
        let ru_bytes = self.config.reclaim_unit_bytes;
        let index = self.unit_index(placement);
        let (left, _) = self.units[index];
        if left < ru_bytes {
            self.stats.media_bytes_written += left;
            self.log(FdpEvent {
                kind: FdpEventKind::RuNotFullyWritten,
                time: now,
                group: placement.group,
                handle: placement.handle,
                bytes: left,
            });
            let unit = &mut self.units[index];
            unit.0 = ru_bytes;
            unit.1 += 1;
        }
        Ok(())
    }

    /// The controller moved `bytes` of `placement`'s data (GC) at `now`.
    pub fn media_reallocated(&mut self, placement: Placement, bytes: u64, now: SimTime) {
        self.stats.media_bytes_written += bytes;
        self.log(FdpEvent {
            kind: FdpEventKind::MediaReallocated,
            time: now,
            group: placement.group,
            handle: placement.handle,
            bytes,
        });
    }

    /// The controller erased `bytes` of media.
    pub fn media_erased(&mut self, bytes: u64) {
        self.stats.media_bytes_erased += bytes;
    }

    /// The statistics log.
    pub fn stats(&self) -> FdpStats {
        self.stats
    }

    /// The events log, oldest first, and how many older events it no longer holds.
    pub fn events(&self) -> (impl Iterator<Item = &FdpEvent>, u64) {
        (self.events.iter(), self.events_dropped)
    }

    /// Every handle's status in every reclaim group.
    pub fn handle_status(&self) -> Vec<RuhStatus> {
        let mut out = Vec::with_capacity(self.units.len());
        for handle in 0..self.config.handles.len() as u16 {
            for group in 0..self.config.reclaim_groups {
                let p = Placement { group, handle };
                let (available_bytes, units_started) = self.units[self.unit_index(p)];
                out.push(RuhStatus {
                    placement_id: self.config.placement_id(group, handle),
                    group,
                    handle,
                    available_bytes,
                    units_started,
                });
            }
        }
        out
    }

    fn unit_index(&self, placement: Placement) -> usize {
        usize::from(self.stream(placement))
    }

    fn log(&mut self, event: FdpEvent) {
        if self.events.len() == FDP_EVENTS_MAX {
            self.events.pop_front();
            self.events_dropped += 1;
        }
        self.events.push_back(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RuhType::*;

    fn fdp(groups: u16, handles: Vec<RuhType>, ru: u64) -> Fdp {
        Fdp::new(FdpConfig {
            reclaim_groups: groups,
            handles,
            reclaim_unit_bytes: ru,
        })
        .unwrap()
    }

    #[test]
    fn placement_identifiers_name_group_and_handle() {
        let f = fdp(1, vec![InitiallyIsolated; 4], 4096);
        assert_eq!(f.config().rgif(), 0);
        assert_eq!(
            f.placement(3),
            Ok(Placement {
                group: 0,
                handle: 3
            })
        );
        assert_eq!(f.placement(4), Err(NvmeStatus::InvalidField));
        // 4 groups: the top 2 bits name the group
        let f = fdp(4, vec![PersistentlyIsolated; 8], 4096);
        assert_eq!(f.config().rgif(), 2);
        let pid = f.config().placement_id(3, 5);
        assert_eq!(pid, 0xC005);
        assert_eq!(
            f.placement(pid),
            Ok(Placement {
                group: 3,
                handle: 5
            })
        );
        assert_eq!(f.placement(0x0008), Err(NvmeStatus::InvalidField));
        // streams are distinct per (handle, group)
        let mut streams: Vec<u16> = (0..8)
            .flat_map(|h| (0..4).map(move |g| (h, g)))
            .map(|(handle, group)| f.stream(Placement { group, handle }))
            .collect();
        streams.sort_unstable();
        streams.dedup();
        assert_eq!(streams.len(), 32);
        assert_eq!(f.streams(), 32);
    }

    #[test]
    fn gc_keeps_persistent_isolation_and_shares_initial() {
        let f = fdp(
            1,
            vec![InitiallyIsolated, PersistentlyIsolated, InitiallyIsolated],
            4096,
        );
        let p = |handle| Placement { group: 0, handle };
        assert_eq!(f.gc_stream(p(1)), f.stream(p(1)));
        assert_eq!(f.gc_stream(p(0)), f.gc_stream(p(2)));
        assert_ne!(f.gc_stream(p(0)), f.stream(p(0)));
        assert_eq!(f.streams(), 4);
        assert_eq!(f.gc_stream(p(0)), 3);
    }

    #[test]
    fn writes_fill_reclaim_units_and_statistics_add_up() {
        let mut f = fdp(1, vec![InitiallyIsolated; 2], 10_000);
        let p0 = Placement {
            group: 0,
            handle: 0,
        };
        assert_eq!(f.host_write(p0, 4096), 0);
        assert_eq!(f.host_write(p0, 4096), 0);
        assert_eq!(f.host_write(p0, 4096), 1); // 12,288 bytes: one unit filled
        assert_eq!(f.host_write(p0, 7_712), 1); // exactly fills the second: no event
        let s = f.handle_status();
        assert_eq!(s[0].available_bytes, 10_000);
        assert_eq!(s[0].units_started, 3);
        assert_eq!(f.events().0.count(), 0);
        // a handle update on a partly written unit
        f.host_write(p0, 1_000);
        f.update_handle(0, SimTime::from_us(7)).unwrap();
        let (events, dropped) = f.events();
        let events: Vec<_> = events.copied().collect();
        assert_eq!(dropped, 0);
        assert_eq!(
            events,
            vec![FdpEvent {
                kind: FdpEventKind::RuNotFullyWritten,
                time: SimTime::from_us(7),
                group: 0,
                handle: 0,
                bytes: 9_000
            }]
        );
        // an update on a fresh unit changes nothing
        f.update_handle(0, SimTime::from_us(8)).unwrap();
        assert_eq!(f.events().0.count(), 1);
        assert_eq!(
            f.update_handle(9, SimTime::ZERO),
            Err(NvmeStatus::InvalidField)
        );
        // GC moves and erases
        f.media_reallocated(p0, 8192, SimTime::from_us(9));
        f.media_erased(40_000);
        let host = 4096 * 3 + 7_712 + 1_000;
        assert_eq!(
            f.stats(),
            FdpStats {
                host_bytes_written: host,
                // media = host + the not-fully-written unit's rest + GC moves
                media_bytes_written: host + 9_000 + 8192,
                media_bytes_erased: 40_000,
            }
        );
    }

    #[test]
    fn the_events_log_keeps_the_newest() {
        let mut f = fdp(1, vec![InitiallyIsolated], 4096);
        let p0 = Placement {
            group: 0,
            handle: 0,
        };
        for i in 0..(FDP_EVENTS_MAX as u64 + 5) {
            f.media_reallocated(p0, i, SimTime::from_ns(i));
        }
        let (events, dropped) = f.events();
        let events: Vec<_> = events.collect();
        assert_eq!(dropped, 5);
        assert_eq!(events.len(), FDP_EVENTS_MAX);
        assert_eq!(events[0].bytes, 5);
    }

    #[test]
    fn bad_configurations_name_the_key() {
        let bad = |groups, handles: usize, ru| {
            FdpConfig {
                reclaim_groups: groups,
                handles: vec![InitiallyIsolated; handles],
                reclaim_unit_bytes: ru,
            }
            .validate()
            .err()
            .map(|e| e.key)
        };
        assert_eq!(bad(1, 8, 4096), None);
        assert_eq!(bad(0, 8, 4096), Some("reclaim_groups"));
        assert_eq!(bad(1, 0, 4096), Some("handles"));
        assert_eq!(bad(1, 129, 4096), Some("handles"));
        assert_eq!(bad(1, 8, 0), Some("reclaim_unit_bytes"));
        // 2^10 groups and 128 handles need 17 bits
        assert_eq!(bad(1024, 128, 4096), Some("reclaim_groups"));
    }
}
