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
//! | [`TraceFormat::Disksim`] | `time devno blkno bcount flags` | milliseconds (decimal); `disksim-us`, `disksim-ns` read microseconds or nanoseconds (MQSim's DiskSim-format traces) | 512-byte sectors |
//! | [`TraceFormat::Native`] | `arrival_ns,op,offset_bytes,size_bytes` | nanoseconds (up to 3 decimals) | bytes |
//!
//! With [`ArrivalMode::AsRecorded`] arrivals must not go back in time (an error names the
//! line); [`ArrivalMode::ClosedLoop`] drops every timestamp, so requests issue as fast as the
//! host queue allows and the order of the file is all that remains.
//!
//! Decimal times are exact to the picosecond; digits finer than a picosecond are dropped
//! (rounded down). A request larger than [`MAX_REQUEST_BYTES`] is an error naming its line. A
//! trace that yields no request at all (empty, header only, every line filtered out, or read
//! with the wrong format) is an error naming the file, with the counts of lines read and
//! skipped and, when another format reads its lines, that format as a suggestion.

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
    /// DiskSim ASCII input traces, times in milliseconds (DiskSim's unit).
    Disksim,
    /// DiskSim ASCII input traces with times in microseconds (`disksim-us`).
    DisksimUs,
    /// DiskSim ASCII input traces with times in nanoseconds (`disksim-ns`), as in the traces
    /// MQSim ships.
    DisksimNs,
    /// nandlab's own CSV capture format.
    Native,
}

impl TraceFormat {
    /// Every format, in the order of the help text.
    pub const ALL: [TraceFormat; 6] = [
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Disksim,
        TraceFormat::DisksimUs,
        TraceFormat::DisksimNs,
        TraceFormat::Native,
    ];

    /// The name accepted by `FromStr`.
    pub const fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Disksim => "disksim",
            TraceFormat::DisksimUs => "disksim-us",
            TraceFormat::DisksimNs => "disksim-ns",
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
            "disksim" | "disksim-ms" => Ok(TraceFormat::Disksim),
            "disksim-us" => Ok(TraceFormat::DisksimUs),
            "disksim-ns" | "mqsim" => Ok(TraceFormat::DisksimNs),
            "native" | "nandlab" => Ok(TraceFormat::Native),
            _ => Err(WorkloadError::invalid(
                "format",
                format!(
                    "unknown trace format \"{text}\": expected one of msr, blkparse, disksim, native \
                     (disksim-us, disksim-ns: DiskSim traces with times in microseconds or nanoseconds)"
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

/// The largest request a trace line may carry: 1 GiB (block layers split requests at a few
/// MiB; a larger one is a misread field, e.g. a byte count read as sectors).
pub const MAX_REQUEST_BYTES: u64 = 1 << 30;

/// The per-line parser of a text trace format; [`TraceReader`] does the rest.
pub trait LineFormat {
    /// A request, `None` for a line to skip (header, comment, other event, other device), or
    /// a message naming the bad field and its text.
    fn parse_line(&mut self, line: &str) -> Result<Option<BlockRequest>, String>;

    /// The format, for messages about the whole trace (`None`: a format of the caller's own).
    fn format(&self) -> Option<TraceFormat> {
        None
    }
}

/// Lines and requests of a trace read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceCounts {
    /// Lines read (blank ones included).
    pub lines: u64,
    /// Lines skipped: blank, comments, headers, other events, other devices.
    pub skipped: u64,
    /// Requests produced.
    pub requests: u64,
}

/// Streams the requests of a text trace, one line at a time.
#[derive(Debug)]
pub struct TraceReader<R, F> {
    lines: LineReader<R>,
    format: F,
    arrival: ArrivalMode,
    previous_arrival: SimTime,
    finished: bool,
    counts: TraceCounts,
    /// The first non-blank skipped line and its number (to suggest a format when no line
    /// gives a request).
    first_skipped: Option<(u64, String)>,
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
            counts: TraceCounts::default(),
            first_skipped: None,
        }
    }

    /// Lines read, lines skipped and requests produced so far.
    pub fn counts(&self) -> TraceCounts {
        self.counts
    }

    /// The error for a trace that ended without a single request.
    fn no_requests(&self) -> WorkloadError {
        let c = self.counts;
        let format = self.format.format();
        let name = format.map_or_else(|| "this format".to_owned(), |f| format!("format {f}"));
        let message = if c.lines == 0 {
            "no requests: the trace is empty".to_owned()
        } else if let Some((line, guess)) = self
            .first_skipped
            .as_ref()
            .and_then(|(line, text)| guess_format(text, format).map(|g| (*line, g)))
        {
            format!(
                "no requests: all {} lines were skipped as not {name} requests, but line {line} reads as {guess}: is the format {guess}?",
                c.lines
            )
        } else {
            format!(
                "no requests: all {} lines were skipped by {name} (blank, comments, headers, other events or devices filtered out); check the format and the device filter",
                c.lines
            )
        };
        WorkloadError::Invalid {
            key: self.lines.path().display().to_string(),
            message,
        }
    }

    fn next_request(&mut self) -> Result<Option<BlockRequest>, WorkloadError> {
        while let Some((line_number, line)) = self.lines.next_line()? {
            self.counts.lines += 1;
            let parsed = self.format.parse_line(line).and_then(|r| match r {
                Some(r) if r.size_bytes > MAX_REQUEST_BYTES => Err(format!(
                    "request of {} bytes exceeds the {MAX_REQUEST_BYTES} bytes (1 GiB) a block request may carry",
                    r.size_bytes
                )),
                other => Ok(other),
            });
            if let Ok(None) = parsed {
                self.counts.skipped += 1;
                if self.first_skipped.is_none() && !line.trim().is_empty() {
                    self.first_skipped = Some((line_number, line.to_owned()));
                }
                continue;
            }
            let path = self.lines.path();
            let request = match parsed {
                Ok(Some(request)) => request,
                Ok(None) => unreachable!("skipped above"),
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
            self.counts.requests += 1;
            return Ok(Some(request));
        }
        if self.counts.requests == 0 {
            return Err(self.no_requests());
        }
        Ok(None)
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
        TraceFormat::Disksim | TraceFormat::DisksimUs | TraceFormat::DisksimNs => {
            Box::new(TraceReader::new(
                reader,
                path,
                DisksimFormat::with_unit(options, format)?,
                arrival,
            ))
        }
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

/// The first format other than `tried` (and its DiskSim time-unit siblings) that reads `line`
/// as a request, with default options.
fn guess_format(line: &str, tried: Option<TraceFormat>) -> Option<TraceFormat> {
    let options = TraceOptions::default();
    let disksim = |f: Option<TraceFormat>| {
        matches!(
            f,
            Some(TraceFormat::Disksim | TraceFormat::DisksimUs | TraceFormat::DisksimNs)
        )
    };
    [
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Disksim,
        TraceFormat::Native,
    ]
    .into_iter()
    .filter(|f| Some(*f) != tried && !(disksim(Some(*f)) && disksim(tried)))
    .find(|f| {
        let parsed = match f {
            TraceFormat::Msr => MsrFormat::new(&options)
                .ok()
                .map(|mut p| p.parse_line(line)),
            TraceFormat::Blkparse => {
                // any action: the point is whether the line is a blkparse event
                let mut queue = BlkparseFormat::new(&options);
                Some(queue.parse_line(line))
            }
            TraceFormat::Native => {
                let mut p = NativeFormat::default();
                // a data line of a native trace, as if after its header
                let _ = p.parse_line(NATIVE_CSV_HEADER);
                Some(p.parse_line(line))
            }
            _ => DisksimFormat::new(&options)
                .ok()
                .map(|mut p| p.parse_line(line)),
        };
        matches!(parsed, Some(Ok(Some(_))))
            || (*f == TraceFormat::Native && line.trim() == NATIVE_CSV_HEADER)
            || (*f == TraceFormat::Blkparse && blkparse::is_event_line(line))
    })
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
