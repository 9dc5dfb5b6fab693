//! Paper 004 Table I (SPEC R-S3): one B+tree point lookup with and without SiM, data transfer
//! from the page buffer to the controller only. The table's own parameters, not the `sim2024`
//! preset's (Table II sets the match bus to 80 MT/s and 5 mA for the evaluation):
//!
//! | | SiM | without SiM | source |
//! |---|---|---|---|
//! | I/O | 64 B bitmap + 64 B chunk | key page + value page, 2 × 4 KiB | §V-A |
//! | bus | 40 MT/s (8-bit) | 1,600 MT/s | Table I; ONFI 4.1 [21] |
//! | current | 11 mA | 152 mA | YMTC datasheet [22]; patent [2] |
//! | voltage | 1.8 V | 1.8 V | not stated: the only I/O voltage that gives the table's energies |
//!
//! Energy = voltage × current × transfer time.

/// One column of Table I.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Table1Column {
    pub io_bytes: u64,
    pub bus_mts: f64,
    pub current_ma: f64,
    pub voltage_v: f64,
}

impl Table1Column {
    /// Transfer time at one byte per transfer (8-bit bus), in µs.
    pub fn latency_us(&self) -> f64 {
        self.io_bytes as f64 / self.bus_mts
    }

    pub fn energy_nj(&self) -> f64 {
        // V × mA × µs = nJ
        self.voltage_v * self.current_ma * self.latency_us()
    }
}

/// Table I with the reductions of §VII-B.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Table1 {
    pub sim: Table1Column,
    pub full: Table1Column,
    /// Verification window sent on page-open (§VII-B: "another 256B"), internal bus only.
    pub window_bytes: u64,
}

impl Table1 {
    /// Host (PCIe) bytes, full pages over SiM (paper: 64×).
    pub fn host_reduction(&self) -> f64 {
        self.full.io_bytes as f64 / self.sim.io_bytes as f64
    }

    /// Internal-bus bytes, full pages over SiM with the window (paper: 21×).
    pub fn internal_reduction(&self) -> f64 {
        self.full.io_bytes as f64 / (self.sim.io_bytes + self.window_bytes) as f64
    }
}

/// Table I's parameters (see the module docs for their sources).
pub fn table1() -> Table1 {
    const IO_VOLTAGE_V: f64 = 1.8;
    Table1 {
        sim: Table1Column {
            io_bytes: 64 + 64,
            bus_mts: 40.0,
            current_ma: 11.0,
            voltage_v: IO_VOLTAGE_V,
        },
        full: Table1Column {
            io_bytes: 2 * 4096,
            bus_mts: 1600.0,
            current_ma: 152.0,
            voltage_v: IO_VOLTAGE_V,
        },
        window_bytes: 256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table1_is_reproduced_from_its_bus_rates_and_currents() {
        let t = table1();
        assert_eq!((t.sim.io_bytes, t.full.io_bytes), (128, 8192));
        assert!((t.sim.latency_us() - 3.2).abs() < 1e-12);
        assert!((t.full.latency_us() - 5.12).abs() < 1e-12); // paper: 5.1 µs
        assert_eq!(t.sim.energy_nj().round(), 63.0);
        assert_eq!((t.full.energy_nj() / 100.0).round() * 100.0, 1400.0);
        assert!((t.full.energy_nj() / t.sim.energy_nj() - 22.1).abs() < 0.1); // paper: 22×
        assert_eq!(t.host_reduction(), 64.0);
        assert_eq!(t.internal_reduction().floor(), 21.0);
    }
}
