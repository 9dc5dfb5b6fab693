//! The fio parser and the job-to-stream translation must never panic; parse errors are one
//! line naming the file; requests stay on the device and within 1 GiB.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nandlab_workload::fio::{FioContext, FioJobFile};

fuzz_target!(|data: &[u8]| {
    let file = match FioJobFile::parse(data, "fuzz.fio") {
        Ok(file) => file,
        Err(error) => {
            // one line, naming the file (and line)
            let message = error.to_string();
            assert!(message.starts_with("fuzz.fio"), "{message}");
            assert!(!message.contains('\n'), "{message}");
            return;
        }
    };
    let context = FioContext {
        device_size_bytes: 1 << 30,
        seed: 0,
    };
    match file.generator(&context) {
        Ok(generator) => {
            for request in generator.take(1_000) {
                assert!(request.end_bytes() <= context.device_size_bytes);
                assert!(request.size_bytes > 0 && request.size_bytes <= 1 << 30);
            }
        }
        Err(error) => assert!(!error.to_string().contains('\n'), "{error}"),
    }
});
