//! What a host puts on a die's interface, one cycle at a time, and what the die answers.

use crate::stage::Stage;
use nandlab_core::SimTime;
use std::fmt;

/// One bus cycle (or burst of data cycles) from the host to one die.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cycle {
    /// A command cycle (CLE high): the opcode, see [`super::commands`].
    Command(u8),
    /// One address cycle (ALE high): one byte of a column or row address.
    Address(u8),
    /// Data input (TIR): `bytes` bytes into the die's register, back to back.
    DataIn { bytes: u32 },
    /// Data output (TOR, or the status byte after 70h/78h): `bytes` bytes out of the register.
    DataOut { bytes: u32 },
    /// The host waits until the die's R/B# signal is ready. Takes no bus time of its own.
    WaitReady,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Cycle::Command(code) => write!(f, "command {code:02X}h"),
            Cycle::Address(_) => f.write_str("address cycle"),
            Cycle::DataIn { bytes } => write!(f, "data input of {}", plural_bytes(bytes)),
            Cycle::DataOut { bytes } => write!(f, "data output of {}", plural_bytes(bytes)),
            Cycle::WaitReady => f.write_str("wait for ready (R/B#)"),
        }
    }
}

fn plural_bytes(bytes: u32) -> String {
    if bytes == 1 {
        "1 byte".to_string()
    } else {
        format!("{bytes} bytes")
    }
}

/// A cell stage (TON, TIN or BER) that a confirm command started on the die's array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayStage {
    pub stage: Stage,
    /// When the array starts (the confirm's end, or later if the array was still busy with a
    /// cached operation).
    pub start: SimTime,
    pub end: SimTime,
}

/// What the die did with one accepted cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleOutcome {
    /// When the cycle started on the die's interface: the host's `now`, or the end of the
    /// previous cycle if that is later (cycles to one die never overlap).
    pub start: SimTime,
    /// When the cycle completed on the bus (for [`Cycle::WaitReady`]: when the die was ready).
    pub end: SimTime,
    /// The stage the cycle's bus time counts towards; `None` for [`Cycle::WaitReady`].
    pub stage: Option<Stage>,
    /// The cell stage a confirm command started, if any.
    pub array: Option<ArrayStage>,
    /// When the die is ready (R/B# high) after this cycle; later than `end` after a confirm.
    pub ready_at: SimTime,
}

impl CycleOutcome {
    /// Bus time of the cycle.
    pub fn duration(&self) -> SimTime {
        self.end - self.start
    }
}
