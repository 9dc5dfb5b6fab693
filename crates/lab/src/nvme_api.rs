//! The NVMe host interface of a stack config's SSD as an object a front end drives command by
//! command (the Python zone / FDP API, `nandlab.nvme`): open the device of a stack config with
//! `[ssd.nvme]` (its `[precondition]` applied, its `[workload]` not run), submit commands to a
//! namespace and simulate until they complete, report zones, FDP statistics and events. Every
//! answer is JSON text, so the front end owns its data model.
//!
//! A batch of commands is submitted at the device's current simulated time to one submission
//! queue and run to completion: at a queue depth above 1 they are in flight together, so the
//! Zone Appends of one batch get their LBAs in submission order whatever order they complete
//! in. A refused command is a completion with its NVMe status, not an error; only a malformed
//! command (unknown op, missing field, namespace or queue out of range) is an error.

use crate::error::{LabError, LabResult};
use crate::stack::Stack;
use nandlab_ftl::Ssd;
use nandlab_ftl::host::zns::{ReportFilter, ZoneAction};
use nandlab_ftl::nvme::{NvmeCommand, NvmeCompletion, NvmeConfig, NvmeHost};
use serde_json::{Value, json};
use std::path::Path;

/// An SSD with its NVMe host interface.
pub struct NvmeDevice {
    ssd: Ssd,
    host: NvmeHost,
    config: NvmeConfig,
}

impl std::fmt::Debug for NvmeDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvmeDevice")
            .field("namespaces", &self.config.namespaces.len())
            .finish_non_exhaustive()
    }
}

fn usage(message: String) -> LabError {
    LabError::Usage(message)
}

impl NvmeDevice {
    /// The device of stack config `text` (named `origin` in errors; relative paths from
    /// `base_dir`). It needs `[ssd.nvme]`; a missing `[workload]` is fine (none is run).
    pub fn open(origin: &str, text: &str, base_dir: &Path) -> LabResult<Self> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| usage(format!("{origin}: {}", e.message())))?;
        if !table.contains_key("workload") {
            let mut w = toml::Table::new();
            w.insert("kind".into(), "synthetic".into());
            table.insert("workload".into(), toml::Value::Table(w));
        }
        let text = toml::to_string(&table).map_err(|e| usage(format!("{origin}: {e}")))?;
        let stack = Stack::from_toml(origin, &text, base_dir, &[])?;
        let Some(config) = stack.config.ssd.nvme.clone() else {
            return Err(usage(format!(
                "{origin}: ssd.nvme: the device needs an [ssd.nvme] section with its namespaces (docs/stack.md)"
            )));
        };
        let mut ssd = stack.new_ssd(stack.ssd_config(), stack.config.run.seed)?;
        if let Some(p) = &stack.config.precondition {
            if nandlab_ftl::nvme::has_zoned_namespace(&config) {
                nandlab_ftl::nvme::precondition(&config, &mut ssd, p, |_, _| {
                    std::ops::ControlFlow::Continue(())
                })?;
            } else {
                ssd.precondition(p)?;
            }
            ssd.reset_measurement();
        }
        let host = NvmeHost::new(&config, &mut ssd)?;
        Ok(NvmeDevice { ssd, host, config })
    }

    /// The namespaces: `[{namespace, kind, start_lba, lbas, zones: {count, size_lbas,
    /// capacity_lbas, max_open, max_active} | null, fdp: {reclaim_groups, handles,
    /// reclaim_unit_bytes} | null}]`, plus the LBA size and queue pairs.
    pub fn namespaces_json(&self) -> String {
        let namespaces: Vec<Value> = (0..self.host.namespace_count() as u32)
            .map(|ns| {
                let zones = self.host.zones(ns).map(|z| {
                    let c = z.config();
                    json!({
                        "count": c.zone_count,
                        "size_lbas": c.zone_size_lbas,
                        "capacity_lbas": c.zone_capacity_lbas,
                        "max_open": c.max_open_zones,
                        "max_active": c.max_active_zones,
                    })
                });
                let fdp = self
                    .host
                    .fdp(ns)
                    .map(|f| serde_json::to_value(f.config()).ok());
                json!({
                    "namespace": ns,
                    "kind": self.config.namespaces[ns as usize].kind,
                    "start_lba": self.host.namespace_start(ns),
                    "lbas": self.host.namespace_lbas(ns),
                    "zones": zones,
                    "fdp": fdp.flatten(),
                })
            })
            .collect();
        json!({
            "lba_bytes": self.ssd.page_size_bytes(),
            "queue_pairs": self.config.queue_weights.len(),
            "namespaces": namespaces,
        })
        .to_string()
    }

    fn namespace(&self, ns: u32) -> LabResult<()> {
        if (ns as usize) < self.host.namespace_count() {
            Ok(())
        } else {
            Err(usage(format!(
                "namespace {ns}: the device has {} (0..{})",
                self.host.namespace_count(),
                self.host.namespace_count()
            )))
        }
    }

    /// Runs `commands_json` (a JSON list of commands, see [`parse_command`]) on namespace `ns`
    /// from submission queue `queue`, all arriving now, until they complete; returns their
    /// completions in submission order: `[{cid, status, status_code, success, lba,
    /// latency_ns, completed_ns}]` (`lba`: the LBA a Zone Append wrote, else null).
    pub fn submit_json(&mut self, ns: u32, queue: u16, commands_json: &str) -> LabResult<String> {
        self.namespace(ns)?;
        let commands: Vec<Value> = serde_json::from_str(commands_json)
            .map_err(|e| usage(format!("commands: {e} (a JSON list of commands)")))?;
        let parsed = commands
            .iter()
            .enumerate()
            .map(|(i, c)| parse_command(c).map_err(|m| usage(format!("command {i}: {m}"))))
            .collect::<LabResult<Vec<_>>>()?;
        let now = self.ssd.now();
        let mut cids = Vec::with_capacity(parsed.len());
        for command in parsed {
            cids.push(self.host.submit(queue, ns, now, command)?);
        }
        let mut done = self.host.drain(&mut self.ssd)?;
        done.sort_by_key(|c| c.cid);
        let out: Vec<Value> = done.iter().map(completion_json).collect();
        debug_assert_eq!(done.len(), cids.len());
        Ok(Value::Array(out).to_string())
    }

    /// Report Zones of namespace `ns` (`state`: a state name, or empty for all):
    /// `[{zone, state, start_lba, capacity_lbas, write_pointer_lba}]`.
    pub fn report_zones_json(&self, ns: u32, state: &str) -> LabResult<String> {
        self.namespace(ns)?;
        let zones = self
            .host
            .zones(ns)
            .ok_or_else(|| usage(format!("namespace {ns} is not zoned")))?;
        let filter = if state.is_empty() {
            ReportFilter::All
        } else {
            ReportFilter::State(
                serde_json::from_value(Value::String(state.into()))
                    .map_err(|_| usage(format!("state {state:?}: expected one of empty, implicitly_opened, explicitly_opened, closed, read_only, full, offline")))?,
            )
        };
        let report = zones.report(filter, 0, usize::MAX);
        serde_json::to_string(&report).map_err(|e| usage(e.to_string()))
    }

    /// FDP of namespace `ns`: `{stats: {host_bytes_written, media_bytes_written,
    /// media_bytes_erased}, events: [{kind, time, group, handle, bytes}], events_dropped,
    /// handles: [{placement_id, group, handle, available_bytes, units_started}]}`.
    pub fn fdp_json(&self, ns: u32) -> LabResult<String> {
        self.namespace(ns)?;
        let fdp = self
            .host
            .fdp(ns)
            .ok_or_else(|| usage(format!("namespace {ns} has no FDP")))?;
        let stats = self.host.fdp_stats(ns, &self.ssd);
        let (events, dropped) = fdp.events();
        let events: Vec<Value> = events
            .map(|e| {
                json!({
                    "kind": e.kind,
                    "time_ns": e.time.as_ps() / 1000,
                    "group": e.group,
                    "handle": e.handle,
                    "bytes": e.bytes,
                })
            })
            .collect();
        Ok(json!({
            "stats": stats,
            "events": events,
            "events_dropped": dropped,
            "handles": fdp.handle_status(),
        })
        .to_string())
    }

    /// The Reclaim Unit Handle Update of placement identifier `pid` on namespace `ns`; its
    /// status name.
    pub fn update_handle(&mut self, ns: u32, pid: u16) -> LabResult<String> {
        self.namespace(ns)?;
        let now = self.ssd.now();
        Ok(self.host.update_handle(ns, pid, now).name().to_owned())
    }

    /// The host interface's report (`nandlab run`'s `nvme` section) and the SSD's, and the
    /// simulated time: `{nvme, ssd, now_ns}`.
    pub fn report_json(&self) -> String {
        json!({
            "nvme": self.host.report(&self.ssd),
            "ssd": self.ssd.report(),
            "now_ns": self.ssd.now().as_ps() / 1000,
        })
        .to_string()
    }
}

fn completion_json(c: &NvmeCompletion) -> Value {
    json!({
        "cid": c.cid,
        "status": c.status.name(),
        "status_code": c.status.field(),
        "success": c.status.is_success(),
        "lba": c.lba,
        "latency_ns": c.latency().as_ps() / 1000,
        "completed_ns": c.completed.as_ps() / 1000,
    })
}

/// One command from JSON: `{"op": "read"|"write"|"append"|"trim"|"flush"|"open"|"close"|
/// "finish"|"reset"|"offline", "lba", "lbas", "pid", "zslba", "all"}` (`lba` and `lbas` for
/// read / write / trim, `pid` optional on write; `zslba` and `lbas` for append; `zslba` or
/// `all` for the zone actions).
pub fn parse_command(c: &Value) -> Result<NvmeCommand, String> {
    let op = c.get("op").and_then(Value::as_str).ok_or("needs \"op\"")?;
    let num = |k: &str| {
        c.get(k)
            .and_then(Value::as_u64)
            .ok_or(format!("{op} needs \"{k}\" (a non-negative integer)"))
    };
    let opt = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
    let zone = |action| {
        let all = c.get("all").and_then(Value::as_bool).unwrap_or(false);
        let zslba = if all { opt("zslba") } else { num("zslba")? };
        Ok::<_, String>(NvmeCommand::Zone { action, zslba, all })
    };
    Ok(match op {
        "read" => NvmeCommand::Read {
            lba: num("lba")?,
            lbas: num("lbas")?,
        },
        "write" => NvmeCommand::Write {
            lba: num("lba")?,
            lbas: num("lbas")?,
            pid: u16::try_from(opt("pid")).map_err(|_| "pid: above 65535".to_string())?,
        },
        "append" => NvmeCommand::Append {
            zslba: num("zslba")?,
            lbas: num("lbas")?,
        },
        "trim" => NvmeCommand::Trim {
            lba: num("lba")?,
            lbas: num("lbas")?,
        },
        "flush" => NvmeCommand::Flush,
        "open" => zone(ZoneAction::Open)?,
        "close" => zone(ZoneAction::Close)?,
        "finish" => zone(ZoneAction::Finish)?,
        "reset" => zone(ZoneAction::Reset)?,
        "offline" => zone(ZoneAction::Offline)?,
        "open_zrwa" => zone(ZoneAction::OpenZrwa)?,
        // the command's LBA is the last one the flush commits, not the zone's start
        "flush_zrwa" => NvmeCommand::Zone {
            action: ZoneAction::FlushZrwa,
            zslba: num("lba")?,
            all: false,
        },
        _ => {
            return Err(format!(
                "op {op:?}: expected read, write, append, trim, flush, open, close, finish, reset, offline, open_zrwa or flush_zrwa"
            ));
        }
    })
}
