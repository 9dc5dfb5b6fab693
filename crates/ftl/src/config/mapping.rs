//! [`MappingConfig`]: the mapping's typed config, the `[ssd.mapping]` section of a stack config
//! (the legacy flat `[ftl]` keys `mapping`, `allocation_order`, `placement_ids`, … map onto it,
//! `config/flat.rs`).
use super::MappingKind;
use serde::{Deserialize, Serialize};
/// The logical-to-physical mapping and where it places pages (`[ssd.mapping]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MappingConfig {
    /// Logical-to-physical mapping scheme (`ftl.mapping.kind`).
    pub kind: MappingKind,
    /// Striping order of consecutive page writes over the parallel units, fastest-varying
    /// first, dash separated: any order of `channel`, `chip` (alias `way`), `die`, `plane`;
    /// levels left out vary slowest, in the order channel, chip, die, plane
    /// (`ftl.mapping.allocation_order`).
    pub allocation_order: String,
    /// Random log blocks of the hybrid mapping (`ftl.mapping.random_log_blocks`).
    pub random_log_blocks: u32,
    /// Placement ids (NVMe FDP reclaim-unit handles) host writes may carry: the page mapping
    /// keeps separate write frontiers, so separate blocks, per id (1: off; `ftl.mapping.placement_ids`).
    pub placement_ids: u16,
    /// Paired-page protection (issue 14, page mapping): on MLC/TLC/QLC an interrupted
    /// program of an upper page can destroy the lower pages of its word line. With this on,
    /// a Flush pads every open block with dummy pages up to the end of the word lines holding
    /// data, and an erase that would leave the newest copy of one of its LPAs on a lower page
    /// whose upper pages are not programmed first pads that word line (and waits for it), as
    /// pblk (LightNVM) pads a flush to a full write unit. Costs the padding pages. Off by
    /// default (results without power cuts stay as they were; `ftl.mapping.paired_page_padding`).
    pub paired_page_padding: bool,
    /// Map checkpoints (issue 14, docs/power.md): under a power-loss trace, a copy of the L2P
    /// map is written to a metadata area every this many pages decided, and a mount reads the
    /// newest committed one plus the pages written after it instead of every page (0: none,
    /// the mount scans everything). Page mapping only (`ftl.mapping.checkpoint_interval_pages`).
    #[serde(rename = "map_checkpoint_interval_pages")]
    pub checkpoint_interval_pages: u32,
    /// Zoned mapping: planes per zone (a zone is one block of each; 0: every plane;
    /// `ftl.mapping.zone_planes`).
    pub zone_planes: u32,
    /// A cached mapping table (DFTL, `mapping/dftl`): this many mapping entries in DRAM, the
    /// rest in translation pages on flash (page mapping only). 0 (default): the whole table
    /// in DRAM (`ftl.mapping.cache_entries`).
    pub cache_entries: u32,
}
impl Default for MappingConfig {
    fn default() -> Self {
        MappingConfig {
            kind: MappingKind::Page,
            allocation_order: "channel-chip-die-plane".into(),
            paired_page_padding: false,
            checkpoint_interval_pages: 0,
            random_log_blocks: 8,
            placement_ids: 1,
            zone_planes: 0,
            cache_entries: 0,
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_mapping_section_deserializes_into_the_config() {
        let m: MappingConfig = toml::from_str(
            "kind = \"hybrid\"\nrandom_log_blocks = 4\nmap_checkpoint_interval_pages = 64\n",
        )
        .unwrap();
        assert_eq!(m.kind, MappingKind::Hybrid);
        assert_eq!((m.random_log_blocks, m.checkpoint_interval_pages), (4, 64));
        assert_eq!(m.placement_ids, 1, "keys not given keep their defaults");
        let err = toml::from_str::<MappingConfig>("cmt_entries = 4\n").unwrap_err();
        assert!(err.message().contains("cmt_entries"), "{err}");
    }
}
