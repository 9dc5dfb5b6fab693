//! Job files written by hand, checked against fio's documented semantics.

use super::*;
use crate::synthetic::{AddressDistribution, Pattern};
use crate::{BlockRequest, IoOp};

const GIB: u64 = 1 << 30;
const CONTEXT: FioContext = FioContext {
    device_size_bytes: GIB,
    seed: 42,
};

fn parse(text: &str) -> Result<FioJobFile, String> {
    FioJobFile::parse(text.as_bytes(), "job.fio").map_err(|e| e.to_string())
}

fn parse_ok(text: &str) -> FioJobFile {
    parse(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn jobs_inherit_global_and_override_it() {
    let file = parse_ok(
        "; a comment\n[global]\nioengine=libaio\ndirect=1\nbs=8k\niodepth=4\n\n[a]\nrw=randread\n\n\
         # another\n[b]\nrw=write\nbs=16k   ; bigger\n",
    );
    assert_eq!(file.jobs.len(), 2);
    let (a, b) = (&file.jobs[0], &file.jobs[1]);
    assert_eq!(
        (a.name.as_str(), a.rw, a.block_size_bytes, a.iodepth),
        ("a", FioRw::RandRead, 8192, 4)
    );
    assert_eq!(
        (b.name.as_str(), b.rw, b.block_size_bytes, b.iodepth),
        ("b", FioRw::Write, 16384, 4)
    );
    assert_eq!(a.line, 8);
    assert_eq!(a.line_of("bs"), 5);
    assert_eq!(b.line_of("bs"), 14);
}

#[test]
fn a_later_global_section_affects_only_later_jobs() {
    let file = parse_ok("[global]\nbs=4k\n[a]\n[global]\nbs=64k\n[b]\n");
    assert_eq!(file.jobs[0].block_size_bytes, 4096);
    assert_eq!(file.jobs[1].block_size_bytes, 65536);
}

#[test]
fn unknown_keys_are_errors_naming_key_and_line() {
    assert_eq!(
        parse("[a]\nrw=read\nfoo=1\n").err().as_deref(),
        Some(
            "job.fio:3: unsupported key \"foo\"; see docs/workloads.md for the supported fio subset"
        )
    );
    let e = parse("[global]\nthinktime=100\n[a]\n").unwrap_err();
    assert!(
        e.starts_with("job.fio:2: unsupported key \"thinktime\"; think time"),
        "{e}"
    );
    let e = parse("[a]\nioengine=cpuio\n").unwrap_err();
    assert!(e.starts_with("job.fio:2: ioengine=cpuio burns CPU"), "{e}");
    let e = parse("include other.fio\n").unwrap_err();
    assert!(
        e.starts_with("job.fio:1: unsupported key \"include\""),
        "{e}"
    );
    assert_eq!(
        parse("bs=4k\n[a]\n").err().as_deref(),
        Some("job.fio:1: option \"bs\" outside a section: start with [global] or [jobname]")
    );
    assert_eq!(
        parse("[global]\nbs=4k\n").err().as_deref(),
        Some("job.fio:2: no job section: a job file needs at least one [jobname] section")
    );
}

#[test]
fn bad_values_name_their_line() {
    let cases = [
        ("[a]\nrw=trimread\n", "job.fio:2: bad rw \"trimread\""),
        (
            "[a]\nrw=randread:8\n",
            "job.fio:2: bad rw \"randread:8\": a random offset every N requests",
        ),
        (
            "[a]\nbs=4k,8k,4k,8k\n",
            "job.fio:2: bad bs \"4k,8k,4k,8k\": at most three sizes",
        ),
        (
            "[a]\nrw=randtrimwrite\nbs=4k,4k,16k\n",
            "job.fio:3: bs: a trim size (16384) other than the write size (4096)",
        ),
        ("[a]\nbs=4q\n", "job.fio:2: bad size \"4q\""),
        (
            "[a]\niodepth=0\n",
            "job.fio:2: bad iodepth 0: expected 1 to 65536",
        ),
        ("[a]\nrwmixread=101\n", "job.fio:2: bad rwmixread 101"),
        ("[a]\nsize=150%\n", "job.fio:2: bad percentage \"150%\""),
        (
            "[a]\nrandom_distribution=pareto:0.9\n",
            "job.fio:2: random_distribution \"pareto:0.9\" is not supported",
        ),
        (
            "[a]\nrandom_distribution=zipf\n",
            "job.fio:2: zipf needs a theta",
        ),
        (
            "[a]\nrandom_distribution=zipf:-1\n",
            "job.fio:2: bad zipf theta \"-1\"",
        ),
        ("[a]\nrw\n", "job.fio:2: rw needs a value"),
        ("[a\n", "job.fio:1: bad section header \"[a\""),
    ];
    for (text, prefix) in cases {
        let e = parse(text).unwrap_err();
        assert!(e.starts_with(prefix), "{text:?} gave {e}");
    }
}

#[test]
fn sizes_follow_fio_kb_base_1024() {
    assert_eq!(parse_fio_size("4096"), Ok(4096));
    assert_eq!(parse_fio_size("4k"), Ok(4096));
    assert_eq!(parse_fio_size("4K"), Ok(4096));
    assert_eq!(parse_fio_size("4kb"), Ok(4096));
    assert_eq!(parse_fio_size("1m"), Ok(1 << 20));
    assert_eq!(parse_fio_size("2G"), Ok(2 << 30));
    assert_eq!(parse_fio_size("1t"), Ok(1 << 40));
    assert_eq!(parse_fio_size("4KiB"), Ok(4000));
    assert_eq!(parse_fio_size("0x10"), Ok(16));
    assert!(parse_fio_size("k").is_err());
    assert!(parse_fio_size("-4k").is_err());
    assert!(parse_fio_size("99999999999p").is_err());
}

#[test]
fn jobs_translate_to_specs() {
    let file = parse_ok(
        "[global]\nsize=64m\nbs=4k\n[seq]\nrw=write\n[rand]\nrw=randrw\nrwmixwrite=20\n\
         [zipf]\nrw=randread\nrandom_distribution=zipf:1.1\noffset=50%\nsize=10%\nnumber_ios=100\n\
         [nomap]\nrw=randwrite\nnorandommap\nio_size=1g\n",
    );
    let streams = file.streams(&CONTEXT).expect("fits the device");
    let specs: Vec<&crate::SyntheticSpec> = streams.iter().map(|s| &s.spec).collect();
    assert_eq!(specs[0].pattern, Pattern::Sequential);
    assert_eq!(
        (specs[0].read_fraction, specs[0].request_count),
        (0.0, Some(16384))
    );
    assert_eq!(specs[1].pattern, Pattern::Shuffled);
    assert!((specs[1].read_fraction - 0.8).abs() < 1e-12);
    assert_eq!(specs[2].pattern, Pattern::Random);
    assert_eq!(
        specs[2].distribution,
        AddressDistribution::Zipf { theta: 1.1 }
    );
    assert_eq!(
        (specs[2].offset_bytes, specs[2].span_bytes),
        (GIB / 2, GIB / 10)
    );
    assert_eq!(specs[2].request_count, Some(100));
    assert_eq!(specs[3].pattern, Pattern::Random);
    assert_eq!(specs[3].request_count, Some(GIB / 4096));
}

/// Regions beyond the device fold into it (the brief of issue 31: fio's examples ask for
/// 10 GiB files on any device); what cannot fold is still an error naming the key.
#[test]
fn regions_beyond_the_device_fold_into_it() {
    let file = parse_ok("[a]\nrw=write\nsize=2g\n");
    let streams = file.streams(&CONTEXT).expect("folds");
    assert_eq!(streams[0].spec.span_bytes, 2 * GIB);
    assert_eq!(streams[0].spec.request_count, Some(2 * GIB / 4096));
    let all: Vec<BlockRequest> = file.generator(&CONTEXT).unwrap().collect();
    assert_eq!(all.len() as u64, 2 * GIB / 4096);
    assert!(all.iter().all(|r| r.end_bytes() <= GIB));
    // the second half folds onto the first
    assert_eq!(all[(GIB / 4096) as usize].offset_bytes, 0);
    let notes = file.notes(&CONTEXT).unwrap();
    assert!(notes.iter().any(|n| n.contains("fold")), "{notes:?}");
    let file = parse_ok("[global]\noffset=1g\n[a]\n");
    let e = file.streams(&CONTEXT).unwrap_err().to_string();
    assert!(
        e.starts_with("job.fio:2: offset 1073741824 is at or past the end"),
        "{e}"
    );
    let file = parse_ok("[a]\nsize=4k\nbs=8k\n");
    let e = file.streams(&CONTEXT).unwrap_err().to_string();
    assert!(
        e.starts_with("job.fio:3: bs 8192 is larger than the region"),
        "{e}"
    );
}

fn requests(text: &str) -> Vec<BlockRequest> {
    parse_ok(text).generator(&CONTEXT).expect("valid").collect()
}

#[test]
fn numjobs_gives_independent_streams_with_distinct_seeds() {
    let file = parse_ok("[a]\nrw=randrw\nnorandommap\nsize=1m\nnumjobs=3\niodepth=2\n");
    let streams = file.streams(&CONTEXT).expect("valid");
    assert_eq!(streams.len(), 3);
    let seeds: std::collections::HashSet<u64> = streams.iter().map(|s| s.spec.seed).collect();
    assert_eq!(seeds.len(), 3);
    assert_eq!(
        streams.iter().map(|s| s.clone_index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    let generator = file.generator(&CONTEXT).expect("valid");
    assert_eq!(generator.queue_depth(), 6);
    assert_eq!(generator.count(), 3 * 256);
}

#[test]
fn concurrent_jobs_interleave_in_proportion_to_iodepth() {
    let text = "[global]\nrw=write\nsize=1m\n[a]\niodepth=3\n[b]\noffset=1m\niodepth=1\n";
    let all = requests(text);
    assert_eq!(all.len(), 512);
    let from_b = |rs: &[BlockRequest]| rs.iter().filter(|r| r.offset_bytes >= 1 << 20).count();
    // Smooth weighted round-robin: a a b a | a a b a ... while both run.
    assert_eq!(from_b(&all[..8]), 2);
    assert_eq!(from_b(&all[..100]), 25);
    // b finishes last: a runs out after 4 * 256 / 3 requests.
    assert_eq!(from_b(&all), 256);
    assert!(
        all.iter()
            .all(|r| r.op == IoOp::Write && r.arrival.is_none())
    );
}

#[test]
fn stonewall_runs_groups_one_after_the_other() {
    let text = "[fill]\nrw=write\nsize=64k\niodepth=8\n[read]\nstonewall\nrw=randread\nsize=64k\n";
    let all = requests(text);
    assert_eq!(all.len(), 32);
    assert!(all[..16].iter().all(|r| r.op == IoOp::Write));
    assert!(all[16..].iter().all(|r| r.op == IoOp::Read));
    let file = parse_ok(text);
    assert_eq!(file.generator(&CONTEXT).expect("valid").queue_depth(), 8);
}

#[test]
fn the_merged_stream_is_deterministic() {
    let text = "[a]\nrw=randrw\nrandom_distribution=zipf:0.9\nnumber_ios=500\nnumjobs=2\n";
    assert_eq!(requests(text), requests(text));
    let reseeded: Vec<BlockRequest> = parse_ok(text)
        .generator(&FioContext {
            seed: 43,
            ..CONTEXT
        })
        .expect("valid")
        .collect();
    assert_ne!(requests(text), reseeded);
}

#[test]
fn ignored_keys_are_accepted_and_listed_in_the_module_doc() {
    let module_doc = include_str!("mod.rs");
    for key in IGNORED_KEYS {
        assert!(
            module_doc.contains(&format!("`{key}`")),
            "{key} missing from the module doc"
        );
        let file = parse_ok(&format!("[a]\n{key}=1\nsize=1m\n"));
        assert_eq!(file.jobs[0].size, Some(FioAmount::Bytes(1 << 20)));
    }
}

/// Regression (issue 11): fio option values beyond what a block request can be were accepted;
/// a `bs` over 1 GiB is now an error naming the line.
#[test]
fn absurd_block_sizes_are_errors_naming_the_line() {
    let e = parse("[a]\nrw=write\nbs=2g\n").unwrap_err();
    assert!(e.starts_with("job.fio:3: bs 2147483648 exceeds"), "{e}");
}

/// Regression (issue 11): `numjobs=4096` with `iodepth=65536` asked the host for a queue of 2^28
/// requests, refused later as `ftl.queue_depth` (a key the fio user never wrote). The job file
/// is now refused with the line of its iodepth.
#[test]
fn concurrent_depths_beyond_the_host_queue_are_refused_naming_the_line() {
    let file = parse_ok("[a]\nrw=randwrite\nnumjobs=4096\niodepth=65536\nnumber_ios=2\n");
    let e = file.generator(&CONTEXT).unwrap_err().to_string();
    assert!(
        e.starts_with("job.fio:4: concurrent jobs up to \"a\""),
        "{e}"
    );
    // stonewalled groups do not add up
    let file = parse_ok(
        "[a]\nrw=write\niodepth=40000\nnumber_ios=2\n[b]\nstonewall\nrw=write\niodepth=40000\nnumber_ios=2\n",
    );
    assert_eq!(file.generator(&CONTEXT).unwrap().queue_depth(), 40_000);
}

#[test]
fn fdp_placement_ids_tag_a_jobs_writes() {
    let text =
        "[hot]\nrw=randrw\nsize=1m\nfdp=1\nfdp_pli=2\n[cold]\nrw=write\noffset=1m\nsize=1m\n";
    let all = requests(text);
    assert!(all.iter().any(|r| r.placement_id == 2));
    for r in &all {
        let hot_write = r.offset_bytes < 1 << 20 && r.op == IoOp::Write;
        assert_eq!(r.placement_id, if hot_write { 2 } else { 0 }, "{r:?}");
    }
    let e = parse("[a]\nrw=write\nfdp_pli=1,x\n").unwrap_err();
    assert!(e.starts_with("job.fio:3: ") && e.contains("fdp_pli"), "{e}");
    let e = parse_ok("[a]\nrw=write\nsize=1m\nfdp_pli=1\n")
        .generator(&CONTEXT)
        .map(|_| ())
        .expect_err("fdp_pli without fdp=1")
        .to_string();
    assert!(e.contains("job.fio:4") && e.contains("fdp=1"), "{e}");
}

#[test]
fn robust5_a_placement_id_beyond_the_device_names_its_line() {
    let file = parse_ok("[a]\nrw=write\nsize=1m\nfdp=1\nfdp_pli=99\n");
    let e = file.check_placement_ids(8).unwrap_err().to_string();
    assert!(
        e.starts_with("job.fio:5: ") && e.contains("99") && e.contains("has 8"),
        "{e}"
    );
    let list = parse_ok("[a]\nrw=write\nsize=1m\nfdp=1\nfdp_pli=0,1,7\n");
    list.check_placement_ids(8).unwrap();
    let e = list.check_placement_ids(4).unwrap_err().to_string();
    assert!(e.starts_with("job.fio:5: ") && e.contains(" 7,"), "{e}");
    // without fdp=1 the ids are not used (generator() refuses that combination)
    parse_ok("[a]\nrw=write\nsize=1m\nfdp_pli=99\n")
        .check_placement_ids(1)
        .unwrap();
}
