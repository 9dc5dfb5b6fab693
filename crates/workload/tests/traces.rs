//! Reads the sample files under `tests/data/` through the public API, and captures and replays
//! a synthetic run through the native format.

use nandlab_core::SimTime;
use nandlab_workload::fio::{FioContext, FioJobFile};
use nandlab_workload::{
    AddressDistribution, ArrivalMode, ArrivalProcess, BlkparseAction, BlockRequest, IoOp,
    NativeCsvWriter, Pattern, SyntheticSpec, TraceFormat, TraceOptions, open_trace,
};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read(name: &str, format: TraceFormat, options: &TraceOptions) -> Vec<BlockRequest> {
    open_trace(data(name), format, options)
        .and_then(|source| source.collect::<Result<Vec<_>, _>>())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn at_ns(ns: u64, op: IoOp, offset_bytes: u64, size_bytes: u64) -> BlockRequest {
    BlockRequest {
        arrival: Some(SimTime::from_ns(ns)),
        op,
        offset_bytes,
        size_bytes,
        placement_id: 0,
    }
}

#[test]
fn msr_sample() {
    let all = read("msr_sample.csv", TraceFormat::Msr, &TraceOptions::default());
    assert_eq!(all.len(), 5);
    assert_eq!(all[0], at_ns(0, IoOp::Read, 3_154_152_448, 4096));
    assert_eq!(all[2], at_ns(1_837_100, IoOp::Write, 3_154_156_544, 8192));
    assert_eq!(all[4], at_ns(693_837_100, IoOp::Read, 512, 512));
    let disk0 = TraceOptions {
        device: Some("0".into()),
        ..TraceOptions::default()
    };
    let requests = read("msr_sample.csv", TraceFormat::Msr, &disk0);
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], at_ns(1_237_100, IoOp::Write, 1 << 30, 512));
}

#[test]
fn blkparse_sample() {
    let dispatched = read(
        "blkparse_sample.txt",
        TraceFormat::Blkparse,
        &TraceOptions::default(),
    );
    assert_eq!(
        dispatched,
        [
            at_ns(4_918, IoOp::Write, 223_490 * 512, 4096),
            at_ns(2_185_007, IoOp::Read, 1_606_504 * 512, 32 * 512),
            at_ns(12_010_112, IoOp::Trim, 4096 * 512, 256 * 512),
        ]
    );
    let queued = TraceOptions {
        blkparse_action: BlkparseAction::Queue,
        arrival: ArrivalMode::ClosedLoop,
        ..TraceOptions::default()
    };
    let requests = read("blkparse_sample.txt", TraceFormat::Blkparse, &queued);
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.arrival.is_none()));
}

#[test]
fn disksim_sample() {
    let all = read(
        "disksim_sample.trace",
        TraceFormat::Disksim,
        &TraceOptions::default(),
    );
    assert_eq!(
        all,
        [
            at_ns(0, IoOp::Read, 1024 * 512, 4096),
            at_ns(731_250, IoOp::Write, 2048 * 512, 8192),
            at_ns(1_500_000, IoOp::Read, 4096 * 512, 4096),
            at_ns(2_000_001, IoOp::Write, 99 * 512, 512),
        ]
    );
}

#[test]
fn native_sample() {
    let all = read(
        "native_sample.csv",
        TraceFormat::Native,
        &TraceOptions::default(),
    );
    assert_eq!(all.len(), 4);
    assert_eq!(all[2].arrival, Some(SimTime::from_ps(2_500_500)));
    assert_eq!(all[3].op, IoOp::Trim);
}

#[test]
fn a_synthetic_run_captured_to_native_csv_replays_identically() {
    let spec = SyntheticSpec {
        distribution: AddressDistribution::Zipf { theta: 0.9 },
        arrival: ArrivalProcess::Poisson {
            rate_iops: 250_000.0,
        },
        trim_fraction: 0.05,
        seed: 3,
        ..SyntheticSpec::new(Pattern::Random, 0.6, 4096, 1 << 32, 2_000)
    };
    let requests: Vec<BlockRequest> = spec.generator().expect("valid").collect();
    let path = std::env::temp_dir().join(format!("nandlab-capture-{}.csv", std::process::id()));
    let mut writer = NativeCsvWriter::create(&path).expect("temp dir is writable");
    writer.write_all(&requests).expect("temp dir is writable");
    writer.finish().expect("temp dir is writable");
    let replayed = open_trace(&path, TraceFormat::Native, &TraceOptions::default())
        .and_then(|source| source.collect::<Result<Vec<_>, _>>());
    let _ = std::fs::remove_file(&path);
    assert_eq!(replayed.expect("valid capture"), requests);
}

#[test]
fn fio_sample() {
    let file = FioJobFile::open(data("mixed.fio")).expect("valid job file");
    let context = FioContext {
        device_size_bytes: 1 << 30,
        seed: 1,
    };
    let streams = file.streams(&context).expect("fits the device");
    assert_eq!(streams.len(), 3);
    assert_eq!(streams[0].spec.request_size_bytes, 128 << 10);
    assert_eq!(streams[0].spec.request_count, Some(32));
    assert_eq!(streams[1].spec.request_count, Some(1000));
    assert_ne!(streams[1].spec.seed, streams[2].spec.seed);
    let generator = file.generator(&context).expect("valid");
    assert_eq!(generator.queue_depth(), 32);
    let all: Vec<BlockRequest> = generator.collect();
    assert_eq!(all.len(), 32 + 2000);
    assert!(
        all[..32]
            .iter()
            .all(|r| r.op == IoOp::Write && r.size_bytes == 128 << 10)
    );
    let reads = all[32..].iter().filter(|r| r.op == IoOp::Read).count() as f64;
    assert!((reads / 2000.0 - 0.7).abs() < 0.05, "{reads} reads");
    assert!(all.iter().all(|r| r.end_bytes() <= 4 << 20));
}
