//! The native reader must never panic, and whatever it accepts must survive a capture and a
//! second read unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nandlab_workload::{NativeCsvWriter, TraceFormat, TraceOptions, read_trace};

fuzz_target!(|data: &[u8]| {
    let options = TraceOptions::default();
    let Ok(source) = read_trace(
        std::io::Cursor::new(data.to_vec()),
        "fuzz",
        TraceFormat::Native,
        &options,
    ) else {
        return;
    };
    let requests: Vec<_> = source.take(10_000).map_while(Result::ok).collect();
    let mut writer = NativeCsvWriter::new(Vec::new(), "capture").expect("in memory");
    writer
        .write_all(&requests)
        .expect("accepted requests are writable");
    let bytes = writer.finish().expect("in memory");
    let again: Vec<_> = read_trace(
        std::io::Cursor::new(bytes),
        "capture",
        TraceFormat::Native,
        &options,
    )
    .expect("valid options")
    .collect::<Result<_, _>>()
    .expect("a capture reads back");
    assert_eq!(requests, again);
});
