//! The msr reader must never panic: every input gives requests or one error.
#![no_main]

#[path = "check_trace.rs"]
mod check_trace;

use libfuzzer_sys::fuzz_target;
use nandlab_workload::TraceFormat;

fuzz_target!(|data: &[u8]| check_trace::check_trace(data, TraceFormat::Msr));
