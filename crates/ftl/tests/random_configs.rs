//! Property (issue 11): random valid-looking chip + FTL configs — small geometries, every
//! policy and option, and adversarial values (zero, NaN, negative, huge, non-power-of-two) —
//! either build and run a short random workload, or are refused with a one-line error. No
//! panic, bounded time and memory.

use nandlab_core::SimTime;
use nandlab_core::memory::{BudgetSource, MemoryBudget};
use nandlab_ftl::{
    BufferConfig, BufferPolicy, ControllerCosts, FtlConfig, GcConfig, GcPolicy, GcScheduling,
    GcScope, HintsConfig, HostConfig, HostOp, HostRequest, MappingConfig, MappingKind, PayloadMode,
    Precondition, ReadScheduling, SchedulerConfig, SearchRegionConfig, SlcCacheConfig, Ssd,
    SsdConfig, WearConfig, WearLeveling,
};
use nandlab_nand::config::PerPageType;
use nandlab_nand::{PageLayout, preset};
use proptest::prelude::*;
use proptest::sample::select;
use std::sync::atomic::{AtomicU64, Ordering};

static BUILT: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

/// Mostly one of `sane`, sometimes (1 in 20) one of `bad`: so that a good share of the cases
/// build a device and run, and every adversarial value still comes up.
fn mostly<T: Clone + std::fmt::Debug + 'static>(sane: Vec<T>, bad: Vec<T>) -> BoxedStrategy<T> {
    prop_oneof![19 => select(sane), 1 => select(bad)].boxed()
}

/// A chip config: the `slc` preset with random geometry, layout and timing.
#[derive(Clone, Debug)]
struct Chip {
    channels: u32,
    dies: u32,
    planes: u32,
    blocks: u32,
    pages: u32,
    page_size: u32,
    layout: PageLayout,
    read_us: f64,
    program_us: f64,
    by_type: bool,
    erase_us: f64,
    bus_mts: f64,
    nop: u32,
    in_order: bool,
}

fn chip() -> impl Strategy<Value = Chip> {
    (
        (
            mostly(vec![1u32, 2], vec![0, u32::MAX]),
            mostly(vec![1u32, 2, 3], vec![0]),
            mostly(vec![1u32, 2, 4], vec![0, 17, u32::MAX]),
            mostly(vec![24u32, 40, 64], vec![0, 1, 4, 8, u32::MAX]),
            mostly(vec![12u32, 24, 48], vec![0, 1, 3, 4, 8, u32::MAX]),
            mostly(
                vec![512u32, 2048, 4096, 65536],
                vec![0, 1, 511, 1000, u32::MAX],
            ),
        ),
        (
            select(vec![
                PageLayout::Slc,
                PageLayout::MlcPaired,
                PageLayout::MlcAlternating,
                PageLayout::TlcSequential,
                PageLayout::QlcSequential,
            ]),
            mostly(
                vec![25.0, 50.0, 1e6],
                vec![f64::NAN, -1.0, 0.0, 1e-12, 1e12, f64::INFINITY],
            ),
            mostly(
                vec![250.0, 2200.0, 1e6],
                vec![f64::NAN, -1.0, 0.0, 1e-12, 1e12],
            ),
            any::<bool>(),
            mostly(vec![1500.0, 1e6], vec![0.0, 1e13, f64::NAN]),
            mostly(vec![0.1, 40.0, 800.0], vec![0.0, 1e-6, 1e9]),
            mostly(vec![1u32, 4], vec![0, 1000]),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (channels, dies, planes, blocks, pages, page_size),
                (layout, read_us, program_us, by_type, erase_us, bus_mts, nop, in_order),
            )| Chip {
                channels,
                dies,
                planes,
                blocks,
                pages,
                page_size,
                layout,
                read_us,
                program_us,
                by_type,
                erase_us,
                bus_mts,
                nop,
                in_order,
            },
        )
}

fn ftl() -> impl Strategy<Value = FtlConfig> {
    (
        (
            select(vec![
                MappingKind::Page,
                MappingKind::Block,
                MappingKind::Hybrid,
            ]),
            select(GcPolicy::ALL.to_vec()),
            mostly(vec![2u32, 3, 5], vec![0, 1, 40, u32::MAX]),
            select(vec![GcScope::Plane, GcScope::Device]),
            mostly(vec![0u32, 0, 6], vec![4, 100, u32::MAX]),
            mostly(
                vec![0.25, 0.5, 1.0, 10.0],
                vec![f64::NAN, -1.0, 0.0, 0.07, 11.0],
            ),
            select(vec![WearLeveling::RoundRobin, WearLeveling::Static]),
            mostly(vec![1u32, 2, 64], vec![0]),
        ),
        (
            any::<bool>(),
            mostly(vec![0u32, 0, 4], vec![1 << 20, u32::MAX]),
            select(vec![BufferPolicy::Lru, BufferPolicy::Fifo]),
            select(vec![PayloadMode::TimingOnly, PayloadMode::Full]),
            mostly(
                vec!["", "plane-die", "channel-chip-die-plane"],
                vec!["die-die", "x"],
            ),
            select(vec![0u32, 1, 16]),
            any::<bool>(),
            mostly(vec![1u32, 4, 32], vec![0, 70_000]),
            mostly(vec![1u32, 2, 8], vec![0, u32::MAX]),
        ),
        (
            controller(),
            mostly(vec![1u16, 1, 2, 3], vec![0, 300]),
            select(vec![GcScheduling::Blocking, GcScheduling::Interleaved]),
            mostly(vec![0u32, 0, 1, 3], vec![u32::MAX]),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            mostly(vec![0u32, 0, 0, 1, 2], vec![65]),
            mostly(vec![1u32, 1, 2], vec![0, 3]),
            select(vec![ReadScheduling::Fifo, ReadScheduling::Priority]),
        ),
    )
        .prop_map(
            |(
                (mapping, gc_policy, gc_threshold, gc_scope, idle, op, wl, wl_gap),
                (copyback, buffer, buffer_policy, payload, order, hint, all_planes, depth, logs),
                (
                    controller,
                    placement_ids,
                    gc_scheduling,
                    gc_urgent_free_blocks,
                    multiplane,
                    cache_mode,
                    padding,
                    device_reserve,
                    superpage_planes,
                    read_scheduling,
                ),
            )| FtlConfig {
                mapping: MappingConfig {
                    kind: mapping,
                    allocation_order: order.to_string(),
                    paired_page_padding: padding,
                    checkpoint_interval_pages: 0,
                    random_log_blocks: logs,
                    placement_ids,
                    zone_planes: 0,
                    cache_entries: 0,
                },
                host: HostConfig { queue_depth: depth },
                gc: GcConfig {
                    policy: gc_policy,
                    threshold_blocks: gc_threshold,
                    scope: gc_scope,
                    device_reserve_blocks: device_reserve,
                    idle_threshold_blocks: idle,
                    copyback,
                    scheduling: gc_scheduling,
                    urgent_free_blocks: gc_urgent_free_blocks,
                },
                op_fraction: op,
                wear: WearConfig {
                    leveling: wl,
                    erase_gap_threshold: wl_gap,
                },
                buffer: BufferConfig {
                    pages: buffer,
                    policy: buffer_policy,
                },
                payload,
                hints: HintsConfig {
                    refresh_ops: hint,
                    all_planes,
                },
                controller,
                scheduler: SchedulerConfig {
                    policy: None,
                    reads: read_scheduling,
                    multiplane,
                    cache: cache_mode,
                    superpage_planes,
                },
                slc_cache: SlcCacheConfig::default(),
                search: SearchRegionConfig::default(),
            },
        )
}

/// Controller costs: none, every cost at once, or an out-of-range value.
fn controller() -> impl Strategy<Value = ControllerCosts> {
    let costly = ControllerCosts {
        firmware_command_ns: 1500.0,
        firmware_gc_move_ns: 300.0,
        dram_access_ns: 30.0,
        dram_bandwidth_mb_s: 6400.0,
        host_link_pcie_gen: 3,
        host_link_lanes: 2,
        ecc_decode_ns: 800.0,
        ecc_retry_decode_ns: 3000.0,
        controller_command_nj: 2.0,
        controller_gc_move_nj: 0.5,
        dram_pj_per_byte: 40.0,
        host_link_pj_per_byte: 40.0,
        idle_power_mw: 30.0,
        ..ControllerCosts::default()
    };
    let negative = ControllerCosts {
        ecc_decode_ns: -1.0,
        ..ControllerCosts::default()
    };
    let bad_link = ControllerCosts {
        host_link_pcie_gen: 9,
        host_link_lanes: 4,
        ..ControllerCosts::default()
    };
    mostly(
        vec![
            ControllerCosts::default(),
            ControllerCosts::default(),
            costly,
        ],
        vec![negative, bad_link],
    )
}

/// One request: op, page (taken modulo the logical pages, or far beyond them), page count,
/// arrival gap in microseconds (None: closed loop).
type Step = (u8, u32, bool, u64, Option<u64>);

fn steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        (
            0u8..4,
            any::<u32>(),
            prop::bool::weighted(0.004),
            1u64..4,
            prop::option::of(0u64..2_000),
        ),
        0..60,
    )
}

fn ssd_config(c: &Chip, f: FtlConfig) -> SsdConfig {
    let mut nand = preset("slc").unwrap();
    let g = &mut nand.geometry;
    g.channels = c.channels;
    g.dies_per_chip = c.dies;
    g.planes_per_die = c.planes;
    g.blocks_per_plane = c.blocks;
    g.pages_per_block = c.pages;
    g.page_size_bytes = c.page_size;
    g.spare_bytes_per_page = 0;
    nand.cell.layout = c.layout;
    let types = c.layout.page_type_count();
    let per_type = |v: f64| {
        if c.by_type {
            PerPageType::ByType(vec![v; types])
        } else {
            PerPageType::One(v)
        }
    };
    nand.timing.read_us = per_type(c.read_us);
    nand.timing.program_us = per_type(c.program_us);
    nand.timing.erase_us = c.erase_us;
    nand.timing.bus_data_rate_mts = c.bus_mts;
    nand.reliability.nop_limit = c.nop;
    nand.reliability.in_order_programming = c.in_order;
    SsdConfig {
        ftl: f,
        ..SsdConfig::from_nand(nand)
    }
}

fn one_line(e: &impl std::fmt::Display) -> Result<(), TestCaseError> {
    let message = e.to_string();
    prop_assert!(!message.is_empty() && !message.contains('\n'), "{message}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn random_configs_run_or_are_refused_with_one_line(
        chip in chip(),
        ftl in ftl(),
        fill in select(vec![f64::NAN, -0.5, 0.0, 0.5, 1.0]),
        overwrites in select(vec![0u64, 10, 500]),
        steps in steps(),
        seed in any::<u64>(),
    ) {
        let config = ssd_config(&chip, ftl);
        // bounded memory: a 64 MiB budget (the estimate is checked before anything is built)
        let budget = MemoryBudget { bytes: 64 << 20, source: BudgetSource::Environment };
        if let Err(e) = config.check_memory(&budget) {
            REFUSED.fetch_add(1, Ordering::Relaxed);
            return one_line(&e);
        }
        let mut ssd = match Ssd::new(config, seed) {
            Ok(ssd) => ssd,
            Err(e) => {
                REFUSED.fetch_add(1, Ordering::Relaxed);
                return one_line(&e);
            }
        };
        BUILT.fetch_add(1, Ordering::Relaxed);
        let precondition = Precondition { fill_fraction: fill, random_overwrites: overwrites };
        if let Err(e) = ssd.precondition(&precondition) {
            one_line(&e)?;
        }
        let page = u64::from(ssd.page_size_bytes());
        let logical = ssd.logical_pages();
        let mut at = ssd.now();
        let requests: Vec<HostRequest> = steps
            .iter()
            .map(|&(op, lpa, beyond, pages, gap_us)| {
                let op = [HostOp::Read, HostOp::Write, HostOp::Trim, HostOp::Flush][usize::from(op)];
                let lpa = if beyond { logical + u64::from(lpa) } else { u64::from(lpa) % logical };
                let pages = pages.min(logical - lpa.min(logical)).max(1);
                let mut r = if op == HostOp::Flush {
                    HostRequest::flush()
                } else {
                    // placement ids 0–2: some beyond the device's ids (an error naming it)
                    HostRequest::new(op, lpa * page, pages * page).placed((lpa % 3) as u16)
                };
                if let Some(gap) = gap_us {
                    at += SimTime::from_us(gap);
                    r.arrival = Some(at);
                }
                r
            })
            .collect();
        match ssd.run(requests) {
            Ok(report) => prop_assert_eq!(report.submitted, report.completed),
            Err(e) => one_line(&e)?,
        }
        if let Err(e) = ssd.check_consistency() {
            one_line(&e)?;
            prop_assert!(false, "inconsistent mapping after a run: {e}");
        }
    }
}

/// The property above must exercise both outcomes (a generator that only produced refused
/// configs would prove nothing). Runs it again with its own counters.
#[test]
fn random_configs_both_build_and_get_refused() {
    random_configs_run_or_are_refused_with_one_line();
    let built = BUILT.load(Ordering::Relaxed);
    let refused = REFUSED.load(Ordering::Relaxed);
    eprintln!("random configs: {built} built and ran, {refused} refused");
    assert!(
        built >= 30 && refused >= 30,
        "{built} built, {refused} refused"
    );
}

/// Regression (issue 11): `gc_threshold_blocks = u32::MAX` overflowed `threshold + 2` (a panic
/// in debug builds, a wrapped and accepted value in release builds), and a huge
/// `idle_gc_threshold_blocks` overflowed the device-scope threshold. Both are refused with
/// their key.
#[test]
fn huge_gc_thresholds_are_refused_with_their_key() {
    let mut c = SsdConfig::from_preset("slc");
    c.ftl.gc.threshold_blocks = u32::MAX;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.gc_threshold_blocks"), "{e}");
    let mut c = SsdConfig::from_preset("slc");
    c.ftl.gc.idle_threshold_blocks = u32::MAX;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.idle_gc_threshold_blocks"), "{e}");
}
