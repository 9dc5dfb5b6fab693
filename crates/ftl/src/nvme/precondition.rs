//! `[precondition]` on a device with a zoned namespace: each namespace is filled by itself, as
//! its host would have written it. A conventional namespace gets the first `fill_fraction` of
//! its LBAs written sequentially; a zoned one the first `fill_fraction` of its zones' capacity,
//! zone after zone from its first zone, each from its start up to its capacity (never the LBAs
//! between a zone's capacity and its size). The random overwrites land in the conventional
//! namespaces' filled LBAs only: a zone takes no overwrite before its reset, so with zoned
//! namespaces alone `random_overwrites` must be 0. The host interface then finds the filled
//! zones Full and a partly filled one Closed, with their write pointers, as a controller finds
//! them on its media at power-on.

use super::{NvmeConfig, build_namespaces};
use crate::error::{FtlResult, config_error};
use crate::ssd::{Precondition, Ssd};
use std::ops::{ControlFlow, Range};

/// Whether `config` has a zoned namespace (then `[precondition]` goes through [`precondition`]).
pub fn has_zoned_namespace(config: &NvmeConfig) -> bool {
    config
        .namespaces
        .iter()
        .any(|n| n.kind == super::NamespaceKind::Zoned)
}

/// Applies `p` to the namespaces of `config` on `ssd` as the module docs say; returns the device
/// LPAs it filled (sequential ranges). Errors name the key.
pub fn precondition(
    config: &NvmeConfig,
    ssd: &mut Ssd,
    p: &Precondition,
    progress: impl FnMut(u64, u64) -> ControlFlow<()>,
) -> FtlResult<Vec<Range<u32>>> {
    p.validate()?;
    let namespaces = build_namespaces(config, ssd)?;
    let (mut fill, mut conventional) = (Vec::new(), Vec::new());
    let lpa = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
    for n in &namespaces {
        match &n.zones {
            None => {
                let lbas = (n.lbas as f64 * p.fill_fraction).floor() as u64;
                let r = lpa(n.start)..lpa(n.start + lbas);
                fill.push(r.clone());
                conventional.push(r);
            }
            Some(zones) => {
                let c = zones.config();
                let total = c.zone_count as f64 * c.zone_capacity_lbas as f64;
                let mut left = (total * p.fill_fraction).floor() as u64;
                for zone in 0..c.zone_count {
                    if left == 0 {
                        break;
                    }
                    let take = left.min(c.zone_capacity_lbas);
                    let first = n.start + zones.start_lba(zone);
                    fill.push(lpa(first)..lpa(first + take));
                    left -= take;
                }
            }
        }
    }
    conventional.retain(|r| !r.is_empty());
    if p.random_overwrites > 0 && conventional.is_empty() {
        return Err(config_error(
            "precondition.random_overwrites",
            format!(
                "{} overwrites, but a zone takes no overwrite before its reset and no conventional namespace is filled (set 0)",
                p.random_overwrites
            ),
        ));
    }
    ssd.precondition_ranges_with_progress(&fill, &conventional, p.random_overwrites, progress)?;
    Ok(fill)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{device, host};
    use super::super::{NamespaceConfig, NvmeCommand};
    use super::*;
    use crate::address::Lpa;
    use crate::config::MappingKind;
    use crate::host::status::NvmeStatus;
    use crate::host::zns::ZoneState;
    use nandlab_core::SimTime;

    fn config(namespaces: Vec<NamespaceConfig>) -> NvmeConfig {
        NvmeConfig {
            namespaces,
            queue_weights: vec![1],
            arbitration: super::super::Arbitration::RoundRobin,
        }
    }

    fn fill(fraction: f64, overwrites: u64) -> Precondition {
        Precondition {
            fill_fraction: fraction,
            random_overwrites: overwrites,
        }
    }

    /// Beside a conventional namespace, a zoned one of zones of 64 LBAs with capacity 48 is
    /// filled zone by zone to capacity; the host interface finds the filled zones Full and
    /// the last one Closed at its write pointer, the overwrites stay in the conventional
    /// namespace, and the next write at a filled zone's start is refused until its reset.
    #[test]
    fn zones_are_filled_as_a_host_writes_them_and_found_at_power_on() {
        let mut ssd = Ssd::new(device(MappingKind::Page, 4), 3).unwrap();
        let mut zns = NamespaceConfig::zoned(0);
        (zns.zone_size_lbas, zns.zone_capacity_lbas) = (64, 48);
        let c = config(vec![NamespaceConfig::conventional(200), zns]);
        let before = ssd.write_sequence();
        let filled = precondition(&c, &mut ssd, &fill(0.5, 300), |_, _| {
            ControlFlow::Continue(())
        })
        .unwrap();
        let mut h = host(&mut ssd, c.namespaces.clone());
        let zones = h.zones(1).unwrap().clone();
        let zone_count = u64::from(zones.config().zone_count);
        let lbas = (zone_count * 48) / 2;
        let (full, part) = (lbas / 48, lbas % 48);
        assert_eq!(filled.len() as u64, 1 + full + u64::from(part > 0));
        // 100 conventional LBAs, the zones' LBAs, then 300 overwrites
        assert_eq!(ssd.write_sequence() - before, 100 + lbas + 300);
        for zone in 0..zone_count as u32 {
            let d = zones.descriptor(zone);
            let (state, wp) = match u64::from(zone) {
                z if z < full => (ZoneState::Full, 48),
                z if z == full && part > 0 => (ZoneState::Closed, part),
                _ => (ZoneState::Empty, 0),
            };
            assert_eq!((d.state, d.write_pointer_lba - d.start_lba), (state, wp));
        }
        zones.check_invariants();
        // nothing between a zone's capacity and its size, nothing past the conventional fill
        assert!(ssd.locate(Lpa(200 + 48)).is_none());
        assert!((100..200).all(|l| ssd.locate(Lpa(l)).is_none()));
        let t = SimTime::ZERO;
        let write = |lba| NvmeCommand::Write {
            lba,
            lbas: 1,
            pid: 0,
        };
        let reset = NvmeCommand::Zone {
            action: crate::host::zns::ZoneAction::Reset,
            zslba: 0,
            all: false,
        };
        for command in [write(0), reset, write(0), write(full * 64 + part)] {
            h.submit(0, 1, t, command).unwrap();
        }
        let done = h.drain(&mut ssd).unwrap();
        let statuses: Vec<NvmeStatus> = done.iter().map(|d| d.status).collect();
        assert_eq!(statuses[0], NvmeStatus::ZoneIsFull);
        assert!(statuses[1..].iter().all(|&s| s == NvmeStatus::Success));
        ssd.check_consistency().unwrap();
    }

    /// On the zoned mapping every zone is filled at its write pointer (no zoned-mapping error);
    /// overwrites without a conventional namespace are a one-line error naming the key.
    #[test]
    fn the_zoned_mapping_is_filled_and_overwrites_need_a_conventional_namespace() {
        let mut c = device(MappingKind::Zoned, 4);
        c.ftl.mapping.zone_planes = 2;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let nvme = config(vec![NamespaceConfig::zoned(0)]);
        let go = |_: u64, _: u64| ControlFlow::Continue(());
        let e = precondition(&nvme, &mut ssd, &fill(1.0, 5), go).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("precondition.random_overwrites") && !e.contains('\n'),
            "{e}"
        );
        precondition(&nvme, &mut ssd, &fill(1.0, 0), go).unwrap();
        let h = host(&mut ssd, nvme.namespaces.clone());
        let z = h.zones(0).unwrap();
        assert_eq!(
            z.state_counts()[5],
            z.config().zone_count,
            "every zone full"
        );
        ssd.check_consistency().unwrap();
    }
}
