//! Crash-oracle tests: sweeps of cut points on small devices. The correct FTL must show no
//! violation where the contract holds; deliberately broken recoveries must be caught; and the
//! two weaknesses of the current FTL the oracle found are pinned as such (docs/power.md).

use super::sweep::{SweepMode, SweepSummary, sweep};
use super::*;

fn case() -> CrashCase {
    CrashCase {
        workload: CrashWorkload {
            requests: 400,
            lpa_span: 40,
            ..CrashWorkload::default()
        },
        ..CrashCase::default()
    }
}

fn run(c: &CrashCase, mode: SweepMode) -> SweepSummary {
    sweep(c, mode, 1, 100_000, TEST_BUILD).expect("sweep runs")
}

/// Every event and every completed chip op of a run with overwrites, trims, flushes, GC and
/// erases: torn programs and interrupted erases happen, and no cut breaks the contract.
#[test]
fn every_cut_of_the_correct_ftl_keeps_the_contract() {
    for mode in [SweepMode::Events, SweepMode::ChipOps] {
        let s = run(&case(), mode);
        assert!(s.cuts > 300, "{s:?}");
        assert!(s.torn_programs > 0 && s.interrupted_erases > 0, "{s:?}");
        assert_eq!(s.violations.total(), 0, "{mode:?}: {:?}", s.violations);
    }
}

/// Two dies, two planes each, copyback GC, timed cuts inside ops: still no violation.
#[test]
fn timed_cuts_on_a_multi_plane_device() {
    let mut c = case();
    c.device.set("nand.geometry.planes_per_die", 2);
    c.device.set("nand.geometry.blocks_per_plane", 10);
    c.device.set("ssd.op_fraction", 0.8);
    c.device.set("ssd.gc.copyback", true);
    let s = sweep(&c, SweepMode::Times, 1, 400, TEST_BUILD).expect("sweep runs");
    assert!(s.cuts >= 400, "{s:?}");
    assert!(s.torn_programs > 0 && s.interrupted_erases > 0, "{s:?}");
    assert_eq!(s.violations.total(), 0, "{:?}", s.violations);
}

/// With power-loss protection every completed write is durable, the buffer included.
#[test]
fn power_loss_protection_keeps_completed_writes() {
    let mut c = case();
    c.device.set("ssd.buffer.pages", 8);
    c.hold_up_energy_uj = Some(1e6);
    let s = run(&c, SweepMode::Events);
    assert_eq!(s.volatile_pages_lost, 0);
    assert_eq!(s.violations.total(), 0, "{:?}", s.violations);
    // a budget too small for the buffer loses acknowledged writes, and the oracle says so
    c.hold_up_energy_uj = Some(0.0);
    let s = run(&c, SweepMode::Events);
    assert!(s.volatile_pages_lost > 0);
    assert!(s.violations.lost + s.violations.resurrected > 0, "{s:?}");
}

/// Broken recoveries are caught: trusting torn pages returns garbage, and letting the lowest
/// sequence number win returns old data.
#[test]
fn broken_recoveries_are_caught() {
    let mut c = case();
    c.recovery = RecoveryVariant::IgnoreCrc;
    let s = run(&c, SweepMode::Events);
    assert!(s.violations.corrupted > 0, "{s:?}");
    c.recovery = RecoveryVariant::LowestSequenceWins;
    let s = run(&c, SweepMode::Events);
    assert!(s.violations.resurrected > 0, "{s:?}");
}

/// Tseng et al., DAC'11: an interrupted upper-page program damages the lower pages of its
/// word line, which may hold a write made durable long before. With paired-page padding (a
/// Flush and an erase of an older copy first complete the word lines of the data; the crash
/// device's default) every event cut keeps the contract on MLC and TLC even when every torn
/// program damages its lower pages; without it (the "paired pages ignored" mutation) the
/// oracle sees lost or resurrected durable writes.
#[test]
fn paired_page_padding_protects_durable_lower_pages() {
    for (preset, pages) in [("mlc1", 8), ("tlc-b17a", 9)] {
        let mut c = case();
        c.device.set("nand.preset", preset);
        c.device.set("nand.geometry.pages_per_block", pages);
        c.paired_damage_probability = 1.0;
        let s = run(&c, SweepMode::Events);
        assert!(s.damaged_lower_pages > 0, "{preset}: {s:?}");
        assert_eq!(s.violations.total(), 0, "{preset}: {:?}", s.violations);
        c.device.set("ssd.mapping.paired_page_padding", false);
        let s = run(&c, SweepMode::Events);
        assert!(
            s.violations.lost + s.violations.resurrected > 0,
            "{preset}: the mutation is caught: {s:?}"
        );
    }
}

/// Fixed finding (issue 14): with a volatile write buffer, an eviction's program of a newer
/// write invalidates the page of the last durable write at once, and GC used to erase that
/// page's block before the eviction's program (on another die) completed: a cut in between
/// left only an older write. GC erases now wait for the programs that superseded their pages
/// (`Flash::erase`), and every event cut keeps the contract.
#[test]
fn gc_erases_wait_for_the_programs_that_superseded_their_pages() {
    let mut c = case();
    c.workload.requests = 600;
    c.workload.trim_probability = 0.0;
    for buffer in [4, 8, 16] {
        c.device.set("ssd.buffer.pages", buffer);
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 300 && s.interrupted_erases > 0, "{s:?}");
        assert_eq!(
            s.violations.total(),
            0,
            "buffer {buffer}: {:?}",
            s.violations
        );
    }
}

/// FUA writes are durable when they complete, with a volatile write buffer and without a
/// Flush: every event cut keeps them (the oracle counts them durable at completion).
#[test]
fn fua_writes_are_durable_at_completion() {
    for preset in ["slc", "tlc-b17a"] {
        let mut c = case();
        c.device.set("nand.preset", preset);
        c.device.set(
            "nand.geometry.pages_per_block",
            if preset == "slc" { 8 } else { 9 },
        );
        c.device.set("ssd.buffer.pages", 8);
        c.workload.flush_probability = 0.0;
        c.workload.fua_probability = 0.5;
        c.paired_damage_probability = 1.0;
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 300 && s.torn_programs > 0, "{preset}: {s:?}");
        assert_eq!(s.violations.total(), 0, "{preset}: {:?}", s.violations);
    }
}

/// The same case and seed give the same outcome.
#[test]
fn crash_runs_are_deterministic() {
    let mut c = case();
    c.device.set("nand.preset", "tlc-b17a");
    c.device.set("nand.geometry.pages_per_block", 9);
    c.cut_point = CutPoint::AfterEvents(200);
    let a = run_case(&c, TEST_BUILD).unwrap();
    assert_eq!(a, run_case(&c, TEST_BUILD).unwrap());
    assert!(a.recovery.pages_read > 0);
}

/// Bad parameters are errors naming the parameter, not panics.
#[test]
fn bad_parameters_are_one_line_errors() {
    let mut c = case();
    c.paired_damage_probability = 2.0;
    assert!(
        run_case(&c, TEST_BUILD)
            .unwrap_err()
            .contains("paired_damage_probability")
    );
    let mut c = case();
    c.workload.write_pages_max = 0;
    assert!(
        run_case(&c, TEST_BUILD)
            .unwrap_err()
            .contains("write_pages_max")
    );
    let mut c = case();
    c.device.set("nand.geometry.pages_per_block", 7);
    c.device.set("nand.preset", "mlc1");
    assert!(run_case(&c, TEST_BUILD).is_err());
    assert!(
        sweep(&case(), SweepMode::Events, 0, 10, TEST_BUILD)
            .unwrap_err()
            .contains("stride")
    );
}

/// Every GC policy of the page mapping keeps the contract at every event cut.
#[test]
fn every_gc_policy_keeps_the_contract() {
    for policy in [GcPolicy::Fifo, GcPolicy::CostBenefit, GcPolicy::Random] {
        let mut c = case();
        c.device.set("ssd.gc.policy", policy);
        let s = run(&c, SweepMode::Events);
        assert!(
            s.torn_programs > 0 && s.interrupted_erases > 0,
            "{policy:?}: {s:?}"
        );
        assert_eq!(s.violations.total(), 0, "{policy:?}: {:?}", s.violations);
    }
}

/// Block and hybrid mappings keep the contract at every event cut. (The violations an
/// earlier version reported here were the oracle's: a write completed, then trimmed, then
/// covered by a flush was counted durable although the trim superseded it.)
#[test]
fn block_and_hybrid_mappings_keep_the_contract() {
    for mapping in [MappingKind::Block, MappingKind::Hybrid] {
        let mut c = case();
        c.device.set_mapping(mapping);
        c.device.set("nand.geometry.blocks_per_plane", 16);
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 300, "{mapping:?}: {s:?}");
        assert_eq!(s.violations.total(), 0, "{mapping:?}: {:?}", s.violations);
    }
}

/// Map checkpoints (issue 14 item 3): every event cut with checkpoints every 4 or 16 pages,
/// with and without a write buffer, keeps the contract; cuts fall mid-checkpoint; the mounts
/// start from a checkpoint and read fewer pages than full scans.
#[test]
fn map_checkpoints_keep_the_contract_and_read_less() {
    for (interval, buffer) in [(4, 0), (16, 0), (4, 8)] {
        let mut c = case();
        c.device
            .set("ssd.mapping.map_checkpoint_interval_pages", interval);
        c.device.set("ssd.buffer.pages", buffer);
        let s = run(&c, SweepMode::Events);
        assert_eq!(
            s.violations.total(),
            0,
            "{interval}/{buffer}: {:?}",
            s.violations
        );
        assert!(s.checkpoint_mounts > s.cuts / 2, "{s:?}");
        assert!(s.checkpoint_cuts_mid_write > 0, "{s:?}");
        assert!(s.recovery_pages_read < s.full_scan_pages_read, "{s:?}");
    }
    // MLC with paired damage: the lower pages below a checkpoint's write pointer are reread
    let mut c = case();
    c.device.set("nand.preset", "mlc1");
    c.device.set("nand.geometry.pages_per_block", 16);
    c.device.set("ssd.mapping.map_checkpoint_interval_pages", 8);
    c.paired_damage_probability = 1.0;
    let s = run(&c, SweepMode::Events);
    assert!(s.damaged_lower_pages > 0, "{s:?}");
    assert_eq!(s.violations.total(), 0, "{:?}", s.violations);
}

/// The checkpoint-before-data mutation (a checkpoint commits once written, before the data
/// it maps is on flash) is caught.
#[test]
fn a_checkpoint_committed_before_its_data_is_caught() {
    let mut c = case();
    c.device.set("ssd.mapping.map_checkpoint_interval_pages", 2);
    c.device.set("ssd.buffer.pages", 8);
    c.device.checkpoint_before_data = true;
    let s = run(&c, SweepMode::Events);
    assert!(s.violations.total() > 0, "{s:?}");
}

/// A trim followed by a completed Flush is durable (issue 14, NVMe semantics): every event cut
/// of a trim-heavy run keeps it — the Flush writes a trim-log record and completes after it —
/// with and without a write buffer and map checkpoints; a firmware whose Flush skips the trim
/// log (the `trim-log-skipped` mutation) brings trimmed LPAs' older pages back, and the oracle
/// says so.
#[test]
fn trims_are_durable_after_a_flush() {
    for (buffer, interval) in [(0, 0), (8, 0), (0, 16)] {
        let mut c = case();
        c.workload.trim_probability = 0.15;
        c.workload.flush_probability = 0.15;
        c.device.set("ssd.buffer.pages", buffer);
        c.device
            .set("ssd.mapping.map_checkpoint_interval_pages", interval);
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 300, "{s:?}");
        assert_eq!(
            s.violations.total(),
            0,
            "buffer {buffer}, interval {interval}: {:?}",
            s.violations
        );
        let whole = run_case(
            &CrashCase {
                cut_point: CutPoint::End,
                ..c.clone()
            },
            TEST_BUILD,
        )
        .unwrap();
        assert!(whole.cut.trim_records_written > 0, "{whole:?}");
        c.device.trim_log_skipped = true;
        let s = run(&c, SweepMode::Events);
        assert!(
            s.violations.resurrected > 0,
            "buffer {buffer}, interval {interval}: the mutation is caught: {s:?}"
        );
    }
}

/// Queue depth 4: several writes, trims and flushes outstanding at every event cut (flying
/// and unserializable writes would show as resurrected or corrupted pages): the contract
/// holds, with and without a write buffer.
#[test]
fn deep_queues_keep_the_contract() {
    for buffer in [0, 8] {
        let mut c = case();
        c.device.set("ssd.host.queue_depth", 4);
        c.device.set("ssd.buffer.pages", buffer);
        c.workload.trim_probability = 0.05;
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 200 && s.torn_programs > 0, "{s:?}");
        assert_eq!(
            s.violations.total(),
            0,
            "buffer {buffer}: {:?}",
            s.violations
        );
    }
}

/// Multiplane merging, superblocks and cache mode: every event cut keeps the contract (a
/// merged program in flight tears every member page; cache-mode ops are folded in the order
/// the die completes them), on SLC and on MLC with paired damage 1, with a buffer at queue
/// depth 4, and with map checkpoints.
#[test]
fn multiplane_and_cache_mode_keep_the_contract() {
    for (multiplane, superpage, cache, preset, depth, buffer, interval) in [
        (true, 1, false, "slc", 1, 0, 0),
        (true, 2, false, "slc", 1, 0, 0),
        (false, 1, true, "slc", 1, 0, 0),
        (true, 2, true, "slc", 1, 0, 16),
        (false, 1, true, "slc", 4, 8, 16),
        (true, 1, true, "slc", 4, 8, 16),
        (true, 1, true, "mlc1", 1, 0, 0),
        (true, 2, false, "mlc1", 4, 8, 0),
    ] {
        let mut c = case();
        c.device.set("nand.preset", preset);
        c.device.set("nand.geometry.planes_per_die", 2);
        c.device.set("nand.geometry.blocks_per_plane", 10);
        c.device.set("ssd.op_fraction", 0.8);
        c.device.set("ssd.scheduler.multiplane", multiplane);
        c.device.set("ssd.scheduler.superpage_planes", superpage);
        c.device.set("ssd.scheduler.cache", cache);
        c.device.set("ssd.host.queue_depth", depth);
        c.device.set("ssd.buffer.pages", buffer);
        c.device
            .set("ssd.mapping.map_checkpoint_interval_pages", interval);
        if preset == "mlc1" {
            c.device.set("nand.geometry.pages_per_block", 16);
            c.paired_damage_probability = 1.0;
        }
        c.workload.write_pages_max = 3;
        let label = format!(
            "multiplane {multiplane}, superpage {superpage}, cache {cache}, {preset}, depth {depth}, buffer {buffer}, interval {interval}"
        );
        let uncut = run_case(&c, TEST_BUILD).unwrap();
        assert_eq!(uncut.multiplane_ops > 0, multiplane, "{label}");
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 300 && s.torn_programs > 0, "{label}: {s:?}");
        assert_eq!(s.violations.total(), 0, "{label}: {:?}", s.violations);
    }
}

/// Superblocks with a write buffer at queue depth 4: every event cut keeps the contract. This
/// lost a flushed write at 3 of ~330 cuts (lpa 37, version 480) while a multiplane erase (a
/// GC superblock's erases, merged at decision) waited only for the programs its first member
/// waited for: the other member blocks were erased before the programs that superseded their
/// pages had completed (`Ssd::dispatch_erase`).
#[test]
fn superblocks_with_a_buffer_keep_the_contract() {
    let mut c = case();
    c.device.set("nand.geometry.planes_per_die", 2);
    c.device.set("nand.geometry.blocks_per_plane", 10);
    c.device.set("ssd.op_fraction", 0.8);
    c.device.set("ssd.scheduler.multiplane", true);
    c.device.set("ssd.scheduler.superpage_planes", 2);
    c.device.set("ssd.host.queue_depth", 4);
    c.device.set("ssd.buffer.pages", 8);
    c.workload.write_pages_max = 3;
    let s = run(&c, SweepMode::Events);
    assert_eq!(s.violations.total(), 0, "{:?}", s.violations);
}

/// Urgent GC (`gc_urgent_free_blocks` above the GC threshold): GC ops pass waiting host ops
/// much of the run (the uncut run counts them), and every event cut, also with a buffer at
/// queue depth 4, keeps the contract.
#[test]
fn urgent_gc_keeps_the_contract() {
    for (depth, buffer, urgent) in [(4, 0, 3), (4, 8, 3), (2, 0, 4)] {
        let mut c = case();
        c.workload.requests = 600;
        c.device.set("ssd.gc.scheduling", GcScheduling::Interleaved);
        c.device.set("ssd.gc.urgent_free_blocks", urgent);
        c.device.set("ssd.host.queue_depth", depth);
        c.device.set("ssd.buffer.pages", buffer);
        let uncut = run_case(&c, TEST_BUILD).unwrap();
        assert!(uncut.urgent_gc_passes > 10, "{}", uncut.urgent_gc_passes);
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 300 && s.interrupted_erases > 0, "{s:?}");
        assert_eq!(
            s.violations.total(),
            0,
            "depth {depth}, buffer {buffer}, urgent {urgent}: {:?}",
            s.violations
        );
    }
}

/// Interleaved GC scheduling (host ops pass queued GC ops, so dies run ops out of decision
/// order; the trace folds them in submission order): every event cut keeps the contract, at
/// queue depth 1 and 4, with and without a write buffer, and with map checkpoints.
#[test]
fn interleaved_gc_keeps_the_contract() {
    for (depth, buffer, interval) in [(1, 0, 0), (4, 8, 0), (1, 0, 16)] {
        let mut c = case();
        c.workload.requests = 600;
        c.device.set("ssd.gc.scheduling", GcScheduling::Interleaved);
        c.device.set("ssd.host.queue_depth", depth);
        c.device.set("ssd.buffer.pages", buffer);
        c.device
            .set("ssd.mapping.map_checkpoint_interval_pages", interval);
        let s = run(&c, SweepMode::Events);
        assert!(s.cuts > 300 && s.interrupted_erases > 0, "{s:?}");
        assert_eq!(
            s.violations.total(),
            0,
            "depth {depth}, buffer {buffer}, interval {interval}: {:?}",
            s.violations
        );
    }
}

/// The crash device is a stack config resolved by the stack builder: its default is the small
/// SLC device the harness always used, keys set on it are stack-config keys parsed by the
/// config itself, and a bad name or a key that does not apply is an error naming the key.
#[test]
fn the_crash_device_is_a_stack_config() {
    let d = CrashDevice::default();
    let c = d.config(TEST_BUILD).unwrap();
    let g = &c.device.nand.as_ref().expect("a resolved chip").geometry;
    assert_eq!(
        (
            g.channels,
            g.dies_per_chip,
            g.blocks_per_plane,
            g.pages_per_block
        ),
        (1, 2, 12, 8)
    );
    assert_eq!((g.page_size_bytes, g.spare_bytes_per_page), (512, 64));
    assert_eq!(c.ftl.payload, PayloadMode::Full);
    assert_eq!((c.ftl.gc.threshold_blocks, c.ftl.gc.copyback), (2, false));
    assert!(c.ftl.mapping.paired_page_padding);
    let mut d = CrashDevice::default();
    d.set("ssd.gc.policy", "cost-benefit");
    d.set("nand.geometry.page_size_bytes", 4096);
    let c = d.config(TEST_BUILD).unwrap();
    assert_eq!(c.ftl.gc.policy, GcPolicy::CostBenefit);
    let g = &c.device.nand.as_ref().unwrap().geometry;
    assert_eq!(g.spare_bytes_per_page, 512);
    d.set("ssd.gc.policy", "bogus");
    let e = d.config(TEST_BUILD).unwrap_err();
    assert!(e.contains("`ssd.gc.policy`") && e.contains("bogus"), "{e}");
    // away from the page mapping the page-only defaults go; a page-only key is refused
    let mut d = CrashDevice::default();
    d.set_mapping(MappingKind::Block);
    assert_eq!(
        d.config(TEST_BUILD).unwrap().ftl.mapping.kind,
        MappingKind::Block
    );
    d.set("ssd.gc.policy", "fifo");
    let e = d.config(TEST_BUILD).unwrap_err();
    assert!(
        e.contains("`ssd.gc.policy`") && e.contains("page mapping"),
        "{e}"
    );
}
