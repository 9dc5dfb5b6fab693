//! Mount after a cut: rebuild the mapping from the OOB of every page (a full scan) or from a
//! map checkpoint plus the OOB of the pages written after it ([`super::checkpoint`]), the free
//! and to-erase block lists, valid counts and write pointers, and time the scan.
//!
//! The scan reads each block's pages in offset order, up to its first erased page when the
//! mapping programs every block in page order (page mapping: the rest are erased too), or all
//! of them when it may skip pages (block and hybrid mappings program a page at its LPA's
//! offset), checks each page's CRC (over its LPA,
//! sequence number and bytes: the whole page is transferred), discards pages whose CRC fails
//! (torn programs, damaged lower pages) and every page of a block whose erase was interrupted,
//! and keeps for each LPA the intact page with the highest sequence number. Pages of the dump
//! area (power-loss protection) are read last and win over flash (their sequence numbers are
//! above every flash page's). Erase counts are not rebuilt from pages: they are kept in a
//! metadata area updated with every erase (the chip model's block table stands for it).
//!
//! Time: each die reads its own pages (read time of the page type, plus the transfer of page
//! and spare area over its channel); dies work in parallel, a channel's transfers do not
//! overlap. The scan takes the longest of the dies' array time and the channels' bus time.

use super::checkpoint::MapCheckpoint;
use super::cut::PowerCut;
use super::image::PageImage;
use crate::address::{Lpa, Ppa};
use crate::flash::oob::OOB_BYTES;
use nandlab_core::SimTime;
use nandlab_nand::Geometry;
use nandlab_nand::timing::TimingModel;

/// Which recovery runs. Anything but [`RecoveryVariant::Correct`] is deliberately broken, for
/// checking that the oracle catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryVariant {
    /// Newest intact page per LPA.
    Correct,
    /// Broken: trusts pages whose CRC fails (a torn page can win).
    IgnoreCrc,
    /// Broken: the lowest sequence number wins.
    LowestSequenceWins,
    /// Broken: the OOB carries no sequence number, so the last intact copy the scan finds
    /// (in physical order) wins.
    NoSequence,
    /// Broken: the scan leaves out each open block's newest page holding data (an off-by-one
    /// at the write pointer), so an older copy of its LPA, or none, comes back.
    SkipNewestPage,
}

impl RecoveryVariant {
    /// Parses `correct`, `ignore-crc`, `lowest-sequence-wins`, `no-sequence` or
    /// `skip-newest-page`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "correct" => Ok(RecoveryVariant::Correct),
            "ignore-crc" => Ok(RecoveryVariant::IgnoreCrc),
            "lowest-sequence-wins" => Ok(RecoveryVariant::LowestSequenceWins),
            "no-sequence" => Ok(RecoveryVariant::NoSequence),
            "skip-newest-page" => Ok(RecoveryVariant::SkipNewestPage),
            _ => Err(format!(
                "recovery = {text:?}: expected correct, ignore-crc, lowest-sequence-wins, no-sequence or skip-newest-page"
            )),
        }
    }
}

/// Where a recovered LPA's data is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A flash page.
    Flash(Ppa),
    /// The n-th page of the dump area.
    Dump(u32),
}

/// Numbers of a mount.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RecoveryReport {
    /// Pages read by the scan (flash and dump area).
    pub pages_read: u64,
    /// Physical pages of the device.
    pub physical_pages: u64,
    /// Device capacity (bytes, physical).
    pub capacity_bytes: u64,
    /// Simulated scan time (ps).
    pub time_ps: u64,
    /// Programmed pages discarded (CRC failing, or in an unreliable block).
    pub pages_discarded: u64,
    /// LPAs mapped after the mount.
    pub lpas_mapped: u64,
    /// Blocks fully erased (free).
    pub blocks_free: u64,
    /// Blocks to erase before reuse (interrupted erase).
    pub blocks_to_erase: u64,
    /// Intact pages of transactions without a durable commit record, discarded (the
    /// transactional mode, `mapping/txn.rs`).
    pub pages_uncommitted: u64,
    /// The mount started from a map checkpoint (else it scanned everything).
    pub checkpoint_used: bool,
    /// The checkpoint mapped a page the cut damaged: the mount fell back to a full scan.
    pub checkpoint_fallback: bool,
    /// Pages a full scan of the same array reads (for comparison).
    pub full_scan_pages_read: u64,
    /// Simulated time of that full scan (ps).
    pub full_scan_time_ps: u64,
    /// Pages of the trim log read (its committed records after the checkpoint; in
    /// `pages_read`).
    pub trim_log_pages_read: u64,
}

/// The state a mount rebuilds.
#[derive(Clone, Debug)]
pub struct Recovered {
    /// Per LPA, where its data is.
    pub map: Vec<Option<Source>>,
    /// Per LPA, the sequence number of the recovered copy (0: none).
    pub sequence: Vec<u64>,
    /// Per block, valid pages.
    pub valid_pages: Vec<u32>,
    /// Per block, one past its last programmed page (the write pointer; `pages_per_block`
    /// when full).
    pub write_pointer: Vec<u32>,
    /// Free blocks (all pages erased, erase not interrupted).
    pub free_blocks: Vec<u32>,
    /// Blocks whose erase was interrupted: erase before reuse.
    pub blocks_to_erase: Vec<u32>,
    /// Numbers.
    pub report: RecoveryReport,
}

impl Recovered {
    /// The bytes the mounted device returns for `lpa` (full payload mode; `None` when
    /// unmapped).
    pub fn read<'a>(&self, cut: &'a PowerCut, lpa: Lpa) -> Option<&'a [u8]> {
        match (*self.map.get(lpa.index())?)? {
            Source::Flash(ppa) => match cut.image.page(ppa)? {
                PageImage::Programmed(c) => c.data.as_deref(),
                PageImage::Erased => None,
            },
            Source::Dump(i) => cut.dump.get(i as usize)?.data.as_deref(),
        }
    }
}

/// Mounts the device `cut` left: from the newest committed map checkpoint plus the pages
/// written after it when the device wrote one ([`super::checkpoint`]), otherwise a full scan;
/// the report gives the full scan's pages and time beside (`full_scan_*`).
/// `blocks_in_page_order`: every block is programmed from page 0 without gaps (page mapping),
/// so a block's scan stops at its first erased page.
pub fn recover(
    cut: &PowerCut,
    logical_pages: u32,
    geometry: &Geometry,
    timing: &TimingModel,
    variant: RecoveryVariant,
    blocks_in_page_order: bool,
) -> Recovered {
    let full = mount(
        cut,
        logical_pages,
        geometry,
        timing,
        variant,
        blocks_in_page_order,
        None,
    )
    .expect("a full scan always mounts");
    let (full_pages, full_ps) = (full.report.pages_read, full.report.time_ps);
    let from_checkpoint = cut.image.checkpoint().map(|checkpoint| {
        mount(
            cut,
            logical_pages,
            geometry,
            timing,
            variant,
            blocks_in_page_order,
            Some(checkpoint),
        )
    });
    let mut recovered = match from_checkpoint {
        Some(Some(r)) => r,
        Some(None) => {
            // the checkpoint maps a page the cut damaged: the mount falls back to a full
            // scan (it has read the checkpoint and the rescanned pages by then)
            let checkpoint_pages = cut.image.checkpoint().map_or(0, |c| c.pages);
            let mut full = full;
            full.report.checkpoint_fallback = true;
            full.report.pages_read += checkpoint_pages;
            full
        }
        None => full,
    };
    recovered.report.full_scan_pages_read = full_pages;
    recovered.report.full_scan_time_ps = full_ps;
    recovered
}

/// One mount: a scan of every block, or (`checkpoint`) of the parts of blocks written after
/// it; `None` when a page the checkpoint maps was reread (a lower page of a word line
/// programmed on after the checkpoint) and found damaged: the LPA's previous copy may be in
/// a part not read, so only a full scan can find it.
fn mount(
    cut: &PowerCut,
    logical_pages: u32,
    geometry: &Geometry,
    timing: &TimingModel,
    variant: RecoveryVariant,
    blocks_in_page_order: bool,
    checkpoint: Option<&MapCheckpoint>,
) -> Option<Recovered> {
    let image = &cut.image;
    // the durable trims: the newest committed checkpoint's trim table (a full scan reads it
    // too) and the trim log's committed records after it
    let trims = image.durable_trims(logical_pages);
    let trimmed = |lpa: Lpa, sequence: u64| trims.get(lpa.index()).is_some_and(|&t| sequence <= t);
    let ppb = image.pages_per_block;
    let blocks = image.physical_pages() / ppb;
    let mut map: Vec<Option<Source>> = vec![None; logical_pages as usize];
    let mut sequence = vec![0u64; logical_pages as usize];
    let mut valid_pages = vec![0u32; blocks as usize];
    let mut write_pointer = vec![0; blocks as usize];
    let mut report = RecoveryReport {
        physical_pages: u64::from(image.physical_pages()),
        capacity_bytes: geometry.capacity_bytes(),
        ..RecoveryReport::default()
    };
    let (mut free_blocks, mut blocks_to_erase) = (Vec::new(), Vec::new());
    let dies = geometry.total_dies() as usize;
    let mut die_time = vec![SimTime::ZERO; dies];
    let mut channel_time = vec![SimTime::ZERO; geometry.channels as usize];
    let transfer = timing.transfer_time(geometry.page_size_bytes + OOB_BYTES as u32);
    let watermark = commit_watermark(cut, logical_pages);
    let mut scan_first = vec![0u32; blocks as usize];
    // the trim log's records, read from the metadata area (on die 0's channel)
    let log_pages: u64 = image.trim_log().iter().map(|r| r.pages).sum();
    report.trim_log_pages_read = log_pages;
    report.pages_read += log_pages;
    die_time[0] += (timing.read_time(0) + transfer) * log_pages;
    channel_time[0] += transfer * log_pages;
    if let Some(c) = checkpoint {
        // the checkpoint's pages, read from the metadata area (on die 0's channel); its
        // entries whose blocks were erased since are dropped (their LPAs' newer copies are
        // in the blocks scanned below)
        report.checkpoint_used = true;
        report.pages_read += c.pages;
        die_time[0] += (timing.read_time(0) + transfer) * c.pages;
        channel_time[0] += transfer * c.pages;
        for (lpa, entry) in c.map.iter().enumerate().take(logical_pages as usize) {
            let Some((ppa, seq)) = *entry else {
                continue;
            };
            if c.entry_valid(ppa, ppb, |b| image.erases(b), |b| image.is_unreliable(b))
                && !trimmed(Lpa(lpa as u32), seq)
            {
                map[lpa] = Some(Source::Flash(ppa));
                sequence[lpa] = seq;
            }
        }
    }
    for block in 0..blocks {
        let die_id = geometry.die_of_block(nandlab_nand::BlockId(block));
        let (die, channel) = (die_id.index(), geometry.channel_of_die(die_id) as usize);
        let unreliable = image.is_unreliable(block);
        let first = checkpoint.map_or(0, |c| {
            c.scan_from(block, image.erases(block), unreliable, timing.layout, ppb)
        });
        scan_first[block as usize] = first;
        if first > 0 {
            write_pointer[block as usize] = first;
        }
        // the broken variant's scan end: one short of an open block's newest programmed page
        let skipped = (variant == RecoveryVariant::SkipNewestPage)
            .then(|| {
                let programmed = |o: u32| {
                    matches!(
                        image.page(Ppa(block * ppb + o)),
                        Some(PageImage::Programmed(_))
                    )
                };
                // open: its last page is not programmed; the newest page holding data (paired
                // page padding programs pages without an LPA after it)
                if programmed(ppb - 1) {
                    return None;
                }
                (0..ppb).rev().find(|&o| {
                    matches!(image.page(Ppa(block * ppb + o)),
                        Some(PageImage::Programmed(c)) if c.lpa.is_some())
                })
            })
            .flatten();
        for offset in first..ppb {
            if skipped == Some(offset) {
                write_pointer[block as usize] = offset + 1;
                continue;
            }
            let ppa = Ppa(block * ppb + offset);
            report.pages_read += 1;
            die_time[die] += timing.read_time(offset) + transfer;
            channel_time[channel] += transfer;
            let content = match image.page(ppa) {
                Some(PageImage::Programmed(c)) if !unreliable => c,
                Some(PageImage::Programmed(_)) => {
                    write_pointer[block as usize] = offset + 1;
                    report.pages_discarded += 1;
                    continue;
                }
                _ => {
                    if blocks_in_page_order && !unreliable {
                        break;
                    }
                    continue;
                }
            };
            write_pointer[block as usize] = offset + 1;
            if variant != RecoveryVariant::IgnoreCrc && !content.crc_ok() {
                // (a torn page still takes its place: the block's write pointer is past it)
                report.pages_discarded += 1;
                continue;
            }
            // a transactional page counts only under a durable commit record
            let Some(oob_lpa) = content.lpa else {
                continue;
            };
            let Some(lpa) = crate::address::resolve(Some(oob_lpa), content.sequence, watermark)
            else {
                report.pages_uncommitted += 1;
                continue;
            };
            if lpa.0 >= logical_pages {
                continue;
            }
            if trimmed(lpa, content.sequence) {
                // older than a durable trim (the checkpoint's trim table, the trim log)
                continue;
            }
            let known = sequence[lpa.index()];
            let wins = match variant {
                RecoveryVariant::LowestSequenceWins => known == 0 || content.sequence < known,
                RecoveryVariant::NoSequence => true,
                _ => content.sequence > known,
            };
            if wins {
                map[lpa.index()] = Some(Source::Flash(ppa));
                sequence[lpa.index()] = content.sequence;
            }
        }
        if unreliable {
            blocks_to_erase.push(block);
        } else if write_pointer[block as usize] == 0 {
            free_blocks.push(block);
        }
    }
    if let Some(c) = checkpoint {
        // a page the checkpoint maps that this mount reread must be intact
        for (lpa, source) in map.iter().enumerate() {
            let Some(Source::Flash(ppa)) = *source else {
                continue;
            };
            if c.map.get(lpa).copied().flatten().map(|(p, _)| p) != Some(ppa) {
                continue; // replaced by a page the scan read (and checked)
            }
            let block = ppa.0 / ppb;
            let intact = matches!(image.page(ppa), Some(PageImage::Programmed(p)) if p.crc_ok());
            if ppa.0 % ppb >= scan_first[block as usize] && !intact {
                return None;
            }
        }
    }
    // the dump area: read on die 0
    for (i, page) in cut.dump.iter().enumerate() {
        report.pages_read += 1;
        die_time[0] += timing.read_time(0) + transfer;
        channel_time[0] += transfer;
        if page.lpa.0 >= logical_pages {
            continue;
        }
        if page.sequence > sequence[page.lpa.index()] {
            map[page.lpa.index()] = Some(Source::Dump(i as u32));
            sequence[page.lpa.index()] = page.sequence;
        }
    }
    for source in map.iter().flatten() {
        if let Source::Flash(ppa) = source {
            valid_pages[(ppa.0 / ppb) as usize] += 1;
        }
    }
    let longest = |times: &[SimTime]| times.iter().copied().max().unwrap_or(SimTime::ZERO);
    report.time_ps = longest(&die_time).max(longest(&channel_time)).as_ps();
    report.lpas_mapped = map.iter().filter(|s| s.is_some()).count() as u64;
    report.blocks_free = free_blocks.len() as u64;
    report.blocks_to_erase = blocks_to_erase.len() as u64;
    Some(Recovered {
        map,
        sequence,
        valid_pages,
        write_pointer,
        free_blocks,
        blocks_to_erase,
        report,
    })
}

/// The transactional mode's commit watermark: the sequence number of the newest intact page
/// of the commit record (the LPA just past the host's range), 0 when there is none. Read in the
/// same full scan (no extra flash reads are timed).
fn commit_watermark(cut: &PowerCut, logical_pages: u32) -> u64 {
    let image = &cut.image;
    let ppb = image.pages_per_block;
    let mut watermark = 0;
    for ppa in (0..image.physical_pages()).map(Ppa) {
        if image.is_unreliable(ppa.0 / ppb) {
            continue;
        }
        if let Some(PageImage::Programmed(c)) = image.page(ppa)
            && c.lpa == Some(Lpa(logical_pages))
            && c.crc_ok()
        {
            watermark = watermark.max(c.sequence);
        }
    }
    watermark
}
