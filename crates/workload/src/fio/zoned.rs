//! fio's zoned block device mode (`zonemode=zbd`, fio's `zbd.c`) and FDP placement-id lists
//! (`fdp_pli=0,1,2`), applied to each stream's requests as fio applies them to each I/O unit.
//!
//! # Keys
//! `zonemode` (`none`, `zbd` or `strided`: see [`Strided`]), `zonerange` and `zoneskip`
//! (strided only), `zonesize` (strided: bytes per zone; zbd: fio refuses a size other
//! than the device's; the simulated device's zones are scaled down, so the device's size is
//! used with a note), `zonecapacity` (ignored: the device's), `max_open_zones`,
//! `job_max_open_zones`, `zone_reset_threshold`, `zone_reset_frequency`, `read_beyond_wp`,
//! `ignore_zone_limits`, `fdp_pli_select` (`roundrobin` or `random`), and zone units
//! (`size=8z`, `offset=524z`, `io_size`, `offset_increment`: multiples of the device's zone).
//!
//! # Semantics (fio's `zbd_adjust_block`, one device shared by every job)
//! - A job's region is aligned to whole zones (start rounded up, end down).
//! - A write goes to the write pointer of the zone its offset falls in. With a limit on
//!   write zones (`max_open_zones`, the device's, `job_max_open_zones`) a zone outside the
//!   open set is replaced by one of the open zones (chosen by the offset), or by the next
//!   zone that can be opened. A write to a full zone resets it first; so does one chosen when
//!   the valid data in the job's region reaches `zone_reset_threshold` of it, every
//!   `1/zone_reset_frequency`-th write. The length is cut to the zone's capacity.
//! - A read of a zone with too little written data moves to a zone that has it (fio's
//!   `zbd_find_zone`) and stays below the write pointer; with no written data the job ends.
//! - A trim is a zone reset of the zone at its offset (a random trim picks a non-empty zone).
//! - Outside the zoned namespace (conventional zones) requests pass unchanged.
//!
//! The NVMe driver turns the result into commands: a write back at a zone's start resets the
//! zone first, and a zone-sized trim at a zone's start is a Zone Reset.

use super::FioJobFile;
use crate::WorkloadError;

pub(crate) use super::zbd::ZoneHost;

/// The keys this module types (canonical names).
pub(crate) const KEYS: &[&str] = &[
    "zonemode",
    "zonesize",
    "zonecapacity",
    "max_open_zones",
    "job_max_open_zones",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "read_beyond_wp",
    "ignore_zone_limits",
    "fdp_pli_select",
    "zonerange",
    "zoneskip",
];

/// Keys whose value may be in zones (`8z`).
const ZONE_UNIT_KEYS: &[&str] = &["size", "offset", "io_size", "offset_increment"];

impl FioJobFile {
    /// An error naming the first amount in zones (`size=8z`) not resolved by
    /// [`FioJobFile::with_device_zones`].
    pub(crate) fn check_zone_units(&self) -> Result<(), WorkloadError> {
        match self.jobs.iter().find(|j| !j.zoned.zone_units.is_empty()) {
            Some(job) => {
                let (key, n) = job.zoned.zone_units[0];
                Err(WorkloadError::parse(
                    &self.path,
                    job.line_of(key),
                    format!("{key}={n}z: zone units need zonemode=zbd on a zoned namespace"),
                ))
            }
            None => Ok(()),
        }
    }
}

/// A job's zoned and placement options.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZonedOptions {
    /// `zonemode=zbd`.
    pub zbd: bool,
    /// `zonesize` in bytes.
    pub zone_size_bytes: Option<u64>,
    /// `max_open_zones` (0: the device's limit).
    pub max_open_zones: u32,
    /// `job_max_open_zones` (0: none).
    pub job_max_open_zones: u32,
    /// `zone_reset_threshold` (0 to 1).
    pub reset_threshold: f64,
    /// `zone_reset_frequency` (0 to 1; 0: never).
    pub reset_frequency: f64,
    /// `read_beyond_wp`: reads are not redirected to written data.
    pub read_beyond_wp: bool,
    /// `ignore_zone_limits`: the device's open limit is not applied.
    pub ignore_zone_limits: bool,
    /// `fdp_pli` when it lists several placement ids: writes take them in turn.
    pub plis: Vec<u16>,
    /// `fdp_pli_select=random`.
    pub pli_random: bool,
    /// Amounts given in zones (`size=8z`), resolved with the device's zone size.
    pub zone_units: Vec<(&'static str, u64)>,
    /// `zonemode=strided`.
    pub strided: bool,
    /// `zonerange` in bytes (strided: a zone's size; default `zonesize`).
    pub zone_range_bytes: Option<u64>,
    /// `zoneskip` in bytes (strided: skipped after each zone).
    pub zone_skip_bytes: Option<u64>,
}

/// fio's `zonemode=strided` (`io_u.c` `setup_strided_zone_mode`) on a sequential job: its
/// offsets stay in a zone of `range` bytes from the zone's start until `size` bytes have been
/// moved there (from the zone's start again when `size` is larger), then move on to the next
/// zone, `range + skip` bytes further, from the start of the job's region again past its end.
/// The job moves as many bytes as without zones (`io_size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    /// `zonesize`: bytes moved in a zone before the next.
    pub size: u64,
    /// `zonerange`: bytes of a zone.
    pub range: u64,
    /// `zoneskip`: bytes between a zone's end and the next zone.
    pub skip: u64,
}

fn bad_fraction(key: &str, value: &str) -> String {
    format!("bad {key} \"{value}\": expected a fraction from 0 to 1")
}

impl ZonedOptions {
    /// Whether `key=value` is a zone-unit amount (`size=8z`); records it if so.
    pub(crate) fn take_zone_units(&mut self, key: &'static str, value: &str) -> bool {
        if !ZONE_UNIT_KEYS.contains(&key) {
            return false;
        }
        let Some(n) = value.trim().strip_suffix('z') else {
            return false;
        };
        match n.parse::<u64>() {
            Ok(n) => {
                self.zone_units.retain(|(k, _)| *k != key);
                self.zone_units.push((key, n));
                true
            }
            Err(_) => false,
        }
    }

    /// Types one of [`KEYS`].
    pub(crate) fn apply(&mut self, key: &str, value: &str) -> Result<(), String> {
        let fraction = |value: &str| match value.trim().parse::<f64>() {
            Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
            _ => Err(bad_fraction(key, value)),
        };
        let count = |value: &str| {
            value
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("bad {key} \"{value}\": expected a count of zones"))
        };
        let flag = |value: &str| match value.trim() {
            "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            _ => Err(format!("bad {key} \"{value}\": expected 0 or 1")),
        };
        match key {
            "zonemode" => match value.trim() {
                "none" => (self.zbd, self.strided) = (false, false),
                "zbd" => (self.zbd, self.strided) = (true, false),
                "strided" => (self.zbd, self.strided) = (false, true),
                other => {
                    return Err(format!(
                        "bad zonemode \"{other}\": expected none, zbd or strided"
                    ));
                }
            },
            "zonerange" => self.zone_range_bytes = Some(super::parse_fio_size(value)?),
            "zoneskip" => self.zone_skip_bytes = Some(super::parse_fio_size(value)?),
            "zonesize" => self.zone_size_bytes = Some(super::parse_fio_size(value)?),
            "zonecapacity" => {
                super::parse_fio_size(value)?;
            }
            "max_open_zones" => self.max_open_zones = count(value)?,
            "job_max_open_zones" => self.job_max_open_zones = count(value)?,
            "zone_reset_threshold" => self.reset_threshold = fraction(value)?,
            "zone_reset_frequency" => self.reset_frequency = fraction(value)?,
            "read_beyond_wp" => self.read_beyond_wp = flag(value)?,
            "ignore_zone_limits" => self.ignore_zone_limits = flag(value)?,
            "fdp_pli_select" => {
                self.pli_random = match value.trim() {
                    "roundrobin" => false,
                    "random" => true,
                    other => {
                        return Err(format!(
                            "bad fdp_pli_select \"{other}\": expected roundrobin or random"
                        ));
                    }
                }
            }
            _ => unreachable!("not a zoned key: {key}"),
        }
        Ok(())
    }
}

impl ZonedOptions {
    /// The strided zones of a job (`zonemode=strided`).
    pub fn strided_zones(&self) -> Option<Strided> {
        let size = self.zone_size_bytes.filter(|_| self.strided)?;
        Some(Strided {
            size,
            range: self.zone_range_bytes.filter(|r| *r > 0).unwrap_or(size),
            skip: self.zone_skip_bytes.unwrap_or(0),
        })
    }

    /// Why the job's zone keys do not go together (the key at fault and the message), for a
    /// job random or not, of `files` files.
    pub(crate) fn mode_error(&self, random: bool, files: u64) -> Option<(&'static str, String)> {
        let size = self.zone_size_bytes.unwrap_or(0);
        if !self.strided {
            if !self.zbd && size > 0 {
                return Some((
                    "zonesize",
                    "zonesize needs zonemode=strided or zonemode=zbd (fio: --zonemode=none and --zonesize are not compatible)".into(),
                ));
            }
            let key = if self.zone_skip_bytes.is_some() {
                "zoneskip"
            } else {
                "zonerange"
            };
            return (self.zone_skip_bytes.is_some() || self.zone_range_bytes.is_some()).then(
                || {
                    (
                        key,
                        format!("{key} is supported with zonemode=strided only"),
                    )
                },
            );
        }
        if size == 0 {
            return Some((
                "zonemode",
                "zonemode=strided needs zonesize (fio: --zonesize must be specified when using --zonemode=strided)".into(),
            ));
        }
        if random || files > 1 {
            return Some((
                "zonemode",
                "zonemode=strided is supported for sequential jobs of one file (rw=read, write, trim or rw)".into(),
            ));
        }
        None
    }
}

/// The zoned namespace fio's `zonemode=zbd` finds on the device (byte offsets are the
/// device's, as fio's requests are).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZbdDevice {
    /// First byte of the zoned namespace.
    pub start_bytes: u64,
    /// Zone size in bytes.
    pub zone_size_bytes: u64,
    /// Writable bytes of a zone.
    pub zone_capacity_bytes: u64,
    /// Zones of the namespace.
    pub zone_count: u64,
    /// The namespace's maximum open zones (0: none).
    pub max_open_zones: u32,
}

impl FioJobFile {
    /// Whether any job uses `zonemode=zbd`.
    pub fn zoned(&self) -> bool {
        self.jobs.iter().any(|j| j.zoned.zbd)
    }

    /// Resolves zone units (`size=8z`) with the device's zones and checks the zoned keys
    /// against it (`None`: no zoned namespace). Errors name the key and its line.
    pub fn with_device_zones(mut self, device: Option<&ZbdDevice>) -> Result<Self, WorkloadError> {
        for job in &mut self.jobs {
            let error = |job: &super::FioJob, key: &str, message: String| {
                WorkloadError::parse(&self.path, job.line_of(key), message)
            };
            if !job.zoned.zbd {
                if let Some((key, n)) = job.zoned.zone_units.first() {
                    return Err(error(
                        job,
                        key,
                        format!("{key}={n}z: zone units need zonemode=zbd"),
                    ));
                }
                continue;
            }
            let Some(device) = device else {
                return Err(error(
                    job,
                    "zonemode",
                    "zonemode=zbd needs a zoned namespace: run on a device with [ssd.nvme] and a namespace of kind = \"zoned\"".into(),
                ));
            };
            for (key, n) in std::mem::take(&mut job.zoned.zone_units) {
                let bytes = n.saturating_mul(device.zone_size_bytes);
                job.set_bytes(key, bytes);
            }
            if device.max_open_zones > 0
                && !job.zoned.ignore_zone_limits
                && job.zoned.max_open_zones > device.max_open_zones
            {
                return Err(error(
                    job,
                    "max_open_zones",
                    format!(
                        "max_open_zones={} is larger than the namespace's maximum of {} open zones",
                        job.zoned.max_open_zones, device.max_open_zones
                    ),
                ));
            }
            if job.block_size_bytes > device.zone_size_bytes {
                return Err(error(
                    job,
                    "bs",
                    format!(
                        "bs {} exceeds the zone size of {} bytes (fio: I/O buflen exceeds zone size)",
                        job.block_size_bytes, device.zone_size_bytes
                    ),
                ));
            }
        }
        Ok(self)
    }

    /// What `zonemode=zbd` does differently here, for the user's terminal.
    pub fn zoned_notes(&self, device: Option<&ZbdDevice>) -> Vec<String> {
        let mut notes = Vec::new();
        let Some(device) = device else {
            return notes;
        };
        if let Some(job) = self.jobs.iter().find(|j| {
            j.zoned.zbd
                && j.zoned
                    .zone_size_bytes
                    .is_some_and(|z| z != device.zone_size_bytes)
        }) {
            notes.push(format!(
                "zonesize={}: the simulated namespace's zones are {} bytes; fio refuses a mismatch, the simulation uses the device's zones (and zone units)",
                job.zoned.zone_size_bytes.unwrap_or(0),
                device.zone_size_bytes
            ));
        }
        notes
    }
}
