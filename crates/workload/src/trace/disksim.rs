//! DiskSim ASCII input traces (DiskSim 4 `iotrace_ascii_get_ioreq_event`).
//!
//! One request per line, whitespace separated: `time devno blkno bcount flags`, e.g.
//! `12.5 0 2048 16 1`. `time` is milliseconds (decimal, parsed exactly to the picosecond);
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

/// Line parser for DiskSim ASCII traces.
#[derive(Clone, Debug)]
pub struct DisksimFormat {
    device: Option<u64>,
}

impl DisksimFormat {
    /// Fails if `options.device` is not an integer `devno`.
    pub fn new(options: &TraceOptions) -> Result<Self, WorkloadError> {
        Ok(DisksimFormat {
            device: integer_device(options, TraceFormat::Disksim)?,
        })
    }
}

impl LineFormat for DisksimFormat {
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
        let arrival_ps = parse_decimal_scaled(time, 9, "time")?;
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
        }))
    }
}
