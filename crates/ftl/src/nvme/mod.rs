//! The NVMe host interface of one SSD (SPEC Z1): namespaces (each an LBA range of the device,
//! conventional or zoned, optionally with Flexible Data Placement), submission/completion
//! queue pairs with round-robin or weighted-round-robin arbitration, and NVMe statuses on
//! completions. It drives an [`Ssd`] through its open-loop API and is built beside it from
//! its own [`NvmeConfig`]; the SSD itself knows nothing of namespaces or zones.
//!
//! One LBA is one flash page. A command waits in its submission queue from its arrival; the
//! controller fetches commands while the device has fewer than its queue depth in flight,
//! taking the next queue by arbitration among the queues whose head has arrived. A fetched
//! command is checked (range, zone state and write pointer, placement identifier): a refused
//! one completes at once with its status, counted per namespace; the SSD never sees it.
//! Zone Append is granted its LBA at fetch, so appends fetched in order get consecutive LBAs
//! in that order whatever order they complete in. A zone Reset is a TRIM of the zone's written
//! LBAs: with `ftl.mapping = "zoned"` that erases the zone's blocks inside the command, so its
//! latency is the reset latency. A Dataset Management (TRIM) on a zoned namespace completes
//! without effect (the data stays until the zone is reset).

use crate::error::{FtlError, FtlResult};
use crate::host::HostRequest;
use crate::host::fdp::{Fdp, FdpConfig, FdpStats};
use crate::host::status::{NvmeStatus, StatusCounts};
use crate::host::zns::{ZoneAction, ZonedConfig, Zones, ZrwaConfig};
use crate::ssd::Ssd;
use nandlab_core::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Kind of a namespace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NamespaceKind {
    /// Random writes anywhere in the range (NVM command set).
    #[default]
    Conventional,
    /// Zoned (ZNS command set).
    Zoned,
}

/// One namespace of the stack config's `[[ssd.nvme.namespaces]]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceConfig {
    /// Conventional or zoned.
    #[serde(default)]
    pub kind: NamespaceKind,
    /// LBAs (pages) of the namespace; 0: the rest of the device. Namespaces follow each other
    /// from LBA 0 of the device in their order.
    #[serde(default)]
    pub lbas: u64,
    /// Zoned: LBAs per zone (0: the device's zone size with `ftl.mapping = "zoned"`).
    #[serde(default)]
    pub zone_size_lbas: u64,
    /// Zoned: writable LBAs per zone (0: the zone size, or the device's zone capacity).
    #[serde(default)]
    pub zone_capacity_lbas: u64,
    /// Zoned: maximum open zones (0: no limit).
    #[serde(default)]
    pub max_open_zones: u32,
    /// Zoned: maximum active zones (0: no limit).
    #[serde(default)]
    pub max_active_zones: u32,
    /// Flexible Data Placement for this namespace's writes (needs `ftl.placement_ids` ≥ the
    /// handles × reclaim groups, plus one when a handle is initially isolated).
    #[serde(default)]
    pub fdp: Option<FdpConfig>,
    /// Zoned: the Zone Random Write Area (`host/zns/zrwa.rs`).
    #[serde(default)]
    pub zrwa: Option<ZrwaConfig>,
}

impl NamespaceConfig {
    /// A conventional namespace of `lbas` LBAs (0: the rest).
    pub fn conventional(lbas: u64) -> Self {
        NamespaceConfig {
            kind: NamespaceKind::Conventional,
            lbas,
            zone_size_lbas: 0,
            zone_capacity_lbas: 0,
            max_open_zones: 0,
            max_active_zones: 0,
            fdp: None,
            zrwa: None,
        }
    }
    /// A zoned namespace of `lbas` LBAs (0: the rest) with zone geometry from the device.
    pub fn zoned(lbas: u64) -> Self {
        NamespaceConfig {
            kind: NamespaceKind::Zoned,
            ..Self::conventional(lbas)
        }
    }
}

/// How the controller picks the next submission queue to fetch from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// One command from each queue in turn.
    #[default]
    RoundRobin,
    /// Weighted round robin: up to `weight` commands from a queue before the next one.
    WeightedRoundRobin,
}

/// The host interface: namespaces, queue pairs and arbitration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvmeConfig {
    /// The namespaces, in LBA order.
    pub namespaces: Vec<NamespaceConfig>,
    /// Weight of each I/O queue pair (its length is the number of pairs; weights count only
    /// with weighted round robin).
    #[serde(default = "one_queue")]
    pub queue_weights: Vec<u32>,
    /// Arbitration between submission queues.
    #[serde(default)]
    pub arbitration: Arbitration,
}

fn one_queue() -> Vec<u32> {
    vec![1]
}

/// A command on a namespace (LBAs are the namespace's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvmeCommand {
    /// Read.
    Read {
        /// First LBA.
        lba: u64,
        /// LBAs.
        lbas: u64,
    },
    /// Write with FDP placement identifier `pid` (0 without FDP).
    Write {
        /// First LBA.
        lba: u64,
        /// LBAs.
        lbas: u64,
        /// Placement identifier.
        pid: u16,
    },
    /// Zone Append to the zone starting at `zslba`.
    Append {
        /// The zone's start LBA.
        zslba: u64,
        /// LBAs.
        lbas: u64,
    },
    /// Dataset Management deallocate.
    Trim {
        /// First LBA.
        lba: u64,
        /// LBAs.
        lbas: u64,
    },
    /// Flush.
    Flush,
    /// Zone Management Send.
    Zone {
        /// The action.
        action: ZoneAction,
        /// The zone's start LBA (ignored with `all`).
        zslba: u64,
        /// Select All: every zone the action selects.
        all: bool,
    },
}

/// A finished command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvmeCompletion {
    /// The command id [`NvmeHost::submit`] returned.
    pub cid: u64,
    /// The queue pair it was submitted to.
    pub queue: u16,
    /// Its namespace (index in the config).
    pub namespace: u32,
    /// Status.
    pub status: NvmeStatus,
    /// Arrival in its submission queue.
    pub submitted: SimTime,
    /// Completion.
    pub completed: SimTime,
    /// Zone Append: the first LBA written.
    pub lba: Option<u64>,
}

impl NvmeCompletion {
    /// From arrival to completion.
    pub fn latency(&self) -> SimTime {
        self.completed - self.submitted
    }
}

/// Per-zone counters of a zoned namespace ([`NvmeHost::zone_report`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ZoneReport {
    /// Zone index.
    pub zone: u32,
    /// State name.
    pub state: String,
    /// LBAs written (appends included) since the namespace was built.
    pub lbas_written: u64,
    /// Resets.
    pub resets: u32,
    /// Mean reset latency in µs, from the controller's fetch of the reset to its completion
    /// (0 without resets).
    pub reset_latency_us: f64,
}

/// The host interface's report ([`NvmeHost::report`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NvmeReport {
    /// Queue pairs.
    pub queue_pairs: u32,
    /// Their arbitration.
    pub arbitration: Arbitration,
    /// Completions by status name (statuses seen only).
    pub statuses: BTreeMap<String, u64>,
    /// Per namespace.
    pub namespaces: Vec<NamespaceReport>,
}

/// One namespace in an [`NvmeReport`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NamespaceReport {
    /// Conventional or zoned.
    pub kind: NamespaceKind,
    /// First device LBA.
    pub start_lba: u64,
    /// LBAs.
    pub lbas: u64,
    /// Completions by status name.
    pub statuses: BTreeMap<String, u64>,
    /// Zoned: zones per state at the end.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub zone_states: BTreeMap<String, u32>,
    /// Zoned: resets.
    pub resets: u64,
    /// Zoned: mean latency of the resets of one zone (µs; 0 without).
    pub reset_latency_mean_us: f64,
    /// Zoned: per zone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<ZoneReport>,
    /// FDP statistics, with FDP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdp: Option<FdpStats>,
}

impl NvmeReport {
    /// The lines `nandlab run` prints.
    pub fn summary(&self) -> String {
        let statuses = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = format!(
            "nvme: {} queue pair(s), {:?} | statuses: {}\n",
            self.queue_pairs,
            self.arbitration,
            statuses(&self.statuses)
        );
        for (i, n) in self.namespaces.iter().enumerate() {
            out += &format!(
                "  namespace {i} ({:?}, LBAs {}..{}): {}",
                n.kind,
                n.start_lba,
                n.start_lba + n.lbas,
                statuses(&n.statuses)
            );
            if n.kind == NamespaceKind::Zoned {
                let states = n
                    .zone_states
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                out += &format!(
                    " | zones: {states} | {} resets, mean reset latency {:.1} us",
                    n.resets, n.reset_latency_mean_us
                );
            }
            if let Some(f) = &n.fdp {
                out += &format!(
                    " | FDP: host {} B, media {} B written (media/host {:.3}), {} B erased",
                    f.host_bytes_written,
                    f.media_bytes_written,
                    f.media_bytes_written as f64 / f.host_bytes_written.max(1) as f64,
                    f.media_bytes_erased
                );
            }
            out += "\n";
        }
        out
    }
}

#[derive(Debug)]
struct Namespace {
    kind: NamespaceKind,
    /// First device page.
    start: u64,
    lbas: u64,
    zones: Option<Zones>,
    fdp: Option<Fdp>,
    statuses: StatusCounts,
    /// Per zone: LBAs written, reset latency sum (ns), resets completed.
    zone_written: Vec<u64>,
    reset_ns: Vec<(u64, u32)>,
}

#[derive(Clone, Copy, Debug)]
struct Queued {
    cid: u64,
    namespace: u32,
    arrival: SimTime,
    command: NvmeCommand,
}

#[derive(Clone, Copy, Debug)]
struct InDevice {
    cid: u64,
    queue: u16,
    namespace: u32,
    submitted: SimTime,
    lba: Option<u64>,
    /// A zone reset: the zone whose reset latency (from fetch to completion) to record.
    reset_zone: Option<u32>,
    /// When the controller fetched it.
    fetched: SimTime,
}

/// The host interface of one SSD.
#[derive(Debug)]
pub struct NvmeHost {
    namespaces: Vec<Namespace>,
    weights: Vec<u32>,
    arbitration: Arbitration,
    queues: Vec<VecDeque<Queued>>,
    /// Round-robin position and commands taken from it in this turn.
    turn: (usize, u32),
    depth: u64,
    next_cid: u64,
    in_device: HashMap<u64, InDevice>,
    done: Vec<NvmeCompletion>,
    statuses: StatusCounts,
}

fn config_error(key: &str, message: String) -> FtlError {
    crate::error::config_error(key, message)
}

impl NvmeHost {
    /// The host interface of `ssd` (its open-loop operation starts here). Errors name the key
    /// (`ssd.nvme.namespaces[i].…`).
    pub fn new(config: &NvmeConfig, ssd: &mut Ssd) -> FtlResult<Self> {
        let mut namespaces = build_namespaces(config, ssd)?;
        for n in &mut namespaces {
            if let Some(zones) = &mut n.zones {
                recover_write_pointers(zones, n.start, ssd);
            }
        }
        ssd.open_loop_begin();
        Ok(NvmeHost {
            namespaces,
            weights: config.queue_weights.clone(),
            arbitration: config.arbitration,
            queues: vec![VecDeque::new(); config.queue_weights.len()],
            turn: (0, 0),
            depth: u64::from(ssd.queue_depth()),
            next_cid: 0,
            in_device: HashMap::new(),
            done: Vec::new(),
            statuses: StatusCounts::default(),
        })
    }

    /// Number of namespaces.
    pub fn namespace_count(&self) -> usize {
        self.namespaces.len()
    }

    /// LBAs of namespace `ns`.
    pub fn namespace_lbas(&self, ns: u32) -> u64 {
        self.namespaces[ns as usize].lbas
    }

    /// The zones of namespace `ns`, if it is zoned.
    pub fn zones(&self, ns: u32) -> Option<&Zones> {
        self.namespaces.get(ns as usize)?.zones.as_ref()
    }

    /// The FDP state of namespace `ns`, if it has FDP.
    pub fn fdp(&self, ns: u32) -> Option<&Fdp> {
        self.namespaces.get(ns as usize)?.fdp.as_ref()
    }

    /// Why namespace `ns` refuses writes that carry placement identifier `pid` (with Invalid
    /// Field in Command), or `None` when it takes them.
    pub fn placement_refusal(&self, ns: u32, pid: u16) -> Option<String> {
        let n = self.namespaces.get(ns as usize)?;
        let Some(fdp) = &n.fdp else {
            return (pid != 0).then(|| {
                format!(
                    "namespace {ns} has no FDP (ssd.nvme.namespaces[{ns}].fdp), so its writes take placement id 0 only"
                )
            });
        };
        fdp.placement(pid).is_err().then(|| {
            let c = fdp.config();
            let handles = c.handles.len();
            match c.rgif() {
                0 => format!(
                    "namespace {ns}'s FDP has {handles} handle(s): placement ids 0 to {}",
                    handles - 1
                ),
                bits => format!(
                    "namespace {ns}'s FDP has {handles} handle(s) in {} reclaim groups: a placement id is a group in its top {bits} bits and a handle 0 to {} below",
                    c.reclaim_groups,
                    handles - 1
                ),
            }
        })
    }

    /// Completions by status over every namespace.
    pub fn statuses(&self) -> &StatusCounts {
        &self.statuses
    }

    /// Completions by status of namespace `ns`.
    pub fn namespace_statuses(&self, ns: u32) -> &StatusCounts {
        &self.namespaces[ns as usize].statuses
    }

    /// Queues `command` on namespace `ns` in submission queue `queue`, arriving at `arrival`
    /// (not before the previous command of that queue); returns its command id.
    pub fn submit(
        &mut self,
        queue: u16,
        ns: u32,
        arrival: SimTime,
        command: NvmeCommand,
    ) -> FtlResult<u64> {
        let bad = |message: String| Err(FtlError::BadRequest { message });
        let Some(q) = self.queues.get_mut(usize::from(queue)) else {
            return bad(format!(
                "queue {queue}: there are {} queue pairs",
                self.queues.len()
            ));
        };
        if ns as usize >= self.namespaces.len() {
            return bad(format!(
                "namespace {ns}: there are {}",
                self.namespaces.len()
            ));
        }
        if q.back().is_some_and(|b| b.arrival > arrival) {
            return bad(format!(
                "queue {queue}: arrival {arrival} before the queue's last"
            ));
        }
        let cid = self.next_cid;
        self.next_cid += 1;
        q.push_back(Queued {
            cid,
            namespace: ns,
            arrival,
            command,
        });
        Ok(cid)
    }

    /// Simulates until every queued command has completed; returns the completions not yet
    /// taken, in completion order.
    pub fn drain(&mut self, ssd: &mut Ssd) -> FtlResult<Vec<NvmeCompletion>> {
        while self.step(ssd)? {}
        self.collect(ssd);
        Ok(std::mem::take(&mut self.done))
    }

    /// One step of [`NvmeHost::drain`]: fetches what the device has room for, then advances
    /// the device to the next arrival or completion. False when nothing is left to do.
    pub fn step(&mut self, ssd: &mut Ssd) -> FtlResult<bool> {
        self.fetch(ssd)?;
        let in_device = ssd.open_in_flight();
        let next_arrival = self
            .queues
            .iter()
            .filter_map(|q| q.front().map(|c| c.arrival))
            .min();
        match next_arrival {
            None if in_device == 0 => return Ok(false),
            Some(t) if in_device == 0 || (t > ssd.now() && in_device < self.depth) => {
                ssd.advance_to(t.max(ssd.now()))?;
            }
            _ => {
                ssd.advance_to_completion()?;
            }
        }
        self.collect(ssd);
        Ok(true)
    }

    /// Commands submitted and not yet completed (queued or in the device).
    pub fn outstanding(&self) -> u64 {
        self.queues.iter().map(|q| q.len() as u64).sum::<u64>() + self.in_device.len() as u64
    }

    /// Takes the completions collected so far.
    pub fn take_completions(&mut self) -> Vec<NvmeCompletion> {
        std::mem::take(&mut self.done)
    }

    /// The next queue to fetch from among those whose head has arrived by `now`.
    fn arbitrate(&mut self, now: SimTime) -> Option<usize> {
        let n = self.queues.len();
        let ready = |q: &VecDeque<Queued>| q.front().is_some_and(|c| c.arrival <= now);
        let (pos, taken) = self.turn;
        let burst = match self.arbitration {
            Arbitration::RoundRobin => 1,
            Arbitration::WeightedRoundRobin => self.weights[pos],
        };
        if taken < burst && ready(&self.queues[pos]) {
            self.turn.1 += 1;
            return Some(pos);
        }
        for step in 1..=n {
            let q = (pos + step) % n;
            if ready(&self.queues[q]) {
                self.turn = (q, 1);
                return Some(q);
            }
        }
        None
    }

    /// Fetches arrived commands while the device has room.
    fn fetch(&mut self, ssd: &mut Ssd) -> FtlResult<()> {
        while ssd.open_in_flight() < self.depth {
            let Some(q) = self.arbitrate(ssd.now()) else {
                break;
            };
            let c = self.queues[q]
                .pop_front()
                .expect("arbitrated a ready queue");
            self.start(ssd, q as u16, c)?;
        }
        Ok(())
    }

    fn complete(&mut self, queue: u16, c: &Queued, status: NvmeStatus, at: SimTime) {
        self.statuses.add(status);
        self.namespaces[c.namespace as usize].statuses.add(status);
        self.done.push(NvmeCompletion {
            cid: c.cid,
            queue,
            namespace: c.namespace,
            status,
            submitted: c.arrival,
            completed: at,
            lba: None,
        });
    }

    /// Checks a fetched command and hands it to the device (or completes it refused).
    fn start(&mut self, ssd: &mut Ssd, queue: u16, c: Queued) -> FtlResult<()> {
        let now = ssd.now();
        let page = u64::from(ssd.page_size_bytes());
        let ns = &mut self.namespaces[c.namespace as usize];
        let in_range = |lba: u64, lbas: u64| lba.checked_add(lbas).is_some_and(|e| e <= ns.lbas);
        let mut lba_out = None;
        let mut reset_zone = None;
        let request: Result<Option<HostRequest>, NvmeStatus> = match c.command {
            NvmeCommand::Read { lba, lbas } => {
                if !in_range(lba, lbas) || lbas == 0 {
                    Err(NvmeStatus::LbaOutOfRange)
                } else if let Some(z) = ns.zones.as_mut() {
                    z.read(lba, lbas)
                        .map(|()| Some(HostRequest::read((ns.start + lba) * page, lbas * page)))
                } else {
                    Ok(Some(HostRequest::read(
                        (ns.start + lba) * page,
                        lbas * page,
                    )))
                }
            }
            NvmeCommand::Write { lba, lbas, pid } => {
                let placed = match ns.fdp.as_mut() {
                    Some(fdp) => fdp.placement(pid).map(|p| {
                        fdp.host_write(p, lbas * page);
                        fdp.stream(p)
                    }),
                    None if pid != 0 => Err(NvmeStatus::InvalidField),
                    None => Ok(0),
                };
                match placed {
                    Err(s) => Err(s),
                    Ok(_) if !in_range(lba, lbas) || lbas == 0 => Err(NvmeStatus::LbaOutOfRange),
                    Ok(stream) => {
                        let granted = match ns.zones.as_mut() {
                            Some(z) => z.write(lba, lbas).map(|g| {
                                ns.zone_written[g.zone as usize] += g.lbas;
                                g.zrwa_commit
                            }),
                            None => Ok(None),
                        };
                        // a write to a ZRWA stays in the window: the media gets what the
                        // write pointer passes
                        granted.map(|commit| {
                            let (first, n) = commit.unwrap_or((lba, lbas));
                            (n > 0).then(|| {
                                HostRequest::write((ns.start + first) * page, n * page)
                                    .placed(stream)
                            })
                        })
                    }
                }
            }
            NvmeCommand::Append { zslba, lbas } => match ns.zones.as_mut() {
                None => Err(NvmeStatus::InvalidField),
                Some(z) => z.append(zslba, lbas).map(|g| {
                    ns.zone_written[g.zone as usize] += g.lbas;
                    lba_out = Some(g.first_lba);
                    Some(HostRequest::write(
                        (ns.start + g.first_lba) * page,
                        g.lbas * page,
                    ))
                }),
            },
            NvmeCommand::Trim { lba, lbas } => {
                if !in_range(lba, lbas) {
                    Err(NvmeStatus::LbaOutOfRange)
                } else if ns.kind == NamespaceKind::Zoned {
                    Ok(None)
                } else {
                    Ok(Some(HostRequest::trim(
                        (ns.start + lba) * page,
                        lbas * page,
                    )))
                }
            }
            NvmeCommand::Flush => Ok(Some(HostRequest::flush())),
            NvmeCommand::Zone { action, zslba, all } => match ns.zones.as_mut() {
                None => Err(NvmeStatus::InvalidField),
                Some(z) => {
                    let changes = if all {
                        z.manage_all(action)
                    } else {
                        z.manage(action, zslba).map(|c| vec![c])
                    };
                    changes.map(|changes| {
                        let size = z.config().zone_size_lbas;
                        if let [c] = changes[..]
                            && c.committed_lbas > 0
                        {
                            // an explicit ZRWA flush: the committed LBAs go to the media
                            let first = ns.start + u64::from(c.zone) * size + c.written_lbas;
                            return Some(HostRequest::write(first * page, c.committed_lbas * page));
                        }
                        // a reset trims what the zones held (one TRIM over the written zones)
                        let written: Vec<_> = changes
                            .iter()
                            .filter(|c| action == ZoneAction::Reset && c.written_lbas > 0)
                            .collect();
                        if written.len() == 1 {
                            reset_zone = Some(written[0].zone);
                        }
                        let first = written.iter().map(|c| u64::from(c.zone) * size).min();
                        let end = written
                            .iter()
                            .map(|c| u64::from(c.zone) * size + c.written_lbas)
                            .max();
                        first
                            .zip(end)
                            .map(|(a, b)| HostRequest::trim((ns.start + a) * page, (b - a) * page))
                    })
                }
            },
        };
        match request {
            Err(status) => self.complete(queue, &c, status, now),
            Ok(None) => self.complete(queue, &c, NvmeStatus::Success, now),
            Ok(Some(r)) => {
                let tag = ssd.submit(&r.at(now), None)?;
                self.in_device.insert(
                    tag,
                    InDevice {
                        cid: c.cid,
                        queue,
                        namespace: c.namespace,
                        submitted: c.arrival,
                        lba: lba_out,
                        reset_zone,
                        fetched: now,
                    },
                );
            }
        }
        Ok(())
    }

    /// Takes the device's completions.
    fn collect(&mut self, ssd: &mut Ssd) {
        for d in ssd.take_completions() {
            let Some(c) = self.in_device.remove(&d.tag) else {
                continue;
            };
            let status = match d.status {
                Ok(()) => NvmeStatus::Success,
                Err(_) => NvmeStatus::InvalidField,
            };
            let ns = &mut self.namespaces[c.namespace as usize];
            if let Some(zone) = c.reset_zone {
                let r = &mut ns.reset_ns[zone as usize];
                r.0 += (d.completed - c.fetched).as_ps() / 1000;
                r.1 += 1;
            }
            ns.statuses.add(status);
            self.statuses.add(status);
            self.done.push(NvmeCompletion {
                cid: c.cid,
                queue: c.queue,
                namespace: c.namespace,
                status,
                submitted: c.submitted,
                completed: d.completed,
                lba: c.lba,
            });
        }
    }

    /// Per-zone report of zoned namespace `ns` (empty for a conventional one).
    pub fn zone_report(&self, ns: u32) -> Vec<ZoneReport> {
        let n = &self.namespaces[ns as usize];
        let Some(z) = n.zones.as_ref() else {
            return Vec::new();
        };
        (0..z.config().zone_count)
            .map(|zone| {
                let (sum, count) = n.reset_ns[zone as usize];
                ZoneReport {
                    zone,
                    state: z.state(zone).name().to_string(),
                    lbas_written: n.zone_written[zone as usize],
                    resets: z.resets_of(zone),
                    reset_latency_us: if count == 0 {
                        0.0
                    } else {
                        sum as f64 / f64::from(count) / 1000.0
                    },
                }
            })
            .collect()
    }

    /// Zones of namespace `ns` in each state, in [`ZoneState`] order.
    pub fn zone_states(&self, ns: u32) -> Option<[u32; 7]> {
        self.zones(ns).map(Zones::state_counts)
    }

    /// FDP statistics of namespace `ns`: host bytes written; media bytes written = host
    /// bytes + the bytes the device's GC programmed in the namespace's streams (+ the unwritten
    /// bytes of reclaim units a handle update abandoned); media bytes erased.
    pub fn fdp_stats(&self, ns: u32, ssd: &Ssd) -> Option<FdpStats> {
        let fdp = self.fdp(ns)?;
        let mut s = fdp.stats();
        let page = u64::from(ssd.page_size_bytes());
        let r = ssd.report();
        for p in r.placement.iter().filter(|p| p.id < fdp.streams()) {
            s.media_bytes_written += (p.flash_pages_programmed - p.host_pages_written) * page;
        }
        s.media_bytes_erased = r.counters.erases * page * u64::from(ssd.geometry().pages_per_block);
        Some(s)
    }

    /// The FDP handle update (I/O Management Send) of placement identifier `pid` on
    /// namespace `ns` at the simulated time `now`.
    pub fn update_handle(&mut self, ns: u32, pid: u16, now: SimTime) -> NvmeStatus {
        let status = match self
            .namespaces
            .get_mut(ns as usize)
            .and_then(|n| n.fdp.as_mut())
        {
            None => NvmeStatus::InvalidField,
            Some(fdp) => fdp
                .update_handle(pid, now)
                .err()
                .unwrap_or(NvmeStatus::Success),
        };
        self.statuses.add(status);
        if let Some(n) = self.namespaces.get_mut(ns as usize) {
            n.statuses.add(status);
        }
        status
    }

    /// First device LBA (page) of namespace `ns`.
    pub fn namespace_start(&self, ns: u32) -> u64 {
        self.namespaces[ns as usize].start
    }

    /// The report of the host interface after a run on `ssd`.
    pub fn report(&self, ssd: &Ssd) -> NvmeReport {
        let counts = |c: &StatusCounts| {
            c.nonzero()
                .map(|(n, v)| (n.to_string(), v))
                .collect::<BTreeMap<_, _>>()
        };
        let namespaces = (0..self.namespaces.len() as u32)
            .map(|ns| {
                let n = &self.namespaces[ns as usize];
                let zones = self.zone_report(ns);
                let mut zone_states = BTreeMap::new();
                for z in &zones {
                    *zone_states.entry(z.state.clone()).or_insert(0u32) += 1;
                }
                let (sum, count) = n
                    .reset_ns
                    .iter()
                    .fold((0u64, 0u64), |a, r| (a.0 + r.0, a.1 + u64::from(r.1)));
                NamespaceReport {
                    kind: n.kind,
                    start_lba: n.start,
                    lbas: n.lbas,
                    statuses: counts(&n.statuses),
                    zone_states,
                    resets: zones.iter().map(|z| u64::from(z.resets)).sum(),
                    reset_latency_mean_us: if count == 0 {
                        0.0
                    } else {
                        sum as f64 / count as f64 / 1000.0
                    },
                    zones,
                    fdp: self.fdp_stats(ns, ssd),
                }
            })
            .collect();
        NvmeReport {
            queue_pairs: self.queues.len() as u32,
            arbitration: self.arbitration,
            statuses: counts(&self.statuses),
            namespaces,
        }
    }
}

/// The namespaces of `config` on `ssd`, every zone empty (errors name the key).
fn build_namespaces(config: &NvmeConfig, ssd: &Ssd) -> FtlResult<Vec<Namespace>> {
    let device = ssd.logical_pages();
    if config.namespaces.is_empty() {
        return Err(config_error(
            "ssd.nvme.namespaces",
            "at least one namespace".into(),
        ));
    }
    if config.queue_weights.is_empty() || config.queue_weights.contains(&0) {
        return Err(config_error(
            "ssd.nvme.queue_weights",
            "one weight of at least 1 per queue pair".into(),
        ));
    }
    let mut start = 0u64;
    let mut namespaces = Vec::new();
    for (i, n) in config.namespaces.iter().enumerate() {
        let key = |k: &str| format!("ssd.nvme.namespaces[{i}].{k}");
        let left = device.saturating_sub(start);
        let lbas = if n.lbas == 0 { left } else { n.lbas };
        if lbas == 0 || lbas > left {
            return Err(config_error(
                &key("lbas"),
                format!("{lbas} LBAs from LBA {start} do not fit the device's {device} pages"),
            ));
        }
        let zones = namespace_zones(n, &key, start, lbas, ssd.zoned_layout())?;
        // a zoned namespace covers whole zones only
        let lbas = zones.as_ref().map_or(lbas, |z| z.config().namespace_lbas());
        let fdp = namespace_fdp(n, &key, ssd)?;
        let zone_count = zones.as_ref().map_or(0, |z| z.config().zone_count as usize);
        namespaces.push(Namespace {
            kind: n.kind,
            start,
            lbas,
            zones,
            fdp,
            statuses: StatusCounts::default(),
            zone_written: vec![0; zone_count],
            reset_ns: vec![(0, 0); zone_count],
        });
        start += lbas;
    }
    Ok(namespaces)
}

/// The FDP state of namespace `n` (`None` without `fdp`), checked against `ssd`: FDP on a
/// conventional namespace only, its reclaim unit a whole number of LBAs no larger than the
/// device, and enough placement streams for its handles.
fn namespace_fdp(
    n: &NamespaceConfig,
    key: &dyn Fn(&str) -> String,
    ssd: &Ssd,
) -> FtlResult<Option<Fdp>> {
    let Some(c) = &n.fdp else {
        return Ok(None);
    };
    if n.kind == NamespaceKind::Zoned {
        return Err(config_error(
            &key("fdp"),
            "FDP places the writes of a conventional namespace; a zoned namespace places them by zone (remove fdp or use kind = \"conventional\")".into(),
        ));
    }
    let fdp = Fdp::new(c.clone())
        .map_err(|e| config_error(&key(&format!("fdp.{}", e.key)), e.message))?;
    let page = u64::from(ssd.page_size_bytes());
    let capacity = ssd.logical_pages() * page;
    let runs = c.reclaim_unit_bytes;
    if runs < page || runs > capacity || !runs.is_multiple_of(page) {
        return Err(config_error(
            &key("fdp.reclaim_unit_bytes"),
            format!(
                "{runs} bytes (use a multiple of the {page}-byte LBA from {page} to the device's {capacity} bytes)"
            ),
        ));
    }
    let ids = ssd.placement_ids();
    if fdp.streams() > ids {
        return Err(config_error(
            &key("fdp.handles"),
            format!(
                "{} handles × {} reclaim groups need {} placement streams; ftl.placement_ids is {ids}",
                c.handles.len(),
                c.reclaim_groups,
                fdp.streams()
            ),
        ));
    }
    Ok(Some(fdp))
}

/// The zones of namespace `n` (`None` for a conventional one) of `lbas` LBAs from device LBA
/// `start`, on a device whose zoned mapping has zones of `device_zones` (size, capacity).
fn namespace_zones(
    n: &NamespaceConfig,
    key: &dyn Fn(&str) -> String,
    start: u64,
    lbas: u64,
    device_zones: Option<(u64, u64)>,
) -> FtlResult<Option<Zones>> {
    if n.kind == NamespaceKind::Conventional {
        if device_zones.is_some() {
            return Err(config_error(
                &key("kind"),
                "a conventional namespace needs a conventional mapping (ftl.mapping = \"zoned\" takes only zoned namespaces)".into(),
            ));
        }
        if n.zone_size_lbas + n.zone_capacity_lbas > 0
            || n.max_open_zones + n.max_active_zones > 0
            || n.zrwa.is_some()
        {
            return Err(config_error(
                &key("kind"),
                "zone keys need kind = \"zoned\"".into(),
            ));
        }
        return Ok(None);
    }
    let (size, capacity) = match device_zones {
        Some((dsize, dcap)) => {
            if (n.zone_size_lbas != 0 && n.zone_size_lbas != dsize)
                || (n.zone_capacity_lbas != 0 && n.zone_capacity_lbas != dcap)
            {
                return Err(config_error(
                    &key("zone_size_lbas"),
                    format!(
                        "the zoned mapping's zones are {dsize} LBAs with capacity {dcap} (leave 0 or set those)"
                    ),
                ));
            }
            if !start.is_multiple_of(dsize) {
                return Err(config_error(
                    &key("lbas"),
                    format!(
                        "the namespace must start on a device zone (LBA {start} is not a multiple of {dsize})"
                    ),
                ));
            }
            (dsize, dcap)
        }
        None => {
            if n.zone_size_lbas == 0 {
                return Err(config_error(
                    &key("zone_size_lbas"),
                    "a zoned namespace on a conventional mapping needs its zone size".into(),
                ));
            }
            let cap = if n.zone_capacity_lbas == 0 {
                n.zone_size_lbas
            } else {
                n.zone_capacity_lbas
            };
            (n.zone_size_lbas, cap)
        }
    };
    let zone_count = lbas / size;
    if zone_count == 0 || zone_count > u64::from(u32::MAX) {
        return Err(config_error(
            &key("zone_size_lbas"),
            format!("zones of {size} LBAs do not fit the namespace's {lbas} LBAs"),
        ));
    }
    let mut z = ZonedConfig::new(zone_count as u32, size);
    z.zone_capacity_lbas = capacity;
    z.max_open_zones = n.max_open_zones;
    z.max_active_zones = n.max_active_zones;
    z.zrwa = n.zrwa.clone();
    let zones = Zones::new(z).map_err(|e| config_error(&key(e.key), e.message))?;
    Ok(Some(zones))
}

/// The write pointers a controller finds on its media at power-on (after `[precondition]` or
/// a power cut): each zone of a zoned namespace starting at device LBA `start` whose first
/// LBAs are mapped on `ssd` is Full (written to capacity) or Closed, its write pointer past
/// the LBAs mapped without a gap from its start (an LBA after a gap is past the write pointer
/// and will be overwritten). On the zoned mapping the device's own write pointers are taken
/// (after a mount a zone may hold a hole below an intact page: its write pointer is past that
/// page, never back over acknowledged data).
fn recover_write_pointers(zones: &mut Zones, start: u64, ssd: &Ssd) {
    let c = zones.config().clone();
    let device = ssd.zone_write_pointers();
    for zone in 0..c.zone_count {
        let first = start + zones.start_lba(zone);
        if let Some(pointers) = &device {
            // (a zoned namespace on the zoned mapping starts on a device zone of its size)
            let written = pointers[(first / c.zone_size_lbas) as usize];
            if written > 0 {
                zones.restore(zone, written);
            }
            continue;
        }
        let written = (0..c.zone_capacity_lbas)
            .take_while(|&k| {
                u32::try_from(first + k)
                    .is_ok_and(|lpa| ssd.locate(crate::address::Lpa(lpa)).is_some())
            })
            .count() as u64;
        if written > 0 {
            zones.restore(zone, written);
        }
    }
}

mod precondition;
pub use precondition::{has_zoned_namespace, precondition};

#[cfg(test)]
mod fdp_key_tests;
#[cfg(test)]
mod tests;
