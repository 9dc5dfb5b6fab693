//! `zonemode=zbd` and placement-id lists, checked against fio's `zbd.c` semantics.

use super::*;
use crate::{BlockRequest, IoOp};

const MIB: u64 = 1 << 20;
const CONTEXT: FioContext = FioContext {
    device_size_bytes: 64 * MIB,
    seed: 7,
};
/// 64 zones of 1 MiB, 768 KiB writable, at most 8 open.
const DEVICE: ZbdDevice = ZbdDevice {
    start_bytes: 0,
    zone_size_bytes: MIB,
    zone_capacity_bytes: 768 * 1024,
    zone_count: 64,
    max_open_zones: 8,
};

fn file(text: &str, device: Option<&ZbdDevice>) -> Result<FioJobFile, String> {
    FioJobFile::parse(text.as_bytes(), "z.fio")
        .and_then(|f| f.with_device_zones(device))
        .map_err(|e| e.to_string())
}

fn requests(text: &str) -> Vec<BlockRequest> {
    let f = file(text, Some(&DEVICE)).unwrap_or_else(|e| panic!("{e}"));
    f.zoned_generator(&CONTEXT, None, Some(&DEVICE))
        .unwrap()
        .collect()
}

/// Replays `requests` against zones that take writes only at their write pointer (a write
/// at a zone's start resets it, as the NVMe driver does); returns resets and the most zones
/// open at once.
fn check_sequential(requests: &[BlockRequest]) -> (u64, usize) {
    let mut wp = vec![0u64; DEVICE.zone_count as usize];
    let (mut resets, mut most_open) = (0, 0);
    for r in requests {
        let z = (r.offset_bytes / MIB) as usize;
        let at = r.offset_bytes % MIB;
        match r.op {
            IoOp::Write => {
                if at == 0 && wp[z] > 0 {
                    wp[z] = 0;
                    resets += 1;
                }
                assert_eq!(at, wp[z], "{r:?} off the write pointer");
                wp[z] += r.size_bytes;
                assert!(wp[z] <= DEVICE.zone_capacity_bytes, "{r:?} beyond capacity");
            }
            IoOp::Trim => {
                assert_eq!((at, r.size_bytes), (0, MIB), "{r:?}: a zone reset");
                wp[z] = 0;
                resets += 1;
            }
            IoOp::Read => assert!(at + r.size_bytes <= wp[z], "{r:?} beyond the write pointer"),
        }
        let open = wp
            .iter()
            .filter(|&&w| w > 0 && w < DEVICE.zone_capacity_bytes)
            .count();
        most_open = most_open.max(open);
    }
    (resets, most_open)
}

#[test]
fn random_writes_go_to_write_pointers_within_the_open_limit() {
    let all = requests("[w]\nrw=randwrite\nzonemode=zbd\nmax_open_zones=4\nbs=64k\nio_size=32m\n");
    assert_eq!(all.len(), 512);
    let (_, most_open) = check_sequential(&all);
    assert!(most_open <= 4, "{most_open} zones open");
    // the writes spread over several zones, not one after the other
    let first_zones: std::collections::BTreeSet<u64> =
        all[..16].iter().map(|r| r.offset_bytes / MIB).collect();
    assert!(first_zones.len() > 1, "{first_zones:?}");
}

#[test]
fn a_full_device_resets_zones_and_the_threshold_resets_earlier() {
    let text = "[w]\nrw=randwrite\nzonemode=zbd\nbs=64k\nio_size=96m\n";
    let (resets, _) = check_sequential(&requests(text));
    assert!(resets > 0, "writing twice the capacity resets zones");
    let eager = format!("{text}zone_reset_threshold=0.1\nzone_reset_frequency=0.5\n");
    let (eager_resets, _) = check_sequential(&requests(&eager));
    assert!(eager_resets > resets * 2, "{eager_resets} vs {resets}");
}

#[test]
fn job_max_open_zones_limits_each_job() {
    let text = "[global]\nrw=randwrite\nzonemode=zbd\nbs=64k\nio_size=8m\njob_max_open_zones=1\n[a]\nsize=32m\n[b]\noffset=32m\nsize=32m\n";
    let (_, most_open) = check_sequential(&requests(text));
    assert!(most_open <= 2, "{most_open}");
}

#[test]
fn reads_stay_below_write_pointers_and_trims_are_zone_resets() {
    let text = "[w]\nrw=write\nzonemode=zbd\nbs=128k\nsize=8m\n[r]\nstonewall\nrw=randread\nzonemode=zbd\nbs=64k\nio_size=4m\n[t]\nstonewall\nrw=randtrim\nzonemode=zbd\nbs=1m\nio_size=4m\n";
    let all = requests(text);
    check_sequential(&all);
    assert_eq!(all.iter().filter(|r| r.op == IoOp::Read).count(), 64);
    assert_eq!(all.iter().filter(|r| r.op == IoOp::Trim).count(), 4);
    // nothing written: a read-only job ends at once
    assert!(requests("[r]\nrw=randread\nzonemode=zbd\nio_size=4m\n").is_empty());
}

#[test]
fn zone_units_and_bad_zoned_keys_are_one_line_errors() {
    let f = file(
        "[w]\nrw=write\nzonemode=zbd\noffset=2z\nsize=3z\n",
        Some(&DEVICE),
    )
    .unwrap();
    let all: Vec<_> = f
        .zoned_generator(&CONTEXT, None, Some(&DEVICE))
        .unwrap()
        .collect();
    assert_eq!(all.first().unwrap().offset_bytes, 2 * MIB);
    assert!(
        all.iter()
            .all(|r| (2 * MIB..5 * MIB).contains(&r.offset_bytes))
    );
    for (text, line, key) in [
        ("[w]\nrw=write\nzonemode=zbd\n", 3, "zonemode"),
        ("[w]\nrw=write\nsize=2z\n", 3, "size"),
        ("[w]\nrw=write\nzonemode=strided\n", 3, "zonemode"),
        (
            "[w]\nrw=write\nzonemode=zbd\nmax_open_zones=9\n",
            4,
            "max_open_zones",
        ),
        (
            "[w]\nrw=write\nzonemode=zbd\nzone_reset_threshold=2\n",
            4,
            "zone_reset_threshold",
        ),
        ("[w]\nrw=write\nzonemode=zbd\nbs=2m\n", 4, "bs"),
    ] {
        let device =
            (line != 3 || key != "zonemode" || text.contains("strided")).then_some(&DEVICE);
        let e = file(text, device)
            .and_then(|f| f.streams(&CONTEXT).map(|_| ()).map_err(|e| e.to_string()))
            .unwrap_err();
        assert!(
            e.starts_with(&format!("z.fio:{line}: ")) && e.contains(key) && !e.contains('\n'),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn a_list_of_placement_ids_is_taken_in_turn() {
    let f = file("[w]\nrw=randwrite\nfdp=1\nfdp_pli=1,3\nio_size=64k\n", None).unwrap();
    let ids: Vec<u16> = f
        .zoned_generator(&CONTEXT, None, None)
        .unwrap()
        .map(|r| r.placement_id)
        .collect();
    assert_eq!(ids, [1, 3].repeat(8));
}
