use super::*;
use crate::control::Control;

fn stack(text: &str) -> LabResult<Stack> {
    Stack::from_toml("t.toml", text, Path::new("."), &[])
}

fn error(text: &str) -> String {
    stack(text).unwrap_err().to_string()
}

const SMALL: &str = r#"
[run]
seed = 3

[nand]
preset = "slc"
[nand.geometry]
blocks_per_plane = 32
page_size_bytes = 4096

[ssd]
op_fraction = 0.25
[ssd.gc]
policy = "fifo"

[workload]
kind = "synthetic"
pattern = "random"
read_fraction = 0.0
request_size_bytes = 4096
span_bytes = 0
request_count = 500
"#;

#[test]
fn every_ssd_preset_resolves_and_names_a_source() {
    for name in ssd_preset_names() {
        let preset = ssd_preset(name).unwrap();
        assert_eq!(preset.name, name);
        assert!(
            preset.source.len() > 40,
            "{name}: a source for every number"
        );
        let text = format!(
            "[ssd]\npreset = \"{name}\"\n[workload]\nkind = \"synthetic\"\npattern = \"random\"\n\
             read_fraction = 0.0\nrequest_size_bytes = 4096\nspan_bytes = 0\nrequest_count = 1\n"
        );
        stack(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The bench device as it was written in code before it became a preset file: the preset must
/// stay equal to it, so `nandlab bench ssd` results do not move.
mod bench_literal {
    use nandlab_ftl::{FtlConfig, GcPolicy, PayloadMode, SsdConfig};
    use nandlab_nand::config::{
        CellConfig, ElectricalConfig, PerPageType, ReliabilityConfig, TimingConfig,
    };
    use nandlab_nand::{Geometry, NandConfig, PageLayout};

    /// The chip config of the standard configuration: 4 channels × 2 chips × 2 dies × 2 planes ×
    /// 128 blocks × 256 pages × 8 KiB, MLC, 75 µs read, 750 µs program, 3.8 ms erase ("nandlab
    /// bench ssd standard configuration, MQSim-like MLC timings"; bus 333 MT/s as MQSim's default
    /// channel rate).
    fn bench_ssd_nand_config() -> NandConfig {
        NandConfig {
            name: "bench-ssd-mlc".into(),
            description: "nandlab bench ssd standard configuration".into(),
            source: "nandlab bench ssd standard configuration, MQSim-like MLC timings".into(),
            geometry: Geometry {
                channels: 4,
                chips_per_channel: 2,
                dies_per_chip: 2,
                planes_per_die: 2,
                blocks_per_plane: 128,
                pages_per_block: 256,
                page_size_bytes: 8192,
                spare_bytes_per_page: 448,
            },
            cell: CellConfig {
                layout: PageLayout::MlcPaired,
            },
            timing: TimingConfig {
                read_us: PerPageType::One(75.0),
                program_us: PerPageType::One(750.0),
                program_variation: 0.0,
                slc_read_us: None,
                slc_program_us: None,
                erase_us: 3800.0,
                bus_data_rate_mts: 333.0,
                bus_width_bits: 8,
                command_cycle_ns: 20.0,
                page_address_cycles: 5,
                block_address_cycles: 3,
            },
            electrical: ElectricalConfig {
                supply_voltage_v: 3.3,
                array_current_ma: 25.0,
                read_current_ma: None,
                program_current_ma: None,
                erase_current_ma: None,
                interface_current_ma: 5.0,
                standby_current_ua: 0.0,
            },
            reliability: ReliabilityConfig {
                endurance_cycles: 10_000,
                ..ReliabilityConfig::default()
            },
            search: None,
            suspend: None,
        }
    }

    /// The standard SSD configuration: 25 % over-provisioning, greedy GC, queue depth 32,
    /// timing-only payloads, no co-design hint (a conventional controller; the hint costs ~6 %
    /// of the run time when refreshed every 16 requests).
    pub(super) fn bench_ssd_config_literal() -> SsdConfig {
        SsdConfig {
            ftl: FtlConfig {
                op_fraction: 0.25,
                gc: nandlab_ftl::GcConfig {
                    policy: GcPolicy::Greedy,
                    ..Default::default()
                },
                host: nandlab_ftl::HostConfig { queue_depth: 32 },
                payload: PayloadMode::TimingOnly,
                hints: nandlab_ftl::HintsConfig {
                    refresh_ops: 0,
                    ..Default::default()
                },
                // no controller costs (only the preset's note of why)
                controller: nandlab_ftl::ControllerCosts {
                    source: "none by design: `nandlab bench ssd` measures simulation speed on the chip model and FTL alone".into(),
                    ..Default::default()
                },
                ..FtlConfig::default()
            },
            ..SsdConfig::from_nand(bench_ssd_nand_config())
        }
    }
}
use bench_literal::bench_ssd_config_literal;

#[test]
fn the_bench_preset_is_the_bench_device() {
    let s = stack(
        "[ssd]\npreset = \"bench-ssd\"\n[workload]\nkind = \"synthetic\"\npattern = \"random\"\n\
         read_fraction = 0.0\nrequest_size_bytes = 8192\nspan_bytes = 0\nrequest_count = 1\n",
    )
    .unwrap();
    assert_eq!(s.ssd_config(), bench_ssd_config_literal());
    assert_eq!(crate::bench::bench_ssd_config(), bench_ssd_config_literal());
}

#[test]
fn typed_overrides_and_grouped_keys_reach_the_device() {
    let s = stack(SMALL).unwrap();
    assert_eq!(s.nand.geometry.blocks_per_plane, 32);
    assert_eq!(s.nand.geometry.page_size_bytes, 4096);
    assert_eq!(s.nand.name, "slc");
    assert_eq!(s.ftl.gc.policy, nandlab_ftl::GcPolicy::Fifo);
    assert_eq!(s.config.run.seed, 3);
    let run = s.run(None, &Control::new()).unwrap();
    assert_eq!(run.metric("requests"), Some(500.0));
    assert!(run.metric("waf").unwrap() >= 1.0);
}

#[test]
fn unknown_keys_are_errors_with_key_path_and_line() {
    let e = error(&SMALL.replace("policy = \"fifo\"", "polcy = \"fifo\""));
    assert!(e.starts_with("t.toml line 14: key `ssd.gc.polcy`"), "{e}");
    assert!(e.contains("unknown field"), "{e}");
    let e = error(&SMALL.replace("page_size_bytes = 4096", "page_size = 4096"));
    assert!(
        e.starts_with("t.toml line 9: key `nand.geometry.page_size`"),
        "{e}"
    );
    let e = error(&SMALL.replace("[run]", "[runn]"));
    assert!(e.contains("line 2") && e.contains("runn"), "{e}");
    let e = error(&SMALL.replace("pattern = \"random\"", "pattern = \"randm\""));
    assert!(e.contains("workload") && e.contains("randm"), "{e}");
}

#[test]
fn values_out_of_range_name_the_stack_key_and_line() {
    let e = error(&SMALL.replace("op_fraction = 0.25", "op_fraction = -1.0"));
    assert!(
        e.starts_with("t.toml line 12: key `ssd.op_fraction`"),
        "{e}"
    );
    let e = error(&SMALL.replace("blocks_per_plane = 32", "blocks_per_plane = 0"));
    assert!(e.contains("key `nand.geometry.blocks_per_plane`"), "{e}");
    let e = error(&SMALL.replace("[ssd.gc]", "[ssd.host]\nqueue_depth = 0\n[ssd.gc]"));
    assert!(e.contains("line 14: key `ssd.host.queue_depth`"), "{e}");
    let e = error(&SMALL.replace(
        "[ssd.gc]",
        "[ssd.controller]\nfirmware_command_ns = -5.0\n[ssd.gc]",
    ));
    assert!(
        e.contains("line 14: key `ssd.controller.firmware_command_ns`"),
        "{e}"
    );
    let e = error(&SMALL.replace("[ssd.gc]", "[ssd.controller]\nfirmware_ns = 5.0\n[ssd.gc]"));
    assert!(e.contains("key `ssd.controller.firmware_ns`"), "{e}");
}

#[test]
fn keys_that_do_not_apply_are_errors() {
    let e = error(&SMALL.replace("[ssd.gc]", "[ssd.mapping]\nkind = \"block\"\n[ssd.gc]"));
    assert!(
        e.contains("key `ssd.gc.policy`") && e.contains("page mapping only"),
        "{e}"
    );
    let e = error(&format!("{SMALL}\n[engine]\niaa = true\n"));
    assert!(e.contains("key `engine`"), "{e}");
    let e = error(&SMALL.replace("kind = \"synthetic\"", "kind = \"constant-free-space\""));
    assert!(e.contains("workload"), "{e}");
}

#[test]
fn the_old_run_config_layout_is_refused_with_its_replacement() {
    let e = error("seed = 1\n[device]\npreset = \"slc\"\n");
    assert!(e.contains("old run-config layout"), "{e}");
}

#[test]
fn sweep_overrides_set_any_key_path() {
    let overrides = [
        (
            "ssd.gc.policy".to_string(),
            toml::Value::String("greedy".into()),
        ),
        ("ssd.host.queue_depth".to_string(), toml::Value::Integer(4)),
        (
            "nand.geometry.blocks_per_plane".to_string(),
            toml::Value::Integer(48),
        ),
    ];
    let s = Stack::from_toml("t.toml", SMALL, Path::new("."), &overrides).unwrap();
    assert_eq!(s.ftl.gc.policy, nandlab_ftl::GcPolicy::Greedy);
    assert_eq!(s.ftl.host.queue_depth, 4);
    assert_eq!(s.nand.geometry.blocks_per_plane, 48);
    let bad = [("ssd.gc.nope".to_string(), toml::Value::Integer(1))];
    let e = Stack::from_toml("t.toml", SMALL, Path::new("."), &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ssd.gc.nope"), "{e}");
}

/// The engine runs on any SSD: the paper's and the bench device, both scaled down.
#[test]
fn the_engine_runs_on_two_ssd_presets() {
    for (preset, geometry) in [
        ("miyaji2014-ssd", "channels = 1\npages_per_block = 32"),
        (
            "bench-ssd",
            "channels = 1\nchips_per_channel = 1\nblocks_per_plane = 32\npages_per_block = 32",
        ),
    ] {
        let text = format!(
            "[ssd]\npreset = \"{preset}\"\npayload = \"full\"\n[nand.geometry]\n{geometry}\n\
             [engine]\niaa = true\nu2di = true\n\
             [workload]\nkind = \"constant-free-space\"\nfree_space_fraction = 0.5\n\
             update_fraction = 0.4\nquery_count = 3000\n"
        );
        let s = stack(&text).unwrap_or_else(|e| panic!("{preset}: {e}"));
        let run = s.run(None, &Control::new()).unwrap();
        assert_eq!(run.metric("queries"), Some(3000.0), "{preset}");
        assert!(run.metric("queries_per_s").unwrap() > 0.0, "{preset}");
    }
}

/// `wait_for_gc`: on a four-channel device GC on another die no longer overlaps the next
/// queries, so the same work (same copies and erases) takes longer.
#[test]
fn waiting_for_gc_blocks_queries_on_gc_of_other_dies() {
    let run = |wait: bool| {
        let text = format!(
            "[ssd]\npreset = \"miyaji2014-ssd\"\n[nand.geometry]\nchannels = 4\n\
             blocks_per_plane = 32\npages_per_block = 16\n\
             [engine]\nwait_for_gc = {wait}\n\
             [workload]\nkind = \"constant-free-space\"\nfree_space_fraction = 0.2\n\
             update_fraction = 0.4\nwarmup_query_count = 4000\nquery_count = 4000\n"
        );
        stack(&text).unwrap().run(None, &Control::new()).unwrap()
    };
    let (overlapped, blocking) = (run(false), run(true));
    for key in ["page_copies", "erases"] {
        assert_eq!(overlapped.metric(key), blocking.metric(key), "{key}");
    }
    assert!(overlapped.metric("page_copies").unwrap() > 0.0);
    assert!(
        blocking.metric("queries_per_s").unwrap() < overlapped.metric("queries_per_s").unwrap()
    );
}

/// The emulator's host-write path (`[engine] write_buffer_pages`): on four dies the
/// co-designed engine's programs overlap, so the same flash work (same copies and erases, rows
/// verified on every read) runs faster; the `miyaji2014-emulator` preset adds the per-request
/// controller energy on top of the chip's. With the packed co-designed fallback, as the
/// `miyaji-*` emulator points run it (with the spread layout every read waits behind a
/// program on its die and nothing overlaps: docs/experiments.md, "The emulator path").
#[test]
fn buffered_host_writes_overlap_programs_over_dies_with_the_same_flash_work() {
    let run = |preset: &str, buffer: u32| {
        let text = format!(
            "[ssd]\npreset = \"{preset}\"\n[nand.geometry]\nchannels = 4\n\
             blocks_per_plane = 32\npages_per_block = 16\n\
             [engine]\niaa = true\nu2di = true\ncodesign_fallback = \"append\"\n\
             wait_for_gc = true\nwrite_buffer_pages = {buffer}\n\
             [workload]\nkind = \"constant-free-space\"\nfree_space_fraction = 0.2\n\
             update_fraction = 0.4\nwarmup_query_count = 4000\nquery_count = 4000\n"
        );
        stack(&text).unwrap().run(None, &Control::new()).unwrap()
    };
    let m = |r: &StackRun, key: &str| r.metric(key).unwrap();
    let (sync, buffered) = (run("miyaji2014-ssd", 0), run("miyaji2014-ssd", 8));
    for key in ["page_copies", "erases", "queries"] {
        assert_eq!(m(&sync, key), m(&buffered, key), "{key}");
    }
    assert!(m(&buffered, "queries_per_s") > 1.5 * m(&sync, "queries_per_s"));
    // no controller costs: the energy is the chip's, a little less with reads from the buffer
    assert!(m(&buffered, "mj_per_query") <= m(&sync, "mj_per_query"));
    let emulated = run("miyaji2014-emulator", 8);
    assert_eq!(
        m(&emulated, "queries_per_s"),
        m(&buffered, "queries_per_s"),
        "the controller energy costs no time"
    );
    assert!(m(&emulated, "mj_per_query") > m(&buffered, "mj_per_query") + 0.03);
}

/// `[ssd.gc] device_reserve_blocks` needs device-scope GC; the error names the stack key.
#[test]
fn a_device_reserve_without_device_scope_names_the_key() {
    let text = "[ssd]\npreset = \"miyaji2014-ssd\"\n[ssd.gc]\nscope = \"plane\"\n\
                device_reserve_blocks = 2\n[nand.geometry]\nchannels = 1\npages_per_block = 32\n\
                [workload]\nkind = \"synthetic\"\npattern = \"random\"\nread_fraction = 0.0\n\
                request_size_bytes = 16384\nspan_bytes = 0\nrequest_count = 10\n";
    let e = stack(text).unwrap_err().to_string();
    assert!(e.contains("ssd.gc.device_reserve_blocks"), "{e}");
}

#[test]
fn same_config_and_seed_give_identical_metrics() {
    let a = stack(SMALL).unwrap().run(None, &Control::new()).unwrap();
    let b = stack(SMALL).unwrap().run(None, &Control::new()).unwrap();
    assert_eq!(a.metrics, b.metrics);
}

/// A bad `[run] seed` is blamed on `run.seed`, not on the `workload.seed` it would seed.
#[test]
fn a_bad_run_seed_names_run_seed() {
    for bad in ["-1", "1.5", "\"x\""] {
        let text = SMALL.replace("seed = 3", &format!("seed = {bad}"));
        let e = error(&text);
        assert!(
            e.contains("run.seed") && !e.contains("workload.seed"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn slc_cache_errors_name_the_key() {
    let tlc = SMALL.replace("preset = \"slc\"", "preset = \"tlc-b17a\"");
    let cached = tlc.replace("[ssd.gc]", "[ssd.slc_cache]\nblocks = 4\n[ssd.gc]");
    // the preset publishes no SLC-mode times
    let e = error(&cached);
    assert!(
        e.contains("timing.slc_program_us") && !e.contains('\n'),
        "{e}"
    );
    let timed = cached.replace(
        "[nand.geometry]",
        "[nand.timing]\nslc_read_us = 25\nslc_program_us = 420\n[nand.geometry]",
    );
    let s = stack(&timed).unwrap();
    assert_eq!(s.ftl.slc_cache.blocks, 4);
    let e = error(&timed.replace(
        "[ssd.gc]\npolicy = \"fifo\"",
        "[ssd.mapping]\nkind = \"block\"",
    ));
    assert!(e.contains("ssd.slc_cache.blocks"), "{e}");
}
