//! nandlab's native CSV trace: the capture format of any run, replayable as is.
//!
//! ```text
//! arrival_ns,op,offset_bytes,size_bytes
//! 0,write,0,4096
//! 1500.25,read,8192,16384
//! ,trim,0,4096        <- only in a file whose arrivals are all empty (closed loop)
//! ```
//! The header is required. `arrival_ns` is nanoseconds with up to three decimals (so every
//! picosecond [`SimTime`] round-trips), or empty for closed-loop requests; a file has either
//! all arrivals or none. `op` is `read`, `write` or `trim`. Blank lines and lines starting with
//! `#` are skipped.

use super::{LineFormat, TraceOptions, split_exact};
use crate::units::{check_range, parse_decimal_scaled, parse_u64};
use crate::{BlockRequest, IoOp, WorkloadError};
use nandlab_core::SimTime;
use nandlab_core::time::PS_PER_NS;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The first line of every native trace.
pub const NATIVE_CSV_HEADER: &str = "arrival_ns,op,offset_bytes,size_bytes";

/// Line parser for native CSV traces.
#[derive(Clone, Debug, Default)]
pub struct NativeFormat {
    seen_header: bool,
    timed: Option<bool>,
}

impl NativeFormat {
    /// Fails if a device filter is set: native traces have a single device.
    pub fn new(options: &TraceOptions) -> Result<Self, WorkloadError> {
        if options.device.is_some() {
            return Err(WorkloadError::invalid(
                "device",
                "native traces have no device column; remove the device filter",
            ));
        }
        Ok(NativeFormat::default())
    }
}

fn parse_op(text: &str) -> Result<IoOp, String> {
    [IoOp::Read, IoOp::Write, IoOp::Trim]
        .into_iter()
        .find(|op| text.eq_ignore_ascii_case(op.name()))
        .ok_or_else(|| format!("bad op \"{text}\": expected read, write or trim"))
}

impl LineFormat for NativeFormat {
    fn format(&self) -> Option<super::TraceFormat> {
        Some(super::TraceFormat::Native)
    }

    fn parse_line(&mut self, line: &str) -> Result<Option<BlockRequest>, String> {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(None);
        }
        if !self.seen_header {
            let header_matches = split_exact::<4>(trimmed, ',')
                .is_ok_and(|fields| fields.join(",") == NATIVE_CSV_HEADER);
            if !header_matches {
                return Err(format!("expected the header \"{NATIVE_CSV_HEADER}\""));
            }
            self.seen_header = true;
            return Ok(None);
        }
        let [arrival, op, offset, size] = split_exact::<4>(trimmed, ',').map_err(|found| {
            format!("expected 4 comma-separated fields ({NATIVE_CSV_HEADER}), found {found}")
        })?;
        let arrival = match arrival {
            "" => None,
            text => Some(SimTime::from_ps(parse_decimal_scaled(
                text,
                3,
                "arrival_ns",
            )?)),
        };
        let timed = *self.timed.get_or_insert(arrival.is_some());
        if timed != arrival.is_some() {
            return Err("arrival_ns is empty on some lines and set on others".to_owned());
        }
        let op = parse_op(op)?;
        let offset_bytes = parse_u64(offset, "offset_bytes")?;
        let size_bytes = parse_u64(size, "size_bytes")?;
        check_range(offset_bytes, size_bytes)?;
        Ok(Some(BlockRequest {
            arrival,
            op,
            offset_bytes,
            size_bytes,
            placement_id: 0,
        }))
    }
}

/// `arrival_ns` text: integer nanoseconds, three decimals when there are picoseconds, or empty.
struct ArrivalNs(Option<SimTime>);

impl fmt::Display for ArrivalNs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => Ok(()),
            Some(time) => {
                let ps = time.as_ps();
                let (ns, rest_ps) = (ps / PS_PER_NS, ps % PS_PER_NS);
                if rest_ps == 0 {
                    write!(f, "{ns}")
                } else {
                    write!(f, "{ns}.{rest_ps:03}")
                }
            }
        }
    }
}

/// Writes requests as a native CSV trace, header first; allocation-free per request.
#[derive(Debug)]
pub struct NativeCsvWriter<W: Write> {
    writer: W,
    path: PathBuf,
    requests_written: u64,
}

impl NativeCsvWriter<BufWriter<File>> {
    /// Creates (or truncates) the file at `path` and writes the header.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, WorkloadError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|source| WorkloadError::Io {
            path: path.to_owned(),
            source,
        })?;
        NativeCsvWriter::new(BufWriter::new(file), path)
    }
}

impl<W: Write> NativeCsvWriter<W> {
    /// Writes the header to `writer`; `path` labels error messages.
    pub fn new(mut writer: W, path: impl Into<PathBuf>) -> Result<Self, WorkloadError> {
        let path = path.into();
        match writeln!(writer, "{NATIVE_CSV_HEADER}") {
            Ok(()) => Ok(NativeCsvWriter {
                writer,
                path,
                requests_written: 0,
            }),
            Err(source) => Err(WorkloadError::Io { path, source }),
        }
    }

    /// Appends one request. A request the reader would refuse (size 0, range overflowing 64
    /// bits) is an error, so what is written is always what is read back.
    pub fn write(&mut self, request: &BlockRequest) -> Result<(), WorkloadError> {
        if let Err(message) = check_range(request.offset_bytes, request.size_bytes) {
            return Err(WorkloadError::invalid(
                "request",
                format!(
                    "{}: request {} not written: {message}",
                    self.path.display(),
                    self.requests_written + 1
                ),
            ));
        }
        writeln!(
            self.writer,
            "{},{},{},{}",
            ArrivalNs(request.arrival),
            request.op,
            request.offset_bytes,
            request.size_bytes
        )
        .map_err(|source| self.io_error(source))?;
        self.requests_written += 1;
        Ok(())
    }

    /// Appends every request of `requests`; returns how many.
    pub fn write_all<'a>(
        &mut self,
        requests: impl IntoIterator<Item = &'a BlockRequest>,
    ) -> Result<u64, WorkloadError> {
        let before = self.requests_written;
        for request in requests {
            self.write(request)?;
        }
        Ok(self.requests_written - before)
    }

    /// Requests written so far.
    pub fn requests_written(&self) -> u64 {
        self.requests_written
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> Result<W, WorkloadError> {
        self.writer
            .flush()
            .map_err(|source| self.io_error(source))?;
        Ok(self.writer)
    }

    fn io_error(&self, source: std::io::Error) -> WorkloadError {
        WorkloadError::Io {
            path: self.path.clone(),
            source,
        }
    }
}
