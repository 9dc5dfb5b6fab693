//! The controller's own costs (issue 12 item 3): firmware processing, the DRAM buffer, the host
//! link and the ECC decoder, in time and energy. Every figure is a preset parameter with its
//! source; all zero (the default) is the pure-chip controller of the earlier experiments, whose
//! results are unchanged.

use crate::error::{FtlResult, config_error};
use serde::{Deserialize, Serialize};

/// Controller cost parameters (`[ssd.controller]` in a stack config).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerCosts {
    /// Where the figures come from.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Firmware time per host command (command fetch, FTL lookup, completion), on the
    /// controller's processor (commands queue for it).
    pub firmware_command_ns: f64,
    /// Firmware time per GC / wear-leveling page move (it delays later commands).
    pub firmware_gc_move_ns: f64,
    /// DRAM access latency per page access of the write buffer (row activate + CAS).
    pub dram_access_ns: f64,
    /// DRAM bandwidth for page transfers into / out of the buffer, MB/s (0: no transfer time).
    pub dram_bandwidth_mb_s: f64,
    /// Host link: PCIe generation 1–5 (0: the link takes no time).
    pub host_link_pcie_gen: u32,
    /// Host link: PCIe lanes (1, 2, 4, 8 or 16).
    pub host_link_lanes: u32,
    /// ECC decode time of a page read from flash.
    pub ecc_decode_ns: f64,
    /// Extra ECC decode time per read retry of that page.
    pub ecc_retry_decode_ns: f64,
    /// Controller energy per host command.
    pub controller_command_nj: f64,
    /// Controller energy per GC / wear-leveling page move.
    pub controller_gc_move_nj: f64,
    /// DRAM energy per byte moved into or out of the buffer.
    pub dram_pj_per_byte: f64,
    /// Host PHY energy per byte transferred over the link.
    pub host_link_pj_per_byte: f64,
    /// Static power of the controller, DRAM and PHY while the device is powered.
    pub idle_power_mw: f64,
}

/// Usable bandwidth of one PCIe lane in MB/s (10^6 B/s) after line coding, by generation
/// (PCI-SIG base specifications: 2.5 / 5 GT/s with 8b/10b, 8 / 16 / 32 GT/s with 128b/130b).
/// Packet (TLP/DLLP) overhead is not counted.
pub const PCIE_LANE_MB_S: [f64; 5] = [250.0, 500.0, 984.615, 1969.231, 3938.462];

impl ControllerCosts {
    /// Whether every cost is zero (the controller adds nothing).
    pub fn is_zero(&self) -> bool {
        let c = ControllerCosts {
            source: String::new(),
            ..self.clone()
        };
        c == ControllerCosts::default()
    }

    /// The host link's bandwidth in MB/s (`None`: no link time).
    pub fn link_mb_s(&self) -> Option<f64> {
        (self.host_link_pcie_gen > 0).then(|| {
            PCIE_LANE_MB_S[self.host_link_pcie_gen as usize - 1] * f64::from(self.host_link_lanes)
        })
    }

    /// Checks ranges; errors name the key (`ftl.controller.<field>`).
    pub fn validate(&self) -> FtlResult<()> {
        let fields = [
            ("firmware_command_ns", self.firmware_command_ns),
            ("firmware_gc_move_ns", self.firmware_gc_move_ns),
            ("dram_access_ns", self.dram_access_ns),
            ("dram_bandwidth_mb_s", self.dram_bandwidth_mb_s),
            ("ecc_decode_ns", self.ecc_decode_ns),
            ("ecc_retry_decode_ns", self.ecc_retry_decode_ns),
            ("controller_command_nj", self.controller_command_nj),
            ("controller_gc_move_nj", self.controller_gc_move_nj),
            ("dram_pj_per_byte", self.dram_pj_per_byte),
            ("host_link_pj_per_byte", self.host_link_pj_per_byte),
            ("idle_power_mw", self.idle_power_mw),
        ];
        for (name, value) in fields {
            // a second of firmware per command is certainly a unit mistake
            if !value.is_finite() || !(0.0..=1e9).contains(&value) {
                return Err(config_error(
                    format!("ftl.controller.{name}"),
                    format!("{value} is not a cost (a finite number from 0 to 1e9)"),
                ));
            }
        }
        if self.host_link_pcie_gen > PCIE_LANE_MB_S.len() as u32 {
            return Err(config_error(
                "ftl.controller.host_link_pcie_gen",
                format!(
                    "PCIe generation {} (use 1 to 5, or 0 for no link time)",
                    self.host_link_pcie_gen
                ),
            ));
        }
        if self.host_link_pcie_gen > 0 && ![1, 2, 4, 8, 16].contains(&self.host_link_lanes) {
            return Err(config_error(
                "ftl.controller.host_link_lanes",
                format!("{} lanes (use 1, 2, 4, 8 or 16)", self.host_link_lanes),
            ));
        }
        if self.host_link_pcie_gen == 0 && self.host_link_lanes != 0 {
            return Err(config_error(
                "ftl.controller.host_link_lanes",
                "lanes without a link: set host_link_pcie_gen",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_costs_and_link_bandwidth() {
        let mut c = ControllerCosts {
            source: "x".into(),
            ..ControllerCosts::default()
        };
        assert!(c.is_zero());
        assert_eq!(c.link_mb_s(), None);
        c.host_link_pcie_gen = 3;
        c.host_link_lanes = 4;
        assert!(!c.is_zero());
        assert!((c.link_mb_s().unwrap() - 3938.46).abs() < 0.01);
        c.validate().unwrap();
    }

    #[test]
    fn errors_name_the_key() {
        let bad = |c: ControllerCosts| c.validate().unwrap_err().to_string();
        let c = ControllerCosts {
            firmware_command_ns: -1.0,
            ..Default::default()
        };
        assert!(bad(c).contains("ftl.controller.firmware_command_ns"));
        let c = ControllerCosts {
            host_link_pcie_gen: 7,
            ..Default::default()
        };
        assert!(bad(c).contains("host_link_pcie_gen"));
        let c = ControllerCosts {
            host_link_pcie_gen: 4,
            host_link_lanes: 3,
            ..Default::default()
        };
        assert!(bad(c).contains("host_link_lanes"));
    }
}
