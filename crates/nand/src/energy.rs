//! Energy model (SPEC N9, paper 003 §9.1, eqs. 1–3): each stage dissipates V · I · t, with the
//! interface current during bus stages and the array current during cell stages. Energies are
//! accumulated in picojoules (f64) and reported in microjoules.

use crate::config::NandConfig;
use crate::stage::{PerStage, Stage};
use nandlab_core::SimTime;

#[derive(Clone, Debug)]
pub struct EnergyModel {
    /// Power of each stage in picojoules per picosecond (= watts).
    watts: [f64; Stage::COUNT],
    /// Power of each stage of a SiM op (match mode): bus stages at the SiM bus voltage and
    /// current, MATCH at the SiM current (paper 004 Table II).
    match_watts: [f64; Stage::COUNT],
    standby_watts: f64,
}

impl EnergyModel {
    pub fn new(config: &NandConfig) -> Self {
        let e = &config.electrical;
        let v = e.supply_voltage_v;
        let amps = |ma: f64| ma * 1e-3;
        let interface = v * amps(e.interface_current_ma);
        let mut watts = [0.0; Stage::COUNT];
        for stage in Stage::ALL {
            watts[stage.index()] = match stage {
                Stage::Ton => v * amps(e.read_current_ma.unwrap_or(e.array_current_ma)),
                Stage::Tin => v * amps(e.program_current_ma.unwrap_or(e.array_current_ma)),
                Stage::Ber => v * amps(e.erase_current_ma.unwrap_or(e.array_current_ma)),
                Stage::Match => config
                    .search
                    .as_ref()
                    .map_or(0.0, |s| v * amps(s.match_current_ma)),
                _ => interface,
            };
        }
        let mut match_watts = watts;
        if let Some(s) = &config.search {
            for stage in Stage::ALL {
                if stage.is_bus() {
                    match_watts[stage.index()] = s.bus_voltage_v * amps(s.match_bus_current_ma);
                }
            }
        }
        EnergyModel {
            watts,
            match_watts,
            standby_watts: v * e.standby_current_ua * 1e-6,
        }
    }

    /// Energy of `stage` lasting `duration`, in picojoules.
    pub fn stage_pj(&self, stage: Stage, duration: SimTime) -> f64 {
        // W · ps = 1e-12 J = 1 pJ
        self.watts[stage.index()] * duration.as_ps() as f64
    }

    /// Power of every stage, in watts (pJ/ps).
    pub fn stage_watts(&self) -> PerStage<f64> {
        PerStage(self.watts)
    }

    /// Power of every stage of a SiM op, in watts.
    pub fn match_stage_watts(&self) -> PerStage<f64> {
        PerStage(self.match_watts)
    }

    /// Energy of a die idling for `duration`, in picojoules.
    pub fn idle_pj(&self, duration: SimTime) -> f64 {
        self.standby_watts * duration.as_ps() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::preset;

    #[test]
    fn table_iii_stage_energies_by_hand() {
        let m = EnergyModel::new(&preset("qdp-slc").unwrap());
        // TON: 3.3 V x 20 mA x 25 us = 1.65 uJ
        let ton = m.stage_pj(Stage::Ton, SimTime::from_us(25));
        assert!((ton - 1.65e6).abs() < 1.0, "{ton}");
        // TOR of 4 KB at 25 ns/byte = 102.4 us at 3.3 V x 5 mA = 1.6896 uJ
        let tor = m.stage_pj(Stage::Tor, SimTime::from_ns(102_400));
        assert!((tor - 1.6896e6).abs() < 1.0, "{tor}");
    }
}
