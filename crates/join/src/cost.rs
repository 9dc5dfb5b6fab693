//! What a join costs in PCM: the device model's counts and figures, and beside them the
//! thesis's analytic formulas (Table 4.1, after Chen, Gibbons, Nath, CIDR'11) computed from the
//! same counts, as a cross-check.
//!
//! The formulas as the thesis states them:
//! - Wear = κ·N_w (κ: modified bits per modified word),
//! - Energy = 8(N_w·E_wb + N_r·E_rb),
//! - Latency = 8(N_w·T_w + N_r·T_r) (cycles),
//!
//! with N_w words written and N_r words read. We count N_w as the words the device programmed
//! (data-comparison write skips unchanged words) and N_r as the 8 B words of the lines read.

use nandlab_pcm::{PcmDevice, PcmStats};
use serde::Serialize;

/// The thesis's constants (Table 4.1 / Table 5.3): E_rb, E_wb in pJ, T_r, T_w in cycles, clock
/// of Table 5.3.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FormulaConstants {
    /// Energy per bit read, pJ (2).
    pub read_bit_energy_pj: f64,
    /// Energy per bit written, pJ (16).
    pub write_bit_energy_pj: f64,
    /// Read latency, cycles (230).
    pub read_cycles: f64,
    /// Write latency, cycles (450).
    pub write_cycles: f64,
    /// Clock, GHz (2.0, Xeon E7540 of Table 5.3).
    pub clock_ghz: f64,
}

impl Default for FormulaConstants {
    fn default() -> Self {
        FormulaConstants {
            read_bit_energy_pj: 2.0,
            write_bit_energy_pj: 16.0,
            read_cycles: 230.0,
            write_cycles: 450.0,
            clock_ghz: 2.0,
        }
    }
}

/// PCM cost of one piece of work (a join, a query, building a layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct PcmCost {
    /// Lines read (64 B with the `cidr11` preset).
    pub lines_read: u64,
    /// Words read, N_r: the 8 B words of the lines read.
    pub words_read: u64,
    /// Words programmed, N_w.
    pub words_written: u64,
    /// Words covered by writes that needed no programming.
    pub words_unchanged: u64,
    /// Cells programmed: the device's wear.
    pub bits_programmed: u64,
    /// Device read + write energy, pJ.
    pub energy_pj: f64,
    /// Device latency (sum over accesses, each on an idle device, banks in parallel), ns.
    pub latency_ns: f64,
    /// κ = bits programmed per word programmed.
    pub kappa: f64,
    /// Thesis formula: Wear = κ·N_w (equals `bits_programmed`).
    pub formula_wear_bits: f64,
    /// Thesis formula: Energy = 8(N_w·E_wb + N_r·E_rb), pJ.
    pub formula_energy_pj: f64,
    /// Thesis formula: Latency = 8(N_w·T_w + N_r·T_r) cycles, in ns at the stated clock.
    pub formula_latency_ns: f64,
}

impl PcmCost {
    /// The cost between two snapshots of a device's stats.
    pub fn between(before: &PcmStats, after: &PcmStats, device: &PcmDevice) -> PcmCost {
        let line_words = device.config().geometry.line_size_bytes / 8;
        let lines_read = after.lines_read - before.lines_read;
        let words_written = after.words_written - before.words_written;
        let bits_programmed = after.bits_programmed - before.bits_programmed;
        let latency = (after.read_time + after.write_time).as_ps()
            - (before.read_time + before.write_time).as_ps();
        let mut cost = PcmCost {
            lines_read,
            words_read: lines_read * line_words,
            words_written,
            words_unchanged: after.words_unchanged - before.words_unchanged,
            bits_programmed,
            energy_pj: (after.read_energy_pj + after.write_energy_pj)
                - (before.read_energy_pj + before.write_energy_pj),
            latency_ns: latency as f64 / 1_000.0,
            ..PcmCost::default()
        };
        cost.apply_formulas(&FormulaConstants::default());
        cost
    }

    /// Fills the formula fields from the counts.
    pub fn apply_formulas(&mut self, k: &FormulaConstants) {
        let (nw, nr) = (self.words_written as f64, self.words_read as f64);
        self.kappa = if self.words_written == 0 {
            0.0
        } else {
            self.bits_programmed as f64 / nw
        };
        self.formula_wear_bits = self.kappa * nw;
        self.formula_energy_pj = 8.0 * (nw * k.write_bit_energy_pj + nr * k.read_bit_energy_pj);
        self.formula_latency_ns = 8.0 * (nw * k.write_cycles + nr * k.read_cycles) / k.clock_ghz;
    }

    /// The sum of two costs (formulas recomputed).
    pub fn plus(&self, other: &PcmCost) -> PcmCost {
        let mut sum = PcmCost {
            lines_read: self.lines_read + other.lines_read,
            words_read: self.words_read + other.words_read,
            words_written: self.words_written + other.words_written,
            words_unchanged: self.words_unchanged + other.words_unchanged,
            bits_programmed: self.bits_programmed + other.bits_programmed,
            energy_pj: self.energy_pj + other.energy_pj,
            latency_ns: self.latency_ns + other.latency_ns,
            ..PcmCost::default()
        };
        sum.apply_formulas(&FormulaConstants::default());
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_by_hand() {
        let mut c = PcmCost {
            words_read: 100,
            words_written: 10,
            bits_programmed: 250,
            ..PcmCost::default()
        };
        c.apply_formulas(&FormulaConstants::default());
        assert_eq!(c.kappa, 25.0);
        assert_eq!(c.formula_wear_bits, 250.0);
        assert_eq!(c.formula_energy_pj, 8.0 * (10.0 * 16.0 + 100.0 * 2.0));
        assert_eq!(
            c.formula_latency_ns,
            8.0 * (10.0 * 450.0 + 100.0 * 230.0) / 2.0
        );
    }
}
