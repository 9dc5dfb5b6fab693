//! The keys added for fio's own example files (issue 31), checked against hand-computed
//! request counts and offsets; and a fuzz-style property test of the parser.

use super::*;
use crate::{BlockRequest, IoOp};
use nandlab_core::SimTime;
use proptest::prelude::*;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const CONTEXT: FioContext = FioContext {
    device_size_bytes: GIB,
    seed: 7,
};

fn parse_ok(text: &str) -> FioJobFile {
    FioJobFile::parse(text.as_bytes(), "job.fio").unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn parse_err(text: &str) -> String {
    FioJobFile::parse(text.as_bytes(), "job.fio")
        .and_then(|f| f.generator(&CONTEXT).map(|_| ()))
        .expect_err("refused")
        .to_string()
}

pub(super) fn requests(text: &str) -> Vec<BlockRequest> {
    parse_ok(text).generator(&CONTEXT).expect("valid").collect()
}

/// Pulls requests while the clock advances `step_us` per request: a run loop whose requests
/// each take that long, one at a time.
fn clocked(text: &str, step_us: u64, limit: usize) -> Vec<(u64, BlockRequest)> {
    let clock = SimClock::new();
    let mut generator = parse_ok(text)
        .generator_with_clock(&CONTEXT, clock.clone())
        .expect("valid");
    let mut out = Vec::new();
    for i in 0..limit as u64 {
        clock.set(SimTime::from_us(i * step_us));
        match generator.next() {
            Some(request) => out.push((i * step_us, request)),
            None => break,
        }
    }
    out
}

#[test]
fn time_based_jobs_run_for_their_runtime_in_simulated_time() {
    // 64 KiB = 16 requests of 4 KiB, but time_based repeats them for 10 ms at 1 ms each
    let text = "[a]\nrw=read\nsize=64k\ntime_based\nruntime=10ms\n";
    let run = clocked(text, 1_000, 1_000);
    assert_eq!(run.len(), 10);
    // without a clock: one pass of the region
    assert_eq!(requests(text).len(), 16);
    // 100 us per request: 100 requests in 10 ms, wrapping the 16-block region
    let run = clocked(text, 100, 1_000);
    assert_eq!(run.len(), 100);
    assert_eq!(run[16].1.offset_bytes, 0);
    // runtime without time_based caps a job that would run longer...
    assert_eq!(
        clocked("[a]\nrw=read\nsize=64k\nruntime=5ms\n", 1_000, 1_000).len(),
        5
    );
    // ...and does not extend one that ends sooner
    assert_eq!(
        clocked("[a]\nrw=read\nsize=64k\nruntime=1h\n", 1_000, 1_000).len(),
        16
    );
    // number_ios still bounds a time-based job
    let text = "[a]\nrw=read\nsize=64k\ntime_based\nruntime=10s\nnumber_ios=7\n";
    assert_eq!(clocked(text, 1, 1_000).len(), 7);
}

#[test]
fn ramp_time_restarts_the_size_count_and_extends_the_runtime() {
    // 5 requests in the 5 ms ramp, then the 4 of the job's 16 KiB (fio resets its counters)
    let run = clocked("[a]\nrw=write\nsize=16k\nramp_time=5ms\n", 1_000, 1_000);
    assert_eq!(run.len(), 9);
    // time-based: ramp + runtime = 3 + 4 ms
    let text = "[a]\nrw=write\nsize=16k\ntime_based\nruntime=4ms\nramp_time=3ms\n";
    assert_eq!(clocked(text, 1_000, 1_000).len(), 7);
    let notes = parse_ok(text).notes(&CONTEXT).unwrap();
    assert!(
        notes.iter().any(|n| n.starts_with("ramp_time")),
        "{notes:?}"
    );
}

#[test]
fn each_stonewall_group_has_its_own_runtime() {
    let text =
        "[global]\ntime_based\nruntime=3ms\nsize=64k\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n";
    let run = clocked(text, 1_000, 1_000);
    let ops: Vec<IoOp> = run.iter().map(|(_, r)| r.op).collect();
    assert_eq!(ops, [[IoOp::Write; 3], [IoOp::Read; 3]].concat());
}

#[test]
fn times_take_fio_units_seconds_by_default() {
    assert_eq!(parse_fio_time_ns("60", "runtime"), Ok(60_000_000_000));
    assert_eq!(parse_fio_time_ns("10s", "runtime"), Ok(10_000_000_000));
    assert_eq!(parse_fio_time_ns("5m", "runtime"), Ok(300_000_000_000));
    assert_eq!(parse_fio_time_ns("250ms", "runtime"), Ok(250_000_000));
    assert_eq!(parse_fio_time_ns("7us", "runtime"), Ok(7_000));
    assert!(parse_fio_time_ns("5x", "runtime").is_err());
    assert!(parse_fio_time_ns("999999d", "runtime").is_err());
    let file = parse_ok("[a]\ntimeout=2m\n");
    assert_eq!(file.jobs[0].runtime_ns, Some(120_000_000_000));
}

#[test]
fn jobs_on_separate_files_get_separate_ranges() {
    let text = "[global]\nrw=write\n[a]\nfilename=f1\nsize=1m\n[b]\nfilename=f2\nsize=2m\n\
                [c]\nfilename=f1\nsize=512k\n[d]\nfilename=/dev/sdb\nsize=4k\n[e]\nsize=4k\n";
    let streams = parse_ok(text).streams(&CONTEXT).unwrap();
    let regions: Vec<(u64, u64)> = streams
        .iter()
        .map(|s| (s.spec.offset_bytes, s.spec.span_bytes))
        .collect();
    assert_eq!(
        regions,
        [(0, MIB), (MIB, 2 * MIB), (0, MIB / 2), (0, 4096), (0, 4096)]
    );
    // filesize sets the file's length; size% then refers to it
    let text = "[a]\nfilename=f1\nfilesize=1m\nsize=4k\n[b]\nfilename=f2\nfilesize=8m\nsize=50%\n";
    let streams = parse_ok(text).streams(&CONTEXT).unwrap();
    assert_eq!(streams[1].spec.offset_bytes, MIB);
    assert_eq!(streams[1].spec.span_bytes, 4 * MIB);
}

#[test]
fn percentage_offsets_align_to_the_block_size_and_clones_step_by_offset_increment() {
    let streams = parse_ok("[a]\nbs=12k\noffset=50%\nsize=1m\n")
        .streams(&CONTEXT)
        .unwrap();
    // 512 MiB rounded down to a multiple of 12 KiB
    assert_eq!(streams[0].spec.offset_bytes, 43_690 * 12_288);
    let streams = parse_ok("[a]\nrw=write\noffset=4k\noffset_increment=1m\nsize=1m\nnumjobs=3\n")
        .streams(&CONTEXT)
        .unwrap();
    let offsets: Vec<u64> = streams.iter().map(|s| s.spec.offset_bytes).collect();
    assert_eq!(offsets, [4096, MIB + 4096, 2 * MIB + 4096]);
}

#[test]
fn sequential_mixed_jobs_keep_one_position_per_direction() {
    let all = requests("[a]\nrw=rw\nsize=64k\nrwmixread=50\n");
    assert_eq!(all.len(), 16);
    for op in [IoOp::Read, IoOp::Write] {
        let offsets: Vec<u64> = all
            .iter()
            .filter(|r| r.op == op)
            .map(|r| r.offset_bytes)
            .collect();
        let expected: Vec<u64> = (0..offsets.len() as u64).map(|i| i * 4096).collect();
        assert_eq!(offsets, expected, "{op}");
    }
    let reads = all.iter().filter(|r| r.op == IoOp::Read).count();
    assert!(reads > 0 && reads < 16, "{reads}");
}

#[test]
fn verify_reads_the_writes_back_in_the_order_written() {
    let all = requests("[a]\nrw=randwrite\nsize=64k\nverify=crc32c\n");
    assert_eq!(all.len(), 32);
    let (writes, reads) = all.split_at(16);
    assert!(writes.iter().all(|r| r.op == IoOp::Write));
    assert!(reads.iter().all(|r| r.op == IoOp::Read));
    let offsets = |rs: &[BlockRequest]| rs.iter().map(|r| r.offset_bytes).collect::<Vec<_>>();
    assert_eq!(offsets(writes), offsets(reads));
    // do_verify=0: nothing read back; verify on a read job: nothing to verify
    assert_eq!(
        requests("[a]\nrw=write\nsize=64k\nverify=md5\ndo_verify=0\n").len(),
        16
    );
    assert_eq!(requests("[a]\nrw=read\nsize=64k\nverify=md5\n").len(), 16);
    let e = parse_err("[a]\nrw=randwrite\nnorandommap\nsize=64k\nverify=md5\n");
    assert!(e.starts_with("job.fio:5: verify of random writes"), "{e}");
}

#[test]
fn wait_for_the_whole_group_before_is_a_stonewall() {
    let all = requests("[w]\nrw=write\nsize=64k\n[r]\nwait_for=w\nrw=read\nsize=64k\n");
    assert!(all[..16].iter().all(|r| r.op == IoOp::Write));
    assert!(all[16..].iter().all(|r| r.op == IoOp::Read));
    let e = parse_err("[a]\nsize=4k\n[b]\nsize=4k\n[c]\nwait_for=a\nsize=4k\n");
    assert!(
        e.starts_with("job.fio:6: wait_for=\"a\": waiting for one job"),
        "{e}"
    );
    let e = parse_err("[a]\nsize=4k\n[c]\nwait_for=zz\n");
    assert!(
        e.starts_with("job.fio:4: wait_for=\"zz\": no earlier job"),
        "{e}"
    );
    // two jobs waiting for the same one start together after it (fio's
    // zbd-rand-write-trim-gc.fio); a stonewall before the second still separates them
    let file = parse_ok(
        "[w]\nrw=write\nsize=64k\n[a]\nwait_for=w\nrw=read\nsize=64k\n[b]\nwait_for=w\nrw=trim\nsize=64k\n",
    );
    let groups: Vec<u32> = file
        .streams(&CONTEXT)
        .unwrap()
        .iter()
        .map(|s| s.group_index)
        .collect();
    assert_eq!(groups, [0, 1, 1]);
    let all = requests(
        "[w]\nrw=write\nsize=64k\n[a]\nwait_for=w\nrw=read\nsize=64k\n[b]\nwait_for=w\nrw=trim\nsize=64k\n",
    );
    assert!(all[..16].iter().all(|r| r.op == IoOp::Write));
    assert_eq!((all[16].op, all[17].op), (IoOp::Read, IoOp::Trim));
}

#[test]
fn exitall_ends_the_group_when_one_job_ends() {
    // a has 2 requests, b 10: with exitall the group ends when a does (a b a b, then a ends)
    let all = requests("[global]\nrw=write\nexitall\n[a]\nsize=8k\n[b]\nsize=40k\noffset=1m\n");
    assert_eq!(all.len(), 4);
    let without = requests("[global]\nrw=write\n[a]\nsize=8k\n[b]\nsize=40k\noffset=1m\n");
    assert_eq!(without.len(), 12);
}

#[test]
fn fill_device_writes_from_the_offset_to_the_end() {
    let all = requests("[a]\nrw=write\nbs=1m\noffset=1020m\nfill_device=1\n");
    assert_eq!(all.len(), 4);
    assert_eq!(all[3].end_bytes(), GIB);
}

#[test]
fn engines_and_host_keys_are_accepted_and_device_keys_refused_with_reasons() {
    let file = parse_ok(
        "[global]\nioengine=io_uring\nsqthread_poll=1\nregisterfiles\nbuffer_pattern=0xaa\n\
         cpus_allowed_policy=split\nsync=0\n[a]\nrw=read\nsize=4k\n",
    );
    let notes = file.notes(&CONTEXT).unwrap();
    assert!(notes[0].starts_with("ioengine=io_uring: the simulation models the device"));
    for (text, prefix) in [
        (
            "[a]\nverify_backlog_batch=8\n",
            "job.fio:2: unsupported key \"verify_backlog_batch\"",
        ),
        (
            "[a]\nbssplit=4k/60:8k/50\n",
            "job.fio:2: bad bssplit \"4k/60:8k/50\": percentages add to more than 100",
        ),
        ("[a]\nbsrange=4k-8k\n", "job.fio:2: bsrange \"4k-8k\""),
        ("[a]\nioengine=net\n", "job.fio:2: ioengine=net moves data"),
        (
            "[a]\nfilename=a:b\n",
            "job.fio:2: filename \"a:b\": several files",
        ),
        (
            "[a]\nthreads=maybe\n",
            "job.fio:2: bad thread \"maybe\": expected 0 or 1",
        ),
        (
            "[a]\nrw=${NANDLAB_SURELY_UNSET_VARIABLE}\n",
            "job.fio:2: rw: environment variable NANDLAB_SURELY_UNSET_VARIABLE is not set",
        ),
    ] {
        let e = parse_err(text);
        assert!(e.starts_with(prefix), "{text:?} gave {e}");
    }
    assert_eq!(
        parse_ok("[a]\nbsrange=8k-8k\n").jobs[0].block_size_bytes,
        8192
    );
    let path = std::env::var("PATH").expect("PATH is set");
    assert_eq!(parse_ok("[a]\nname=${PATH}\n").jobs[0].name, path);
    let file = parse_ok("[a]\nfilename=iscsi\\://host/iqn\\:x/1\n");
    assert_eq!(
        file.jobs[0].filename.as_deref(),
        Some("iscsi://host/iqn:x/1")
    );
}

fn job_line() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "rw",
        "bs",
        "size",
        "offset",
        "iodepth",
        "numjobs",
        "filename",
        "filesize",
        "runtime",
        "ramp_time",
        "time_based",
        "verify",
        "do_verify",
        "offset_increment",
        "loops",
        "number_ios",
        "io_size",
        "rwmixread",
        "norandommap",
        "stonewall",
        "wait_for",
        "exitall",
        "fill_device",
        "bsrange",
        "ioengine",
        "random_distribution",
        "blockalign",
        "fdp",
        "fdp_pli",
        "direct",
        "name",
    ]);
    let values = prop::sample::select(vec![
        "",
        "0",
        "1",
        "4k",
        "1m",
        "50%",
        "100%",
        "0%",
        "rw",
        "randrw",
        "write",
        "randwrite",
        "read",
        "trim",
        "f1",
        "f2",
        "/dev/sda",
        "10ms",
        "1s",
        "crc32c",
        "a",
        "b",
        "4k-4k",
        "libaio",
        "zipf:1.1",
        "3",
        "65536",
        "18446744073709551615",
        "-1",
        "${X}",
        "1g",
    ]);
    prop_oneof![
        4 => (keys, values).prop_map(|(k, v)| if v.is_empty() { k.to_owned() } else { format!("{k}={v}") }),
        1 => prop::sample::select(vec!["[a]", "[b]", "[global]", "; c", "[", "="]).prop_map(str::to_owned),
        1 => "[ -~]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any job file parses or fails with one line naming the file; whatever parses yields
    /// requests on the device (folded), of the job's size, with and without a clock.
    #[test]
    fn arbitrary_job_files_never_panic(lines in prop::collection::vec(job_line(), 0..14)) {
        let text = lines.join("\n");
        let context = FioContext { device_size_bytes: 64 * MIB, seed: 3 };
        match FioJobFile::parse(text.as_bytes(), "fuzz.fio") {
            Err(e) => {
                let message = e.to_string();
                prop_assert!(message.starts_with("fuzz.fio"), "{}", message);
                prop_assert!(!message.contains('\n'), "{}", message);
            }
            Ok(file) => {
                if let Ok(generator) = file.generator(&context) {
                    for r in generator.take(300) {
                        prop_assert!(r.size_bytes > 0 && r.end_bytes() <= context.device_size_bytes, "{:?}", r);
                    }
                    let clock = SimClock::new();
                    let generator = file.generator_with_clock(&context, clock.clone()).unwrap();
                    for (i, r) in generator.take(300).enumerate() {
                        clock.set(SimTime::from_us(i as u64));
                        prop_assert!(r.end_bytes() <= context.device_size_bytes, "{:?}", r);
                    }
                    let _ = file.notes(&context);
                }
            }
        }
    }
}

#[test]
fn rate_limits_give_one_stream_open_loop_arrivals() {
    let all = requests("[a]\nrw=read\nsize=64k\nrate_iops=1000\n");
    let arrivals: Vec<u64> = all.iter().map(|r| r.arrival.unwrap().as_ps()).collect();
    assert_eq!(arrivals[..3], [0, 1_000_000_000, 2_000_000_000]);
    // rate is bytes per second: 8 KiB/s of 4 KiB requests = 2 per second
    let all = requests("[a]\nrw=read\nsize=64k\nrate=8k\n");
    assert_eq!(all[1].arrival, Some(SimTime::from_ms(500)));
    let all = requests("[a]\nrw=read\nsize=64k\nrate_iops=50\nrate_process=poisson\n");
    assert!(all.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    assert_ne!(
        all[2].arrival.unwrap().as_ps() - all[1].arrival.unwrap().as_ps(),
        20_000_000_000
    );
    // a timed stream beside a closed-loop one, or in a later group, is refused
    let e = parse_err("[a]\nrate_iops=10\n[b]\nrw=write\n");
    assert!(
        e.starts_with(
            "job.fio:2: rate_iops: a rate limit is supported for one stream, or when every job"
        ),
        "{e}"
    );
    let e = parse_err("[a]\nrate_iops=10\n[b]\nstonewall\nrate_iops=10\n");
    assert!(e.starts_with("job.fio:2: rate_iops: a rate limit"), "{e}");
    let e = parse_err("[a]\nrate=1m,2m\n");
    assert!(e.starts_with("job.fio:2: rate \"1m,2m\""), "{e}");
}

/// The read-before-write scan runs without a clock: writes of a job that stops at a simulated
/// time may not all happen, so the scan leaves them out (else the reads after a short
/// time-based fill would find unwritten pages, and measure nothing).
#[test]
fn the_footprint_stream_leaves_out_writes_that_may_not_happen() {
    let text = "[w]\nrw=write\nsize=64k\ntime_based\nruntime=1ms\n[u]\nrw=write\noffset=1m\nsize=8k\n\
                [r]\nstonewall\nrw=read\nsize=64k\n";
    let all: Vec<BlockRequest> = parse_ok(text)
        .generator(&CONTEXT)
        .unwrap()
        .for_footprint()
        .collect();
    assert_eq!(all.iter().filter(|r| r.op == IoOp::Write).count(), 2);
    assert_eq!(all.iter().filter(|r| r.op == IoOp::Read).count(), 16);
}

/// fio's `--section` (xNVMe's examples keep one section per use, one of them with `${FIO_RW}`
/// values): only the named job sections are read, `[global]` applies, an unknown name is a
/// one-line error naming it.
#[test]
fn robust7_sections_select_jobs_and_skip_the_others_unread() {
    let text = "[global]\nbs=8k\nsize=64k\n[default]\nrw=read\n[override]\nrw=${NANDLAB_UNSET_VARIABLE}\n[w]\nrw=write\n";
    let select = |names: &[&str]| {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        FioJobFile::parse_selected(text.as_bytes(), "job.fio", &names).map_err(|e| e.to_string())
    };
    let e = select(&[]).unwrap_err();
    assert!(e.contains("job.fio:7: rw: environment variable"), "{e}");
    let file = select(&["default"]).unwrap();
    assert_eq!(file.jobs.len(), 1);
    let all: Vec<BlockRequest> = file.generator(&CONTEXT).unwrap().collect();
    assert_eq!(all.len(), 8, "64 KiB of 8 KiB reads");
    assert!(
        all.iter()
            .all(|r| r.op == IoOp::Read && r.size_bytes == 8192)
    );
    let file = select(&["w", "default"]).unwrap();
    let names: Vec<&str> = file.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["default", "w"], "file order");
    let e = select(&["default", "nope"]).unwrap_err();
    assert!(
        e.contains("--section nope: the file has no job section of that name") && !e.contains('\n'),
        "{e}"
    );
}

/// `zonemode=strided` (fio's `disk-zone-profile.fio`), against the offsets fio 3.33 issues
/// (`fio --ioengine=null --size=1g --bs=64k --rw=read --zonemode=strided … --write_iolog`):
/// 64 MiB read from each zone 256 MiB apart, from the start again past the end, 1 GiB in
/// all; with zonesize above zonerange, the zone is read again from its start.
#[test]
fn robust7_strided_zones_follow_fios_offsets() {
    let offsets = |extra: &str| -> Vec<u64> {
        requests(&format!(
            "[z]\nsize=1g\nbs=64k\nrw=read\nzonemode=strided\n{extra}"
        ))
        .iter()
        .map(|r| r.offset_bytes)
        .collect()
    };
    let o = offsets("zonesize=64m\nzoneskip=192m\n");
    assert_eq!(o.len(), 16_384, "io_size bytes, as without zones");
    assert_eq!(
        o[1022..1026],
        [66_977_792, 67_043_328, 268_435_456, 268_500_992]
    );
    assert_eq!(
        o[2046..2050],
        [335_413_248, 335_478_784, 536_870_912, 536_936_448]
    );
    assert_eq!(o[4094..4098], [872_284_160, 872_349_696, 0, 65_536]);
    let o = offsets("zonesize=96m\nzonerange=64m\nzoneskip=192m\n");
    assert_eq!(o.len(), 16_384);
    assert_eq!(o[1022..1026], [66_977_792, 67_043_328, 0, 65_536]);
    assert_eq!(
        o[1534..1538],
        [33_423_360, 33_488_896, 268_435_456, 268_500_992]
    );
    // fio's own refusals, and what is not supported here, name the key and line
    for (extra, line, key) in [
        ("zonesize=64m\n", 6, "zonesize"),
        ("zoneskip=1m\n", 6, "zoneskip"),
        ("zonemode=strided\n", 6, "zonesize"),
        (
            "zonemode=strided\nzonesize=1m\nrw=randread\n",
            6,
            "sequential",
        ),
    ] {
        let e = parse_err(&format!(
            "[z]\nsize=1g\nbs=64k\nrw=read\nnorandommap\n{extra}"
        ));
        assert!(
            e.starts_with(&format!("job.fio:{line}: ")) && e.contains(key) && !e.contains('\n'),
            "{extra:?}: {e}"
        );
    }
}

/// `time_based` without `runtime` (fio's `cpp_null.fio`): fio 3.33 prints "time_based requires
/// a runtime/timeout setting" and makes one pass; so does the simulation, with a note.
#[test]
fn robust7_time_based_without_runtime_is_one_pass_with_a_note() {
    let text = "[global]\nbs=4k\n[a]\nrw=randread\nsize=64k\ntime_based\n";
    assert_eq!(requests(text).len(), 16);
    assert_eq!(
        clocked(text, 1_000, 1_000).len(),
        16,
        "no repetition with a clock either"
    );
    let notes = parse_ok(text).notes(&CONTEXT).unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("line 6: time_based without runtime is ignored")),
        "{notes:?}"
    );
}

/// `threads=1` (fio's `waitfor.fio` and `steadystate.fio`): fio 3.33 accepts it as `thread`
/// (`fio --parse-only` passes; an unknown key is "Bad option"), so it is ignored as `thread` is.
#[test]
fn robust7_threads_is_taken_as_thread() {
    let file = parse_ok("[global]\nthreads=1\n[a]\nrw=read\nsize=64k\n");
    assert_eq!(file.generator(&CONTEXT).unwrap().count(), 16);
}
