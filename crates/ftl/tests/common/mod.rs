//! Small devices shared by the cross-layer tests.
#![allow(dead_code)]

use nandlab_ftl::{FtlConfig, SsdConfig};

/// The `slc` preset (25 µs read, 250 µs program, 1.5 ms erase, 25 ns per bus byte) shrunk to
/// `dies × planes × blocks × pages` of `page_size` bytes.
pub fn slc(dies: u32, planes: u32, blocks: u32, pages: u32, page_size: u32) -> SsdConfig {
    let mut c = SsdConfig::from_preset("slc");
    c.device.overrides = Some(
        toml::from_str(&format!(
            "[geometry]\ndies_per_chip = {dies}\nplanes_per_die = {planes}\n\
             blocks_per_plane = {blocks}\npages_per_block = {pages}\npage_size_bytes = {page_size}\n"
        ))
        .unwrap(),
    );
    c.ftl = FtlConfig::default();
    c
}
