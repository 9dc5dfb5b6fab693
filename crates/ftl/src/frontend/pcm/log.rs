//! The log-buffer half of the PCM stage (SPEC P3/P4): a whole page arriving is compared with
//! the page's current content; the changed byte range goes to the [`LogBuffer`] (the thesis's
//! PCM log region, dPRAM or In-Page Logging), whose merges and flushes come back as whole page
//! writes for flash. The stage keeps two host-side mirrors per logical page: what flash holds
//! (as the buffer's [`FlashPages`]) and the current content (what reads return); every page
//! the buffer writes to flash is checked against the current content.

use crate::address::Lpa;
use crate::frontend::LogAreaOp;
use nandlab_pcm::{
    AccessCost, Fingerprint, FlashPages, FlashShape, FlashWork, LogBuffer, PageNo, PcmResult,
    WriteOutcome,
};
use nandlab_pcm::{PcmDevice, logbuf::LogStats};

/// Two copies of each logical page the stage has seen, allocated when first touched (so host
/// memory follows the pages written, not the device size): what flash holds (shown to the
/// buffer as its [`FlashPages`]) and the current content (what reads return).
#[derive(Debug)]
pub(crate) struct Mirrors {
    slot_of: Vec<u32>,
    flash_present: Vec<bool>,
    flash: Vec<u8>,
    current: Vec<u8>,
    page_size_bytes: usize,
    /// What flash holds of a page present on flash without a slot (preconditioned: zeros).
    zeros: Vec<u8>,
}

const NO_SLOT: u32 = u32::MAX;

impl FlashPages for Mirrors {
    fn page(&self, page: PageNo) -> Option<&[u8]> {
        let i = page.0 as usize;
        self.flash_present[i].then(|| self.flash(i))
    }
}

impl Mirrors {
    fn new(pages: u32, page_size_bytes: u32) -> Self {
        Mirrors {
            slot_of: vec![NO_SLOT; pages as usize],
            flash_present: vec![false; pages as usize],
            flash: Vec::new(),
            current: Vec::new(),
            page_size_bytes: page_size_bytes as usize,
            zeros: vec![0; page_size_bytes as usize],
        }
    }
    /// The page's slot, allocated (zeros) on first use.
    fn slot(&mut self, i: usize) -> usize {
        if self.slot_of[i] == NO_SLOT {
            self.slot_of[i] = (self.flash.len() / self.page_size_bytes) as u32;
            self.flash
                .resize(self.flash.len() + self.page_size_bytes, 0);
            self.current
                .resize(self.current.len() + self.page_size_bytes, 0);
        }
        self.slot_of[i] as usize * self.page_size_bytes
    }
    fn flash(&self, i: usize) -> &[u8] {
        if self.slot_of[i] == NO_SLOT {
            // on flash before the stage saw it (`LogPart::assume_zeros_on_flash`)
            return &self.zeros;
        }
        let at = self.slot_of[i] as usize * self.page_size_bytes;
        &self.flash[at..at + self.page_size_bytes]
    }
    /// Current content (`None`: never touched, zeros).
    fn current(&self, i: usize) -> Option<&[u8]> {
        let slot = self.slot_of[i];
        (slot != NO_SLOT).then(|| {
            let at = slot as usize * self.page_size_bytes;
            &self.current[at..at + self.page_size_bytes]
        })
    }
    fn current_mut(&mut self, i: usize) -> &mut [u8] {
        let at = self.slot(i);
        &mut self.current[at..at + self.page_size_bytes]
    }
    fn flash_mut(&mut self, i: usize) -> &mut [u8] {
        let at = self.slot(i);
        &mut self.flash[at..at + self.page_size_bytes]
    }
    /// Whether flash holds exactly the current content.
    fn in_sync(&self, i: usize) -> bool {
        self.flash_present[i] && self.current(i).is_some_and(|c| c == self.flash(i))
    }
}

/// A page the log buffer sends to flash.
pub(crate) struct ToFlash<'a> {
    pub lpa: Lpa,
    pub data: &'a [u8],
    /// The SHA-1 of `data`, when the stage already knows it (the page's flash mirror is
    /// unchanged since it was hashed).
    pub fingerprint: Option<Fingerprint>,
}

/// Where a pending page's bytes are.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// The page's flash mirror (what the call leaves flash holding for it).
    Mirror,
    /// A page of `LogPart::pending` (an earlier write of the page in the same call, copied
    /// out before a later one changed the mirror).
    Copied(u32),
}

pub(crate) struct LogPart {
    buffer: Box<dyn LogBuffer + Send>,
    mirrors: Mirrors,
    /// Whether the log holds a delta of the page (its current content differs from flash).
    /// Exact for every page with a flash copy whenever no call is under way: `logged[i] ==
    /// (current != flash)` (checked by [`LogPart::check`]).
    logged: Vec<bool>,
    /// SHA-1 of each page's flash mirror, valid while `fingerprint_known` (dropped whenever
    /// the mirror's bytes change): an unchanged page of a whole-block flush is not hashed
    /// again. Simulator-side only: the simulated hashing cost is charged as before.
    flash_fingerprint: Vec<Fingerprint>,
    fingerprint_known: Vec<bool>,
    /// Whether SHA-1s are remembered and flush pages read by reference (`false`: every page
    /// hashed and copied, for tests comparing the two).
    reuse: bool,
    work: FlashWork,
    /// Pages for flash from the last call (reused): page and where its bytes are.
    pending_lpas: Vec<Lpa>,
    pending_sources: Vec<Source>,
    /// Bytes of pending pages copied out of their mirror (reused).
    pending: Vec<u8>,
    /// Per page, 1 + the index of the pending entry reading its mirror in this call (0: none).
    mirror_ref: Vec<u32>,
    /// Log-area work from the last call (In-Page Logging), in order.
    pending_log_ops: Vec<LogAreaOp>,
    pages_per_block: u32,
    zeros: Vec<u8>,
    scratch: Vec<u8>,
    /// Pages the buffer wrote that differed from the current content (must stay 0).
    pub mismatches: u64,
    /// Reads merged from the log (checked against the current content).
    pub reads_merged: u64,
}

impl std::fmt::Debug for LogPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogPart")
            .field("stats", &self.buffer.stats())
            .finish_non_exhaustive()
    }
}

/// The first byte where `a` and `b` differ (equal lengths), comparing 64-byte runs first.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at + 64 <= a.len() && a[at..at + 64] == b[at..at + 64] {
        at += 64;
    }
    a[at..]
        .iter()
        .zip(&b[at..])
        .position(|(x, y)| x != y)
        .map(|i| at + i)
}

/// The last byte where `a` and `b` differ (equal lengths), comparing 64-byte runs first.
fn last_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    let mut end = a.len();
    while end >= 64 && a[end - 64..end] == b[end - 64..end] {
        end -= 64;
    }
    a[..end].iter().zip(&b[..end]).rposition(|(x, y)| x != y)
}

impl LogPart {
    pub fn new(buffer: Box<dyn LogBuffer + Send>, shape: FlashShape) -> Self {
        let pages = shape.pages as usize;
        let mut work = FlashWork::default();
        // a flush's unchanged pages are read from the flash mirror, not copied
        work.keep_flash_copies(true);
        LogPart {
            buffer,
            mirrors: Mirrors::new(shape.pages, shape.page_size_bytes),
            logged: vec![false; pages],
            flash_fingerprint: vec![Fingerprint::default(); pages],
            fingerprint_known: vec![false; pages],
            reuse: true,
            work,
            pending_lpas: Vec::new(),
            pending_sources: Vec::new(),
            pending: Vec::new(),
            mirror_ref: vec![0; pages],
            pending_log_ops: Vec::new(),
            pages_per_block: shape.pages_per_block,
            zeros: vec![0; shape.page_size_bytes as usize],
            scratch: vec![0; shape.page_size_bytes as usize],
            mismatches: 0,
            reads_merged: 0,
        }
    }

    pub fn stats(&self) -> LogStats {
        self.buffer.stats()
    }
    pub fn holds(&self, lpa: Lpa) -> bool {
        self.logged[lpa.index()]
    }
    /// The current bytes of a page with a logged delta.
    pub fn page(&self, lpa: Lpa) -> Option<&[u8]> {
        if self.logged[lpa.index()] {
            self.mirrors.current(lpa.index())
        } else {
            None
        }
    }

    /// Forgets the last call's pages for flash.
    fn clear_pending(&mut self) {
        for (lpa, source) in self.pending_lpas.iter().zip(&self.pending_sources) {
            if matches!(source, Source::Mirror) {
                self.mirror_ref[lpa.index()] = 0;
            }
        }
        self.pending_lpas.clear();
        self.pending_sources.clear();
        self.pending.clear();
        self.pending_log_ops.clear();
    }

    /// A whole page arrives; the pages for flash are then in [`LogPart::pending_page`].
    pub fn write(
        &mut self,
        device: &mut PcmDevice,
        lpa: Lpa,
        data: &[u8],
    ) -> PcmResult<AccessCost> {
        self.clear_pending();
        let i = lpa.index();
        let old = self.mirrors.current(i).unwrap_or(&self.zeros);
        let Some(first) = first_difference(old, data) else {
            return Ok(AccessCost::default());
        };
        let last = last_difference(old, data).expect("one differs");
        self.mirrors.current_mut(i).copy_from_slice(data);
        self.work.clear();
        let result = self.buffer.write(
            device,
            PageNo(lpa.0),
            first as u32,
            &data[first..=last],
            &self.mirrors,
            &mut self.work,
        );
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                // keep `logged` exact for the page whose content changed
                self.logged[i] = !self.mirrors.in_sync(i);
                return Err(e);
            }
        };
        self.apply_work(Some(lpa));
        if self.work.log_sector_writes > 0 {
            self.pending_log_ops.push(LogAreaOp::Sectors {
                unit: lpa.0 / self.pages_per_block,
                count: self.work.log_sector_writes,
            });
        }
        match result.outcome {
            WriteOutcome::ToFlash => self.send_current(lpa),
            WriteOutcome::Logged => self.logged[i] = !self.mirrors.in_sync(i),
        }
        Ok(result.cost)
    }

    /// Applies the buffer's flash writes to the mirror and queues them for flash, with the
    /// units it merged.
    fn apply_work(&mut self, writing: Option<Lpa>) {
        let work = std::mem::take(&mut self.work);
        self.pending_log_ops
            .extend(work.units_merged.iter().map(|&u| LogAreaOp::UnitMerged(u)));
        for (page, bytes) in work.entries() {
            let lpa = Lpa(page.0);
            let i = lpa.index();
            match bytes {
                Some(bytes) => {
                    self.make_room(lpa);
                    let at = self.mirrors.slot(i);
                    let size = self.mirrors.page_size_bytes;
                    self.mirrors.flash[at..at + size].copy_from_slice(bytes);
                    self.fingerprint_known[i] = false;
                    self.mirrors.flash_present[i] = true;
                    // the page goes to flash; it differs from the current content when the
                    // page is being written (its old merged copy goes first) or on a bug
                    let differs = self.mirrors.current[at..at + size] != *bytes;
                    if Some(lpa) != writing && differs {
                        self.mismatches += 1;
                    }
                    self.logged[i] = differs;
                }
                None => {
                    // the page's flash copy, unchanged (a whole-block flush): the mirror
                    // already holds it; whether it differs from the current content is
                    // `logged` (exact for pages not being written)
                    debug_assert!(self.mirrors.flash_present[i], "a flash copy of page {i}");
                    if Some(lpa) == writing {
                        self.logged[i] = !self.mirrors.in_sync(i);
                    } else if self.logged[i] {
                        self.mismatches += 1;
                    }
                }
            }
            self.queue(lpa);
        }
        self.work = work;
    }

    /// The mirror of `lpa` is about to change: a pending entry reading it gets its own copy.
    fn make_room(&mut self, lpa: Lpa) {
        let i = lpa.index();
        let r = self.mirror_ref[i];
        if r == 0 {
            return;
        }
        let k = (r - 1) as usize;
        let size = self.mirrors.page_size_bytes;
        let page = (self.pending.len() / size.max(1)) as u32;
        self.pending.extend_from_slice(self.mirrors.flash(i));
        self.pending_sources[k] = Source::Copied(page);
        self.mirror_ref[i] = 0;
    }

    /// `lpa` goes to flash with its current content (`ToFlash`).
    fn send_current(&mut self, lpa: Lpa) {
        self.make_room(lpa);
        let i = lpa.index();
        let at = self.mirrors.slot(i);
        let size = self.mirrors.page_size_bytes;
        let m = &mut self.mirrors;
        m.flash[at..at + size].copy_from_slice(&m.current[at..at + size]);
        self.fingerprint_known[i] = false;
        self.mirrors.flash_present[i] = true;
        self.logged[i] = false;
        self.queue(lpa);
    }

    /// Queues `lpa`'s flash mirror (as it now is) for flash.
    fn queue(&mut self, lpa: Lpa) {
        let i = lpa.index();
        self.make_room(lpa);
        self.pending_lpas.push(lpa);
        self.pending_sources.push(Source::Mirror);
        self.mirror_ref[i] = self.pending_lpas.len() as u32;
    }

    /// The log-area work of the last call (In-Page Logging), in order after its pages.
    pub fn log_ops(&self) -> &[LogAreaOp] {
        &self.pending_log_ops
    }

    /// How many pages the last call sends to flash.
    pub fn pending_pages(&self) -> usize {
        self.pending_lpas.len()
    }

    /// The `k`-th page the last call sends to flash.
    pub fn pending_page(&self, k: usize) -> ToFlash<'_> {
        let lpa = self.pending_lpas[k];
        let i = lpa.index();
        match self.pending_sources[k] {
            Source::Mirror => ToFlash {
                lpa,
                data: self.mirrors.flash(i),
                fingerprint: self.fingerprint_known[i].then(|| self.flash_fingerprint[i]),
            },
            Source::Copied(page) => {
                let size = self.mirrors.page_size_bytes;
                ToFlash {
                    lpa,
                    data: &self.pending[page as usize * size..(page as usize + 1) * size],
                    fingerprint: None,
                }
            }
        }
    }

    /// Turns the simulator-side shortcuts on or off: remembered SHA-1s and a whole-block
    /// flush's unchanged pages read from the flash mirror instead of copied (results are the
    /// same; off is the reference for tests).
    pub fn set_reuse(&mut self, reuse: bool) {
        self.reuse = reuse;
        self.work.keep_flash_copies(reuse);
        if !reuse {
            self.fingerprint_known.fill(false);
        }
    }

    /// The stage hashed the `k`-th pending page: `fingerprint` is its SHA-1, remembered while
    /// the page's flash mirror keeps those bytes.
    pub fn hashed(&mut self, k: usize, fingerprint: Fingerprint) {
        if self.reuse && matches!(self.pending_sources[k], Source::Mirror) {
            let i = self.pending_lpas[k].index();
            self.flash_fingerprint[i] = fingerprint;
            self.fingerprint_known[i] = true;
        }
    }

    /// Checks the part's own invariants (tests): every remembered fingerprint is the SHA-1 of
    /// its page's flash mirror, and `logged` is exact for every page with a flash copy.
    pub fn check(&self) -> Result<(), String> {
        for i in 0..self.logged.len() {
            if self.fingerprint_known[i]
                && Fingerprint::of(self.mirrors.flash(i)) != self.flash_fingerprint[i]
            {
                return Err(format!("page {i}: a stale fingerprint of its flash mirror"));
            }
            if self.mirrors.flash_present[i] {
                let current = self.mirrors.current(i).unwrap_or(&self.zeros);
                if self.logged[i] != (current != self.mirrors.flash(i)) {
                    return Err(format!("page {i}: `logged` is not exact"));
                }
            }
        }
        Ok(())
    }

    /// A host read of a logged page: the log merged with the flash copy (checked).
    pub fn read(&mut self, device: &mut PcmDevice, lpa: Lpa) -> PcmResult<AccessCost> {
        let i = lpa.index();
        let flash = self.mirrors.flash_present[i].then(|| self.mirrors.flash(i));
        let cost = self
            .buffer
            .read(device, PageNo(lpa.0), flash, &mut self.scratch)?;
        self.reads_merged += 1;
        if self.mirrors.current(i).unwrap_or(&self.zeros) != &self.scratch[..] {
            self.mismatches += 1;
        }
        Ok(cost)
    }

    /// Flash holds zeros at `lpa`, written around the stage (preconditioning); a page the
    /// stage has seen is left alone.
    pub fn assume_zeros_on_flash(&mut self, lpa: Lpa) {
        let i = lpa.index();
        if self.mirrors.slot_of[i] == NO_SLOT {
            self.mirrors.flash_present[i] = true;
        }
    }

    pub fn trim(&mut self, device: &mut PcmDevice, lpa: Lpa) -> PcmResult<AccessCost> {
        let i = lpa.index();
        self.logged[i] = false;
        self.fingerprint_known[i] = false;
        self.mirrors.flash_present[i] = false;
        if self.mirrors.current(i).is_some() {
            self.mirrors.current_mut(i).fill(0);
            self.mirrors.flash_mut(i).fill(0);
        }
        self.buffer.trim(device, PageNo(lpa.0))
    }

    /// Merges every logged block; the pages are then in [`LogPart::pending_page`].
    pub fn flush(&mut self, device: &mut PcmDevice) -> PcmResult<AccessCost> {
        self.clear_pending();
        self.work.clear();
        let cost = self
            .buffer
            .flush_all(device, &self.mirrors, &mut self.work)?;
        self.apply_work(None);
        Ok(cost)
    }
}
