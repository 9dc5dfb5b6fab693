//! The property every trace-reader fuzz target checks: on any input, in both arrival modes,
//! the reader gives requests with a non-empty, non-overflowing range, or errors that name the
//! source; it never panics.

use nandlab_workload::{ArrivalMode, TraceFormat, TraceOptions, read_trace};

pub fn check_trace(data: &[u8], format: TraceFormat) {
    for arrival in [ArrivalMode::AsRecorded, ArrivalMode::ClosedLoop] {
        let options = TraceOptions {
            arrival,
            ..TraceOptions::default()
        };
        let Ok(source) = read_trace(
            std::io::Cursor::new(data.to_vec()),
            "fuzz",
            format,
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
}
