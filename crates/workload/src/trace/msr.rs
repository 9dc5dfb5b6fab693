//! MSR Cambridge block traces (SNIA IOTTA "MSR Cambridge", Narayanan et al. 2008).
//!
//! One request per line, `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`:
//! `128166372003061629,hm,1,Read,3154152448,4096,1279`. The real files have no header; a
//! first line starting with `Timestamp` is skipped. `Timestamp` is a Windows FILETIME (100 ns
//! ticks since 1601); arrivals are rebased to the first record of the file (whatever its
//! disk), so `arrival = (ts - first_ts) * 100 ns`. `Type` is `Read` or `Write` (any case);
//! `Offset` and `Size` are bytes. `ResponseTime` (ticks) must be an integer and is otherwise
//! ignored: the simulator computes its own.

use super::{LineFormat, TraceFormat, TraceOptions, integer_device, split_exact};
use crate::units::{check_range, parse_u64};
use crate::{BlockRequest, IoOp, WorkloadError};
use nandlab_core::SimTime;

/// Picoseconds per FILETIME tick (100 ns).
const PS_PER_TICK: u64 = 100_000;

/// Line parser for MSR Cambridge CSV.
#[derive(Clone, Debug)]
pub struct MsrFormat {
    disk: Option<u64>,
    first_ticks: Option<u64>,
    seen_line: bool,
}

impl MsrFormat {
    /// Fails if `options.device` is not an integer disk number.
    pub fn new(options: &TraceOptions) -> Result<Self, WorkloadError> {
        Ok(MsrFormat {
            disk: integer_device(options, TraceFormat::Msr)?,
            first_ticks: None,
            seen_line: false,
        })
    }
}

impl LineFormat for MsrFormat {
    fn format(&self) -> Option<TraceFormat> {
        Some(TraceFormat::Msr)
    }

    fn parse_line(&mut self, line: &str) -> Result<Option<BlockRequest>, String> {
        if line.trim().is_empty() {
            return Ok(None);
        }
        let first_line = !self.seen_line;
        self.seen_line = true;
        let [timestamp, _host, disk, kind, offset, size, response] = split_exact::<7>(line, ',')
            .map_err(|found| {
                format!(
                    "expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {found}"
                )
            })?;
        if first_line && timestamp.eq_ignore_ascii_case("timestamp") {
            return Ok(None);
        }
        let ticks = parse_u64(timestamp, "timestamp")?;
        let disk = parse_u64(disk, "disk number")?;
        let op = if kind.eq_ignore_ascii_case("read") {
            IoOp::Read
        } else if kind.eq_ignore_ascii_case("write") {
            IoOp::Write
        } else {
            return Err(format!("bad type \"{kind}\": expected Read or Write"));
        };
        let offset_bytes = parse_u64(offset, "offset")?;
        let size_bytes = parse_u64(size, "size")?;
        parse_u64(response, "response time")?;
        check_range(offset_bytes, size_bytes)?;
        let first_ticks = *self.first_ticks.get_or_insert(ticks);
        let delta_ticks = ticks.checked_sub(first_ticks).ok_or_else(|| {
            format!("timestamp {ticks} is before the first record's {first_ticks}")
        })?;
        let arrival_ps = delta_ticks
            .checked_mul(PS_PER_TICK)
            .ok_or_else(|| format!("timestamp {ticks} is too far after the first record"))?;
        if self.disk.is_some_and(|wanted| wanted != disk) {
            return Ok(None);
        }
        Ok(Some(BlockRequest {
            arrival: Some(SimTime::from_ps(arrival_ps)),
            op,
            offset_bytes,
            size_bytes,
            placement_id: 0,
        }))
    }
}
