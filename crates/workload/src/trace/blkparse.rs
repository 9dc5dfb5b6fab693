//! `blkparse` default text output (blktrace, Linux block layer).
//!
//! Event lines have the fields `dev cpu sequence seconds pid action RWBS [sector + count]
//! [process]`, for example `  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]`.
//! A line whose first field is `major,minor` is an event line; everything else (the per-CPU
//! and total summary at the end, blank lines) is skipped. Of the event lines only the selected
//! action ([`BlkparseAction`](super::BlkparseAction), default `D`) is read, and of those only
//! the ones carrying a range (`sector + count`, count > 0) and an operation in RWBS: `D`
//! (discard) is a trim, else `W` a write, else `R` a read; flushes without data and `N` (no
//! data) are skipped. A selected line with a range whose time, sector or count does not parse
//! is an error. Times are seconds with up to 12 decimals, parsed exactly; sectors are 512 bytes.

use super::{LineFormat, TraceOptions};
use crate::units::{check_range, parse_decimal_scaled, parse_u64, sectors_to_bytes};
use crate::{BlockRequest, IoOp};
use nandlab_core::SimTime;

/// Line parser for blkparse output.
#[derive(Clone, Debug)]
pub struct BlkparseFormat {
    action: &'static str,
    device: Option<String>,
}

impl BlkparseFormat {
    /// Reads the `options.blkparse_action` events of `options.device` (`major,minor`) or of
    /// every device.
    pub fn new(options: &TraceOptions) -> Self {
        BlkparseFormat {
            action: options.blkparse_action.letter(),
            device: options.device.as_ref().map(|d| d.trim().to_owned()),
        }
    }
}

/// Whether `field` looks like `major,minor`.
fn is_device(field: &str) -> bool {
    match field.split_once(',') {
        Some((major, minor)) => {
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            digits(major) && digits(minor)
        }
        None => false,
    }
}

/// Whether `line` is a blkparse event line of any action (`major,minor cpu sequence time pid
/// action ...`).
pub(super) fn is_event_line(line: &str) -> bool {
    let fields: Vec<&str> = line.split_whitespace().take(6).collect();
    fields.len() == 6
        && is_device(fields[0])
        && fields[1..3]
            .iter()
            .all(|f| f.bytes().all(|b| b.is_ascii_digit()))
        && parse_decimal_scaled(fields[3], 12, "time").is_ok()
}

fn op_of(rwbs: &str) -> Option<IoOp> {
    if rwbs.contains('D') {
        Some(IoOp::Trim)
    } else if rwbs.contains('W') {
        Some(IoOp::Write)
    } else if rwbs.contains('R') {
        Some(IoOp::Read)
    } else {
        None
    }
}

impl LineFormat for BlkparseFormat {
    fn format(&self) -> Option<super::TraceFormat> {
        Some(super::TraceFormat::Blkparse)
    }

    fn parse_line(&mut self, line: &str) -> Result<Option<BlockRequest>, String> {
        let mut fields = line.split_whitespace();
        let Some(device) = fields.next() else {
            return Ok(None);
        };
        if !is_device(device) {
            return Ok(None);
        }
        let mut next = |name: &str| {
            fields
                .next()
                .ok_or_else(|| format!("truncated event line: no {name} field"))
        };
        let _cpu = next("cpu")?;
        let _sequence = next("sequence")?;
        let seconds = next("time")?;
        let _pid = next("pid")?;
        let action = next("action")?;
        if action != self.action {
            return Ok(None);
        }
        let rwbs = next("RWBS")?;
        let Some(op) = op_of(rwbs) else {
            return Ok(None);
        };
        let sector = fields.next();
        let plus = fields.next();
        let count = fields.next();
        let (Some(sector), Some("+")) = (sector, plus) else {
            return Ok(None);
        };
        let arrival_ps = parse_decimal_scaled(seconds, 12, "time")?;
        let sector = parse_u64(sector, "sector")?;
        let count = parse_u64(count.unwrap_or(""), "sector count")?;
        if count == 0 {
            return Ok(None);
        }
        let offset_bytes = sectors_to_bytes(sector, "sector")?;
        let size_bytes = sectors_to_bytes(count, "sector count")?;
        check_range(offset_bytes, size_bytes)?;
        if self
            .device
            .as_deref()
            .is_some_and(|wanted| wanted != device)
        {
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
