//! Replays that behave like on a real SSD (issue 11, "replay realism"). A read of a page never
//! written costs nothing in the FTL, so a replayed trace reported read p50 = 0 and a fio read
//! job on a fresh device absurd rates. These tests guard the fix: by default the pages a trace
//! or fio job reads before writing them are written functionally first (as MQSim fills a
//! trace's read footprint), `precondition_reads = false` turns it off, an explicit
//! `[precondition]` still applies, and `fit_device` grows the device to a trace instead of
//! folding it.

use nandlab_lab::control::Control;
use nandlab_lab::stack::{Stack, StackOutcome, StackRun};
use std::path::{Path, PathBuf};

/// A small page-mapped device (SLC, 8 KiB pages) and a workload section.
fn stack(dir: &Path, workload: &str, extra: &str) -> Result<Stack, String> {
    let text = format!(
        "[nand]\npreset = \"slc\"\n[nand.geometry]\nblocks_per_plane = 64\n{extra}\n[workload]\n{workload}\n"
    );
    Stack::from_toml("test.toml", &text, dir, &[]).map_err(|e| e.to_string())
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nandlab-realism-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A native trace: 3 reads of pages never written (one twice), then a write and a read of it.
fn write_trace(dir: &Path, far_offset: u64) -> &'static str {
    let trace = format!(
        "arrival_ns,op,offset_bytes,size_bytes\n\
         0,read,0,16384\n\
         1000,read,0,8192\n\
         2000,read,{far_offset},4096\n\
         3000,write,1048576,8192\n\
         4000,read,1048576,8192\n"
    );
    std::fs::write(dir.join("t.csv"), trace).unwrap();
    "kind = \"trace\"\npath = \"t.csv\"\nformat = \"native\"\n"
}

/// The pages [`write_trace`]'s trace reads before writing them on `stack`'s device.
fn read_first_pages(stack: &Stack) -> u64 {
    let page = u64::from(stack.nand.geometry.page_size_bytes);
    16384 / page + 4096u64.div_ceil(page)
}

fn run(stack: &Stack) -> StackRun {
    stack.run(None, &Control::new()).unwrap()
}

fn outcome(run: &StackRun) -> (u64, u64, Option<u32>) {
    match &run.outcome {
        StackOutcome::Ssd {
            folded_requests,
            read_preconditioned_pages,
            fitted_blocks_per_plane,
            ..
        } => (
            *folded_requests,
            *read_preconditioned_pages,
            *fitted_blocks_per_plane,
        ),
        other => panic!("not an SSD run: {other:?}"),
    }
}

#[test]
fn a_trace_reads_its_unwritten_pages_from_flash_by_default() {
    let dir = temp_dir("default");
    let workload = write_trace(&dir, 4 << 20);
    let base = stack(&dir, workload, "").unwrap();
    let on = run(&base);
    // the pages of the first 16 KiB and of the far 4 KiB; the written page is not read first
    assert_eq!(outcome(&on), (0, read_first_pages(&base), None));
    assert!(on.metric("read_lat_p50_us").unwrap() > 1.0);

    let off = run(&stack(&dir, &format!("{workload}precondition_reads = false\n"), "").unwrap());
    assert_eq!(outcome(&off).1, 0);
    assert_eq!(off.metric("read_lat_p50_us"), Some(0.0));
    // the timed part is the same stream: only the reads' latencies differ
    assert_eq!(on.metric("requests"), off.metric("requests"));
    assert_eq!(
        on.metric("write_iops").is_some(),
        off.metric("write_iops").is_some()
    );
}

#[test]
fn an_explicit_precondition_applies_first_and_leaves_nothing_to_fill() {
    let dir = temp_dir("explicit");
    let workload = write_trace(&dir, 4 << 20);
    let full = "[precondition]\nfill_fraction = 1.0\nrandom_overwrites = 0\n";
    let run = run(&stack(&dir, workload, full).unwrap());
    assert_eq!(outcome(&run).1, 0, "every page is mapped already");
    assert!(run.metric("read_lat_p50_us").unwrap() > 1.0);
}

#[test]
fn a_fio_read_job_on_a_fresh_device_reads_flash() {
    let dir = temp_dir("fio");
    std::fs::write(
        dir.join("r.fio"),
        "[r]\nrw=randread\nbs=8k\nnumber_ios=200\n",
    )
    .unwrap();
    let base = stack(&dir, "kind = \"fio\"\npath = \"r.fio\"\n", "").unwrap();
    let on = run(&base);
    let (_, pages, _) = outcome(&on);
    let page = u64::from(base.nand.geometry.page_size_bytes);
    assert!(pages > 0 && pages <= 200 * 8192 / page, "{pages}");
    assert!(on.metric("read_lat_p50_us").unwrap() > 1.0);
    assert!(on.metric("sim_time_us").unwrap() > 0.0);
    let off = run(&stack(
        &dir,
        "kind = \"fio\"\npath = \"r.fio\"\nprecondition_reads = false\n",
        "",
    )
    .unwrap());
    assert_eq!(off.metric("read_lat_p50_us"), Some(0.0));
}

#[test]
fn fit_device_grows_the_device_instead_of_folding() {
    let dir = temp_dir("fit");
    // beyond the small device's logical capacity (slc: 64 blocks per plane)
    let far = 1u64 << 33;
    let workload = write_trace(&dir, far);
    let folded = run(&stack(&dir, workload, "").unwrap());
    assert_eq!(outcome(&folded).0, 1);
    let base = stack(&dir, workload, "").unwrap();
    let fitted = run(&stack(&dir, &format!("{workload}fit_device = true\n"), "").unwrap());
    let (folds, pages, blocks) = outcome(&fitted);
    assert_eq!((folds, pages), (0, read_first_pages(&base)));
    let blocks = blocks.expect("the device was grown");
    assert!(blocks > base.nand.geometry.blocks_per_plane);
    let StackOutcome::Ssd { run: r, .. } = &fitted.outcome else {
        unreachable!()
    };
    let capacity = r.report.logical_pages * u64::from(r.report.page_size_bytes);
    assert!(capacity >= far + 4096, "{capacity}");
    // one block fewer per plane would not hold the trace: the smallest device that does
    let mut smaller = base.nand.clone();
    smaller.geometry.blocks_per_plane = blocks - 1;
    let pages = nandlab_ftl::logical_pages(&smaller.geometry, base.ftl.op_fraction);
    assert!(pages * u64::from(smaller.geometry.page_size_bytes) < far + 4096);

    // a device that fits already is left alone
    let near = write_trace(&dir, 4096);
    let unchanged = run(&stack(&dir, &format!("{near}fit_device = true\n"), "").unwrap());
    assert_eq!(outcome(&unchanged).2, None);
}

#[test]
fn fit_device_refuses_a_trace_no_device_can_hold() {
    let dir = temp_dir("fit-huge");
    let workload = write_trace(&dir, 1 << 60);
    let e = stack(&dir, &format!("{workload}fit_device = true\n"), "")
        .unwrap()
        .run(None, &Control::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload.fit_device"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn the_keys_do_not_apply_to_synthetic_workloads() {
    let dir = temp_dir("keys");
    let e = stack(
        &dir,
        "kind = \"synthetic\"\npattern = \"random\"\nread_fraction = 0.5\nrequest_size_bytes = 4096\nrequest_count = 10\nprecondition_reads = true\n",
        "",
    )
    .unwrap_err();
    assert!(e.contains("precondition_reads"), "{e}");
    let e = stack(
        &dir,
        "kind = \"fio\"\npath = \"r.fio\"\nfit_device = true\n",
        "",
    )
    .unwrap_err();
    assert!(e.contains("fit_device"), "{e}");
}
