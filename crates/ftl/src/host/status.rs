//! NVMe completion status (SPEC Z1): what a command's completion says when the device refuses
//! it. A refused command is an answer to the host, not a Rust error: the host interface
//! returns the status on the completion and counts it.
//!
//! Codes are those of the NVMe Base Specification 2.0 (generic command status, status code
//! type 0h) and of the Zoned Namespace Command Set Specification 1.1 (command specific
//! status, type 1h, values B6h–BFh; B6h and B7h came with the ZRWA, TP4076).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Status code type (the SCT field of a completion's status).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum StatusCodeType {
    /// 0h: generic command status.
    Generic = 0x0,
    /// 1h: command specific status.
    CommandSpecific = 0x1,
}

/// The status of a completed NVMe command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NvmeStatus {
    /// 00h/00h: the command completed.
    Success,
    /// 00h/02h: a field of the command is invalid (e.g. a Zone Append whose ZSLBA is not the
    /// start of a zone, or a placement handle that does not exist).
    InvalidField,
    /// 00h/80h: the range reaches beyond the namespace.
    LbaOutOfRange,
    /// 01h/B8h: the range crosses the end of the zone's writable capacity (or, for reads
    /// without cross-zone reads, the zone's end).
    ZoneBoundaryError,
    /// 01h/B9h: the zone is full.
    ZoneIsFull,
    /// 01h/BAh: the zone is read-only.
    ZoneIsReadOnly,
    /// 01h/BBh: the zone is offline.
    ZoneIsOffline,
    /// 01h/BCh: a write that does not start at the zone's write pointer.
    ZoneInvalidWrite,
    /// 01h/BDh: the command would make more zones active than the namespace allows.
    TooManyActiveZones,
    /// 01h/BEh: the command would make more zones open than the namespace allows.
    TooManyOpenZones,
    /// 01h/BFh: the zone management action is not allowed from the zone's state.
    InvalidZoneStateTransition,
    /// 01h/B6h: the operation is not allowed on the zone (a Zone Append to a zone with a
    /// ZRWA; an explicit ZRWA flush of a zone without one).
    InvalidZoneOperation,
    /// 01h/B7h: no ZRWA resource is left for an Open Zone that asks for one.
    ZrwaResourcesUnavailable,
}

impl NvmeStatus {
    /// Every status, in a fixed order (per-status counter tables are indexed by
    /// [`NvmeStatus::index`]).
    pub const ALL: [NvmeStatus; 13] = [
        NvmeStatus::Success,
        NvmeStatus::InvalidField,
        NvmeStatus::LbaOutOfRange,
        NvmeStatus::ZoneBoundaryError,
        NvmeStatus::ZoneIsFull,
        NvmeStatus::ZoneIsReadOnly,
        NvmeStatus::ZoneIsOffline,
        NvmeStatus::ZoneInvalidWrite,
        NvmeStatus::TooManyActiveZones,
        NvmeStatus::TooManyOpenZones,
        NvmeStatus::InvalidZoneStateTransition,
        NvmeStatus::InvalidZoneOperation,
        NvmeStatus::ZrwaResourcesUnavailable,
    ];
    /// Number of statuses.
    pub const COUNT: usize = Self::ALL.len();

    /// Index in [`NvmeStatus::ALL`].
    pub fn index(self) -> usize {
        Self::ALL
            .iter()
            .position(|&s| s == self)
            .expect("every status is in ALL")
    }

    /// The status code type.
    pub fn code_type(self) -> StatusCodeType {
        match self {
            NvmeStatus::Success | NvmeStatus::InvalidField | NvmeStatus::LbaOutOfRange => {
                StatusCodeType::Generic
            }
            _ => StatusCodeType::CommandSpecific,
        }
    }

    /// The status code (SC field).
    pub fn code(self) -> u8 {
        match self {
            NvmeStatus::Success => 0x00,
            NvmeStatus::InvalidField => 0x02,
            NvmeStatus::LbaOutOfRange => 0x80,
            NvmeStatus::ZoneBoundaryError => 0xB8,
            NvmeStatus::ZoneIsFull => 0xB9,
            NvmeStatus::ZoneIsReadOnly => 0xBA,
            NvmeStatus::ZoneIsOffline => 0xBB,
            NvmeStatus::ZoneInvalidWrite => 0xBC,
            NvmeStatus::TooManyActiveZones => 0xBD,
            NvmeStatus::TooManyOpenZones => 0xBE,
            NvmeStatus::InvalidZoneStateTransition => 0xBF,
            NvmeStatus::InvalidZoneOperation => 0xB6,
            NvmeStatus::ZrwaResourcesUnavailable => 0xB7,
        }
    }

    /// The 15-bit status field of a completion queue entry without its phase tag:
    /// `SCT << 8 | SC` (DNR, More and CRD bits clear).
    pub fn field(self) -> u16 {
        (u16::from(self.code_type() as u8) << 8) | u16::from(self.code())
    }

    /// Whether the command completed.
    pub fn is_success(self) -> bool {
        self == NvmeStatus::Success
    }

    /// The name used in reports and errors (snake case, as serialized).
    pub fn name(self) -> &'static str {
        match self {
            NvmeStatus::Success => "success",
            NvmeStatus::InvalidField => "invalid_field",
            NvmeStatus::LbaOutOfRange => "lba_out_of_range",
            NvmeStatus::ZoneBoundaryError => "zone_boundary_error",
            NvmeStatus::ZoneIsFull => "zone_is_full",
            NvmeStatus::ZoneIsReadOnly => "zone_is_read_only",
            NvmeStatus::ZoneIsOffline => "zone_is_offline",
            NvmeStatus::ZoneInvalidWrite => "zone_invalid_write",
            NvmeStatus::TooManyActiveZones => "too_many_active_zones",
            NvmeStatus::TooManyOpenZones => "too_many_open_zones",
            NvmeStatus::InvalidZoneStateTransition => "invalid_zone_state_transition",
            NvmeStatus::InvalidZoneOperation => "invalid_zone_operation",
            NvmeStatus::ZrwaResourcesUnavailable => "zrwa_resources_unavailable",
        }
    }
}

impl fmt::Display for NvmeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (SCT {:X}h, SC {:02X}h)",
            self.name(),
            self.code_type() as u8,
            self.code()
        )
    }
}

/// Counts of completions by status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    counts: [u64; NvmeStatus::COUNT],
}

impl StatusCounts {
    /// Counts one completion with `status`.
    pub fn add(&mut self, status: NvmeStatus) {
        self.counts[status.index()] += 1;
    }
    /// Completions with `status`.
    pub fn get(&self, status: NvmeStatus) -> u64 {
        self.counts[status.index()]
    }
    /// Completions with any status but success.
    pub fn refused(&self) -> u64 {
        self.counts.iter().sum::<u64>() - self.get(NvmeStatus::Success)
    }
    /// `(name, count)` of every status counted at least once, in [`NvmeStatus::ALL`] order.
    pub fn nonzero(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        NvmeStatus::ALL
            .iter()
            .zip(self.counts.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(s, n)| (s.name(), *n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_follow_the_specifications() {
        assert_eq!(NvmeStatus::Success.field(), 0x000);
        assert_eq!(NvmeStatus::InvalidField.field(), 0x002);
        assert_eq!(NvmeStatus::LbaOutOfRange.field(), 0x080);
        assert_eq!(NvmeStatus::ZoneBoundaryError.field(), 0x1B8);
        assert_eq!(NvmeStatus::ZoneInvalidWrite.field(), 0x1BC);
        assert_eq!(NvmeStatus::InvalidZoneStateTransition.field(), 0x1BF);
        assert_eq!(NvmeStatus::InvalidZoneOperation.field(), 0x1B6);
        assert_eq!(NvmeStatus::ZrwaResourcesUnavailable.field(), 0x1B7);
        // every status has its own field and index
        for (i, a) in NvmeStatus::ALL.iter().enumerate() {
            assert_eq!(a.index(), i);
            for b in &NvmeStatus::ALL[i + 1..] {
                assert_ne!(a.field(), b.field());
                assert_ne!(a.name(), b.name());
            }
        }
        assert_eq!(
            NvmeStatus::TooManyOpenZones.to_string(),
            "too_many_open_zones (SCT 1h, SC BEh)"
        );
    }

    #[test]
    fn counts_add_up() {
        let mut c = StatusCounts::default();
        c.add(NvmeStatus::Success);
        c.add(NvmeStatus::ZoneIsFull);
        c.add(NvmeStatus::ZoneIsFull);
        assert_eq!(c.get(NvmeStatus::ZoneIsFull), 2);
        assert_eq!(c.refused(), 2);
        assert_eq!(
            c.nonzero().collect::<Vec<_>>(),
            vec![("success", 1), ("zone_is_full", 2)]
        );
    }
}
