use super::*;

#[test]
fn preset_with_overrides_parses() {
    let text = r#"
        [device]
        preset = "slc"
        [device.overrides.geometry]
        blocks_per_plane = 64
        [ftl]
        gc_policy = "cost-benefit"
        op_fraction = 0.5
    "#;
    let c = SsdConfig::from_toml(text).unwrap();
    assert_eq!(c.nand_config().unwrap().geometry.blocks_per_plane, 64);
    assert_eq!(c.ftl.gc.policy, GcPolicy::CostBenefit);
}

#[test]
fn errors_name_the_key() {
    let err = SsdConfig::from_toml("[device]\npreset = \"slc\"\n[ftl]\ngc_polcy = \"fifo\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("gc_polcy"), "{err}");
    let mut c = SsdConfig::from_preset("slc");
    c.ftl.gc.threshold_blocks = 1;
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("gc_threshold_blocks")
    );
    c.ftl.gc.threshold_blocks = 3;
    c.ftl.op_fraction = -1.0;
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("op_fraction")
    );
    c.ftl.op_fraction = 0.25;
    c.ftl.mapping.checkpoint_interval_pages = 64;
    assert!(c.validate().is_ok());
    c.ftl.mapping.kind = MappingKind::Block;
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("map_checkpoint_interval_pages")
    );
    c.ftl.mapping.kind = MappingKind::Page;
    c.ftl.mapping.checkpoint_interval_pages = 0;
    c.ftl.mapping.allocation_order = "channel-lun".into();
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("allocation_order")
    );
    let c = SsdConfig::from_preset("mlc7");
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("device.preset")
    );
}

/// Regression (issue 11): keys the chosen mapping ignores were accepted without a word;
/// `ignored_keys` lists them so a front end can warn or refuse.
#[test]
fn keys_the_mapping_ignores_are_listed() {
    let mut c = SsdConfig::from_preset("slc");
    assert!(c.ignored_keys().is_empty());
    c.ftl.mapping.random_log_blocks = 2;
    c.ftl.buffer.policy = BufferPolicy::Fifo;
    assert_eq!(
        c.ignored_keys(),
        ["ftl.hybrid_random_log_blocks", "ftl.write_buffer_policy"]
    );
    c.ftl.mapping.kind = MappingKind::Block;
    c.ftl.gc.policy = GcPolicy::Fifo;
    c.ftl.wear.leveling = WearLeveling::Static;
    c.ftl.buffer.pages = 4;
    assert_eq!(
        c.ignored_keys(),
        [
            "ftl.gc_policy",
            "ftl.wear_leveling",
            "ftl.hybrid_random_log_blocks"
        ]
    );
}

#[test]
fn allocation_order_fills_missing_levels() {
    assert_eq!(
        parse_allocation_order("plane-die").unwrap(),
        [Level::Plane, Level::Die, Level::Channel, Level::Chip]
    );
    assert!(parse_allocation_order("die-die").is_err());
}

/// The grouped config (de)serializes in the flat `[ftl]` form: legacy `SsdConfig` files and a
/// resolved config's JSON (what results record and cache keys hash) keep their keys and order.
#[test]
fn ctrl6_grouped_config_keeps_the_flat_form() {
    let f = FtlConfig {
        gc: GcConfig {
            policy: GcPolicy::Fifo,
            urgent_free_blocks: 2,
            ..GcConfig::default()
        },
        ..FtlConfig::default()
    };
    let json = serde_json::to_string(&f).unwrap();
    // the flat struct's field order, defaults skipped as before
    let head = "{\"mapping\":\"page\",\"gc_policy\":\"fifo\",\"gc_threshold_blocks\":3,\"gc_scope\":\"plane\",\"idle_gc_threshold_blocks\":0,\"gc_urgent_free_blocks\":2,\"op_fraction\":0.25,";
    assert!(json.starts_with(head), "{json}");
    assert!(json.contains("\"gc_urgent_free_blocks\":2"), "{json}");
    assert!(!json.contains("\"gc\""), "{json}");
    let back: FtlConfig = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
    let t: FtlConfig =
        toml::from_str("gc_scheduling = \"interleaved\"\ncopyback = false\n").unwrap();
    assert_eq!(
        (t.gc.scheduling, t.gc.copyback),
        (GcScheduling::Interleaved, false)
    );
    assert_eq!(FtlConfig::default().gc, GcConfig::default());
}

/// robust6 (issue 31's adversarial pass): a cached mapping table on the block or hybrid mapping
/// is refused by `validate`, so the stack's error names `ssd.mapping.cache_entries` (it was
/// found only when the SSD was built, naming the internal `ftl.cmt_entries`).
#[test]
fn robust6_a_cached_mapping_table_needs_the_page_mapping() {
    for mapping in [MappingKind::Block, MappingKind::Hybrid] {
        let mut c = SsdConfig::from_preset("slc");
        c.ftl.mapping.cache_entries = 64;
        c.ftl.mapping.kind = mapping;
        let e = c.validate().unwrap_err();
        assert!(
            matches!(&e, crate::FtlError::Config { key, .. } if key == "ftl.cmt_entries"),
            "{e}"
        );
        assert!(e.to_string().contains("page mapping only"), "{e}");
    }
    let mut c = SsdConfig::from_preset("slc");
    c.ftl.mapping.cache_entries = 64;
    c.validate().unwrap();
}
