//! Recovery time against capacity: a preset device filled (functionally) to `fill_fraction`,
//! cut idle, mounted by the full OOB scan; the scan's pages and simulated time per size.
//! Timing-only payloads (the scan's timing does not depend on the bytes).

use super::ps_to_us;
use nandlab_ftl::power::{CutConfig, RecoveryVariant, recover};
use nandlab_ftl::{PayloadMode, Precondition, Ssd, SsdConfig};
use serde::Serialize;

/// One device size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanPoint {
    pub blocks_per_plane: u32,
    pub capacity_bytes: u64,
    pub physical_pages: u64,
    pub dies: u32,
    pub channels: u32,
    pub pages_read: u64,
    pub recovery_time_ms: f64,
}

/// Mounts `preset` at each `blocks_per_plane` (everything else from the preset), filled to
/// `fill_fraction` of its logical pages.
pub fn recovery_scaling(
    preset: &str,
    blocks_per_plane: &[u32],
    fill_fraction: f64,
) -> Result<Vec<ScanPoint>, String> {
    let mut points = Vec::new();
    for &blocks in blocks_per_plane {
        let mut config = SsdConfig::from_preset(preset);
        config.device.overrides = Some(
            toml::from_str(&format!("[geometry]\nblocks_per_plane = {blocks}\n"))
                .map_err(|e| format!("blocks_per_plane = {blocks}: {e}"))?,
        );
        config.ftl.payload = PayloadMode::TimingOnly;
        let mut ssd = Ssd::new(config, 1).map_err(|e| e.to_string())?;
        ssd.precondition(&Precondition {
            fill_fraction,
            random_overwrites: 0,
        })
        .map_err(|e| e.to_string())?;
        ssd.start_power_trace().map_err(|e| e.to_string())?;
        let cut = ssd
            .power_cut(&CutConfig::default())
            .map_err(|e| e.to_string())?;
        let logical = ssd.logical_pages() as u32;
        let g = ssd.geometry();
        let r = recover(
            &cut,
            logical,
            g,
            ssd.nand().timing(),
            RecoveryVariant::Correct,
            true,
        );
        points.push(ScanPoint {
            blocks_per_plane: blocks,
            capacity_bytes: g.capacity_bytes(),
            physical_pages: g.total_pages(),
            dies: g.total_dies(),
            channels: g.channels,
            pages_read: r.report.pages_read,
            recovery_time_ms: ps_to_us(r.report.time_ps) / 1e3,
        });
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full scan reads every programmed page: time grows linearly with capacity.
    #[test]
    fn scan_time_grows_with_capacity() {
        let p = recovery_scaling("slc", &[64, 128], 1.0).unwrap();
        assert!(p[1].pages_read > p[0].pages_read);
        let ratio = p[1].recovery_time_ms / p[0].recovery_time_ms;
        assert!((1.7..2.3).contains(&ratio), "{p:?}");
        assert!(recovery_scaling("no-such-preset", &[8], 1.0).is_err());
    }
}
