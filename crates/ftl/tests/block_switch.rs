//! The block mapping's switch path (issue 30 item 3): a logical block rewritten in page order
//! takes a replacement block and costs one erase and no copies, where each page used to cost
//! a full merge (a copy of every other page and an erase). An interrupted rewrite ends in a
//! partial merge that copies only the pages not rewritten. The PCM log region's
//! merge-and-sequential-flush (thesis 001 §3.2.3) relies on this.

mod common;

use nandlab_ftl::{HostOp, HostRequest, MappingKind, PayloadMode, Ssd, SsdReport};

const PAGE: u64 = 512;
const PAGES_PER_BLOCK: u64 = 8;

fn device() -> Ssd {
    let mut c = common::slc(1, 2, 16, PAGES_PER_BLOCK as u32, PAGE as u32);
    c.ftl.mapping.kind = MappingKind::Block;
    c.ftl.op_fraction = 0.5;
    c.ftl.payload = PayloadMode::Full;
    Ssd::new(c, 1).unwrap()
}

fn write(ssd: &mut Ssd, lpa: u64, fill: u8) {
    let r = HostRequest::new(HostOp::Write, lpa * PAGE, PAGE);
    ssd.execute(&r, Some(&vec![fill; PAGE as usize])).unwrap();
}

fn read(ssd: &mut Ssd, lpa: u64) -> u8 {
    let r = HostRequest::new(HostOp::Read, lpa * PAGE, PAGE);
    let data = ssd.execute(&r, None).unwrap().data;
    assert!(data.iter().all(|&b| b == data[0]), "lpa {lpa}: torn page");
    data[0]
}

/// Fills logical blocks 0 and 1 (planes 0 and 1), then measures what `rewrite` costs.
fn cost(rewrite: impl FnOnce(&mut Ssd)) -> (SsdReport, Ssd) {
    let mut ssd = device();
    for lpa in 0..2 * PAGES_PER_BLOCK {
        write(&mut ssd, lpa, 1);
    }
    ssd.reset_measurement();
    rewrite(&mut ssd);
    let report = ssd.report();
    ssd.check_consistency().unwrap();
    (report, ssd)
}

#[test]
fn a_whole_block_rewritten_in_order_costs_one_erase() {
    let (r, mut ssd) = cost(|ssd| {
        for lpa in 0..PAGES_PER_BLOCK {
            write(ssd, lpa, 2);
        }
    });
    let c = &r.counters;
    assert_eq!(c.erases, 1);
    assert_eq!(c.gc_page_copies, 0);
    assert_eq!(c.flash_pages_programmed, PAGES_PER_BLOCK);
    assert_eq!(c.merges_switch, 1);
    assert_eq!((c.merges_partial, c.merges_full), (0, 0));
    for lpa in 0..PAGES_PER_BLOCK {
        assert_eq!(read(&mut ssd, lpa), 2);
    }
    assert_eq!(read(&mut ssd, PAGES_PER_BLOCK), 1);
}

#[test]
fn an_interrupted_rewrite_copies_only_the_rest() {
    // three pages in order, then a write to the other plane's block (which does not end this
    // plane's rewrite), then one to another block of this plane (which does)
    let (r, mut ssd) = cost(|ssd| {
        for lpa in 0..3 {
            write(ssd, lpa, 2);
        }
        write(ssd, PAGES_PER_BLOCK + 5, 3);
        write(ssd, 2 * PAGES_PER_BLOCK, 4);
    });
    let c = &r.counters;
    // plane 0: the 5 pages not rewritten are copied, the old block erased; plane 1: a full
    // merge of block 1 for its out-of-order write (7 copies, one erase)
    assert_eq!(c.merges_partial, 1);
    assert_eq!(c.merges_full, 1);
    assert_eq!(c.gc_page_copies, 5 + 7);
    assert_eq!(c.erases, 2);
    let expected = [2, 2, 2, 1, 1, 1, 1, 1];
    for (lpa, fill) in expected.iter().enumerate() {
        assert_eq!(read(&mut ssd, lpa as u64), *fill, "lpa {lpa}");
    }
    assert_eq!(read(&mut ssd, PAGES_PER_BLOCK + 5), 3);
    assert_eq!(read(&mut ssd, 2 * PAGES_PER_BLOCK), 4);
}

#[test]
fn random_rewrites_still_merge_in_full() {
    // a page other than the first, out of order: the merge it always was
    let (r, _) = cost(|ssd| write(ssd, 3, 2));
    let c = &r.counters;
    assert_eq!((c.merges_full, c.merges_switch), (1, 0));
    assert_eq!(c.gc_page_copies, PAGES_PER_BLOCK - 1);
    assert_eq!(c.erases, 1);
}

#[test]
fn rewrites_interleaved_with_reads_and_trims_keep_the_data() {
    let (_, mut ssd) = cost(|ssd| {
        write(ssd, 0, 2);
        write(ssd, 1, 2);
        assert_eq!(read(ssd, 1), 2);
        assert_eq!(read(ssd, 5), 1);
        let trim = HostRequest::new(HostOp::Trim, 6 * PAGE, PAGE);
        ssd.execute(&trim, None).unwrap();
        write(ssd, 2, 2);
        // rewriting a page of the replacement again ends it
        write(ssd, 1, 3);
    });
    let expected = [2, 3, 2, 1, 1, 1, 0, 1];
    for (lpa, fill) in expected.iter().enumerate() {
        assert_eq!(read(&mut ssd, lpa as u64), *fill, "lpa {lpa}");
    }
}
