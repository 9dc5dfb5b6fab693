//! The die state machine's states (paper 003 Fig. 7) and what each one expects next.
//!
//! A die is in one [`Phase`] of a command sequence at a time. Multiplane queue commands (32h,
//! 11h, D1h) leave a [`Queue`] of planes behind that restricts the next sequence to the same
//! operation. Per plane, [`PlaneRegisters`] record which page's data the registers hold, so that
//! data output, cache reads and copyback programs can be checked against what was read.

use super::commands as op;
use crate::geometry::PageAddress;

/// Most address cycles of any address (page addresses have at most 8).
pub(super) const MAX_ADDRESS_CYCLES: usize = 8;

/// A decoded target of a sequence: the page (global address of this die) and the column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Target {
    pub address: PageAddress,
    pub column: u32,
}

/// Where the die is within a command sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Between sequences: the next cycle must be a first command (or data output).
    Idle,
    /// Latching the address bytes that follow `command`.
    Address {
        command: u8,
        received: u32,
        expected: u32,
        bytes: [u8; MAX_ADDRESS_CYCLES],
    },
    /// The address after 00h, 06h or 60h is complete: a confirm command must follow.
    Confirm { command: u8, target: Target },
    /// The address after 80h or 85h is complete: data input, then a confirm.
    Data {
        command: u8,
        target: Target,
        bytes_in: u32,
    },
    /// The feature address after EFh is complete: the four parameter bytes must follow.
    Feature { bytes_in: u32 },
}

/// A multiplane operation whose earlier planes are queued (32h, 11h after 80h or 85h, D1h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Queue {
    Read,
    Program,
    Copyback,
    Erase,
}

impl Queue {
    /// The command that must open the next plane's sequence.
    pub fn setup_command(self) -> u8 {
        match self {
            Queue::Read => op::READ,
            Queue::Program => op::PROGRAM,
            Queue::Copyback => op::COPYBACK_PROGRAM,
            Queue::Erase => op::ERASE,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Queue::Read => "read",
            Queue::Program => "program",
            Queue::Copyback => "copyback program",
            Queue::Erase => "erase",
        }
    }

    fn queue_command(self) -> u8 {
        match self {
            Queue::Read => op::MULTIPLANE_READ_QUEUE,
            Queue::Program | Queue::Copyback => op::MULTIPLANE_PROGRAM_QUEUE,
            Queue::Erase => op::MULTIPLANE_ERASE_QUEUE,
        }
    }
}

/// What one plane's data and cache registers hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PlaneRegisters {
    /// The page whose data the host can read out (the cache register after 31h/3Fh, the data
    /// register after 30h/35h).
    pub output: Option<PageAddress>,
    /// The page sensed (or being sensed) into the data register by 30h or 31h, which the next
    /// 31h or 3Fh moves to the output.
    pub sensed: Option<PageAddress>,
    /// The source page read by 35h, which an 85h copyback program of this plane writes.
    pub copyback_source: Option<PageAddress>,
}

/// What the die expects next, for error messages.
pub(super) fn expected(phase: &Phase, queue: Option<Queue>) -> String {
    match *phase {
        Phase::Idle => match queue {
            Some(q) => format!(
                "{:02X}h (the next plane of the multiplane {} queued with {:02X}h), 70h, 78h or FFh",
                q.setup_command(),
                q.name(),
                q.queue_command()
            ),
            None => "a command (00h, 06h, 31h, 3Fh, 60h, 70h, 78h, 80h, 85h, EFh or FFh)".into(),
        },
        Phase::Address {
            command,
            received,
            expected,
            ..
        } => format!(
            "address cycle {} of {expected} after {command:02X}h",
            received + 1
        ),
        Phase::Confirm { command, .. } => match command {
            op::READ => "30h, 31h, 32h or 35h after 00h-address".into(),
            op::CHANGE_READ_COLUMN => "E0h after 06h-address".into(),
            op::SIM_PAGE_OPEN => "C1h or C2h after C0h-address".into(),
            op::SIM_BLOCK_MODE => "C9h or CAh after C8h-address".into(),
            _ => "D0h or D1h after 60h-address".into(),
        },
        Phase::Data {
            command: op::PROGRAM,
            bytes_in: 0,
            ..
        } => "data input after 80h-address".into(),
        Phase::Data {
            command: op::PROGRAM,
            ..
        } => "data input, 10h, 11h or 15h after 80h-address-data".into(),
        Phase::Data {
            command: op::SIM_SEARCH,
            ..
        } => "keys (16 bytes each), then C5h after C4h-address".into(),
        Phase::Data {
            command: op::SIM_GATHER,
            ..
        } => "the 8-byte chunk bitmap, then C7h after C6h-address".into(),
        Phase::Data { .. } => "data input, 10h or 11h after 85h-address".into(),
        Phase::Feature { bytes_in } => format!(
            "data input of the {} feature bytes after EFh-address ({bytes_in} received)",
            op::FEATURE_PARAMETER_BYTES
        ),
    }
}
