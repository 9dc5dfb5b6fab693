//! The msr reader must never panic: every input gives requests or one error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nandlab_workload::{ArrivalMode, TraceFormat, TraceOptions, read_trace};

fuzz_target!(|data: &[u8]| {
    for arrival in [ArrivalMode::AsRecorded, ArrivalMode::ClosedLoop] {
        let options = TraceOptions {
            arrival,
            ..TraceOptions::default()
        };
        let Ok(source) = read_trace(
            std::io::Cursor::new(data.to_vec()),
            "fuzz",
            TraceFormat::Msr,
            &options,
        ) else {
            return;
        };
        for request in source {
            match request {
                Ok(request) => assert!(
                    request.size_bytes > 0
                        && request
                            .offset_bytes
                            .checked_add(request.size_bytes)
                            .is_some()
                ),
                Err(error) => assert!(error.to_string().starts_with("fuzz:")),
            }
        }
    }
});
