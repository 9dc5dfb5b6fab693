//! Typed fio jobs and their translation into [`SyntheticSpec`]s.

use super::extras::{BlockSplit, StreamShape, WriteModes, Zones};
use super::keys;
use super::layout::FilePlace;
use super::parse::{Entry, RawJob};
use super::stream::StreamPlan;
use crate::WorkloadError;
use crate::synthetic::{AddressDistribution, ArrivalProcess, Pattern, SyntheticSpec};
use crate::units::parse_u64;
use std::path::Path;

/// Most files (`nrfiles`) of one job.
pub const MAX_NRFILES: u64 = 65_536;

/// Most writes a `verify_backlog` holds before they are read back.
pub const MAX_VERIFY_BACKLOG: u64 = 65_536;

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
    /// `trimwrite`: each block trimmed, then written (sequential).
    TrimWrite,
    /// `randtrimwrite`: each block trimmed, then written (random).
    RandTrimWrite,
}

impl FioRw {
    const NAMES: [(&'static str, FioRw); 11] = [
        ("read", FioRw::Read),
        ("write", FioRw::Write),
        ("trim", FioRw::Trim),
        ("randread", FioRw::RandRead),
        ("randwrite", FioRw::RandWrite),
        ("randtrim", FioRw::RandTrim),
        ("rw", FioRw::ReadWrite),
        ("readwrite", FioRw::ReadWrite),
        ("randrw", FioRw::RandReadWrite),
        ("trimwrite", FioRw::TrimWrite),
        ("randtrimwrite", FioRw::RandTrimWrite),
    ];

    fn parse(text: &str) -> Result<FioRw, String> {
        Self::NAMES
            .iter()
            .find(|(name, _)| *name == text)
            .map(|(_, rw)| *rw)
            .ok_or_else(|| {
                format!("bad rw \"{text}\": expected one of read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite, randtrimwrite")
            })
    }

    /// Whether offsets are random (`rand*`).
    pub fn is_random(self) -> bool {
        matches!(
            self,
            FioRw::RandRead
                | FioRw::RandWrite
                | FioRw::RandTrim
                | FioRw::RandReadWrite
                | FioRw::RandTrimWrite
        )
    }

    /// `(read_fraction, trim_fraction)` for a given `rwmixread`.
    fn mix(self, rwmixread_percent: u32) -> (f64, f64) {
        match self {
            FioRw::Read | FioRw::RandRead => (1.0, 0.0),
            // trimwrite: the writes are drawn, each preceded by its trim (see `StreamPlan`)
            FioRw::Write | FioRw::RandWrite | FioRw::TrimWrite | FioRw::RandTrimWrite => (0.0, 0.0),
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

/// The block indices of `random_distribution=sequence:2,0,1` (at most 64, as fio).
fn parse_sequence(text: &str, list: &str) -> Result<Vec<u64>, String> {
    let blocks = list
        .split(',')
        .map(|b| b.trim().parse::<u64>())
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| {
            format!("bad random_distribution \"{text}\": expected sequence:block,block,...")
        })?;
    if blocks.is_empty() || blocks.len() > 64 {
        return Err(format!(
            "bad random_distribution \"{text}\": 1 to 64 block indices"
        ));
    }
    Ok(blocks)
}

/// The `:N` of `rw=read:N`: for sequential jobs, bytes added to each next offset (fio's
/// `ddir_seq_add`, negative to go backwards); random jobs' `:N` (a new random offset every N
/// requests) is refused.
fn parse_rw_modifier(text: &str, modifier: &str, rw: FioRw) -> Result<i64, String> {
    if rw.is_random() {
        return Err(format!(
            "bad rw \"{text}\": a random offset every N requests (rw=randread:N) is not supported; sequential holes (rw=read:8k) are"
        ));
    }
    let (negative, magnitude) = match modifier.trim().strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, modifier.trim()),
    };
    let bytes = parse_fio_size(magnitude).map_err(|e| format!("bad rw \"{text}\": {e}"))?;
    let bytes = i64::try_from(bytes).map_err(|_| format!("bad rw \"{text}\": too large"))?;
    Ok(if negative { -bytes } else { bytes })
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

/// Parses an fio time: a number with an optional unit, seconds by default (`us`/`usec`,
/// `ms`/`msec`, `s`/`sec`, `m`/`min`, `h`, `d`); returns nanoseconds.
pub fn parse_fio_time_ns(text: &str, key: &str) -> Result<u64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(split);
    let ns_per_unit: u64 = match unit.trim() {
        "" | "s" | "sec" => 1_000_000_000,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => {
            return Err(format!(
                "bad {key} \"{text}\": expected a time such as 60, 10s, 500ms, 5m"
            ));
        }
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("bad {key} \"{text}\": expected a time such as 60, 10s, 500ms, 5m"))?;
    value
        .checked_mul(ns_per_unit)
        .filter(|ns| *ns <= MAX_TIME_NS)
        .ok_or_else(|| format!("bad {key} \"{text}\": longer than 100 days of simulated time"))
}

/// `bs=r[,w[,t]]` as fio reads it: read, write and trim sizes; an empty value is the default
/// 4 KiB, and a last value not followed by a comma applies to the directions after it
/// (`bs=8k,32k`: 32 KiB writes and trims; `bs=8k,32k,`: 4 KiB trims).
fn parse_direction_sizes(value: &str) -> Result<[u64; 3], String> {
    let parts: Vec<&str> = value.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "bad bs \"{value}\": at most three sizes (read,write,trim)"
        ));
    }
    let one = |text: &str| -> Result<u64, String> {
        if text.is_empty() {
            return Ok(4096);
        }
        let bytes = parse_fio_size(text)?;
        if bytes == 0 {
            return Err("bs must be > 0".to_owned());
        }
        if bytes > crate::trace::MAX_REQUEST_BYTES {
            return Err(format!(
                "bs {bytes} exceeds the 1 GiB a block request may carry"
            ));
        }
        Ok(bytes)
    };
    let last = parts.last().copied().unwrap_or("");
    let mut sizes = [4096; 3];
    for (i, size) in sizes.iter_mut().enumerate() {
        *size = one(parts.get(i).copied().unwrap_or(last))?;
    }
    Ok(sizes)
}

/// Longest `runtime`/`ramp_time`: 100 days, far below the end of simulated time (2^64 ps).
const MAX_TIME_NS: u64 = 100 * 86_400_000_000_000;

/// A `filename`: one file (fio separates several with `:`, escaped as `\:`).
fn parse_filename(text: &str) -> Result<String, String> {
    let unescaped = text.replace("\\:", "");
    if unescaped.contains(':') {
        return Err(format!(
            "filename \"{text}\": several files per job (a:b) are not supported; one file per job"
        ));
    }
    if text.is_empty() {
        return Err("filename is empty".to_owned());
    }
    Ok(text.replace("\\:", ":"))
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
    /// `fdp_pli`: the placement id this job's writes carry (needs `fdp=1`); with a list,
    /// the first, and `zoned.plis` holds the list.
    pub fdp_pli: Option<u16>,
    /// `zonemode=zbd` and its keys, and lists of placement ids (see `zoned.rs`).
    pub zoned: super::zoned::ZonedOptions,
    /// `ioengine` (a storage engine; the device is simulated, not the engine).
    pub ioengine: Option<String>,
    /// `filename`: jobs naming the same file share its range of the device; `/dev/...` (and
    /// no filename) is the device itself.
    pub filename: Option<String>,
    /// `filesize`: the size of the job's file (default `size`).
    pub filesize: Option<FioAmount>,
    /// `time_based`: run until `runtime`, repeating the region as often as needed.
    pub time_based: bool,
    /// `runtime` (`timeout`) in simulated nanoseconds, after `ramp_time`.
    pub runtime_ns: Option<u64>,
    /// `ramp_time` in simulated nanoseconds: I/O before it does not count toward the job's
    /// size (fio resets its counters then).
    pub ramp_time_ns: Option<u64>,
    /// `offset_increment`: clone `k` of the job starts at `offset + k * offset_increment`.
    pub offset_increment: Option<FioAmount>,
    /// `verify` (not `0`): the written blocks are read back after the writes.
    pub verify: bool,
    /// `do_verify` (default 1): with 0, `verify` reads nothing back.
    pub do_verify: bool,
    /// `fill_device`: write from `offset` to the end of the device.
    pub fill_device: bool,
    /// `wait_for`: the job starts after the named job (honoured when that is a stonewall).
    pub wait_for: Option<String>,
    /// `exitall`: when one job of a stonewall group finishes, the group ends.
    pub exitall: bool,
    /// `rate_iops`: an open-loop arrival rate in requests per second (one stream per file).
    pub rate_iops: Option<u64>,
    /// `rate`: the same in bytes per second (divided by `bs`).
    pub rate_bytes_per_s: Option<u64>,
    /// `rate_process=poisson`: exponential gaps instead of fixed ones.
    pub rate_poisson: bool,
    /// `startdelay` in ns: a rate-limited job's arrivals start this long after its group's.
    pub start_delay_ns: u64,
    /// `bs=r,w,t` with sizes that differ: read, write and trim sizes, resolved for the job's
    /// directions once it is complete ([`FioJob::resolve_direction_sizes`]).
    pub direction_bs: Option<[u64; 3]>,
    /// `trimwrite` with a trim size other than its writes' (fio's `mtd.fio`).
    pub trim_bytes: Option<u64>,
    /// `bssplit`: block sizes drawn per request (fio counts the job's bytes, not requests).
    pub split: Option<BlockSplit>,
    /// `rw=read:N`: bytes skipped (negative: stepped back) between sequential requests.
    pub seq_add: i64,
    /// `random_distribution=zoned:…`.
    pub zones: Option<Zones>,
    /// `random_distribution=sequence:…` block indices and `random_sequence_stride`.
    pub sequence: Option<Vec<u64>>,
    /// `random_sequence_stride`.
    pub sequence_stride: bool,
    /// `nrfiles` (`nr_files`): the job's region is split into this many files of equal
    /// size, served round-robin one request each (fio's default `file_service_type`).
    pub nrfiles: u64,
    /// `write_mode` (io_uring_cmd): NVMe write commands drawn per write.
    pub write_modes: Option<WriteModes>,
    /// `verify_backlog`: with `verify`, the last N writes are read back after every N
    /// writes (and the rest at the end), instead of all of them after the job.
    pub verify_backlog: Option<u64>,
    /// `flow`: the job's weight among the jobs of its group (fio keeps their I/O counts in
    /// this ratio); replaces `iodepth` as the merge weight.
    pub flow: Option<u32>,
    /// `sprandom` and its keys: fio's steady-state preconditioner (see `sprandom.rs`).
    pub sprandom: super::SpRandomOptions,
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
            zoned: Default::default(),
            ioengine: None,
            filename: None,
            filesize: None,
            time_based: false,
            runtime_ns: None,
            ramp_time_ns: None,
            offset_increment: None,
            verify: false,
            do_verify: true,
            fill_device: false,
            wait_for: None,
            exitall: false,
            rate_iops: None,
            rate_bytes_per_s: None,
            rate_poisson: false,
            start_delay_ns: 0,
            direction_bs: None,
            trim_bytes: None,
            split: None,
            seq_add: 0,
            zones: None,
            flow: None,
            verify_backlog: None,
            write_modes: None,
            sequence: None,
            sequence_stride: false,
            nrfiles: 1,
            sprandom: Default::default(),
            key_lines: Vec::new(),
        };
        for entry in raw.entries {
            let line = entry.line;
            job.apply(entry)
                .map_err(|message| WorkloadError::parse(path, line, message))?;
        }
        job.resolve_direction_sizes()
            .map_err(|message| WorkloadError::parse(path, job.line_of("bs"), message))?;
        if job.sprandom.enabled {
            // fio: "sprandom requires norandommap=1", and sets it when not given
            if job.random_map && job.key_lines_has("norandommap") {
                let message = "sprandom requires norandommap=1 (it writes each block once)";
                return Err(WorkloadError::parse(
                    path,
                    job.line_of("norandommap"),
                    message,
                ));
            }
            job.random_map = false;
        }
        Ok(job)
    }

    fn apply(&mut self, entry: Entry) -> Result<(), String> {
        let key = entry.key;
        let flag = matches!(
            key,
            "norandommap" | "stonewall" | "time_based" | "fill_device" | "exitall" | "do_verify"
        );
        let value = match (&entry.value, flag) {
            (Some(v), _) => v.as_str(),
            (None, true) => "1",
            (None, false) => return Err(format!("{key} needs a value ({key}=...)")),
        };
        let sprandom = super::sprandom::KEYS.contains(&key);
        if sprandom || super::zoned::KEYS.contains(&key) || self.zoned.take_zone_units(key, value) {
            if sprandom {
                self.sprandom.apply(key, value)?;
            } else if super::zoned::KEYS.contains(&key) {
                self.zoned.apply(key, value)?;
            }
            self.key_lines.retain(|(k, _)| *k != key);
            self.key_lines.push((key, entry.line));
            return Ok(());
        }
        match key {
            "name" => self.name = value.to_owned(),
            "rw" => {
                let (pattern, modifier) = match value.split_once(':') {
                    Some((p, m)) => (p, Some(m)),
                    None => (value, None),
                };
                self.rw = FioRw::parse(pattern)?;
                self.seq_add = match modifier {
                    None => 0,
                    Some(m) => parse_rw_modifier(value, m, self.rw)?,
                };
            }
            "bssplit" => self.split = Some(BlockSplit::parse(value)?),
            "write_mode" => self.write_modes = Some(WriteModes::parse(value)?),
            "verify_backlog" => {
                let n = parse_fio_size(value)?;
                if n > MAX_VERIFY_BACKLOG {
                    return Err(format!(
                        "verify_backlog {n}: at most {MAX_VERIFY_BACKLOG} writes are held for verifying"
                    ));
                }
                self.verify_backlog = Some(n).filter(|n| *n > 0);
            }
            "flow" => {
                let weight = value
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("bad flow \"{value}\": expected an integer weight"))?;
                if weight < 0 {
                    return Err(format!(
                        "flow={weight}: negative flow weights are not supported (fio takes their magnitude in one flow)"
                    ));
                }
                self.flow = u32::try_from(weight).ok().filter(|w| *w > 0);
            }
            "bs" => {
                let sizes = parse_direction_sizes(value)?;
                self.block_size_bytes = sizes[0];
                self.direction_bs = sizes[1..].iter().any(|s| *s != sizes[0]).then_some(sizes);
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
            "random_distribution" => {
                self.zones = None;
                self.sequence = None;
                self.distribution = AddressDistribution::Uniform;
                if let Some(list) = value.strip_prefix("zoned:") {
                    self.zones = Some(Zones::parse(list)?);
                } else if let Some(list) = value.strip_prefix("sequence:") {
                    self.sequence = Some(parse_sequence(value, list)?);
                } else {
                    self.distribution = parse_distribution(value)?;
                }
            }
            "nrfiles" => self.nrfiles = parse_bounded(value, key, 1, MAX_NRFILES)?,
            "random_sequence_stride" => self.sequence_stride = parse_bool(Some(value), key)?,
            "norandommap" => self.random_map = !parse_bool(Some(value), key)?,
            "number_ios" => self.number_ios = Some(parse_bounded(value, key, 1, u64::MAX)?),
            "numjobs" => {
                self.numjobs = parse_bounded(value, key, 1, u64::from(MAX_NUMJOBS))? as u32
            }
            "randseed" => self.randseed = Some(parse_u64(value, key)?),
            "stonewall" => self.stonewall = parse_bool(Some(value), key)?,
            "fdp" => self.fdp = parse_bool(Some(value), key)?,
            "fdp_pli" => {
                let ids = value
                    .split(',')
                    .map(|v| parse_bounded(v.trim(), key, 0, u64::from(u16::MAX)).map(|v| v as u16))
                    .collect::<Result<Vec<u16>, String>>()?;
                self.fdp_pli = ids.first().copied();
                self.zoned.plis = if ids.len() > 1 { ids } else { Vec::new() };
            }
            "ioengine" => {
                if let Some(reason) = keys::engine_refusal(value) {
                    return Err(reason);
                }
                self.ioengine = Some(value.to_owned());
            }
            "filename" => self.filename = Some(parse_filename(value)?),
            "filesize" => {
                if value.contains('-') || value.contains(':') {
                    return Err(format!(
                        "bad filesize \"{value}\": one size per file (no ranges)"
                    ));
                }
                self.filesize = Some(parse_amount(value)?);
            }
            "time_based" => self.time_based = parse_bool(Some(value), key)?,
            "runtime" => self.runtime_ns = Some(parse_fio_time_ns(value, key)?),
            "ramp_time" => self.ramp_time_ns = Some(parse_fio_time_ns(value, key)?),
            "offset_increment" => self.offset_increment = Some(parse_amount(value)?),
            "bsrange" => {
                let (low, high) = value.split_once('-').unwrap_or((value, value));
                let (low, high) = (parse_fio_size(low)?, parse_fio_size(high)?);
                if low != high || value.contains(',') {
                    return Err(format!(
                        "bsrange \"{value}\": block sizes drawn from a range are not supported; only N-N (one size)"
                    ));
                }
                return self.apply(Entry {
                    key: "bs",
                    value: Some(low.to_string()),
                    line: entry.line,
                });
            }
            "verify" => self.verify = !matches!(value, "0" | "none"),
            "do_verify" => self.do_verify = parse_bool(Some(value), key)?,
            "fill_device" => self.fill_device = parse_bool(Some(value), key)?,
            "wait_for" => self.wait_for = Some(value.to_owned()),
            "exitall" => self.exitall = parse_bool(Some(value), key)?,
            "rate" | "rate_iops" => {
                if value.contains(',') {
                    return Err(format!(
                        "{key} \"{value}\": separate read/write/trim rates are not supported; one rate per job"
                    ));
                }
                let rate = Some(parse_fio_size(value)?).filter(|r| *r > 0);
                if key == "rate" {
                    self.rate_bytes_per_s = rate;
                } else {
                    self.rate_iops = rate;
                }
            }
            "startdelay" => self.start_delay_ns = parse_fio_time_ns(value, key)?,
            "rate_process" => {
                self.rate_poisson = match value {
                    "linear" => false,
                    "poisson" => true,
                    _ => {
                        return Err(format!(
                            "bad rate_process \"{value}\": expected linear or poisson"
                        ));
                    }
                }
            }
            _ => return Err(format!("internal: unhandled key {key}")),
        }
        self.key_lines.retain(|(k, _)| *k != key);
        self.key_lines.push((key, entry.line));
        Ok(())
    }

    /// With `bs=r,w,t` of differing sizes: the size of the job's one direction, a trim size
    /// of its own for `trimwrite`, or for mixed jobs one size per direction (as `bssplit`).
    fn resolve_direction_sizes(&mut self) -> Result<(), String> {
        let Some([read, write, trim]) = self.direction_bs else {
            return Ok(());
        };
        self.block_size_bytes = match self.rw {
            FioRw::Read | FioRw::RandRead => read,
            FioRw::Write | FioRw::RandWrite => write,
            FioRw::Trim | FioRw::RandTrim => trim,
            FioRw::TrimWrite if trim % write == 0 => {
                self.trim_bytes = (trim != write).then_some(trim);
                write
            }
            FioRw::TrimWrite | FioRw::RandTrimWrite => {
                return Err(format!(
                    "bs: a trim size ({trim}) other than the write size ({write}) is supported for rw=trimwrite when it is a multiple of it (fio trims when its trim and write positions meet), not here"
                ));
            }
            FioRw::ReadWrite | FioRw::RandReadWrite => {
                if self.split.is_some() {
                    return Err(
                        "bs with one size per direction and bssplit: give the sizes in bssplit"
                            .to_owned(),
                    );
                }
                self.split = Some(BlockSplit::parse(&format!(
                    "{read}/100,{write}/100,{trim}/100"
                ))?);
                read.min(write)
            }
        };
        Ok(())
    }

    /// `bs`, or with `bssplit` the smallest size of the split (fio's `min_bs`).
    pub(crate) fn min_block_bytes(&self) -> u64 {
        self.split
            .as_ref()
            .map_or(self.block_size_bytes, BlockSplit::min_bytes)
    }

    /// What the spec of a clone does not say about offsets and sizes; `spec` is that spec.
    pub(crate) fn shape(&self, spec: &SyntheticSpec) -> StreamShape {
        StreamShape {
            split: self.split.clone(),
            seq_add: self.seq_add,
            zones: self.zones.clone().filter(|_| self.rw.is_random()),
            random: self.rw.is_random(),
            io_bytes: self
                .io_size_bytes
                .unwrap_or(spec.span_bytes.saturating_mul(self.loops)),
            write_modes: self.write_modes.clone(),
            sequence: self
                .sequence
                .clone()
                .filter(|_| self.rw.is_random())
                .map(|s| (s, self.sequence_stride)),
            files: self.nrfiles,
            strided: self.zoned.strided_zones(),
            sprandom: self.sprandom.enabled.then(|| self.sprandom.clone()),
        }
    }

    /// Sets an amount given in zones (`size=8z`) once the zone size is known.
    pub(crate) fn set_bytes(&mut self, key: &str, bytes: u64) {
        match key {
            "size" => self.size = Some(FioAmount::Bytes(bytes)),
            "offset" => self.offset = FioAmount::Bytes(bytes),
            "io_size" => self.io_size_bytes = Some(bytes),
            "offset_increment" => self.offset_increment = Some(FioAmount::Bytes(bytes)),
            _ => unreachable!("not a zone-unit key: {key}"),
        }
    }

    /// The arrival rate of `rate_iops` or `rate`, if any.
    pub(crate) fn requests_per_s(&self) -> Option<f64> {
        match (self.rate_iops, self.rate_bytes_per_s) {
            (Some(iops), _) => Some(iops as f64),
            (None, Some(bytes)) => Some(bytes as f64 / self.block_size_bytes as f64),
            (None, None) => None,
        }
    }

    /// Whether `key` was set (in the job or inherited from `[global]`).
    pub(crate) fn key_lines_has(&self, key: &str) -> bool {
        self.key_lines.iter().any(|(k, _)| *k == key)
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
    /// `seed`, the job addressing the device itself. Errors name the line of the key that
    /// does not fit the device.
    pub fn to_spec(
        &self,
        path: &Path,
        device_size_bytes: u64,
        seed: u64,
    ) -> Result<SyntheticSpec, WorkloadError> {
        let device = FilePlace {
            start_bytes: 0,
            size_bytes: device_size_bytes,
        };
        self.to_spec_at(path, device_size_bytes, seed, device, 0)
    }

    /// What the spec does not express: time limits, verify, per-direction offsets.
    pub(crate) fn plan(&self) -> StreamPlan {
        StreamPlan {
            time_based: self.is_time_based(),
            runtime_ns: self.runtime_ns,
            ramp_time_ns: self.ramp_time_ns,
            number_ios: self.number_ios,
            verify: self.verify && self.do_verify && self.rw != FioRw::Read,
            per_direction: self.rw == FioRw::ReadWrite,
            exitall: self.exitall,
            verify_backlog: self
                .verify_backlog
                .filter(|_| self.verify && self.do_verify),
            trim_before_write: matches!(self.rw, FioRw::TrimWrite | FioRw::RandTrimWrite),
            start_delay_ns: self.start_delay_ns,
            trim_bytes: self.trim_bytes,
        }
    }

    /// `time_based` in force: fio ignores it without a `runtime` ("fio: time_based requires a
    /// runtime/timeout setting") and makes one pass of the region.
    pub(crate) fn is_time_based(&self) -> bool {
        self.time_based && self.runtime_ns.is_some()
    }

    /// Keys that only make sense together, checked once the job is complete.
    pub(crate) fn check_combinations(&self, path: &Path) -> Result<(), WorkloadError> {
        let error =
            |key: &str, message: &str| Err(WorkloadError::parse(path, self.line_of(key), message));
        if self.nrfiles > 1 && self.filename.is_some() {
            return error(
                "nrfiles",
                "nrfiles with filename is not supported: the job's files are named by filename_format (leave filename out)",
            );
        }
        // fio's zone append writes at a zone's write pointer: zonemode=zbd (seen in any order)
        if self.write_modes.as_ref().is_some_and(|m| m.zone_append) && !self.zoned.zbd {
            return error(
                "write_mode",
                "write_mode=zone_append needs zonemode=zbd (a Zone Append writes at a zone's write pointer)",
            );
        }
        // a closed-loop job's start cannot be delayed in the one merged stream; open-loop
        // arrivals can (fio's 1mbs_clients.fio)
        if self.start_delay_ns > 0 && self.requests_per_s().is_none() {
            return error(
                "startdelay",
                "startdelay is supported for rate-limited jobs (rate or rate_iops: their arrivals start later), not closed-loop ones: the merged stream has one start per stonewall group",
            );
        }
        if self.sprandom.enabled {
            let refusal = match () {
                _ if self.rw != FioRw::RandWrite => Some((
                    "rw",
                    "sprandom runs with rw=randwrite only (fio also allows random mixes; their reads are not modelled with it)",
                )),
                _ if self.numjobs > 1 => Some((
                    "numjobs",
                    "sprandom preconditions one file with one job (numjobs=1, as fio's example requires)",
                )),
                _ if self.nrfiles > 1 => {
                    Some(("nrfiles", "sprandom supports one file only, as in fio"))
                }
                _ => None,
            };
            if let Some((key, message)) = refusal {
                return error(key, message);
            }
        }
        let random = self.rw.is_random();
        if let Some((key, message)) = self.zoned.mode_error(random, self.nrfiles) {
            return error(key, &message);
        }
        // with verify_backlog, the writes themselves are read back, whatever their pattern
        if self.verify && self.do_verify && self.verify_backlog.is_none() {
            if self.is_time_based() {
                return error(
                    "verify",
                    "verify with time_based is not supported (fio verifies after each pass of the region)",
                );
            }
            if self.loops > 1 {
                return error(
                    "verify",
                    "verify with loops > 1 is not supported (fio verifies after each loop)",
                );
            }
            if self.rw.is_random()
                && (!self.random_map
                    || self.distribution_is_skewed()
                    || self.zones.is_some()
                    || self.sequence.is_some())
            {
                return error(
                    "verify",
                    "verify of random writes that may overlap (norandommap or zipf) is not supported: fio then reads back each block once, sorted",
                );
            }
        }
        Ok(())
    }

    fn distribution_is_skewed(&self) -> bool {
        !matches!(self.distribution, AddressDistribution::Uniform)
    }

    /// The spec of clone `clone_index` of this job whose file lies at `file`. The region may
    /// extend past the device (the merged stream folds it).
    pub(crate) fn to_spec_at(
        &self,
        path: &Path,
        device_size_bytes: u64,
        seed: u64,
        file: FilePlace,
        clone_index: u32,
    ) -> Result<SyntheticSpec, WorkloadError> {
        let error =
            |key: &str, message: String| WorkloadError::parse(path, self.line_of(key), message);
        let base = file.size_bytes;
        // fio's min_bs: the smallest size of a bssplit
        let block_size_bytes = self.min_block_bytes();
        let align = |amount: FioAmount, bytes: u64| match amount {
            // fio aligns percentage offsets to the block size
            FioAmount::Percent(_) => bytes / block_size_bytes * block_size_bytes,
            FioAmount::Bytes(_) => bytes,
        };
        let increment = self
            .offset_increment
            .map_or(0, |i| align(i, i.resolve(base)));
        let offset_bytes = align(self.offset, self.offset.resolve(base))
            .saturating_add(increment.saturating_mul(u64::from(clone_index)));
        let what = if file.start_bytes == 0 && base == device_size_bytes {
            "the device"
        } else {
            "its file"
        };
        let span_bytes = if self.fill_device {
            device_size_bytes.saturating_sub(file.start_bytes.saturating_add(offset_bytes))
        } else {
            match self.size {
                Some(size) => size.resolve(base),
                None if offset_bytes >= base => {
                    return Err(error(
                        "offset",
                        format!(
                            "offset {offset_bytes} is at or past the end of {what} ({base} bytes)"
                        ),
                    ));
                }
                None => base - offset_bytes,
            }
        };
        if span_bytes == 0 {
            let key = if self.fill_device {
                "fill_device"
            } else {
                "size"
            };
            return Err(error(
                key,
                format!("the region of job \"{}\" is empty", self.name),
            ));
        }
        if block_size_bytes > span_bytes {
            return Err(error(
                "bs",
                format!(
                    "bs {} is larger than the region ({span_bytes} bytes)",
                    block_size_bytes
                ),
            ));
        }
        let largest_block = self
            .split
            .as_ref()
            .map_or(block_size_bytes, BlockSplit::max_bytes);
        let file_floor = largest_block.max(self.block_align_bytes.unwrap_or(1));
        if self.nrfiles > 1 && span_bytes / self.nrfiles < file_floor {
            return Err(error(
                "nrfiles",
                format!(
                    "{} files of {} bytes each (the region of {span_bytes} bytes split) are smaller than a block",
                    self.nrfiles,
                    span_bytes / self.nrfiles
                ),
            ));
        }
        if block_size_bytes > device_size_bytes {
            return Err(error(
                "bs",
                format!(
                    "bs {} is larger than the device ({device_size_bytes} bytes)",
                    block_size_bytes
                ),
            ));
        }
        let offset_bytes = file.start_bytes.saturating_add(offset_bytes);
        if offset_bytes.checked_add(span_bytes).is_none() {
            return Err(error(
                "offset",
                "offset + size overflows 64 bits".to_owned(),
            ));
        }
        let io_bytes = match self.sprandom.enabled {
            // fio sets io_size to the physical size: the logical size plus spr_op
            true => {
                let bytes = self.sprandom.physical_bytes(span_bytes, block_size_bytes);
                self.sprandom
                    .check(span_bytes, block_size_bytes)
                    .map_err(|(key, message)| error(key, message))?;
                bytes
            }
            false => self
                .io_size_bytes
                .unwrap_or(span_bytes.saturating_mul(self.loops)),
        };
        let mut request_count = io_bytes / block_size_bytes;
        if let Some(limit) = self.number_ios {
            request_count = request_count.min(limit);
        }
        if request_count == 0 {
            return Err(error(
                "io_size",
                format!("io_size {io_bytes} is smaller than bs {}", block_size_bytes),
            ));
        }
        let (read_fraction, trim_fraction) = self.rw.mix(self.rwmixread_percent);
        let uniform = matches!(self.distribution, AddressDistribution::Uniform);
        let (pattern, distribution) = match (self.rw.is_random(), uniform && self.random_map) {
            (false, _) => (Pattern::Sequential, AddressDistribution::Uniform),
            (true, true) => (Pattern::Shuffled, AddressDistribution::Uniform),
            (true, false) => (Pattern::Random, self.distribution),
        };
        // zoned draws replace the offsets of a uniform draw with replacement
        let (pattern, distribution) = match self.zones {
            Some(_) if self.rw.is_random() => (Pattern::Random, AddressDistribution::Uniform),
            _ => (pattern, distribution),
        };
        let spec = SyntheticSpec {
            pattern,
            read_fraction,
            trim_fraction,
            request_size_bytes: block_size_bytes,
            alignment_bytes: self.block_align_bytes,
            offset_bytes,
            span_bytes,
            distribution,
            scatter_hot_addresses: true,
            request_count: Some(request_count),
            duration_ns: None,
            arrival: match (self.requests_per_s(), self.rate_poisson) {
                (None, _) => ArrivalProcess::ClosedLoop,
                (Some(rate_iops), true) => ArrivalProcess::Poisson { rate_iops },
                (Some(rate_iops), false) => ArrivalProcess::Fixed {
                    interarrival_ns: ((1e9 / rate_iops).round() as u64).max(1),
                },
            },
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
