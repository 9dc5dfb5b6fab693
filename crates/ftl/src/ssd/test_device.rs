//! The small SLC device the SSD's unit tests share (test builds only).

use crate::config::{FtlConfig, SsdConfig};

/// The `slc` preset shrunk to one chip of `dies` × `planes` planes of 12 blocks of
/// `pages_per_block` 512-byte pages; 60 % over-provisioning and a 2-block GC threshold (room
/// for GC on so few blocks). Tests set the other FTL fields they exercise.
pub(crate) fn small_slc(dies: u32, planes: u32, pages_per_block: u32) -> SsdConfig {
    let mut c = SsdConfig::from_preset("slc");
    c.device.overrides = Some(
        toml::from_str(&format!(
            "[geometry]\ndies_per_chip = {dies}\nplanes_per_die = {planes}\n\
             blocks_per_plane = 12\npages_per_block = {pages_per_block}\npage_size_bytes = 512\n"
        ))
        .unwrap(),
    );
    c.ftl = FtlConfig {
        op_fraction: 0.6,
        gc: crate::config::GcConfig {
            threshold_blocks: 2,
            ..Default::default()
        },
        ..FtlConfig::default()
    };
    c
}
