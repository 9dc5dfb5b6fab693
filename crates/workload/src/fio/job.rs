//! Typed fio jobs and their translation into [`SyntheticSpec`]s.

use super::parse::{Entry, RawJob};
use crate::WorkloadError;
use crate::synthetic::{AddressDistribution, ArrivalProcess, Pattern, SyntheticSpec};
use crate::units::parse_u64;
use std::path::Path;

/// Most I/O depth of one job, and most clones (`numjobs`) of one job.
pub const MAX_IODEPTH: u32 = 65_536;
/// Most clones of one job.
pub const MAX_NUMJOBS: u32 = 4_096;

/// fio's `rw` (I/O pattern) values in the supported subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FioRw {
    /// `read`: sequential reads.
    Read,
    /// `write`: sequential writes.
    Write,
    /// `trim`: sequential trims.
    Trim,
    /// `randread`: random reads.
    RandRead,
    /// `randwrite`: random writes.
    RandWrite,
    /// `randtrim`: random trims.
    RandTrim,
    /// `rw` or `readwrite`: sequential mixed reads and writes (`rwmixread`).
    ReadWrite,
    /// `randrw`: random mixed reads and writes (`rwmixread`).
    RandReadWrite,
}

impl FioRw {
    const NAMES: [(&'static str, FioRw); 9] = [
        ("read", FioRw::Read),
        ("write", FioRw::Write),
        ("trim", FioRw::Trim),
        ("randread", FioRw::RandRead),
        ("randwrite", FioRw::RandWrite),
        ("randtrim", FioRw::RandTrim),
        ("rw", FioRw::ReadWrite),
        ("readwrite", FioRw::ReadWrite),
        ("randrw", FioRw::RandReadWrite),
    ];

    fn parse(text: &str) -> Result<FioRw, String> {
        if text.contains(':') {
            return Err(format!(
                "bad rw \"{text}\": offset modifiers (rw=randread:8) are not supported"
            ));
        }
        Self::NAMES
            .iter()
            .find(|(name, _)| *name == text)
            .map(|(_, rw)| *rw)
            .ok_or_else(|| {
                format!("bad rw \"{text}\": expected one of read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw")
            })
    }

    /// Whether offsets are random (`rand*`).
    pub fn is_random(self) -> bool {
        matches!(
            self,
            FioRw::RandRead | FioRw::RandWrite | FioRw::RandTrim | FioRw::RandReadWrite
        )
    }

    /// `(read_fraction, trim_fraction)` for a given `rwmixread`.
    fn mix(self, rwmixread_percent: u32) -> (f64, f64) {
        match self {
            FioRw::Read | FioRw::RandRead => (1.0, 0.0),
            FioRw::Write | FioRw::RandWrite => (0.0, 0.0),
            FioRw::Trim | FioRw::RandTrim => (0.0, 1.0),
            FioRw::ReadWrite | FioRw::RandReadWrite => (f64::from(rwmixread_percent) / 100.0, 0.0),
        }
    }
}

/// A `size` or `offset`: bytes, or a percentage of the device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FioAmount {
    /// An absolute number of bytes.
    Bytes(u64),
    /// A percentage (0 to 100) of the device size.
    Percent(f64),
}

impl FioAmount {
    /// Bytes on a device of `device_size_bytes` (percentages round down).
    pub fn resolve(self, device_size_bytes: u64) -> u64 {
        match self {
            FioAmount::Bytes(bytes) => bytes,
            FioAmount::Percent(p) => (device_size_bytes as f64 * p / 100.0) as u64,
        }
    }
}

/// Parses an fio integer with an optional unit suffix, with fio's default `kb_base=1024`:
/// `k`/`kb` = 1024, `m`/`mb` = 1024², … `p`/`pb`, and (fio's compatibility rule) `kib`/`mib`/…
/// = powers of 1000. Case-insensitive; `0x` hexadecimal accepted.
pub fn parse_fio_size(text: &str) -> Result<u64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let (digits, radix) = match lower.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None => (lower.as_str(), 10),
    };
    let split = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let (number, suffix) = digits.split_at(split);
    let multiplier: u64 = match suffix {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "t" | "tb" => 1 << 40,
        "p" | "pb" => 1 << 50,
        "ki" | "kib" => 1_000,
        "mi" | "mib" => 1_000_000,
        "gi" | "gib" => 1_000_000_000,
        "ti" | "tib" => 1_000_000_000_000,
        "pi" | "pib" => 1_000_000_000_000_000,
        _ => {
            return Err(format!(
                "bad size \"{text}\": expected a number with an optional k/m/g/t/p suffix"
            ));
        }
    };
    let value = u64::from_str_radix(number, radix).map_err(|_| {
        format!("bad size \"{text}\": expected a number with an optional k/m/g/t/p suffix")
    })?;
    value
        .checked_mul(multiplier)
        .ok_or_else(|| format!("bad size \"{text}\": larger than {} bytes", u64::MAX))
}

fn parse_amount(text: &str) -> Result<FioAmount, String> {
    match text.trim().strip_suffix('%') {
        Some(number) => match number.trim().parse::<f64>() {
            Ok(p) if (0.0..=100.0).contains(&p) => Ok(FioAmount::Percent(p)),
            _ => Err(format!("bad percentage \"{text}\": expected 0% to 100%")),
        },
        None => parse_fio_size(text).map(FioAmount::Bytes),
    }
}

fn parse_distribution(text: &str) -> Result<AddressDistribution, String> {
    let (kind, parameter) = match text.split_once(':') {
        Some((k, p)) => (k, Some(p)),
        None => (text, None),
    };
    match (kind, parameter) {
        ("random", None) => Ok(AddressDistribution::Uniform),
        ("zipf", Some(theta)) => match theta.parse::<f64>() {
            Ok(theta) if theta.is_finite() && theta > 0.0 => {
                Ok(AddressDistribution::Zipf { theta })
            }
            _ => Err(format!(
                "bad zipf theta \"{theta}\": expected a number > 0 (zipf:1.2)"
            )),
        },
        ("zipf", None) => Err("zipf needs a theta: random_distribution=zipf:1.2".to_owned()),
        ("pareto" | "normal" | "gauss" | "zoned" | "zoned_abs", _) => Err(format!(
            "random_distribution \"{text}\" is not supported: use random or zipf:theta"
        )),
        _ => Err(format!(
            "bad random_distribution \"{text}\": expected random or zipf:theta"
        )),
    }
}

fn parse_bool(text: Option<&str>, key: &str) -> Result<bool, String> {
    match text {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(other) => Err(format!("bad {key} \"{other}\": expected 0 or 1")),
    }
}

fn parse_bounded(text: &str, key: &str, min: u64, max: u64) -> Result<u64, String> {
    let value = parse_u64(text, key)?;
    if value < min || value > max {
        return Err(format!("bad {key} {value}: expected {min} to {max}"));
    }
    Ok(value)
}

/// One job section of an fio job file, with `[global]` values applied.
#[derive(Clone, Debug, PartialEq)]
pub struct FioJob {
    /// The section name, or the `name` option.
    pub name: String,
    /// Line of the `[section]` header.
    pub line: u64,
    /// I/O pattern (default `read`).
    pub rw: FioRw,
    /// `bs` (default 4 KiB).
    pub block_size_bytes: u64,
    /// `blockalign` (default `bs`).
    pub block_align_bytes: Option<u64>,
    /// `iodepth` (default 1).
    pub iodepth: u32,
    /// `size` (default: the device from `offset` to its end).
    pub size: Option<FioAmount>,
    /// `offset` (default 0).
    pub offset: FioAmount,
    /// `io_size` (default `size * loops`).
    pub io_size_bytes: Option<u64>,
    /// `loops` (default 1).
    pub loops: u64,
    /// `rwmixread` in percent (default 50; `rwmixwrite=w` sets it to `100 - w`).
    pub rwmixread_percent: u32,
    /// `random_distribution` (default uniform).
    pub distribution: AddressDistribution,
    /// False with `norandommap`: uniform random offsets are drawn with replacement instead of
    /// visiting every block once per pass.
    pub random_map: bool,
    /// `number_ios`: stop after this many requests if the size is not exhausted first.
    pub number_ios: Option<u64>,
    /// `numjobs` (default 1): independent clones of this job.
    pub numjobs: u32,
    /// `randseed`: overrides the run's seed for this job.
    pub randseed: Option<u64>,
    /// `stonewall`: wait for every earlier job to finish before starting.
    pub stonewall: bool,
    /// `fdp`: Flexible Data Placement on.
    pub fdp: bool,
    /// `fdp_pli`: the placement id this job's writes carry (needs `fdp=1`).
    pub fdp_pli: Option<u16>,
    key_lines: Vec<(&'static str, u64)>,
}

impl FioJob {
    /// Types the entries of a raw job; errors name the line of the bad value.
    pub(crate) fn from_raw(raw: RawJob, path: &Path) -> Result<FioJob, WorkloadError> {
        let mut job = FioJob {
            name: raw.section_name,
            line: raw.line,
            rw: FioRw::Read,
            block_size_bytes: 4096,
            block_align_bytes: None,
            iodepth: 1,
            size: None,
            offset: FioAmount::Bytes(0),
            io_size_bytes: None,
            loops: 1,
            rwmixread_percent: 50,
            distribution: AddressDistribution::Uniform,
            random_map: true,
            number_ios: None,
            numjobs: 1,
            randseed: None,
            stonewall: false,
            fdp: false,
            fdp_pli: None,
            key_lines: Vec::new(),
        };
        for entry in raw.entries {
            let line = entry.line;
            job.apply(entry)
                .map_err(|message| WorkloadError::parse(path, line, message))?;
        }
        Ok(job)
    }

    fn apply(&mut self, entry: Entry) -> Result<(), String> {
        let key = entry.key;
        let flag = matches!(key, "norandommap" | "stonewall");
        let value = match (&entry.value, flag) {
            (Some(v), _) => v.as_str(),
            (None, true) => "1",
            (None, false) => return Err(format!("{key} needs a value ({key}=...)")),
        };
        match key {
            "name" => self.name = value.to_owned(),
            "rw" => self.rw = FioRw::parse(value)?,
            "bs" => {
                if value.contains(',') {
                    return Err(format!(
                        "bad bs \"{value}\": separate read/write block sizes are not supported"
                    ));
                }
                self.block_size_bytes = parse_fio_size(value)?;
                if self.block_size_bytes == 0 {
                    return Err("bs must be > 0".to_owned());
                }
                if self.block_size_bytes > crate::trace::MAX_REQUEST_BYTES {
                    return Err(format!(
                        "bs {} exceeds the 1 GiB a block request may carry",
                        self.block_size_bytes
                    ));
                }
            }
            "blockalign" => {
                let align = parse_fio_size(value)?;
                if align == 0 {
                    return Err("blockalign must be > 0".to_owned());
                }
                self.block_align_bytes = Some(align);
            }
            "iodepth" => {
                self.iodepth = parse_bounded(value, key, 1, u64::from(MAX_IODEPTH))? as u32
            }
            "size" => self.size = Some(parse_amount(value)?),
            "offset" => self.offset = parse_amount(value)?,
            "io_size" => self.io_size_bytes = Some(parse_fio_size(value)?),
            "loops" => self.loops = parse_bounded(value, key, 1, u64::MAX)?,
            "rwmixread" => self.rwmixread_percent = parse_bounded(value, key, 0, 100)? as u32,
            "rwmixwrite" => {
                self.rwmixread_percent = 100 - parse_bounded(value, key, 0, 100)? as u32
            }
            "random_distribution" => self.distribution = parse_distribution(value)?,
            "norandommap" => self.random_map = !parse_bool(Some(value), key)?,
            "number_ios" => self.number_ios = Some(parse_bounded(value, key, 1, u64::MAX)?),
            "numjobs" => {
                self.numjobs = parse_bounded(value, key, 1, u64::from(MAX_NUMJOBS))? as u32
            }
            "randseed" => self.randseed = Some(parse_u64(value, key)?),
            "stonewall" => self.stonewall = parse_bool(Some(value), key)?,
            "fdp" => self.fdp = parse_bool(Some(value), key)?,
            "fdp_pli" => {
                if value.contains(',') {
                    return Err(format!(
                        "fdp_pli \"{value}\": one placement id per job is supported (split the job to use several)"
                    ));
                }
                self.fdp_pli = Some(parse_bounded(value, key, 0, u64::from(u16::MAX))? as u16);
            }
            _ => return Err(format!("internal: unhandled key {key}")),
        }
        self.key_lines.retain(|(k, _)| *k != key);
        self.key_lines.push((key, entry.line));
        Ok(())
    }

    /// Line where `key` was last set (in the job or inherited from `[global]`), else the
    /// section header.
    pub fn line_of(&self, key: &str) -> u64 {
        self.key_lines
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(self.line, |(_, line)| *line)
    }

    /// The spec of one clone of this job on a device of `device_size_bytes`, seeded with
    /// `seed`. Errors name the line of the key that does not fit the device.
    pub fn to_spec(
        &self,
        path: &Path,
        device_size_bytes: u64,
        seed: u64,
    ) -> Result<SyntheticSpec, WorkloadError> {
        let error =
            |key: &str, message: String| WorkloadError::parse(path, self.line_of(key), message);
        let offset_bytes = self.offset.resolve(device_size_bytes);
        if offset_bytes >= device_size_bytes {
            return Err(error(
                "offset",
                format!(
                    "offset {offset_bytes} is at or past the end of the device ({device_size_bytes} bytes)"
                ),
            ));
        }
        let span_bytes = match self.size {
            Some(size) => size.resolve(device_size_bytes),
            None => device_size_bytes - offset_bytes,
        };
        if span_bytes == 0 {
            return Err(error("size", "size is 0".to_owned()));
        }
        if span_bytes > device_size_bytes - offset_bytes {
            return Err(error(
                "size",
                format!(
                    "offset {offset_bytes} + size {span_bytes} exceeds the device ({device_size_bytes} bytes)"
                ),
            ));
        }
        if self.block_size_bytes > span_bytes {
            return Err(error(
                "bs",
                format!(
                    "bs {} is larger than the region ({span_bytes} bytes)",
                    self.block_size_bytes
                ),
            ));
        }
        let io_bytes = self
            .io_size_bytes
            .unwrap_or(span_bytes.saturating_mul(self.loops));
        let mut request_count = io_bytes / self.block_size_bytes;
        if let Some(limit) = self.number_ios {
            request_count = request_count.min(limit);
        }
        if request_count == 0 {
            return Err(error(
                "io_size",
                format!(
                    "io_size {io_bytes} is smaller than bs {}",
                    self.block_size_bytes
                ),
            ));
        }
        let (read_fraction, trim_fraction) = self.rw.mix(self.rwmixread_percent);
        let uniform = matches!(self.distribution, AddressDistribution::Uniform);
        let (pattern, distribution) = match (self.rw.is_random(), uniform && self.random_map) {
            (false, _) => (Pattern::Sequential, AddressDistribution::Uniform),
            (true, true) => (Pattern::Shuffled, AddressDistribution::Uniform),
            (true, false) => (Pattern::Random, self.distribution),
        };
        let spec = SyntheticSpec {
            pattern,
            read_fraction,
            trim_fraction,
            request_size_bytes: self.block_size_bytes,
            alignment_bytes: self.block_align_bytes,
            offset_bytes,
            span_bytes,
            distribution,
            scatter_hot_addresses: true,
            request_count: Some(request_count),
            duration_ns: None,
            arrival: ArrivalProcess::ClosedLoop,
            seed,
            placement_id: match (self.fdp, self.fdp_pli) {
                (true, Some(id)) => id,
                (false, Some(_)) => {
                    return Err(error(
                        "fdp_pli",
                        "fdp_pli needs fdp=1 (Flexible Data Placement on)".to_owned(),
                    ));
                }
                (_, None) => 0,
            },
        };
        spec.validate().map_err(|e| {
            WorkloadError::parse(path, self.line, format!("job \"{}\": {e}", self.name))
        })?;
        Ok(spec)
    }
}
