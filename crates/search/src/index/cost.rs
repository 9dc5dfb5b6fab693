//! What a sequence of SiM calls cost on the chip model: bytes on the chip buses, NAND energy
//! (stage energy + idle, the same sum as the evaluation harness) and elapsed simulated time.

use crate::device::SearchDevice;
use nandlab_core::SimTime;
use nandlab_nand::{NandSim, OpKind};

/// The chip model's counters at a start point; [`ChipMeter::finish`] runs the device
/// to idle and returns the difference.
#[derive(Clone, Copy, Debug)]
pub struct ChipMeter {
    bus_bytes: u64,
    energy_pj: f64,
    started_at: SimTime,
}

/// Cost of what ran between [`ChipMeter::start`] and [`ChipMeter::finish`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChipCost {
    /// Bytes moved on the chips' buses (commands, keys, bitmaps, chunks, pages).
    pub bus_bytes: u64,
    /// NAND energy, nJ.
    pub energy_nj: f64,
    /// Simulated time until the chip model was idle again, ns.
    pub elapsed_ns: f64,
}

impl ChipMeter {
    pub fn start<D: SearchDevice>(device: &D) -> Self {
        let sim = device.nand();
        ChipMeter {
            bus_bytes: chip_bus_bytes(sim),
            energy_pj: chip_energy_pj(sim),
            started_at: sim.now(),
        }
    }

    /// Runs the device until idle and returns the cost since [`ChipMeter::start`].
    pub fn finish<D: SearchDevice>(&self, device: &mut D) -> ChipCost {
        device.settle();
        let sim = device.nand();
        ChipCost {
            bus_bytes: chip_bus_bytes(sim) - self.bus_bytes,
            energy_nj: (chip_energy_pj(sim) - self.energy_pj) / 1e3,
            elapsed_ns: sim.now().saturating_sub(self.started_at).as_ns_f64(),
        }
    }
}

/// The NAND chips' energy so far: stage energy plus idle energy, pJ.
pub fn chip_energy_pj(sim: &NandSim) -> f64 {
    sim.stats()
        .stage_energy_pj()
        .iter()
        .map(|(_, e)| e)
        .sum::<f64>()
        + sim.idle_energy_pj()
}

/// Bytes moved on the chips' buses so far (every op kind).
pub fn chip_bus_bytes(sim: &NandSim) -> u64 {
    OpKind::ALL
        .iter()
        .map(|k| sim.stats().kind(*k).bytes_transferred)
        .sum()
}
