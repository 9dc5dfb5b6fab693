//! DiskSim ASCII input traces (DiskSim 4 `iotrace_ascii_get_ioreq_event`).
//!
//! One request per line, whitespace separated: `time devno blkno bcount flags`, e.g.
//! `12.5 0 2048 16 1`. `time` is milliseconds (decimal, parsed exactly to the picosecond) —
//! or microseconds / nanoseconds with the `disksim-us` / `disksim-ns` formats: MQSim's
//! DiskSim-format traces carry nanoseconds. A time more than [`PLAUSIBLE_SPAN_DAYS`] days into
//! the trace, read in ms or us, is refused with a message suggesting the finer unit;
//! `blkno` and `bcount` are 512-byte sectors; `flags` is hexadecimal as in DiskSim's
//! `sscanf("%lf %d %d %d %x")`, and bit 0 (`READ`) set means read, clear means write. Fields
//! after the fifth are ignored, as DiskSim does; blank lines and lines starting with `#` are
//! skipped.

use super::{LineFormat, TraceFormat, TraceOptions, integer_device};
use crate::units::{check_range, parse_decimal_scaled, parse_hex_u64, parse_u64, sectors_to_bytes};
use crate::{BlockRequest, IoOp, WorkloadError};
use nandlab_core::SimTime;

/// DiskSim's `READ` flag.
const FLAG_READ: u64 = 0x1;

/// Times further into a trace than this many days are implausible in ms or us (a trace of
/// nanoseconds read in a coarser unit): an error suggests the finer unit.
pub const PLAUSIBLE_SPAN_DAYS: u64 = 30;

/// Line parser for DiskSim ASCII traces.
#[derive(Clone, Debug)]
pub struct DisksimFormat {
    device: Option<u64>,
    format: TraceFormat,
}

impl DisksimFormat {
    /// Times in milliseconds. Fails if `options.device` is not an integer `devno`.
    pub fn new(options: &TraceOptions) -> Result<Self, WorkloadError> {
        Self::with_unit(options, TraceFormat::Disksim)
    }

    /// Times in the unit of `format` ([`TraceFormat::Disksim`]: ms, [`TraceFormat::DisksimUs`]:
    /// us, [`TraceFormat::DisksimNs`]: ns; any other format means ms).
    pub fn with_unit(options: &TraceOptions, format: TraceFormat) -> Result<Self, WorkloadError> {
        let format = match format {
            TraceFormat::DisksimUs | TraceFormat::DisksimNs => format,
            _ => TraceFormat::Disksim,
        };
        Ok(DisksimFormat {
            device: integer_device(options, format)?,
            format,
        })
    }

    /// Decimal digits from the time unit down to picoseconds, the unit's name and the format
    /// to suggest when a time is implausibly large.
    fn unit(&self) -> (u32, &'static str, Option<TraceFormat>) {
        match self.format {
            TraceFormat::DisksimNs => (3, "ns", None),
            TraceFormat::DisksimUs => (6, "us", Some(TraceFormat::DisksimNs)),
            _ => (9, "ms", Some(TraceFormat::DisksimNs)),
        }
    }
}

impl LineFormat for DisksimFormat {
    fn format(&self) -> Option<TraceFormat> {
        Some(self.format)
    }

    fn parse_line(&mut self, line: &str) -> Result<Option<BlockRequest>, String> {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(None);
        }
        let mut fields = trimmed.split_whitespace();
        let mut next = |name: &str| {
            fields.next().ok_or_else(|| {
                format!("missing {name}: expected 5 fields (time devno blkno bcount flags)")
            })
        };
        let time = next("time")?;
        let devno = next("devno")?;
        let blkno = next("blkno")?;
        let bcount = next("bcount")?;
        let flags = next("flags")?;
        let (digits, unit, finer) = self.unit();
        let suggest = |finer: Option<TraceFormat>| match finer {
            Some(f) => format!(
                "; MQSim's DiskSim-format traces carry nanoseconds: read it as {f} (or disksim-us for microseconds)"
            ),
            None => String::new(),
        };
        let arrival_ps = parse_decimal_scaled(time, digits, "time")
            .map_err(|message| format!("{message} (time unit {unit}){}", suggest(finer)))?;
        let plausible_ps = PLAUSIBLE_SPAN_DAYS * 86_400 * nandlab_core::time::PS_PER_S;
        if finer.is_some() && arrival_ps > plausible_ps {
            return Err(format!(
                "time {time} {unit} is {} days into the trace, more than {PLAUSIBLE_SPAN_DAYS}{}",
                arrival_ps / (86_400 * nandlab_core::time::PS_PER_S),
                suggest(finer)
            ));
        }
        let devno = parse_u64(devno, "devno")?;
        let offset_bytes = sectors_to_bytes(parse_u64(blkno, "blkno")?, "blkno")?;
        let size_bytes = sectors_to_bytes(parse_u64(bcount, "bcount")?, "bcount")?;
        let flags = parse_hex_u64(flags, "flags")?;
        check_range(offset_bytes, size_bytes)?;
        if self.device.is_some_and(|wanted| wanted != devno) {
            return Ok(None);
        }
        let op = if flags & FLAG_READ != 0 {
            IoOp::Read
        } else {
            IoOp::Write
        };
        Ok(Some(BlockRequest {
            arrival: Some(SimTime::from_ps(arrival_ps)),
            op,
            offset_bytes,
            size_bytes,
            placement_id: 0,
        }))
    }
}
