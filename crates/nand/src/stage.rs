//! Stages (SPEC N3, paper 003 §7.1): the unit of timing and energy.
//!
//! Bus stages (CLE, ALE, TIR, TOR, status read) hold the channel's shared I/O bus; cell stages
//! (TIN, TON, BER) hold only the die's array. IDLE is time a die spends with nothing to do.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Stage {
    /// Command latch: one command cycle on the bus.
    Cle,
    /// Address latch: the address cycles on the bus.
    Ale,
    /// Transfer in of register: data from the controller into the page/cache register.
    Tir,
    /// Transfer out of register: data from the register to the controller.
    Tor,
    /// Transfer in of NAND cells: programming the array from the data register.
    Tin,
    /// Transfer out of NAND cells: sensing the array into the data register.
    Ton,
    /// Block erase.
    Ber,
    /// Status read (70h/78h command and one status byte) after a program or erase.
    Status,
    /// Search-in-Memory bit matching in the page buffers (paper 004 §IV-B): holds the die, not
    /// the bus. Zero in every run without SiM ops.
    Match,
}

impl Stage {
    pub const ALL: [Stage; 9] = [
        Stage::Cle,
        Stage::Ale,
        Stage::Tir,
        Stage::Tor,
        Stage::Tin,
        Stage::Ton,
        Stage::Ber,
        Stage::Status,
        Stage::Match,
    ];
    pub const COUNT: usize = 9;

    pub fn index(self) -> usize {
        self as usize
    }

    /// Bus stages hold the channel; cell stages hold the die's array.
    pub fn is_bus(self) -> bool {
        matches!(
            self,
            Stage::Cle | Stage::Ale | Stage::Tir | Stage::Tor | Stage::Status
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Stage::Cle => "CLE",
            Stage::Ale => "ALE",
            Stage::Tir => "TIR",
            Stage::Tor => "TOR",
            Stage::Tin => "TIN",
            Stage::Ton => "TON",
            Stage::Ber => "BER",
            Stage::Status => "STATUS",
            Stage::Match => "MATCH",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A per-stage table of values (times, energies, counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerStage<T>(pub [T; Stage::COUNT]);

impl<T: Copy + std::ops::AddAssign> PerStage<T> {
    pub fn add(&mut self, stage: Stage, value: T) {
        self.0[stage.index()] += value;
    }
    pub fn get(&self, stage: Stage) -> T {
        self.0[stage.index()]
    }
    pub fn iter(&self) -> impl Iterator<Item = (Stage, T)> + '_ {
        Stage::ALL.iter().map(|s| (*s, self.0[s.index()]))
    }
}

impl<T: Copy + std::ops::AddAssign> PerStage<T> {
    pub fn merge(&mut self, other: &PerStage<T>) {
        for i in 0..Stage::COUNT {
            self.0[i] += other.0[i];
        }
    }
}
