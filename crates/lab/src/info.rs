//! `nandlab info DEVICE`: the geometry, capacity and timings of a NAND chip preset, an SSD
//! preset, a device file or a stack config (its `[nand]` and `[ssd]`), without running it.

use crate::error::{LabError, LabResult};
use nandlab_ftl::config::logical_pages;
use nandlab_nand::timing::TimingModel;
use nandlab_nand::{Geometry, NandConfig};
use serde::Serialize;

/// What `nandlab info` prints.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// The name given.
    pub device: String,
    /// `nand-preset` (a chip, no FTL) or `ssd` (a preset, device file or stack config).
    pub kind: &'static str,
    /// The chip preset's or SSD preset's description (empty for a file).
    pub description: String,
    /// Cell type (SLC, MLC, TLC, QLC) and page layout.
    pub cell: String,
    pub page_layout: String,
    pub geometry: Geometry,
    /// Dies, planes, blocks and pages of the whole device.
    pub dies: u32,
    pub blocks: u32,
    pub pages: u64,
    pub block_bytes: u64,
    /// Raw flash capacity (every page's data area).
    pub raw_capacity_bytes: u64,
    /// Host-visible capacity (`ssd` only): logical pages × page size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logical_capacity_bytes: Option<u64>,
    /// Over-provisioning as spare / logical (`ssd` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op_fraction: Option<f64>,
    /// FTL mapping and host queue depth (`ssd` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// A `[pcm]` stage in front of the SSD.
    pub pcm_stage: bool,
    /// tR and tPROG per page type (µs), tBERS (µs).
    pub read_us: Vec<f64>,
    pub program_us: Vec<f64>,
    pub erase_us: f64,
    /// The bus: data rate (MT/s), width (bits), one page's transfer (µs).
    pub bus_data_rate_mts: f64,
    pub bus_width_bits: u32,
    pub page_transfer_us: f64,
}

/// The information on `device`: a NAND chip preset name, an SSD preset name, a device file
/// or a stack config (an SSD preset wins over a chip preset of the same name; none today).
pub fn device_info(device: &str) -> LabResult<DeviceInfo> {
    let name = device.trim();
    let ssd_presets = crate::stack::ssd_preset_names();
    if !ssd_presets.contains(&name) && nandlab_nand::preset_names().contains(&name) {
        let nand = nandlab_nand::preset(name).map_err(|e| LabError::Usage(e.to_string()))?;
        return Ok(describe(
            name,
            "nand-preset",
            nand.description.clone(),
            &nand,
            None,
        ));
    }
    if name.is_empty() {
        return Err(LabError::Usage(
            "info: a device is needed (a chip or SSD preset from `nandlab presets`, a device file or a stack config)".into(),
        ));
    }
    if !ssd_presets.contains(&name) && !std::path::Path::new(name).exists() {
        let mut chips = nandlab_nand::preset_names();
        chips.sort_unstable();
        return Err(LabError::Usage(format!(
            "info: `{name}` is neither a preset (chips: {}; SSDs: {}) nor a file",
            chips.join(", "),
            ssd_presets.join(", ")
        )));
    }
    let spec = crate::sql::device_spec(name)?;
    let nand = spec
        .config
        .nand_config()
        .map_err(|e| LabError::Usage(format!("{name}: {e}")))?;
    let description = if ssd_presets.contains(&name) {
        crate::stack::ssd_preset(name)
            .map(|p| p.description)
            .unwrap_or_default()
    } else {
        String::new()
    };
    let mut info = describe(name, "ssd", description, &nand, Some(&spec.config.ftl));
    info.pcm_stage = spec.pcm.is_some();
    Ok(info)
}

fn describe(
    device: &str,
    kind: &'static str,
    description: String,
    nand: &NandConfig,
    ftl: Option<&nandlab_ftl::FtlConfig>,
) -> DeviceInfo {
    let g = nand.geometry.clone();
    let layout = nand.cell.layout;
    let types = layout.page_type_count();
    let timing = TimingModel::new(nand);
    let page_bytes = u64::from(g.page_size_bytes);
    let logical = ftl.map(|f| logical_pages(&g, f.op_fraction) * page_bytes);
    let name_of = |v: serde_json::Result<serde_json::Value>| {
        v.ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let layout_name = name_of(serde_json::to_value(layout));
    DeviceInfo {
        device: device.to_string(),
        kind,
        description,
        cell: format!("{:?}", layout.cell_type()).to_uppercase(),
        page_layout: layout_name,
        dies: g.total_dies(),
        blocks: g.total_blocks(),
        pages: g.total_pages(),
        block_bytes: g.block_size_bytes(),
        raw_capacity_bytes: g.capacity_bytes(),
        logical_capacity_bytes: logical,
        op_fraction: ftl.map(|f| f.op_fraction),
        mapping: ftl.map(|f| name_of(serde_json::to_value(f.mapping.kind))),
        queue_depth: ftl.map(|f| f.host.queue_depth),
        pcm_stage: false,
        read_us: (0..types)
            .map(|t| nand.timing.read_us.for_type(t))
            .collect(),
        program_us: (0..types)
            .map(|t| nand.timing.program_us.for_type(t))
            .collect(),
        erase_us: nand.timing.erase_us,
        bus_data_rate_mts: nand.timing.bus_data_rate_mts,
        bus_width_bits: nand.timing.bus_width_bits,
        page_transfer_us: timing.transfer_time(g.page_size_bytes).as_us_f64(),
        geometry: g,
    }
}

/// `info` as the lines `nandlab info` prints.
pub fn format_info(i: &DeviceInfo) -> String {
    let g = &i.geometry;
    let size = nandlab_core::memory::format_bytes;
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x}"))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let mut out = format!("{} ({})\n", i.device, i.kind.replace('-', " "));
    if !i.description.is_empty() {
        out += &format!("  {}\n", i.description);
    }
    out += &format!("cell          {} ({})\n", i.cell, i.page_layout);
    out += &format!(
        "geometry      {} channels x {} chips x {} dies x {} planes x {} blocks x {} pages x {} B (+{} B spare)\n",
        g.channels,
        g.chips_per_channel,
        g.dies_per_chip,
        g.planes_per_die,
        g.blocks_per_plane,
        g.pages_per_block,
        g.page_size_bytes,
        g.spare_bytes_per_page
    );
    out += &format!(
        "              {} dies, {} blocks of {}, {} pages\n",
        i.dies,
        i.blocks,
        size(i.block_bytes),
        i.pages
    );
    out += &format!(
        "capacity      {} raw ({} B)\n",
        size(i.raw_capacity_bytes),
        i.raw_capacity_bytes
    );
    if let (Some(logical), Some(op)) = (i.logical_capacity_bytes, i.op_fraction) {
        out += &format!(
            "              {} logical ({logical} B), over-provisioning {} % (spare / logical)\n",
            size(logical),
            (op * 1e4).round() / 100.0
        );
    }
    if let (Some(mapping), Some(qd)) = (&i.mapping, i.queue_depth) {
        out += &format!(
            "ftl           {mapping} mapping, queue depth {qd}{}\n",
            if i.pcm_stage { ", [pcm] stage" } else { "" }
        );
    }
    out += &format!(
        "timing        read {} us, program {} us (per page type), erase {} us\n",
        list(&i.read_us),
        list(&i.program_us),
        i.erase_us
    );
    out += &format!(
        "bus           {} MT/s x {} bits, one page {:.2} us",
        i.bus_data_rate_mts, i.bus_width_bits, i.page_transfer_us
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_and_ssd_presets_and_files_are_described() {
        let chip = device_info("mlc1").unwrap();
        assert_eq!((chip.kind, chip.cell.as_str()), ("nand-preset", "MLC"));
        assert_eq!(chip.read_us.len(), 2);
        assert!(chip.logical_capacity_bytes.is_none());
        let ssd = device_info("bench-ssd").unwrap();
        assert_eq!(ssd.kind, "ssd");
        assert_eq!(ssd.raw_capacity_bytes, 8 << 30);
        // 25 % over-provisioning: spare / logical
        let logical = ssd.logical_capacity_bytes.unwrap() as f64;
        assert!((ssd.raw_capacity_bytes as f64 / logical - 1.25).abs() < 1e-3);
        let text = format_info(&ssd);
        assert!(
            text.contains("8.0 GiB raw") || text.contains("8 GiB raw"),
            "{text}"
        );
        let dir = std::env::temp_dir().join(format!("nandlab-info-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("d.toml");
        std::fs::write(
            &file,
            "[ssd]\npreset = \"bench-ssd\"\n[nand.geometry]\nblocks_per_plane = 32\n",
        )
        .unwrap();
        let small = device_info(file.to_str().unwrap()).unwrap();
        assert_eq!(small.raw_capacity_bytes, 2 << 30);
        std::fs::remove_dir_all(&dir).ok();
        let e = device_info("no-such-device").unwrap_err().to_string();
        assert!(e.contains("no-such-device") && e.contains("mlc1"), "{e}");
    }
}
