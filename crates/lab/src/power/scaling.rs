//! Recovery time against capacity: a preset device filled (functionally) to `fill_fraction`,
//! cut idle, mounted by the full OOB scan; the scan's pages and simulated time per size.
//! With map checkpoints ([`recovery_scaling_checkpointed`]): the device writes a checkpoint of
//! its filled state, then `interval - 1` random single-page writes (the most a device with a
//! checkpoint every `interval` pages writes before its next one: the worst case), and the
//! cut's mount starts from the checkpoint; the full scan of the same array is reported beside.
//! Timing-only payloads (the scan's timing does not depend on the bytes).

use super::ps_to_us;
use crate::stack::{DeviceFile, set_key};
use nandlab_core::{Lpa, SimRng};
use nandlab_ftl::power::{CutConfig, RecoveryVariant};
use nandlab_ftl::{HostRequest, Precondition, Ssd};
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
    /// With a map checkpoint: its interval (pages), its size (metadata pages), whether the
    /// mount started from it, and the full scan of the same array (0 without checkpoints).
    pub checkpoint_interval_pages: u32,
    pub checkpoint_pages: u64,
    pub checkpoint_used: bool,
    pub full_scan_pages_read: u64,
    pub full_scan_time_ms: f64,
}

/// The device of one size: chip `preset` at `blocks` per plane, timing-only payloads and a
/// map checkpoint every `interval` pages (0: none), built by the stack builder from typed
/// values.
fn device(preset: &str, blocks: u32, interval: u32) -> Result<Ssd, String> {
    let mut table = toml::Table::new();
    set_key(&mut table, "nand.preset", preset.into());
    set_key(
        &mut table,
        "nand.geometry.blocks_per_plane",
        i64::from(blocks).into(),
    );
    set_key(&mut table, "ssd.payload", "timing-only".into());
    set_key(
        &mut table,
        "ssd.mapping.map_checkpoint_interval_pages",
        i64::from(interval).into(),
    );
    let config = DeviceFile::from_table("recovery scaling", table).map_err(|e| e.to_string())?;
    Ssd::new(config, 1).map_err(|e| e.to_string())
}

/// Mounts `preset` at each `blocks_per_plane` (everything else from the preset), filled to
/// `fill_fraction` of its logical pages, by a full scan.
pub fn recovery_scaling(
    preset: &str,
    blocks_per_plane: &[u32],
    fill_fraction: f64,
) -> Result<Vec<ScanPoint>, String> {
    recovery_scaling_checkpointed(preset, blocks_per_plane, fill_fraction, 0)
}

/// [`recovery_scaling`] with a map checkpoint every `interval` pages (0: none, a full scan):
/// the cut falls after `interval - 1` random page writes since the checkpoint of the filled
/// device.
pub fn recovery_scaling_checkpointed(
    preset: &str,
    blocks_per_plane: &[u32],
    fill_fraction: f64,
    interval: u32,
) -> Result<Vec<ScanPoint>, String> {
    let mut points = Vec::new();
    for &blocks in blocks_per_plane {
        let mut ssd = device(preset, blocks, interval)?;
        ssd.precondition(&Precondition {
            fill_fraction,
            random_overwrites: 0,
        })
        .map_err(|e| e.to_string())?;
        // (with checkpoints, the trace's start writes one of the filled state)
        ssd.start_power_trace().map_err(|e| e.to_string())?;
        let err = |e: nandlab_ftl::FtlError| e.to_string();
        ssd.power_drain().map_err(err)?;
        if interval > 0 {
            let page = ssd.page_size_bytes();
            let logical = ssd.logical_pages();
            let mut rng = SimRng::stream(1, "power.scaling");
            for _ in 1..interval {
                let lpa = Lpa(rng.below(logical) as u32);
                let r = HostRequest::write(lpa.offset_bytes(u64::from(page)), u64::from(page));
                if !ssd.power_admit(&r, None).map_err(err)? {
                    return Err("recovery scaling: the host queue is full".into());
                }
                while ssd.requests_in_flight() > 0 {
                    ssd.power_step().map_err(err)?;
                }
            }
            ssd.power_drain().map_err(err)?;
        }
        let cut = ssd.power_cut(&CutConfig::default()).map_err(err)?;
        let g = ssd.geometry();
        let r = ssd.recover_cut(&cut, RecoveryVariant::Correct);
        points.push(ScanPoint {
            blocks_per_plane: blocks,
            capacity_bytes: g.capacity_bytes(),
            physical_pages: g.total_pages(),
            dies: g.total_dies(),
            channels: g.channels,
            pages_read: r.report.pages_read,
            recovery_time_ms: ps_to_us(r.report.time_ps) / 1e3,
            checkpoint_interval_pages: interval,
            checkpoint_pages: cut.image.checkpoint().map_or(0, |c| c.pages),
            checkpoint_used: r.report.checkpoint_used,
            full_scan_pages_read: r.report.full_scan_pages_read,
            full_scan_time_ms: ps_to_us(r.report.full_scan_time_ps) / 1e3,
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

    /// From a checkpoint the mount reads the checkpoint and the pages written after it: far
    /// less than the full scan, which still grows with capacity.
    #[test]
    fn a_checkpoint_mount_reads_far_less_than_a_full_scan() {
        let p = recovery_scaling_checkpointed("slc", &[64, 128], 1.0, 256).unwrap();
        for point in &p {
            assert!(point.checkpoint_used, "{point:?}");
            assert!(point.checkpoint_pages > 0, "{point:?}");
            assert!(
                point.pages_read * 4 < point.full_scan_pages_read,
                "{point:?}"
            );
            assert!(
                point.recovery_time_ms < point.full_scan_time_ms,
                "{point:?}"
            );
        }
        assert!(p[1].full_scan_pages_read > p[0].full_scan_pages_read);
    }
}
