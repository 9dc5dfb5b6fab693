//! Block workloads through the NVMe host interface (`[ssd.nvme]`): each request becomes a
//! command on the namespace holding its first LBA (one LBA = one flash page), in one
//! submission queue. On a zoned namespace the host behaves as a log-structured file system
//! does: it writes each zone sequentially, and a write that comes back to a zone's start
//! resets the zone first; any other write off the zone's write pointer is a one-line error
//! (a random workload is not zoned). A trim of whole zones from a zone's start resets them
//! (fio's trims in `zonemode=zbd`); a shorter one completes without effect.
//!
//! With a clock (fio's time limits) commands are submitted as the host queue has room and the
//! simulated time is published to the generator after every step.

use crate::ssd::SsdRun;
use crate::{LabError, LabResult};
use nandlab_core::{BlockRequest, IoOp, SimClock, SimTime};
use nandlab_ftl::Ssd;
use nandlab_ftl::host::zns::ZoneAction;
use nandlab_ftl::nvme::{NamespaceKind, NvmeCommand, NvmeConfig, NvmeHost};
use nandlab_workload::fio::ZbdDevice;

/// The zoned namespace fio's `zonemode=zbd` sees: the first zoned namespace of `config`
/// on `ssd` (device byte offsets), or `None`.
pub(super) fn zbd_device(config: &NvmeConfig, ssd: &Ssd) -> Option<ZbdDevice> {
    let page = u64::from(ssd.page_size_bytes());
    let device = ssd.logical_pages();
    let mut start = 0u64;
    for n in &config.namespaces {
        let lbas = if n.lbas == 0 {
            device.saturating_sub(start)
        } else {
            n.lbas
        };
        if n.kind == NamespaceKind::Zoned {
            let (size, cap) = match (n.zone_size_lbas, ssd.zoned_layout()) {
                (0, Some(layout)) => layout,
                (0, None) => return None,
                (size, _) => (
                    size,
                    if n.zone_capacity_lbas == 0 {
                        size
                    } else {
                        n.zone_capacity_lbas
                    },
                ),
            };
            return Some(ZbdDevice {
                start_bytes: start * page,
                zone_size_bytes: size * page,
                zone_capacity_bytes: cap * page,
                zone_count: lbas / size,
                max_open_zones: n.max_open_zones,
            });
        }
        start += lbas;
    }
    None
}

/// Runs `requests` through a host interface built from `config` on `ssd`; with `clock`, as
/// the host queue has room, publishing the simulated time.
pub(super) fn drive<I>(
    ssd: &mut Ssd,
    config: &NvmeConfig,
    requests: I,
    clock: Option<&SimClock>,
) -> LabResult<SsdRun>
where
    I: Iterator<Item = Result<BlockRequest, nandlab_workload::WorkloadError>>,
{
    let mut host = NvmeHost::new(config, ssd)?;
    let page = u64::from(ssd.page_size_bytes());
    let spaces: Vec<(u64, u64)> = (0..host.namespace_count() as u32)
        .map(|ns| (host.namespace_start(ns), host.namespace_lbas(ns)))
        .collect();
    let mut written = zone_pointers(&host);
    let mut last = SimTime::ZERO;
    let depth = u64::from(ssd.queue_depth().max(1));
    for (i, request) in requests.enumerate() {
        if let Some(clock) = clock {
            while host.outstanding() >= depth {
                host.step(ssd)?;
                clock.set(ssd.now());
            }
            host.take_completions();
        }
        let r = request?;
        let bad = |message: String| LabError::Usage(format!("workload: request {i}: {message}"));
        if r.offset_bytes % page != 0 || r.size_bytes % page != 0 {
            return Err(bad(format!(
                "NVMe commands take whole LBAs of {page} bytes (offset {}, size {})",
                r.offset_bytes, r.size_bytes
            )));
        }
        let (lba, lbas) = (r.offset_bytes / page, r.size_bytes / page);
        // the namespace holding the first LBA (past every namespace: the last one refuses it)
        let ns = spaces
            .iter()
            .position(|&(start, n)| lba >= start && lba < start + n)
            .unwrap_or(spaces.len() - 1);
        let rel = lba - spaces[ns].0.min(lba);
        let at = r.arrival.unwrap_or(SimTime::ZERO).max(last);
        last = at;
        let ns32 = ns as u32;
        let command = match r.op {
            IoOp::Read => NvmeCommand::Read { lba: rel, lbas },
            IoOp::Trim => {
                if zone_resets(&mut host, ns32, at, rel, lbas, &mut written[ns])? {
                    continue;
                }
                NvmeCommand::Trim { lba: rel, lbas }
            }
            IoOp::Write => {
                if let Some(why) = host.placement_refusal(ns32, r.placement_id) {
                    return Err(bad(format!("placement_id {}: {why}", r.placement_id)));
                }
                if let Some(w) = written.get_mut(ns) {
                    zoned_write(&mut host, ns32, at, rel, lbas, w).map_err(bad)?;
                }
                NvmeCommand::Write {
                    lba: rel,
                    lbas,
                    pid: r.placement_id,
                }
            }
        };
        host.submit(0, ns32, at, command)?;
    }
    host.drain(ssd)?;
    Ok(SsdRun {
        report: ssd.report(),
        interrupted: false,
        nvme: Some(Box::new(host.report(ssd))),
    })
}

/// Per zoned namespace (empty for a conventional one), per zone: the LBAs the host has written
/// since the zone's last reset, from the zones' write pointers (a `[precondition]` may have
/// filled zones).
fn zone_pointers(host: &NvmeHost) -> Vec<Vec<u64>> {
    (0..host.namespace_count() as u32)
        .map(|ns| {
            host.zones(ns).map_or_else(Vec::new, |z| {
                (0..z.config().zone_count)
                    .map(|zone| z.descriptor(zone).write_pointer_lba - z.start_lba(zone))
                    .collect()
            })
        })
        .collect()
}

/// The host's side of a write of `lbas` LBAs at `rel` to zoned namespace `ns` (none for a
/// conventional one): a write back at a zone's start resets the zone first; any other write
/// off the write pointer `written[zone]` is refused.
fn zoned_write(
    host: &mut NvmeHost,
    ns: u32,
    at: SimTime,
    rel: u64,
    lbas: u64,
    written: &mut [u64],
) -> Result<(), String> {
    let Some(zones) = host.zones(ns) else {
        return Ok(());
    };
    let c = zones.config().clone();
    let zone = (rel / c.zone_size_lbas) as usize;
    let offset = rel % c.zone_size_lbas;
    let Some(w) = written.get_mut(zone) else {
        return Ok(());
    };
    if offset == 0 && *w > 0 {
        let zslba = zone as u64 * c.zone_size_lbas;
        host.submit(0, ns, at, zone_reset(zslba))
            .map_err(|e| e.to_string())?;
        *w = 0;
    }
    if offset != *w || offset + lbas > c.zone_capacity_lbas {
        return Err(format!(
            "writes LBAs {rel}..{} of zoned namespace {ns}, not at zone {zone}'s write pointer {} within its capacity {}: a zoned namespace takes sequential writes (workload.pattern = \"sequential\")",
            rel + lbas,
            zone as u64 * c.zone_size_lbas + *w,
            c.zone_capacity_lbas
        ));
    }
    *w += lbas;
    Ok(())
}

/// A trim of whole zones from a zone's start on zoned namespace `ns`: Zone Resets of those
/// zones (fio's zbd trims); false for any other trim.
fn zone_resets(
    host: &mut NvmeHost,
    ns: u32,
    at: SimTime,
    rel: u64,
    lbas: u64,
    written: &mut [u64],
) -> LabResult<bool> {
    let Some(size) = host.zones(ns).map(|z| z.config().zone_size_lbas) else {
        return Ok(false);
    };
    if !rel.is_multiple_of(size) || lbas < size {
        return Ok(false);
    }
    for k in 0..lbas / size {
        let zslba = rel + k * size;
        if let Some(w) = written.get_mut((zslba / size) as usize) {
            *w = 0;
        }
        host.submit(0, ns, at, zone_reset(zslba))?;
    }
    Ok(true)
}

fn zone_reset(zslba: u64) -> NvmeCommand {
    NvmeCommand::Zone {
        action: ZoneAction::Reset,
        zslba,
        all: false,
    }
}

#[cfg(test)]
mod tests {
    use crate::control::Control;
    use crate::stack::{Stack, StackOutcome};
    use std::path::Path;

    fn example() -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/zns-log-writes.toml"),
        )
        .unwrap()
    }

    fn run(text: &str) -> Result<crate::stack::StackRun, String> {
        Stack::from_toml("t.toml", text, Path::new("."), &[])
            .and_then(|s| s.run(None, &Control::new()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_zns_example_writes_with_waf_one_and_resets_every_rewritten_zone() {
        let r = run(&example()).unwrap();
        let StackOutcome::Ssd { run, .. } = &r.outcome else {
            unreachable!("a block workload")
        };
        assert_eq!(run.report.waf, 1.0);
        assert_eq!(run.report.counters.gc_page_copies, 0);
        let nvme = run.nvme.as_ref().unwrap();
        let ns = &nvme.namespaces[0];
        assert!(ns.resets > 0);
        assert_eq!(ns.statuses.len(), 1, "success only: {:?}", ns.statuses);
        // every erase is a zone's block erased by a reset (4 blocks a zone)
        assert_eq!(run.report.counters.erases, ns.resets * 4);
        assert!(ns.reset_latency_mean_us > 0.0);
    }

    /// `[precondition]` on the zoned example (it broke the first zoned write): the zones are
    /// filled as a host writes them, so the workload's first write at a filled zone's start
    /// resets it first and every command succeeds; random overwrites are refused by key.
    #[test]
    fn a_precondition_fills_zones_and_the_workload_resets_them_before_rewriting() {
        let with = |overwrites: u64| {
            example().replace(
                "[workload]",
                &format!(
                    "[precondition]\nfill_fraction = 0.5\nrandom_overwrites = {overwrites}\n\n[workload]"
                ),
            )
        };
        let r = run(&with(0)).unwrap();
        let StackOutcome::Ssd { run: ssd_run, .. } = &r.outcome else {
            unreachable!("a block workload")
        };
        let ns = &ssd_run.nvme.as_ref().unwrap().namespaces[0];
        assert_eq!(ns.statuses.len(), 1, "success only: {:?}", ns.statuses);
        let plain = run(&example()).unwrap();
        let StackOutcome::Ssd { run: plain, .. } = &plain.outcome else {
            unreachable!("a block workload")
        };
        // the preconditioned zones are reset when the workload reaches them the first time
        let plain_resets = plain.nvme.as_ref().unwrap().namespaces[0].resets;
        assert!(ns.resets > plain_resets, "{} vs {plain_resets}", ns.resets);
        assert_eq!(ssd_run.report.waf, 1.0);
        let e = run(&with(10)).unwrap_err();
        assert!(
            e.contains("precondition.random_overwrites") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn zoned_writes_from_a_random_workload_and_bad_keys_are_one_line_errors() {
        let random = example().replace("pattern = \"sequential\"", "pattern = \"random\"");
        let e = run(&random).unwrap_err();
        assert!(e.contains("workload.pattern") && !e.contains('\n'), "{e}");
        let planes = example().replace("zone_planes = 4", "zone_planes = 3");
        let e = run(&planes).unwrap_err();
        assert!(e.contains("zone_planes") && !e.contains('\n'), "{e}");
        let conventional = example().replace(
            "kind = \"zoned\"                       #",
            "kind = \"conventional\" #",
        );
        let e = run(&conventional).unwrap_err();
        assert!(e.contains("ssd.nvme.namespaces[0].kind"), "{e}");
    }

    /// robust7: the FDP example with a placement id beyond its handles, or a reclaim unit of
    /// 1 byte or 1 PB, is a one-line error naming the key (each ran with exit 0 before: every
    /// write completed as Invalid Field, or the unit was never / always full).
    #[test]
    fn robust7_fdp_placement_ids_and_reclaim_units_out_of_range_are_refused() {
        let example = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fdp-placement.toml"),
        )
        .unwrap()
        .replace("request_count = 20000", "request_count = 200")
        .replace("fill_fraction = 1.0", "fill_fraction = 0.1");
        assert!(run(&example).is_ok());
        let e = run(&example.replace("placement_id = 1", "placement_id = 99")).unwrap_err();
        assert!(
            e.contains("placement_id 99")
                && e.contains("placement ids 0 to 1")
                && !e.contains('\n'),
            "{e}"
        );
        for runs in ["1", "1000000000000000", "1048577"] {
            let text = example.replace(
                "reclaim_unit_bytes = 1048576",
                &format!("reclaim_unit_bytes = {runs}"),
            );
            let e = run(&text).unwrap_err();
            assert!(
                e.contains("ssd.nvme.namespaces[0].fdp.reclaim_unit_bytes")
                    && e.contains("a multiple of the 4096-byte LBA")
                    && !e.contains('\n'),
                "{runs}: {e}"
            );
        }
    }

    /// The zoned example's device with a fio job file `job` as the workload.
    fn fio_run(job: &str) -> Result<crate::stack::StackRun, String> {
        let dir = std::env::temp_dir().join(format!("nandlab-zbd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("j{}.fio", job.len());
        std::fs::write(dir.join(&name), job).unwrap();
        let device = example().split("[workload]").next().unwrap().to_owned();
        let text = format!("{device}[workload]\nkind = \"fio\"\npath = \"{name}\"\n");
        Stack::from_toml("t.toml", &text, &dir, &[])
            .and_then(|s| s.run(None, &Control::new()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_zbd_fio_job_writes_at_write_pointers_resets_zones_and_stops_on_time() {
        let job = "[global]\nzonemode=zbd\nmax_open_zones=4\nbs=16k\n[fill]\nrw=write\n\
                   [w]\nstonewall\nrw=randwrite\nio_size=16m\nzone_reset_threshold=0.5\n\
                   zone_reset_frequency=0.25\n[t]\nstonewall\nrw=randtrim\nbs=1m\nio_size=4m\n\
                   [r]\nstonewall\nrw=randread\nio_size=4m\ntime_based\nruntime=100ms\n";
        let r = fio_run(job).unwrap();
        let StackOutcome::Ssd { run, .. } = &r.outcome else {
            unreachable!("a block workload")
        };
        let ns = &run.nvme.as_ref().unwrap().namespaces[0];
        // every command succeeded: no write off a write pointer, no open-limit refusal
        assert_eq!(ns.statuses.len(), 1, "success only: {:?}", ns.statuses);
        assert!(ns.resets >= 4, "{} resets", ns.resets);
        assert_eq!(run.report.waf, 1.0);
        // the time-based reads stop at 100 ms of simulated reading
        // (one pass of the region is 1024 pages; ~460 us a 4-page read at depth 1)
        let pages = run.report.counters.host_pages_read;
        assert!((500..1024).contains(&pages), "{pages} pages read");
        let e = fio_run("[a]\nrw=write\nzonemode=zbd\nmax_open_zones=9\n").unwrap_err();
        assert!(
            e.contains(":4: max_open_zones=9") && !e.contains('\n'),
            "{e}"
        );
    }
}
