//! Building the paper-000 stack: the `miyaji2014` SSD (page mapping, FIFO GC, round-robin
//! wear-leveling, no copyback: GC page copies go through the controller as in paper 000 Fig. 6)
//! under a conventional or co-designed engine.

use super::SsdDevice;
use crate::error::LabResult;
use nandlab_engine::{Engine, EngineConfig};
use nandlab_ftl::{GcPolicy, MappingKind, PayloadMode, Ssd, SsdConfig, WearLeveling};
use nandlab_nand::{NandConfig, preset};

/// Over-provisioning of the paper's SSD (spare/logical). Paper 000 does not state it; 15 %
/// leaves the 4 spare blocks per plane that GC with a 2-block threshold needs on its 32-block
/// planes (the FTL collects each plane separately).
pub const MIYAJI_OP_FRACTION: f64 = 0.15;

/// Free blocks per plane below which GC runs.
pub const MIYAJI_GC_THRESHOLD_BLOCKS: u32 = 2;

/// The SSD of paper 000 with `channels`, `blocks_per_plane` and `pages_per_block` overrides
/// (to scale it down for quick runs or to sweep the block size).
pub fn miyaji_nand(
    channels: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
) -> LabResult<NandConfig> {
    let mut nand = preset("miyaji2014")?;
    nand.geometry.channels = channels;
    nand.geometry.blocks_per_plane = blocks_per_plane;
    nand.geometry.pages_per_block = pages_per_block;
    nand.validate()?;
    Ok(nand)
}

pub fn miyaji_ssd_config(nand: NandConfig) -> SsdConfig {
    let mut config = SsdConfig::from_nand(nand);
    let f = &mut config.ftl;
    f.mapping = MappingKind::Page;
    f.gc_policy = GcPolicy::Fifo;
    f.wear_leveling = WearLeveling::RoundRobin;
    f.copyback = false;
    f.payload = PayloadMode::Full;
    f.op_fraction = MIYAJI_OP_FRACTION;
    f.gc_threshold_blocks = MIYAJI_GC_THRESHOLD_BLOCKS;
    f.write_buffer_pages = 0;
    f.hint_refresh_ops = 16;
    // The FTL collects each plane separately, so each plane's next victim is "the next block to
    // be erased" of its own GC stream; the paper's FTL has one stream. With the hint limited to
    // the one block erased next, the full-scale Table I protocol (8 planes, 256-page blocks)
    // loses the co-design gain (-6 % q/s); with every plane's victim it keeps it (+61 %).
    f.hint_all_planes = true;
    config
}

/// An engine on a fresh SSD.
pub fn engine_on_ssd(
    ssd_config: SsdConfig,
    engine_config: EngineConfig,
    seed: u64,
) -> LabResult<Engine<SsdDevice>> {
    let ssd = Ssd::new(ssd_config, seed)?;
    Ok(Engine::new(SsdDevice::new(ssd), engine_config)?)
}
