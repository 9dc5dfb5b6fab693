//! Small devices shared by the cross-layer tests.
#![allow(dead_code)]

use nandlab_core::{SimRng, SimTime};
use nandlab_ftl::{
    FtlConfig, HostOp, HostRequest, PayloadMode, Precondition, Ssd, SsdConfig, SsdReport,
};

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

/// `c` with the chip's `[reliability]` keys `reliability` (TOML lines), full payloads, OP 0.5
/// and a GC threshold of 2 blocks: the device of the bad-block and read-disturb tests.
pub fn with_reliability(mut c: SsdConfig, reliability: &str) -> SsdConfig {
    let mut table = c.device.overrides.take().unwrap_or_default();
    let extra: toml::Table = toml::from_str(&format!("[reliability]\n{reliability}")).unwrap();
    table.extend(extra);
    c.device.overrides = Some(table);
    c.ftl.payload = PayloadMode::Full;
    c.ftl.op_fraction = 0.5;
    c.ftl.gc.threshold_blocks = 2;
    c
}

/// Builds `config` (seed 1), fills it and overwrites 20,000 random pages (steady-state GC),
/// then runs 20,000 open-loop requests of one `page`-byte page each, 1.5–2.5 ms apart (about
/// half of what the small devices here sustain under that GC load): a read one time in
/// `read_one_in`, else a write, at random pages (seed 3).
pub fn steady_mix(config: SsdConfig, page: u64, read_one_in: u64) -> (Ssd, SsdReport) {
    let mut ssd = Ssd::new(config, 1).unwrap();
    ssd.precondition(&Precondition {
        fill_fraction: 1.0,
        random_overwrites: 20_000,
    })
    .unwrap();
    let n = ssd.logical_pages();
    let mut rng = SimRng::seed_from_u64(3);
    let mut at = ssd.now();
    let requests: Vec<HostRequest> = (0..20000)
        .map(|_| {
            at += SimTime::from_us(1500 + rng.below(1000));
            let op = if rng.below(read_one_in) == 0 {
                HostOp::Read
            } else {
                HostOp::Write
            };
            HostRequest::new(op, rng.below(n) * page, page).at(at)
        })
        .collect();
    let report = ssd.run(requests).unwrap();
    (ssd, report)
}
