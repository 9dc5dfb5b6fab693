//! Power-loss testing (SPEC B2, issues 14 and 28): run a seeded workload of self-identifying
//! writes, trims, reads and flushes on a small device, cut the power at a chosen instant,
//! mount the device from its pages' OOB, and check every LPA with the crash [`oracle`].
//! [`sweep`] cuts at every event (or every completed chip op) in turn, [`cycles`] runs
//! cut–recover–continue cycles, [`crash`] draws random devices, workloads and cuts.
//! [`ArmedCut`] cuts the power inside a request of a driver above the SSD (installed as the
//! driver's `RequestHook`); [`sql`] crash-tests real SQLite that way.
//!
//! The crate sits above the controller (`nandlab-ftl`, which keeps what it needs to survive
//! a cut: the power trace, the cut itself, the mount, checkpoints and the trim log) and below
//! the runner (`nandlab-lab`): a crash device is a stack config's `[nand]` and `[ssd]`
//! tables, which the stack builder resolves, so every entry point takes that builder as a
//! [`BuildSsd`] (lab hands in its own, `nandlab_lab::power` wraps the entry points).
//!
//! The run is closed-loop at the device's queue depth (`CrashDevice::queue_depth`: a new
//! request is admitted whenever one completed; at depth 1 the next request waits for the
//! previous one, above it several writes, trims and flushes are outstanding when the cut
//! lands); GC, evictions and the chip's own queues run concurrently with the host.

mod armed_cut;
pub mod crash;
#[cfg(test)]
mod crash_tests;
pub mod cycles;
pub mod oracle;
pub mod payload;
pub mod sql;
pub mod sweep;
pub mod zoned;

pub use armed_cut::ArmedCut;
/// The controller choices a crash case names.
pub use nandlab_ftl::power::RecoveryVariant;
pub use nandlab_ftl::{GcPolicy, GcScheduling, MappingKind};

/// The stack builder's resolution of a device's `[nand]` and `[ssd]` tables into an SSD
/// config, checked (`nandlab_lab::stack::DeviceFile::from_table`); `origin` names the device
/// in errors, which name the stack-config key.
pub type BuildSsd = fn(origin: &str, table: toml::Table) -> Result<SsdConfig, String>;

/// The tests' builder: the stack builder itself (a dev-dependency on the runner).
#[cfg(test)]
pub(crate) const TEST_BUILD: BuildSsd = |origin, table| {
    nandlab_lab::stack::DeviceFile::from_table(origin, table).map_err(|e| e.to_string())
};

use nandlab_core::{Lpa, SimRng, SimTime};
use nandlab_ftl::config::set_key;
use nandlab_ftl::power::checkpoint::CheckpointOrder;
use nandlab_ftl::power::trim_log::TrimLogMode;
use nandlab_ftl::power::{CutConfig, CutReport, PowerCut, Recovered, RecoveryReport};
use nandlab_ftl::{HostRequest, PayloadMode, Ssd, SsdConfig};
use oracle::{FlushCover, Oracle, Violations};
use serde::Serialize;

/// The device of a crash run when nothing else is said: a stack config's `[nand]` and
/// `[ssd]` (docs/stack.md): 2 SLC dies × 1 plane × 12 blocks × 8 pages of 512 B, 50 %
/// over-provisioning, page mapping with greedy GC and paired-page padding, full payloads
/// (the oracle reads bytes), queue depth 1. `nand.geometry.spare_bytes_per_page`, when not
/// given, is an eighth of the page (at least the OOB record).
pub const CRASH_DEVICE: &str = r#"
[nand]
preset = "slc"

[nand.geometry]
channels = 1
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 1
blocks_per_plane = 12
pages_per_block = 8
page_size_bytes = 512

[ssd]
op_fraction = 0.5
payload = "full"

[ssd.host]
queue_depth = 1

[ssd.mapping]
kind = "page"
paired_page_padding = true

[ssd.gc]
policy = "greedy"
threshold_blocks = 2
copyback = false
"#;

/// A small device for crash runs: a stack config's `[nand]` and `[ssd]` (resolved by the
/// stack builder, [`BuildSsd`]), and the firmware mutations the harness can
/// turn on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrashDevice {
    /// `[nand]` and `[ssd]` of a stack config.
    #[serde(flatten)]
    pub stack: toml::Table,
    /// The `checkpoint-before-data` mutation: a checkpoint counts as committed once written,
    /// before the data it maps is on flash.
    pub checkpoint_before_data: bool,
    /// The `trim-log-skipped` mutation: a Flush does not log the trims before it.
    pub trim_log_skipped: bool,
}

impl Default for CrashDevice {
    fn default() -> Self {
        CrashDevice {
            stack: toml::from_str(CRASH_DEVICE).expect("the crash device parses"),
            checkpoint_before_data: false,
            trim_log_skipped: false,
        }
    }
}

impl CrashDevice {
    /// Sets stack-config key `key` (a dot path such as `ssd.gc.policy`) to `value`; names are
    /// checked when the device is resolved ([`CrashDevice::config`]).
    pub fn set(&mut self, key: &str, value: impl Serialize) {
        let value = toml::Value::try_from(value).expect("a TOML value");
        set_key(&mut self.stack, key, value);
    }

    /// Sets `ssd.mapping.kind`; away from the page mapping, the page mapping's keys of the
    /// default device (GC victim policy, paired-page padding) are dropped.
    pub fn set_mapping(&mut self, kind: MappingKind) {
        self.set("ssd.mapping.kind", kind);
        if kind != MappingKind::Page {
            for (table, key) in [("gc", "policy"), ("mapping", "paired_page_padding")] {
                if let Some(t) = self
                    .stack
                    .get_mut("ssd")
                    .and_then(|ssd| ssd.get_mut(table))
                    .and_then(toml::Value::as_table_mut)
                {
                    t.remove(key);
                }
            }
        }
    }

    /// The value of stack-config key `key` as written (not a default).
    pub fn get(&self, key: &str) -> Option<&toml::Value> {
        let mut parts = key.split('.').peekable();
        let mut table = &self.stack;
        while let Some(part) = parts.next() {
            let value = table.get(part)?;
            if parts.peek().is_none() {
                return Some(value);
            }
            table = value.as_table()?;
        }
        None
    }

    /// When this device's map checkpoints commit.
    pub fn checkpoint_order(&self) -> CheckpointOrder {
        if self.checkpoint_before_data {
            CheckpointOrder::BeforeData
        } else {
            CheckpointOrder::AfterData
        }
    }

    /// Whether a Flush of this device logs its trims.
    pub fn trim_log_mode(&self) -> TrimLogMode {
        if self.trim_log_skipped {
            TrimLogMode::Skipped
        } else {
            TrimLogMode::OnFlush
        }
    }

    /// The SSD config, resolved and checked by the stack builder `build` (full payload mode:
    /// the oracle reads bytes); an error names the stack-config key.
    pub fn config(&self, build: BuildSsd) -> Result<SsdConfig, String> {
        let mut stack = self.stack.clone();
        if self.get("nand.geometry.spare_bytes_per_page").is_none() {
            let page = self
                .get("nand.geometry.page_size_bytes")
                .and_then(toml::Value::as_integer)
                .unwrap_or(0);
            let spare = (page / 8).max(nandlab_ftl::OOB_BYTES as i64);
            set_key(
                &mut stack,
                "nand.geometry.spare_bytes_per_page",
                spare.into(),
            );
        }
        let mut config = build("crash device", stack)?;
        config.ftl.payload = PayloadMode::Full;
        Ok(config)
    }
}

/// The host workload of a crash run (drawn from the run's seed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrashWorkload {
    /// Requests issued.
    pub requests: u32,
    /// LPAs written: the first `lpa_span` (0: all), to force overwrites and GC.
    pub lpa_span: u32,
    /// Probabilities per request (the rest are writes).
    pub flush_probability: f64,
    pub trim_probability: f64,
    pub read_probability: f64,
    /// Pages per write, 1 to this.
    pub write_pages_max: u32,
    /// Probability that a write carries FUA (durable once it completes).
    pub fua_probability: f64,
}

impl Default for CrashWorkload {
    fn default() -> Self {
        CrashWorkload {
            requests: 200,
            lpa_span: 0,
            flush_probability: 0.1,
            trim_probability: 0.03,
            read_probability: 0.1,
            write_pages_max: 2,
            fua_probability: 0.0,
        }
    }
}

/// Where the power is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutPoint {
    /// After this many world events (a chip event, a host arrival, ...): between any two
    /// stages of any op.
    AfterEvents(u64),
    /// Once this many chip ops have completed.
    AfterChipOps(u64),
    /// At this simulated time (ps).
    AtTimePs(u64),
    /// After the workload (and everything it caused) has finished.
    End,
}

/// One crash run: device, workload, cut, recovery.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrashCase {
    pub device: CrashDevice,
    pub workload: CrashWorkload,
    pub seed: u64,
    pub cut_point: CutPoint,
    /// Probability that a torn program damages each lower page of its word line.
    pub paired_damage_probability: f64,
    /// Power-loss protection: hold-up energy (µJ); `None`: none.
    pub hold_up_energy_uj: Option<f64>,
    pub recovery: RecoveryVariant,
}

impl Default for CrashCase {
    fn default() -> Self {
        CrashCase {
            device: CrashDevice::default(),
            workload: CrashWorkload::default(),
            seed: 1,
            cut_point: CutPoint::End,
            paired_damage_probability: 0.5,
            hold_up_energy_uj: None,
            recovery: RecoveryVariant::Correct,
        }
    }
}

/// What one crash run found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrashOutcome {
    /// World events processed before the cut.
    pub events: u64,
    /// Requests completed before the cut.
    pub requests_completed: u64,
    /// LPAs with a durable write at the cut.
    pub durable_lpas: u64,
    pub cut: CutReport,
    pub recovery: RecoveryReport,
    pub violations: Violations,
    /// GC ops that passed a waiting host op because GC was urgent, before the cut.
    pub urgent_gc_passes: u64,
    /// Multiplane ops the scheduler formed before the cut.
    pub multiplane_ops: u64,
}

pub(crate) enum Issued {
    Write {
        lpa: Lpa,
        pages: u32,
        first: u64,
        fua: bool,
    },
    Flush(FlushCover),
    /// A trim and its oracle mark.
    Trim(Lpa, u64),
    /// A zone reset (a trim of the zone's written LBAs) and its oracle marks.
    Reset(Vec<(Lpa, u64)>),
    Read,
}

/// Checks a case's probabilities and sizes; the error names the parameter.
fn validate(case: &CrashCase) -> Result<(), String> {
    let w = &case.workload;
    for (name, p) in [
        ("flush_probability", w.flush_probability),
        ("trim_probability", w.trim_probability),
        ("read_probability", w.read_probability),
        ("fua_probability", w.fua_probability),
        ("paired_damage_probability", case.paired_damage_probability),
    ] {
        if !(0.0..=1.0).contains(&p) {
            return Err(format!("{name} = {p}: must be between 0 and 1"));
        }
    }
    if w.write_pages_max == 0 {
        return Err("write_pages_max = 0: must be at least 1".into());
    }
    let others = w.flush_probability + w.trim_probability + w.read_probability;
    if others >= 1.0 {
        return Err(format!(
            "read_probability = {}: with flush_probability {} and trim_probability {} it \
             leaves no writes (the three must sum below 1), so the cut would test nothing",
            w.read_probability, w.flush_probability, w.trim_probability
        ));
    }
    if w.requests == 0 {
        return Err("requests = 0: must be at least 1 (no request, nothing to cut)".into());
    }
    Ok(())
}

/// A device under a crash workload: the SSD, the oracle, the workload's random stream and
/// the last version number issued (versions are unique over every cycle of a run).
pub(crate) struct Run {
    pub ssd: Ssd,
    pub oracle: Oracle,
    pub rng: SimRng,
    pub version: u64,
    /// When the device's map checkpoints commit (a mutation breaks it).
    pub checkpoint_order: CheckpointOrder,
    /// Whether a Flush logs the trims before it (a mutation breaks it).
    pub trim_log_mode: TrimLogMode,
    /// On a zoned device, the host's write pointers (the workload writes zones sequentially).
    pub zoned: Option<zoned::ZonedHost>,
}

/// What one segment of a run did before its cut.
pub(crate) struct Segment {
    pub events: u64,
    pub completed: u64,
}

impl Run {
    /// Issues `w.requests` requests, keeping the device's queue depth outstanding, and
    /// processes events until `cut_point`.
    pub(crate) fn drive(
        &mut self,
        w: &CrashWorkload,
        cut_point: CutPoint,
    ) -> Result<Segment, String> {
        let Run {
            ssd,
            oracle,
            rng,
            version,
            checkpoint_order,
            trim_log_mode,
            zoned,
        } = self;
        ssd.start_power_trace().map_err(|e| e.to_string())?;
        ssd.set_checkpoint_order(*checkpoint_order);
        ssd.set_trim_log_mode(*trim_log_mode);
        let logical = ssd.logical_pages() as u32;
        let page = ssd.page_size_bytes();
        let depth = ssd.queue_depth().max(1) as usize;
        let span = if w.lpa_span == 0 {
            logical
        } else {
            w.lpa_span.min(logical)
        };
        let (mut events, mut issued_count, mut completed) = (0u64, 0u32, 0u64);
        // requests outstanding: (request slot, what it is), in admission order
        let mut in_flight: Vec<(u32, Issued)> = Vec::with_capacity(depth);
        let err = |e: nandlab_ftl::FtlError| e.to_string();
        loop {
            // completed requests (a slot is reused only by a later admission)
            let mut i = 0;
            while i < in_flight.len() {
                if ssd.request_in_flight(in_flight[i].0) {
                    i += 1;
                    continue;
                }
                let (_, done) = in_flight.remove(i);
                completed += 1;
                match done {
                    Issued::Write {
                        lpa,
                        pages,
                        first,
                        fua,
                    } => {
                        for i in 0..pages {
                            oracle.write_completed(Lpa(lpa.0 + i), first + u64::from(i), fua);
                        }
                    }
                    Issued::Flush(cover) => oracle.flush_completed(cover),
                    Issued::Trim(lpa, mark) => oracle.trim_completed(lpa, mark, ssd.now().as_ps()),
                    Issued::Reset(marks) => {
                        for (lpa, mark) in marks {
                            oracle.trim_completed(lpa, mark, ssd.now().as_ps());
                        }
                    }
                    Issued::Read => {}
                }
            }
            let reached = match cut_point {
                CutPoint::AfterEvents(n) => events >= n,
                CutPoint::AfterChipOps(n) => ssd.chip_ops_completed() >= n,
                // (nothing pending: the next request is admitted now, unless none is left)
                CutPoint::AtTimePs(t) => match ssd.next_event_time() {
                    Some(next) => next.as_ps() > t,
                    None => in_flight.is_empty() && issued_count >= w.requests,
                },
                CutPoint::End => false,
            };
            if reached {
                break;
            }
            if in_flight.len() < depth && issued_count < w.requests {
                issued_count += 1;
                let roll = rng.unit_f64();
                let lpa = Lpa(rng.below(u64::from(span)) as u32);
                let (request, issued, data) = if let Some(host) = zoned.as_mut() {
                    host.request(roll, lpa, w, rng, oracle, version)
                } else if roll < w.flush_probability {
                    let cover = oracle.flush_issued();
                    (HostRequest::flush(), Issued::Flush(cover), None)
                } else if roll < w.flush_probability + w.trim_probability {
                    let mark = oracle.trim_issued(lpa);
                    let r = HostRequest::trim(lpa.offset_bytes(u64::from(page)), u64::from(page));
                    (r, Issued::Trim(lpa, mark), None)
                } else if roll < w.flush_probability + w.trim_probability + w.read_probability {
                    let r = HostRequest::read(lpa.offset_bytes(u64::from(page)), u64::from(page));
                    (r, Issued::Read, None)
                } else {
                    let pages =
                        (1 + rng.below(u64::from(w.write_pages_max)) as u32).min(logical - lpa.0);
                    let first = *version + 1;
                    let mut bytes = Vec::with_capacity((pages * page) as usize);
                    for i in 0..pages {
                        *version += 1;
                        oracle.write_issued(Lpa(lpa.0 + i), *version);
                        bytes.extend(payload::encode(Lpa(lpa.0 + i), *version, page as usize));
                    }
                    let mut r = HostRequest::write(
                        lpa.offset_bytes(u64::from(page)),
                        u64::from(pages * page),
                    );
                    // (drawn only when asked for: the other workloads keep their streams)
                    let fua = w.fua_probability > 0.0 && rng.chance(w.fua_probability);
                    if fua {
                        r = r.with_fua();
                    }
                    let issued = Issued::Write {
                        lpa,
                        pages,
                        first,
                        fua,
                    };
                    (r, issued, Some(bytes))
                };
                let slot = ssd
                    .power_admit_slot(&request, data.as_deref())
                    .map_err(err)?
                    .ok_or_else(|| format!("crash run: the queue of depth {depth} is full"))?;
                in_flight.push((slot, issued));
                continue;
            }
            match ssd.power_step().map_err(err)? {
                Some(_) => events += 1,
                None if in_flight.is_empty() && issued_count >= w.requests => break,
                None => return Err(format!("crash run stalled after {events} events")),
            }
        }
        Ok(Segment { events, completed })
    }

    /// Cuts the power now, mounts, and checks every LPA.
    pub(crate) fn cut_and_check(
        &mut self,
        case: &CrashCase,
        cut_point: CutPoint,
        seed: u64,
    ) -> Result<(PowerCut, Recovered, CutReport, Violations), String> {
        let cut_config = CutConfig {
            paired_damage_probability: case.paired_damage_probability,
            hold_up_energy_uj: case.hold_up_energy_uj,
            seed,
        };
        let mut cut = self.ssd.power_cut(&cut_config).map_err(|e| e.to_string())?;
        if let CutPoint::AtTimePs(t) = cut_point {
            cut.report.time_ps = cut.report.time_ps.max(t);
        }
        let recovered = self.ssd.recover_cut(&cut, case.recovery);
        // trims the newest committed checkpoint's trim log holds are durable (a trim that
        // completed before the checkpoint's snapshot was decided before it)
        let taken_ps = cut.image.checkpoint().map(|c| c.taken_ps);
        let violations = self.oracle.check_with_trim_log(
            |lpa| recovered.read(&cut, lpa),
            |trim_done_ps| taken_ps.is_some_and(|t| trim_done_ps < t),
        );
        let report = cut.report.clone();
        Ok((cut, recovered, report, violations))
    }
}

/// Runs one case.
pub fn run_case(case: &CrashCase, build: BuildSsd) -> Result<CrashOutcome, String> {
    validate(case)?;
    let config = case.device.config(build)?;
    let ssd = Ssd::new(config, case.seed).map_err(|e| e.to_string())?;
    let logical = ssd.logical_pages() as u32;
    let mut run = Run {
        ssd,
        oracle: Oracle::new(logical, case.hold_up_energy_uj.is_some()),
        rng: SimRng::stream(case.seed, "power.workload"),
        version: 0,
        checkpoint_order: case.device.checkpoint_order(),
        trim_log_mode: case.device.trim_log_mode(),
        zoned: None,
    };
    run.zoned = zoned::ZonedHost::of(&run.ssd);
    let segment = run.drive(&case.workload, case.cut_point)?;
    let (_, recovered, cut, violations) = run.cut_and_check(case, case.cut_point, case.seed)?;
    Ok(CrashOutcome {
        events: segment.events,
        requests_completed: segment.completed,
        durable_lpas: run.oracle.durable_lpas(),
        cut,
        recovery: recovered.report.clone(),
        violations,
        urgent_gc_passes: run.ssd.urgent_gc_passes(),
        multiplane_ops: run.ssd.multiplane_ops(),
    })
}

/// Simulated time as microseconds (reports).
pub fn ps_to_us(ps: u64) -> f64 {
    SimTime::from_ps(ps).as_us_f64()
}

#[cfg(test)]
mod tests;
