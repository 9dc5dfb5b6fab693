//! A zoned namespace's zones (NVMe Zoned Namespace Command Set 1.1, SPEC Z2): zone size and
//! capacity, the seven zone states and their transitions, write pointers, Zone Append, the
//! zone management actions (Open, Close, Finish, Reset, Offline) with and without Select All,
//! Report Zones, and the max open / max active zone limits.
//!
//! [`Zones`] is the host interface's half of a zoned namespace: it decides whether a command
//! is allowed and what it does to the zone, and answers with an [`NvmeStatus`] when it is not.
//! It holds no flash state: the zoned mapping places the granted LBAs on flash and erases a
//! zone's blocks when [`Zones::manage`] reports a reset of written data.
//!
//! The transitions follow the specification's zone state machine (ZNS 1.1 §2.1.1, Figure 6).
//! Where the specification leaves a choice to the controller or reference implementations
//! differ, this model says which it follows:
//! - Close of an open zone with nothing written returns it to Empty (as the Linux kernel's
//!   `null_blk` zoned device and the ZBC zone model do; QEMU's NVMe emulation leaves it
//!   Closed, holding an active resource for no data).
//! - Finish of an Empty zone is allowed (Empty → Full) and counts as a finish (QEMU,
//!   `null_blk`).
//! - With [`ZonedConfig::auto_close`], a write that must implicitly open a zone when the open
//!   limit is reached first closes the implicitly opened zone that was opened longest ago;
//!   explicitly opened zones are never closed by the device.
//!
//! - The Zone Random Write Area (ZRWA): [`zrwa`] (a zone with one takes writes anywhere in a
//!   window from its write pointer, which moves by ZRWA flushes).
//!
//! Not modelled (yet): zone descriptor extensions, and the zone attributes that report a
//! finish or reset recommended by the device.

#[cfg(test)]
mod tests;
pub mod zrwa;
#[cfg(test)]
mod zrwa_tests;

use zrwa::Zrwa;
pub use zrwa::ZrwaConfig;

use super::status::{NvmeStatus, StatusCounts};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

/// The geometry and limits of a zoned namespace. LBAs are the namespace's logical blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZonedConfig {
    /// Number of zones.
    pub zone_count: u32,
    /// Zone size (ZSZE): LBAs from one zone's start to the next one's.
    pub zone_size_lbas: u64,
    /// Zone capacity (ZCAP): writable LBAs of each zone, at most the zone size.
    pub zone_capacity_lbas: u64,
    /// Maximum open resources (MOR + 1): zones implicitly or explicitly opened at once;
    /// 0 = no limit.
    #[serde(default)]
    pub max_open_zones: u32,
    /// Maximum active resources (MAR + 1): zones open or closed at once; 0 = no limit.
    #[serde(default)]
    pub max_active_zones: u32,
    /// Zone Append size limit (ZASL) in LBAs; 0 = the zone capacity.
    #[serde(default)]
    pub zone_append_max_lbas: u64,
    /// Whether a write that needs an open resource when none is left closes the implicitly
    /// opened zone opened longest ago (the controller's choice in the specification; QEMU's
    /// `auto_transition_zones`, on by default there too).
    #[serde(default = "yes")]
    pub auto_close: bool,
    /// Whether a read may cross from one zone into the next (the Read Across Zone Boundaries
    /// bit of the namespace's zone operation characteristics).
    #[serde(default)]
    pub cross_zone_read: bool,
    /// The Zone Random Write Area, if the namespace has one.
    #[serde(default)]
    pub zrwa: Option<ZrwaConfig>,
}

fn yes() -> bool {
    true
}

impl ZonedConfig {
    /// A namespace of `zone_count` zones of `zone_size_lbas` LBAs, all writable, no limits.
    pub fn new(zone_count: u32, zone_size_lbas: u64) -> Self {
        ZonedConfig {
            zone_count,
            zone_size_lbas,
            zone_capacity_lbas: zone_size_lbas,
            max_open_zones: 0,
            max_active_zones: 0,
            zone_append_max_lbas: 0,
            auto_close: true,
            cross_zone_read: false,
            zrwa: None,
        }
    }

    /// The namespace's size in LBAs (every zone, capacity or not).
    pub fn namespace_lbas(&self) -> u64 {
        u64::from(self.zone_count) * self.zone_size_lbas
    }

    /// Checks the geometry; the error names the key (as in a stack config's `zones` table).
    pub fn validate(&self) -> Result<(), ZonedConfigError> {
        let bad = |key: &'static str, message: String| Err(ZonedConfigError { key, message });
        if self.zone_count == 0 {
            return bad(
                "zone_count",
                "a zoned namespace needs at least 1 zone".into(),
            );
        }
        if self.zone_size_lbas == 0 {
            return bad("zone_size_lbas", "a zone needs at least 1 LBA".into());
        }
        if self.zone_capacity_lbas == 0 || self.zone_capacity_lbas > self.zone_size_lbas {
            return bad(
                "zone_capacity_lbas",
                format!(
                    "{} LBAs (use 1 to the zone size, {})",
                    self.zone_capacity_lbas, self.zone_size_lbas
                ),
            );
        }
        if self
            .zone_size_lbas
            .checked_mul(u64::from(self.zone_count))
            .is_none()
        {
            return bad(
                "zone_size_lbas",
                format!(
                    "{} zones of {} LBAs overflow a 64-bit LBA",
                    self.zone_count, self.zone_size_lbas
                ),
            );
        }
        self.validate_limits()?;
        if let Some(z) = &self.zrwa {
            z.validate(self.zone_capacity_lbas, self.zone_count)?;
        }
        Ok(())
    }

    /// The open and active limits and the append size limit.
    fn validate_limits(&self) -> Result<(), ZonedConfigError> {
        let bad = |key: &'static str, message: String| Err(ZonedConfigError { key, message });
        if self.max_active_zones > self.zone_count {
            return bad(
                "max_active_zones",
                format!(
                    "{} (the namespace has {} zones; 0 means no limit)",
                    self.max_active_zones, self.zone_count
                ),
            );
        }
        if self.max_open_zones > self.zone_count {
            return bad(
                "max_open_zones",
                format!(
                    "{} (the namespace has {} zones; 0 means no limit)",
                    self.max_open_zones, self.zone_count
                ),
            );
        }
        if self.max_active_zones > 0
            && (self.max_open_zones == 0 || self.max_open_zones > self.max_active_zones)
        {
            return bad(
                "max_open_zones",
                format!(
                    "{} must be at most max_active_zones ({}): an open zone is active",
                    if self.max_open_zones == 0 {
                        "no limit".to_string()
                    } else {
                        self.max_open_zones.to_string()
                    },
                    self.max_active_zones
                ),
            );
        }
        if self.zone_append_max_lbas > self.zone_capacity_lbas {
            return bad(
                "zone_append_max_lbas",
                format!(
                    "{} is more than the zone capacity ({}; 0 means the capacity)",
                    self.zone_append_max_lbas, self.zone_capacity_lbas
                ),
            );
        }
        Ok(())
    }
}

/// A zoned namespace's geometry that cannot work, with the key at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZonedConfigError {
    /// The key (of [`ZonedConfig`]).
    pub key: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ZonedConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ZonedConfigError {}

/// A zone's state (the Zone State field of a zone descriptor; the value is the field's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum ZoneState {
    /// ZSE: nothing written since the last reset.
    Empty = 0x1,
    /// ZSIO: opened by a write.
    ImplicitlyOpened = 0x2,
    /// ZSEO: opened by an Open action.
    ExplicitlyOpened = 0x3,
    /// ZSC: written, not open, not full.
    Closed = 0x4,
    /// ZSRO: the device can no longer write it (a media failure).
    ReadOnly = 0xD,
    /// ZSF: written to capacity, or finished.
    Full = 0xE,
    /// ZSO: the device can neither read nor write it.
    Offline = 0xF,
}

impl ZoneState {
    /// Every state, in report order.
    pub const ALL: [ZoneState; 7] = [
        ZoneState::Empty,
        ZoneState::ImplicitlyOpened,
        ZoneState::ExplicitlyOpened,
        ZoneState::Closed,
        ZoneState::ReadOnly,
        ZoneState::Full,
        ZoneState::Offline,
    ];

    /// Whether the zone holds an open resource (ZSIO, ZSEO).
    pub fn is_open(self) -> bool {
        matches!(
            self,
            ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened
        )
    }

    /// Whether the zone holds an active resource (ZSIO, ZSEO, ZSC).
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ZoneState::Empty => "empty",
            ZoneState::ImplicitlyOpened => "implicitly_opened",
            ZoneState::ExplicitlyOpened => "explicitly_opened",
            ZoneState::Closed => "closed",
            ZoneState::ReadOnly => "read_only",
            ZoneState::Full => "full",
            ZoneState::Offline => "offline",
        }
    }
}

/// A zone management send action (Zone Send Action field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneAction {
    /// 1h: Close Zone.
    Close,
    /// 2h: Finish Zone.
    Finish,
    /// 3h: Open Zone.
    Open,
    /// 4h: Reset Zone.
    Reset,
    /// 5h: Offline Zone (only from ZSRO).
    Offline,
    /// 3h with the Zone Random Write Area Allocation bit: Open Zone and give it a ZRWA (from
    /// ZSE only; not with Select All).
    OpenZrwa,
    /// 11h: Flush Explicit ZRWA; the command's LBA is the last one to commit (not the zone's
    /// start).
    FlushZrwa,
}

/// Which zones a Report Zones command lists (Zone Receive Action Specific field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportFilter {
    /// 0h: every zone.
    All,
    /// 1h–7h: the zones in one state.
    State(ZoneState),
}

/// A zone descriptor as Report Zones returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneDescriptor {
    /// Zone index in the namespace.
    pub zone: u32,
    /// State.
    pub state: ZoneState,
    /// Zone start LBA (ZSLBA).
    pub start_lba: u64,
    /// Zone capacity (ZCAP).
    pub capacity_lbas: u64,
    /// Write pointer (an LBA; undefined by the specification for full, read-only and offline
    /// zones: reported here as start + capacity for full zones, and where it stood for the
    /// others).
    pub write_pointer_lba: u64,
}

/// What a granted write or append does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteGrant {
    /// The zone written.
    pub zone: u32,
    /// The first LBA written (for Zone Append: the LBA returned to the host).
    pub first_lba: u64,
    /// LBAs written.
    pub lbas: u64,
    /// The zone reached its capacity with this write and is now full.
    pub filled_zone: bool,
    /// The implicitly opened zone that was closed to free an open resource for this write.
    pub closed_zone: Option<u32>,
    /// A write to a zone with a ZRWA: `(first LBA, LBAs)` its implicit ZRWA flush commits to
    /// the media (0 LBAs: the write stays in the window). `None`: the write itself is
    /// committed.
    pub zrwa_commit: Option<(u64, u64)>,
}

/// What a granted zone management action does, per zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneChange {
    /// The zone.
    pub zone: u32,
    /// Its state before.
    pub from: ZoneState,
    /// Its state after.
    pub to: ZoneState,
    /// LBAs written in the zone before the action (a reset with any makes the mapping erase
    /// the zone's blocks; a finish leaves them).
    pub written_lbas: u64,
    /// LBAs from `written_lbas` on that the action commits to the media (an explicit ZRWA
    /// flush).
    pub committed_lbas: u64,
}

/// Counters of a zoned namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneCounters {
    /// Commands answered, by status (writes, appends, reads, zone management).
    pub statuses: StatusCounts,
    /// LBAs written by writes and appends.
    pub lbas_written: u64,
    /// Zone Append commands granted.
    pub appends: u64,
    /// Zones reset (state changed to Empty by a reset; resets of empty zones not counted).
    pub resets: u64,
    /// Zones finished by a Finish action.
    pub finishes: u64,
    /// Zones that became full by being written to capacity.
    pub filled: u64,
    /// Implicitly opened zones the device closed to free an open resource.
    pub auto_closes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Zone {
    state: ZoneState,
    /// Written LBAs from the zone's start (the write pointer's offset).
    written_lbas: u64,
    /// LBAs written since the namespace was built (all resets included).
    lbas_written_total: u64,
    resets: u32,
    /// It holds a ZRWA.
    zrwa: bool,
}

/// The zones of one zoned namespace: states, write pointers, open and active resources.
#[derive(Clone, Debug)]
pub struct Zones {
    config: ZonedConfig,
    zones: Vec<Zone>,
    /// Zones holding an open resource (ZSIO or ZSEO).
    open: u32,
    /// Zones holding an active resource (ZSIO, ZSEO or ZSC).
    active: u32,
    /// Implicitly opened zones, oldest opened first (the candidates of an automatic close).
    implicitly_opened: VecDeque<u32>,
    counters: ZoneCounters,
    zrwa: Option<Zrwa>,
}

impl Zones {
    /// A namespace with every zone empty.
    pub fn new(config: ZonedConfig) -> Result<Self, ZonedConfigError> {
        config.validate()?;
        let zone = Zone {
            state: ZoneState::Empty,
            written_lbas: 0,
            lbas_written_total: 0,
            resets: 0,
            zrwa: false,
        };
        let zrwa = config
            .zrwa
            .clone()
            .map(|z| Zrwa::new(z, config.zone_count, config.max_active_zones));
        Ok(Zones {
            zrwa,
            zones: vec![zone; config.zone_count as usize],
            config,
            open: 0,
            active: 0,
            implicitly_opened: VecDeque::new(),
            counters: ZoneCounters::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ZonedConfig {
        &self.config
    }

    /// Zones holding an open resource.
    pub fn open_zones(&self) -> u32 {
        self.open
    }

    /// Zones holding an active resource.
    pub fn active_zones(&self) -> u32 {
        self.active
    }

    /// The counters.
    pub fn counters(&self) -> &ZoneCounters {
        &self.counters
    }

    /// The zone holding `lba`, if the LBA is in the namespace.
    pub fn zone_of(&self, lba: u64) -> Option<u32> {
        let zone = lba / self.config.zone_size_lbas;
        (zone < u64::from(self.config.zone_count)).then_some(zone as u32)
    }

    /// The start LBA of `zone`.
    pub fn start_lba(&self, zone: u32) -> u64 {
        u64::from(zone) * self.config.zone_size_lbas
    }

    /// A zone's state.
    pub fn state(&self, zone: u32) -> ZoneState {
        self.zones[zone as usize].state
    }

    /// A zone's write pointer (an LBA): where its next write must start.
    pub fn write_pointer(&self, zone: u32) -> u64 {
        self.start_lba(zone) + self.zones[zone as usize].written_lbas
    }

    /// Times `zone` was reset.
    pub fn resets_of(&self, zone: u32) -> u32 {
        self.zones[zone as usize].resets
    }

    /// LBAs written to `zone` since the namespace was built.
    pub fn lbas_written_to(&self, zone: u32) -> u64 {
        self.zones[zone as usize].lbas_written_total
    }

    /// A Write of `lbas` LBAs at `lba`: it must start at its zone's write pointer and end
    /// within the zone's capacity, in a zone that can be written (and opened, if it is not
    /// open). On success the write pointer has moved past the range.
    pub fn write(&mut self, lba: u64, lbas: u64) -> Result<WriteGrant, NvmeStatus> {
        let result = self.write_checked(lba, lbas);
        self.count(result.map(|_| ()));
        result
    }

    /// A Zone Append of `lbas` LBAs to the zone starting at `zone_start_lba`: written at the
    /// zone's write pointer, whose LBA the grant returns. Appends are granted in submission
    /// order, so appends queued together get consecutive ranges in that order.
    pub fn append(&mut self, zone_start_lba: u64, lbas: u64) -> Result<WriteGrant, NvmeStatus> {
        let result = self.append_checked(zone_start_lba, lbas);
        if result.is_ok() {
            self.counters.appends += 1;
        }
        self.count(result.map(|_| ()));
        result
    }

    /// A Read of `lbas` LBAs at `lba` (reading past a write pointer is allowed and returns
    /// deallocated data; crossing into the next zone only with
    /// [`ZonedConfig::cross_zone_read`]).
    pub fn read(&mut self, lba: u64, lbas: u64) -> Result<(), NvmeStatus> {
        let result = self.read_checked(lba, lbas);
        self.count(result);
        result
    }

    /// A zone management send `action` on one zone, named by its start LBA (the command's
    /// SLBA; any other LBA is an invalid field, as the specification requires).
    pub fn manage(
        &mut self,
        action: ZoneAction,
        zone_start_lba: u64,
    ) -> Result<ZoneChange, NvmeStatus> {
        let result = if action == ZoneAction::FlushZrwa {
            self.flush_zrwa(zone_start_lba)
        } else {
            self.zone_at_start(zone_start_lba)
                .and_then(|zone| self.apply(action, zone))
        };
        self.count(result.map(|_| ()));
        result
    }

    /// A zone management send `action` with Select All: applied to every zone in the states
    /// the specification selects for it (Close: ZSIO, ZSEO; Finish: ZSIO, ZSEO, ZSC; Open:
    /// ZSC; Reset: ZSIO, ZSEO, ZSC, ZSF; Offline: ZSRO). Zones are taken in index order; the
    /// first refusal (e.g. too many open zones while opening closed zones) stops the command
    /// and is its status, with the zones before it changed. Returns the changed zones.
    pub fn manage_all(&mut self, action: ZoneAction) -> Result<Vec<ZoneChange>, NvmeStatus> {
        let selected = |s: ZoneState| match action {
            ZoneAction::Close => s.is_open(),
            ZoneAction::Finish => s.is_active(),
            ZoneAction::Open => s == ZoneState::Closed,
            ZoneAction::Reset => s.is_active() || s == ZoneState::Full,
            ZoneAction::Offline => s == ZoneState::ReadOnly,
            ZoneAction::OpenZrwa | ZoneAction::FlushZrwa => false,
        };
        if matches!(action, ZoneAction::OpenZrwa | ZoneAction::FlushZrwa) {
            // (a ZRWA is allocated and flushed one zone at a time)
            self.count(Err(NvmeStatus::InvalidField));
            return Err(NvmeStatus::InvalidField);
        }
        let mut changes = Vec::new();
        let mut result = Ok(());
        for zone in 0..self.config.zone_count {
            if selected(self.zones[zone as usize].state) {
                match self.apply(action, zone) {
                    Ok(change) => changes.push(change),
                    Err(status) => {
                        result = Err(status);
                        break;
                    }
                }
            }
        }
        self.count(result);
        result.map(|()| changes)
    }

    /// The device takes `zone` out of service after a media failure: to ZSRO (readable) or
    /// ZSO (neither), releasing its resources. Not a host command; no status is counted.
    pub fn fail_zone(&mut self, zone: u32, to: ZoneState) {
        assert!(
            matches!(to, ZoneState::ReadOnly | ZoneState::Offline),
            "a failed zone goes read-only or offline, not {to:?}"
        );
        self.release_zrwa(zone);
        self.assign(zone, to);
    }

    /// The controller finds `written_lbas` LBAs of `zone` on its media at power-on (after
    /// preconditioning or a power cut): the zone, empty until now, is Full when they reach its
    /// capacity and Closed otherwise (an open zone is closed by a power loss, ZNS 1.1
    /// §2.1.1.4). Not a host command: no status is counted, and the limits are not checked (a
    /// host kept them before the cut).
    pub fn restore(&mut self, zone: u32, written_lbas: u64) {
        let capacity = self.config.zone_capacity_lbas;
        assert_eq!(
            self.zones[zone as usize].state,
            ZoneState::Empty,
            "zone {zone} restored twice"
        );
        let written = written_lbas.min(capacity);
        self.zones[zone as usize].written_lbas = written;
        if written == capacity {
            self.assign(zone, ZoneState::Full);
        } else if written > 0 {
            self.assign(zone, ZoneState::Closed);
        }
    }

    /// Report Zones: descriptors of the zones from `first_zone` on that pass `filter`, at most
    /// `limit` of them.
    pub fn report(
        &self,
        filter: ReportFilter,
        first_zone: u32,
        limit: usize,
    ) -> Vec<ZoneDescriptor> {
        (first_zone..self.config.zone_count)
            .map(|zone| self.descriptor(zone))
            .filter(|d| match filter {
                ReportFilter::All => true,
                ReportFilter::State(s) => d.state == s,
            })
            .take(limit)
            .collect()
    }

    /// One zone's descriptor.
    pub fn descriptor(&self, zone: u32) -> ZoneDescriptor {
        let z = &self.zones[zone as usize];
        ZoneDescriptor {
            zone,
            state: z.state,
            start_lba: self.start_lba(zone),
            capacity_lbas: self.config.zone_capacity_lbas,
            write_pointer_lba: self.start_lba(zone)
                + if z.state == ZoneState::Full {
                    self.config.zone_capacity_lbas
                } else {
                    z.written_lbas
                },
        }
    }

    /// Zones in each state, in [`ZoneState::ALL`] order.
    pub fn state_counts(&self) -> [u32; 7] {
        let mut counts = [0u32; 7];
        for z in &self.zones {
            let i = ZoneState::ALL
                .iter()
                .position(|&s| s == z.state)
                .expect("every state is in ALL");
            counts[i] += 1;
        }
        counts
    }

    /// Checks the resource counts against the zones' states (tests and debug builds).
    pub fn check_invariants(&self) {
        let open = self.zones.iter().filter(|z| z.state.is_open()).count() as u32;
        let active = self.zones.iter().filter(|z| z.state.is_active()).count() as u32;
        assert_eq!(open, self.open, "open resources");
        assert_eq!(active, self.active, "active resources");
        if self.config.max_open_zones > 0 {
            assert!(self.open <= self.config.max_open_zones, "open limit");
        }
        if self.config.max_active_zones > 0 {
            assert!(self.active <= self.config.max_active_zones, "active limit");
        }
        let implicit: Vec<u32> = (0..self.config.zone_count)
            .filter(|&z| self.zones[z as usize].state == ZoneState::ImplicitlyOpened)
            .collect();
        let mut listed: Vec<u32> = self.implicitly_opened.iter().copied().collect();
        listed.sort_unstable();
        assert_eq!(listed, implicit, "implicitly opened list");
        let zrwa = self.zones.iter().filter(|z| z.zrwa).count() as u32;
        assert_eq!(zrwa, self.zrwa_resources_held(), "ZRWA resources");
        for (zone, z) in self.zones.iter().enumerate() {
            assert!(
                z.written_lbas <= self.config.zone_capacity_lbas,
                "zone {zone} overfull"
            );
            assert!(
                !z.zrwa || z.state.is_active(),
                "zone {zone}: a ZRWA when not active"
            );
            match z.state {
                ZoneState::Empty => assert_eq!(z.written_lbas, 0, "empty zone {zone} written"),
                ZoneState::Closed => {
                    assert!(z.written_lbas > 0 || z.zrwa, "closed zone {zone} unwritten")
                }
                ZoneState::ImplicitlyOpened => {
                    assert!(z.written_lbas < self.config.zone_capacity_lbas)
                }
                _ => {}
            }
        }
    }

    fn count(&mut self, result: Result<(), NvmeStatus>) {
        self.counters
            .statuses
            .add(result.err().unwrap_or(NvmeStatus::Success));
    }

    fn zone_at_start(&self, zone_start_lba: u64) -> Result<u32, NvmeStatus> {
        let zone = self
            .zone_of(zone_start_lba)
            .ok_or(NvmeStatus::LbaOutOfRange)?;
        if self.start_lba(zone) != zone_start_lba {
            return Err(NvmeStatus::InvalidField);
        }
        Ok(zone)
    }

    fn write_checked(&mut self, lba: u64, lbas: u64) -> Result<WriteGrant, NvmeStatus> {
        if lbas == 0 {
            return Err(NvmeStatus::InvalidField);
        }
        let zone = self.zone_of(lba).ok_or(NvmeStatus::LbaOutOfRange)?;
        if lba
            .checked_add(lbas)
            .is_none_or(|end| end > self.config.namespace_lbas())
        {
            return Err(NvmeStatus::LbaOutOfRange);
        }
        self.check_writable(zone)?;
        if self.zones[zone as usize].zrwa {
            return self.grant_zrwa(zone, lba - self.start_lba(zone), lbas);
        }
        if lba != self.write_pointer(zone) {
            return Err(NvmeStatus::ZoneInvalidWrite);
        }
        self.grant(zone, lbas)
    }

    fn append_checked(&mut self, zone_start_lba: u64, lbas: u64) -> Result<WriteGrant, NvmeStatus> {
        let zone = self.zone_at_start(zone_start_lba)?;
        let limit = match self.config.zone_append_max_lbas {
            0 => self.config.zone_capacity_lbas,
            n => n,
        };
        if lbas == 0 || lbas > limit {
            return Err(NvmeStatus::InvalidField);
        }
        self.check_writable(zone)?;
        if self.zones[zone as usize].zrwa {
            return Err(NvmeStatus::InvalidZoneOperation);
        }
        self.grant(zone, lbas)
    }

    fn read_checked(&self, lba: u64, lbas: u64) -> Result<(), NvmeStatus> {
        if lbas == 0 {
            return Err(NvmeStatus::InvalidField);
        }
        let first = self.zone_of(lba).ok_or(NvmeStatus::LbaOutOfRange)?;
        let end = lba
            .checked_add(lbas)
            .filter(|&end| end <= self.config.namespace_lbas())
            .ok_or(NvmeStatus::LbaOutOfRange)?;
        let last = self
            .zone_of(end - 1)
            .expect("the range ends in the namespace");
        if last != first && !self.config.cross_zone_read {
            return Err(NvmeStatus::ZoneBoundaryError);
        }
        for zone in first..=last {
            if self.zones[zone as usize].state == ZoneState::Offline {
                return Err(NvmeStatus::ZoneIsOffline);
            }
        }
        Ok(())
    }

    fn check_writable(&self, zone: u32) -> Result<(), NvmeStatus> {
        match self.zones[zone as usize].state {
            ZoneState::Full => Err(NvmeStatus::ZoneIsFull),
            ZoneState::ReadOnly => Err(NvmeStatus::ZoneIsReadOnly),
            ZoneState::Offline => Err(NvmeStatus::ZoneIsOffline),
            _ => Ok(()),
        }
    }

    /// Writes `lbas` at `zone`'s write pointer: the range must fit the capacity, and the zone
    /// must get an open resource if it has none.
    fn grant(&mut self, zone: u32, lbas: u64) -> Result<WriteGrant, NvmeStatus> {
        let written = self.zones[zone as usize].written_lbas;
        if written + lbas > self.config.zone_capacity_lbas {
            return Err(NvmeStatus::ZoneBoundaryError);
        }
        let closed_zone = self.open_for_write(zone)?;
        let first_lba = self.start_lba(zone) + written;
        let z = &mut self.zones[zone as usize];
        z.written_lbas += lbas;
        z.lbas_written_total += lbas;
        self.counters.lbas_written += lbas;
        let filled_zone = z.written_lbas == self.config.zone_capacity_lbas;
        if filled_zone {
            self.assign(zone, ZoneState::Full);
            self.counters.filled += 1;
        }
        Ok(WriteGrant {
            zone,
            first_lba,
            lbas,
            filled_zone,
            closed_zone,
            zrwa_commit: None,
        })
    }

    /// A write's implicit open: Empty and Closed zones become implicitly opened if the
    /// resources allow (after an automatic close, if enabled); open zones stay as they are.
    fn open_for_write(&mut self, zone: u32) -> Result<Option<u32>, NvmeStatus> {
        let state = self.zones[zone as usize].state;
        if state.is_open() {
            return Ok(None);
        }
        let closed = self.take_open_resource(state == ZoneState::Empty)?;
        self.assign(zone, ZoneState::ImplicitlyOpened);
        Ok(closed)
    }

    /// Checks that a zone can be opened (and made active, if `needs_active`): the active
    /// limit first, since closing a zone frees no active resource, so that a refused command
    /// changes nothing; then an automatic close if the open resources are all taken.
    fn take_open_resource(&mut self, needs_active: bool) -> Result<Option<u32>, NvmeStatus> {
        self.check_resources(needs_active, false)?;
        let closed = self.make_open_room();
        self.check_resources(false, true)?;
        Ok(closed)
    }

    /// With auto close, frees an open resource by closing the oldest implicitly opened zone
    /// when every open resource is taken.
    fn make_open_room(&mut self) -> Option<u32> {
        let limit = self.config.max_open_zones;
        if !self.config.auto_close || limit == 0 || self.open < limit {
            return None;
        }
        let victim = *self.implicitly_opened.front()?;
        self.assign(victim, ZoneState::Closed);
        self.counters.auto_closes += 1;
        Some(victim)
    }

    fn check_resources(&self, needs_active: bool, needs_open: bool) -> Result<(), NvmeStatus> {
        let max_active = self.config.max_active_zones;
        if needs_active && max_active > 0 && self.active + 1 > max_active {
            return Err(NvmeStatus::TooManyActiveZones);
        }
        let max_open = self.config.max_open_zones;
        if needs_open && max_open > 0 && self.open + 1 > max_open {
            return Err(NvmeStatus::TooManyOpenZones);
        }
        Ok(())
    }

    fn apply(&mut self, action: ZoneAction, zone: u32) -> Result<ZoneChange, NvmeStatus> {
        let from = self.zones[zone as usize].state;
        let written_lbas = self.zones[zone as usize].written_lbas;
        let to = match (action, from) {
            // Close: ZSIO/ZSEO → ZSC (ZSE when nothing was written); closing a closed zone
            // is a no-op
            (ZoneAction::Close, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened) => {
                // (a zone holding a ZRWA stays active: it keeps its window)
                if written_lbas == 0 && !self.zones[zone as usize].zrwa {
                    ZoneState::Empty
                } else {
                    ZoneState::Closed
                }
            }
            (ZoneAction::Close, ZoneState::Closed) => ZoneState::Closed,
            // Finish: ZSE/ZSIO/ZSEO/ZSC → ZSF; a full zone stays full
            (ZoneAction::Finish, s) if s.is_active() || s == ZoneState::Empty => {
                // a ZRWA is released; what its window held past the write pointer is not
                // committed (QEMU, NVMeVirt)
                self.release_zrwa(zone);
                self.counters.finishes += 1;
                ZoneState::Full
            }
            (ZoneAction::Finish, ZoneState::Full) => ZoneState::Full,
            // Open: ZSE/ZSIO/ZSC → ZSEO (resources permitting); ZSEO stays
            (ZoneAction::Open, ZoneState::Empty | ZoneState::Closed) => {
                self.take_open_resource(from == ZoneState::Empty)?;
                ZoneState::ExplicitlyOpened
            }
            (ZoneAction::Open, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened) => {
                ZoneState::ExplicitlyOpened
            }
            // Reset: ZSIO/ZSEO/ZSC/ZSF → ZSE; an empty zone stays empty
            (ZoneAction::Reset, s) if s.is_active() || s == ZoneState::Full => {
                self.release_zrwa(zone);
                let z = &mut self.zones[zone as usize];
                z.written_lbas = 0;
                z.resets += 1;
                self.counters.resets += 1;
                ZoneState::Empty
            }
            (ZoneAction::Reset, ZoneState::Empty) => ZoneState::Empty,
            // Offline: ZSRO → ZSO; an offline zone stays offline
            (ZoneAction::Offline, ZoneState::ReadOnly | ZoneState::Offline) => ZoneState::Offline,
            (ZoneAction::OpenZrwa, _) => return self.open_zrwa(zone),
            _ => return Err(NvmeStatus::InvalidZoneStateTransition),
        };
        self.assign(zone, to);
        Ok(ZoneChange {
            zone,
            from,
            to,
            written_lbas,
            committed_lbas: 0,
        })
    }

    /// Moves `zone` to `to`, keeping the resource counts and the implicitly opened list.
    fn assign(&mut self, zone: u32, to: ZoneState) {
        let from = self.zones[zone as usize].state;
        if from == to {
            return;
        }
        if from.is_open() {
            self.open -= 1;
        }
        if from.is_active() {
            self.active -= 1;
        }
        if from == ZoneState::ImplicitlyOpened {
            let at = self
                .implicitly_opened
                .iter()
                .position(|&z| z == zone)
                .expect("an implicitly opened zone is listed");
            self.implicitly_opened.remove(at);
        }
        if to.is_open() {
            self.open += 1;
        }
        if to.is_active() {
            self.active += 1;
        }
        if to == ZoneState::ImplicitlyOpened {
            self.implicitly_opened.push_back(zone);
        }
        self.zones[zone as usize].state = to;
    }
}
