//! Trace replay and capture (SPEC W4).
//!
//! Readers stream [`BlockRequest`]s line by line from any `BufRead` in constant memory, so a
//! trace larger than memory replays fine. Each takes a path (or label) used only for error
//! messages, which read `path:line: what is wrong`. After the first error a reader ends.
//!
//! | format | line | time unit | address unit |
//! |---|---|---|---|
//! | [`TraceFormat::Msr`] | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | FILETIME ticks (100 ns), rebased to the first record | bytes |
//! | [`TraceFormat::Blkparse`] | `8,0 3 1 0.000000000 697 Q W 223490 + 8 [kjournald]` | seconds (decimal) | 512-byte sectors |
//! | [`TraceFormat::Disksim`] | `time devno blkno bcount flags` | milliseconds (decimal) | 512-byte sectors |
//! | [`TraceFormat::Native`] | `arrival_ns,op,offset_bytes,size_bytes` | nanoseconds (up to 3 decimals) | bytes |
//!
//! With [`ArrivalMode::AsRecorded`] arrivals must not go back in time (an error names the
//! line); [`ArrivalMode::ClosedLoop`] drops every timestamp, so requests issue as fast as the
//! host queue allows and the order of the file is all that remains.

mod blkparse;
mod disksim;
mod msr;
mod native;

pub use blkparse::BlkparseFormat;
pub use disksim::DisksimFormat;
pub use msr::MsrFormat;
pub use native::{NATIVE_CSV_HEADER, NativeCsvWriter, NativeFormat};

use crate::lines::LineReader;
use crate::{BlockRequest, RequestSource, WorkloadError};
use nandlab_core::SimTime;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A supported trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// MSR Cambridge block traces (SNIA IOTTA), CSV.
    Msr,
    /// `blkparse` default text output.
    Blkparse,
    /// DiskSim ASCII input traces.
    Disksim,
    /// nandlab's own CSV capture format.
    Native,
}

impl TraceFormat {
    /// Every format, in the order of the help text.
    pub const ALL: [TraceFormat; 4] = [
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Disksim,
        TraceFormat::Native,
    ];

    /// The name accepted by `FromStr`.
    pub const fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Native => "native",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = WorkloadError;

    /// Case-insensitive; `snia` and `msr-cambridge` also mean `msr`.
    fn from_str(text: &str) -> Result<Self, WorkloadError> {
        let lower = text.trim().to_ascii_lowercase();
        match lower.as_str() {
            "msr" | "msr-cambridge" | "snia" => Ok(TraceFormat::Msr),
            "blkparse" => Ok(TraceFormat::Blkparse),
            "disksim" => Ok(TraceFormat::Disksim),
            "native" | "nandlab" => Ok(TraceFormat::Native),
            _ => Err(WorkloadError::invalid(
                "format",
                format!(
                    "unknown trace format \"{text}\": expected one of msr, blkparse, disksim, native"
                ),
            )),
        }
    }
}

/// Whether replay honours the timestamps of a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArrivalMode {
    /// Each request arrives at its recorded time (rebased as the format says).
    #[default]
    AsRecorded,
    /// Timestamps are checked for syntax, then dropped (`arrival: None`).
    ClosedLoop,
}

/// Which blkparse event marks a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlkparseAction {
    /// `Q`: queued by the block layer (host arrival, before merging).
    Queue,
    /// `D`: dispatched to the device driver (what the device saw, after merging).
    #[default]
    Dispatch,
    /// `C`: completed.
    Complete,
}

impl BlkparseAction {
    /// The action letter in blkparse output.
    pub const fn letter(self) -> &'static str {
        match self {
            BlkparseAction::Queue => "Q",
            BlkparseAction::Dispatch => "D",
            BlkparseAction::Complete => "C",
        }
    }
}

/// Options shared by the trace readers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Honour or drop timestamps.
    pub arrival: ArrivalMode,
    /// Keep only one device: the MSR `DiskNumber`, the DiskSim `devno` (both integers) or the
    /// blkparse `major,minor` text. `None` keeps all. Not supported by the native format.
    pub device: Option<String>,
    /// The blkparse event to replay.
    pub blkparse_action: BlkparseAction,
}

/// The per-line parser of a text trace format; [`TraceReader`] does the rest.
pub trait LineFormat {
    /// A request, `None` for a line to skip (header, comment, other event, other device), or
    /// a message naming the bad field and its text.
    fn parse_line(&mut self, line: &str) -> Result<Option<BlockRequest>, String>;
}

/// Streams the requests of a text trace, one line at a time.
#[derive(Debug)]
pub struct TraceReader<R, F> {
    lines: LineReader<R>,
    format: F,
    arrival: ArrivalMode,
    previous_arrival: SimTime,
    finished: bool,
}

impl<R: BufRead, F: LineFormat> TraceReader<R, F> {
    /// Reads `reader` with `format`; `path` labels error messages.
    pub fn new(reader: R, path: impl Into<PathBuf>, format: F, arrival: ArrivalMode) -> Self {
        TraceReader {
            lines: LineReader::new(reader, path),
            format,
            arrival,
            previous_arrival: SimTime::ZERO,
            finished: false,
        }
    }

    fn next_request(&mut self) -> Result<Option<BlockRequest>, WorkloadError> {
        loop {
            let Some((line_number, line)) = self.lines.next_line()? else {
                return Ok(None);
            };
            let parsed = self.format.parse_line(line);
            let path = self.lines.path();
            let request = match parsed {
                Ok(Some(request)) => request,
                Ok(None) => continue,
                Err(message) => return Err(WorkloadError::parse(path, line_number, message)),
            };
            let request = match (self.arrival, request.arrival) {
                (ArrivalMode::ClosedLoop, _) => BlockRequest {
                    arrival: None,
                    ..request
                },
                (ArrivalMode::AsRecorded, Some(arrival)) => {
                    if arrival < self.previous_arrival {
                        return Err(WorkloadError::parse(
                            path,
                            line_number,
                            format!(
                                "arrival {arrival} is earlier than the previous request's {}: the trace must be sorted by time (or replay it closed-loop)",
                                self.previous_arrival
                            ),
                        ));
                    }
                    self.previous_arrival = arrival;
                    request
                }
                (ArrivalMode::AsRecorded, None) => request,
            };
            return Ok(Some(request));
        }
    }
}

impl<R: BufRead, F: LineFormat> Iterator for TraceReader<R, F> {
    type Item = Result<BlockRequest, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.next_request() {
            Ok(Some(request)) => Some(Ok(request)),
            Ok(None) => {
                self.finished = true;
                None
            }
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }
}

/// A boxed request source, as returned by [`read_trace`] and [`open_trace`].
pub type BoxedSource = Box<dyn RequestSource + Send>;

/// Streams the requests of `reader` in `format`; `path` labels error messages.
pub fn read_trace<R: BufRead + Send + 'static>(
    reader: R,
    path: impl Into<PathBuf>,
    format: TraceFormat,
    options: &TraceOptions,
) -> Result<BoxedSource, WorkloadError> {
    let path = path.into();
    let arrival = options.arrival;
    Ok(match format {
        TraceFormat::Msr => Box::new(TraceReader::new(
            reader,
            path,
            MsrFormat::new(options)?,
            arrival,
        )),
        TraceFormat::Blkparse => Box::new(TraceReader::new(
            reader,
            path,
            BlkparseFormat::new(options),
            arrival,
        )),
        TraceFormat::Disksim => Box::new(TraceReader::new(
            reader,
            path,
            DisksimFormat::new(options)?,
            arrival,
        )),
        TraceFormat::Native => Box::new(TraceReader::new(
            reader,
            path,
            NativeFormat::new(options)?,
            arrival,
        )),
    })
}

/// Opens the file at `path` and streams its requests in `format`.
pub fn open_trace(
    path: impl AsRef<Path>,
    format: TraceFormat,
    options: &TraceOptions,
) -> Result<BoxedSource, WorkloadError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| WorkloadError::Io {
        path: path.to_owned(),
        source,
    })?;
    read_trace(BufReader::new(file), path, format, options)
}

/// Parses a numeric device filter for formats whose device is an integer.
fn integer_device(
    options: &TraceOptions,
    format: TraceFormat,
) -> Result<Option<u64>, WorkloadError> {
    match &options.device {
        None => Ok(None),
        Some(text) => crate::units::parse_u64(text.trim(), "device")
            .map(Some)
            .map_err(|message| {
                WorkloadError::invalid(
                    "device",
                    format!("{message} ({format} devices are numbers)"),
                )
            }),
    }
}

/// Splits `line` at `separator` into exactly `N` fields, or returns how many there were.
fn split_exact<const N: usize>(line: &str, separator: char) -> Result<[&str; N], usize> {
    let mut fields = [""; N];
    let mut count = 0;
    for field in line.split(separator) {
        if count < N {
            fields[count] = field.trim();
        }
        count += 1;
    }
    if count == N { Ok(fields) } else { Err(count) }
}

#[cfg(test)]
mod tests;
