//! The disk below SQL: open, odd-offset reads and writes against a flat byte model, truncate,
//! sync, delete, and the TRIMs and flushes they send the controller.

use super::*;
use crate::device::named::build_ssd;
use nandlab_ftl::PayloadMode;
use proptest::prelude::*;

/// A small full-payload device (32 blocks per plane of the bench SSD).
pub(crate) const SMALL_DEVICE: &str =
    "[ssd]\npreset = \"bench-ssd\"\n[nand.geometry]\nblocks_per_plane = 32\n";

fn disk() -> SimDisk {
    let (ssd, seed) = build_ssd(SMALL_DEVICE, Some(7)).unwrap();
    SimDisk::new(ssd, seed).unwrap()
}

#[test]
fn timing_only_devices_are_refused_naming_the_key() {
    let (mut config, _) = crate::device::named::ssd_config(SMALL_DEVICE).unwrap();
    config.ftl.payload = PayloadMode::TimingOnly;
    let e = SimDisk::new(Ssd::new(config, 1).unwrap(), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ssd.payload"), "{e}");
}

/// Without a power trace the SSD under the disk releases stale pages' bytes (memory follows
/// the live pages); with one (crash tests) it keeps them for the recovery scan.
#[test]
fn stale_payloads_are_released_only_without_a_power_trace() {
    assert!(disk().ssd().releases_stale_payloads());
    let (mut ssd, seed) = build_ssd(SMALL_DEVICE, Some(7)).unwrap();
    ssd.start_power_trace().unwrap();
    let mut d = SimDisk::new(ssd, seed).unwrap();
    assert!(!d.ssd().releases_stale_payloads());
    // overwrites on the traced disk keep working (and keep the old copies)
    let f = d.open("f", true).unwrap();
    for round in 0..3u8 {
        d.write(f, 100, &[round; 5000]).unwrap();
    }
    let mut back = [0u8; 5000];
    d.read(f, 100, &mut back).unwrap();
    assert_eq!(back, [2u8; 5000]);
}

#[test]
fn open_create_and_not_found() {
    let mut d = disk();
    assert!(matches!(
        d.open("a.db", false),
        Err(SqlError::NotFound { .. })
    ));
    let a = d.open("a.db", true).unwrap();
    assert!(d.exists("a.db"));
    assert_eq!(d.size_bytes(a).unwrap(), 0);
    assert_eq!(
        d.open("a.db", false).unwrap(),
        a,
        "a second open shares the file"
    );
    assert!(matches!(d.delete("b.db"), Err(SqlError::NotFound { .. })));
}

#[test]
fn odd_offsets_read_back_and_take_simulated_time() {
    let mut d = disk();
    let f = d.open("f", true).unwrap();
    let page = d.page_size_bytes() as usize;
    let data: Vec<u8> = (0..3 * page + 123).map(|i| (i * 7 + 1) as u8).collect();
    let t0 = d.now();
    d.write(f, 1001, &data).unwrap();
    assert!(d.now() > t0, "a write advances simulated time");
    let mut back = vec![0u8; data.len()];
    assert_eq!(d.read(f, 1001, &mut back).unwrap(), data.len());
    assert_eq!(back, data);
    // the gap before the first write reads as zeros
    let mut head = vec![9u8; 1001];
    d.read(f, 0, &mut head).unwrap();
    assert!(head.iter().all(|b| *b == 0));
    // a read past the end is short and zero-filled
    let size = d.size_bytes(f).unwrap();
    let mut tail = vec![9u8; 100];
    assert_eq!(d.read(f, size - 10, &mut tail).unwrap(), 10);
    assert!(tail[10..].iter().all(|b| *b == 0));
    let io = d.io();
    assert_eq!(io.bytes_written, data.len() as u64);
    assert_eq!(
        io.pages_written, 4,
        "bytes 1001..1001+3p+123 lie in pages 0..4"
    );
}

#[test]
fn truncate_trims_whole_pages_and_regrowth_reads_zeros() {
    let mut d = disk();
    let f = d.open("f", true).unwrap();
    let page = d.page_size_bytes();
    d.write(f, 0, &vec![0xAB; (4 * page) as usize]).unwrap();
    let free_before = d.pages_free();
    d.truncate(f, page + 10).unwrap();
    assert_eq!(d.size_bytes(f).unwrap(), page + 10);
    // the pages given back wait for a durable file table without them
    assert_eq!(d.io().pages_trimmed, 0);
    assert_eq!(d.pages_pending_free(), 6);
    d.sync().unwrap();
    assert_eq!(d.io().pages_trimmed, 6, "the 8-page extent keeps 2 pages");
    assert_eq!(d.pages_free(), free_before + 6);
    // growing again: the stale bytes after the old end read as zeros
    d.write(f, 3 * page, b"end").unwrap();
    let mut back = vec![1u8; (3 * page - 10 - page) as usize];
    d.read(f, page + 10, &mut back).unwrap();
    assert!(
        back.iter().all(|b| *b == 0),
        "bytes past a truncation read as zeros"
    );
    d.truncate(f, 0).unwrap();
    assert_eq!(d.size_bytes(f).unwrap(), 0);
    d.truncate(f, 5000).unwrap();
    let mut z = vec![1u8; 5000];
    assert_eq!(d.read(f, 0, &mut z).unwrap(), 5000);
    assert!(z.iter().all(|b| *b == 0));
}

#[test]
fn sync_is_a_flush_and_delete_trims_and_frees() {
    let mut d = disk();
    let f = d.open("j", true).unwrap();
    d.write(f, 0, &[1; 20_000]).unwrap();
    d.sync().unwrap();
    assert_eq!(d.io().syncs, 1);
    assert_eq!(
        d.io().table_writes,
        1,
        "the new file's entry is written before the Flush"
    );
    let free = d.pages_free();
    d.delete("j").unwrap();
    assert!(!d.exists("j"));
    assert_eq!(
        d.pages_free(),
        free,
        "an open file is freed at its last close"
    );
    d.close(f).unwrap();
    assert!(d.pages_pending_free() >= 3);
    d.sync().unwrap();
    let table_pages = 2 * d.table_slot_pages;
    assert_eq!(d.pages_free(), d.allocator.pages_total() - table_pages);
    assert!(d.io().pages_trimmed >= 3);
    // its logical pages read as zeros for the next file
    let g = d.open("k", true).unwrap();
    d.truncate(g, 20_000).unwrap();
    let mut back = vec![1u8; 20_000];
    d.read(g, 0, &mut back).unwrap();
    assert!(back.iter().all(|b| *b == 0));
}

#[test]
fn a_full_disk_is_an_error_naming_the_file() {
    let mut d = disk();
    let f = d.open("big", true).unwrap();
    let capacity = d.allocator.pages_total() * d.page_size_bytes();
    let e = d.write(f, capacity, b"x").unwrap_err().to_string();
    assert!(e.contains("big") && e.contains("no room"), "{e}");
}

#[test]
fn randomness_is_deterministic_by_seed() {
    let (mut a, mut b) = (disk(), disk());
    let (mut x, mut y) = ([0u8; 13], [0u8; 13]);
    a.fill_random(&mut x);
    b.fill_random(&mut y);
    assert_eq!(x, y);
    assert_ne!(x, [0u8; 13]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    /// Writes, truncations and reads at arbitrary offsets match a flat byte vector.
    #[test]
    fn matches_a_flat_file(ops in prop::collection::vec((0u8..3, 0u64..60_000, 1usize..9_000), 1..25)) {
        let mut d = disk();
        let f = d.open("p", true).unwrap();
        let mut model: Vec<u8> = Vec::new();
        for (i, (kind, offset, len)) in ops.into_iter().enumerate() {
            match kind {
                0 => {
                    let data: Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8 | 1).collect();
                    d.write(f, offset, &data).unwrap();
                    let end = offset as usize + len;
                    if model.len() < end { model.resize(end, 0); }
                    model[offset as usize..end].copy_from_slice(&data);
                }
                1 => {
                    d.truncate(f, offset).unwrap();
                    model.resize(offset as usize, 0);
                }
                _ => {
                    let mut buf = vec![7u8; len];
                    let n = d.read(f, offset, &mut buf).unwrap();
                    let start = (offset as usize).min(model.len());
                    let end = (offset as usize + len).min(model.len());
                    prop_assert_eq!(n, end - start);
                    prop_assert_eq!(&buf[..n], &model[start..end]);
                    prop_assert!(buf[n..].iter().all(|b| *b == 0));
                }
            }
            prop_assert_eq!(d.size_bytes(f).unwrap(), model.len() as u64);
        }
    }
}

/// On an SSD that holds old data (written before the disk was made: a preconditioned or
/// reused device) a new file still reads as zeros where it was never written: extents are
/// trimmed as they are allocated.
#[test]
fn a_used_device_gives_zeroed_files() {
    let (mut ssd, seed) = build_ssd(SMALL_DEVICE, Some(7)).unwrap();
    let old = vec![0xEE_u8; 1 << 20];
    let request = HostRequest::new(HostOp::Write, 0, old.len() as u64);
    ssd.execute(&request, Some(&old)).unwrap();
    let mut d = SimDisk::new(ssd, seed).unwrap();
    assert!(d.trim_on_allocate);
    let f = d.open("f", true).unwrap();
    d.truncate(f, 50_000).unwrap();
    d.write(f, 70_000, b"tail").unwrap();
    let mut back = vec![1u8; 70_000];
    d.read(f, 0, &mut back).unwrap();
    assert!(back.iter().all(|b| *b == 0), "no old bytes show through");
    assert!(!disk().trim_on_allocate, "a fresh device needs no trims");
}

/// The file table survives a remount: names, sizes and bytes come back; a table torn at its
/// newest generation falls back to the previous one.
#[test]
fn a_mount_reads_the_file_table_back() {
    let mut d = disk();
    let f = d.open("main.db", true).unwrap();
    d.write(f, 100, &[7; 30_000]).unwrap();
    let j = d.open("main.db-journal", true).unwrap();
    d.write(j, 0, &[9; 5_000]).unwrap();
    d.sync().unwrap();
    d.truncate(j, 0).unwrap();
    // a temporary file is not in the table
    let t = d.temp_name();
    let tf = d.open(&t, true).unwrap();
    d.write(tf, 0, &[1; 100]).unwrap();
    d.sync().unwrap();
    // written but not synced: the size grows in memory only
    d.write(f, 30_100, &[8; 10]).unwrap();
    let generation = d.table_generation;
    let seed = 7;
    let ssd = d.ssd;
    let mut m = SimDisk::mount(ssd, seed).unwrap();
    assert_eq!(m.table_generation, generation);
    assert_eq!(
        m.file_sizes(),
        vec![
            ("main.db".to_string(), 30_100),
            ("main.db-journal".to_string(), 0)
        ]
    );
    let id = m.open("main.db", false).unwrap();
    let mut back = vec![0u8; 30_000];
    m.read(id, 100, &mut back).unwrap();
    assert!(back.iter().all(|b| *b == 7));
    // new files do not overlap the mounted ones
    let g = m.open("other", true).unwrap();
    m.write(g, 0, &[3; 20_000]).unwrap();
    m.read(id, 100, &mut back).unwrap();
    assert!(back.iter().all(|b| *b == 7));
}
