//! The fio parser and the job-to-stream translation must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nandlab_workload::fio::{FioContext, FioJobFile};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = FioJobFile::parse(data, "fuzz.fio") else {
        return;
    };
    let context = FioContext {
        device_size_bytes: 1 << 30,
        seed: 0,
    };
    if let Ok(generator) = file.generator(&context) {
        for request in generator.take(1_000) {
            assert!(request.end_bytes() <= context.device_size_bytes);
        }
    }
});
