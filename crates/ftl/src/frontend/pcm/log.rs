//! The log-buffer half of the PCM stage (SPEC P3/P4): a whole page arriving is compared with
//! the page's current content; the changed byte range goes to the [`LogBuffer`] (the thesis's
//! PCM log region, dPRAM or In-Page Logging), whose merges and flushes come back as whole page
//! writes for flash. The stage keeps two host-side mirrors per logical page: what flash holds
//! (as the buffer's [`FlashPages`]) and the current content (what reads return); every page
//! the buffer writes to flash is checked against the current content.

use crate::address::Lpa;
use crate::frontend::LogAreaOp;
use nandlab_pcm::{
    AccessCost, FlashPages, FlashShape, FlashWork, LogBuffer, PageNo, PcmResult, WriteOutcome,
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
}

pub(crate) struct LogPart {
    buffer: Box<dyn LogBuffer + Send>,
    mirrors: Mirrors,
    /// Whether the log holds a delta of the page (its current content differs from flash).
    logged: Vec<bool>,
    work: FlashWork,
    /// Pages for flash from the last call (reused).
    pending: Vec<u8>,
    pending_lpas: Vec<Lpa>,
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

impl LogPart {
    pub fn new(buffer: Box<dyn LogBuffer + Send>, shape: FlashShape) -> Self {
        LogPart {
            buffer,
            mirrors: Mirrors::new(shape.pages, shape.page_size_bytes),
            logged: vec![false; shape.pages as usize],
            work: FlashWork::default(),
            pending: Vec::new(),
            pending_lpas: Vec::new(),
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

    /// A whole page arrives; the pages for flash are then in [`LogPart::to_flash`].
    pub fn write(
        &mut self,
        device: &mut PcmDevice,
        lpa: Lpa,
        data: &[u8],
    ) -> PcmResult<AccessCost> {
        self.pending.clear();
        self.pending_lpas.clear();
        self.pending_log_ops.clear();
        let i = lpa.index();
        let old = self.mirrors.current(i).unwrap_or(&self.zeros);
        let Some(first) = old.iter().zip(data).position(|(a, b)| a != b) else {
            return Ok(AccessCost::default());
        };
        let last = old
            .iter()
            .zip(data)
            .rposition(|(a, b)| a != b)
            .expect("one differs");
        self.mirrors.current_mut(i).copy_from_slice(data);
        self.work.clear();
        let result = self.buffer.write(
            device,
            PageNo(lpa.0),
            first as u32,
            &data[first..=last],
            &self.mirrors,
            &mut self.work,
        )?;
        self.apply_work(Some(lpa));
        if self.work.log_sector_writes > 0 {
            self.pending_log_ops.push(LogAreaOp::Sectors {
                unit: lpa.0 / self.pages_per_block,
                count: self.work.log_sector_writes,
            });
        }
        match result.outcome {
            WriteOutcome::ToFlash => self.send(lpa, None),
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
        for (page, bytes) in work.writes() {
            let lpa = Lpa(page.0);
            // the page being written goes to flash after its old merged copy (ToFlash)
            let current = self.mirrors.current(lpa.index()).unwrap_or(&self.zeros);
            if Some(lpa) != writing && current != bytes {
                self.mismatches += 1;
            }
            self.send(lpa, Some(bytes));
        }
        self.work = work;
    }

    /// `lpa` goes to flash with `bytes` (its current content when `None`).
    fn send(&mut self, lpa: Lpa, bytes: Option<&[u8]>) {
        let i = lpa.index();
        let at = self.mirrors.slot(i);
        let size = self.mirrors.page_size_bytes;
        match bytes {
            Some(b) => self.mirrors.flash_mut(i).copy_from_slice(b),
            None => {
                let m = &mut self.mirrors;
                m.flash[at..at + size].copy_from_slice(&m.current[at..at + size]);
            }
        }
        self.mirrors.flash_present[i] = true;
        self.logged[i] = !self.mirrors.in_sync(i);
        self.pending.extend_from_slice(self.mirrors.flash(i));
        self.pending_lpas.push(lpa);
    }

    /// The log-area work of the last call (In-Page Logging), in order after its pages.
    pub fn log_ops(&self) -> &[LogAreaOp] {
        &self.pending_log_ops
    }

    /// How many pages the last call sends to flash.
    pub fn pending_pages(&self) -> usize {
        self.pending_lpas.len()
    }

    /// Their bytes, one page after another.
    pub fn pending_bytes(&self) -> &[u8] {
        &self.pending[..self.pending_lpas.len() * self.mirrors.page_size_bytes]
    }

    /// The pages the last call sends to flash, in order.
    pub fn to_flash(&self) -> impl Iterator<Item = ToFlash<'_>> {
        let size = self.mirrors.page_size_bytes;
        self.pending_lpas
            .iter()
            .zip(self.pending.chunks_exact(size.max(1)))
            .map(|(&lpa, data)| ToFlash { lpa, data })
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
        self.mirrors.flash_present[i] = false;
        if self.mirrors.current(i).is_some() {
            self.mirrors.current_mut(i).fill(0);
            self.mirrors.flash_mut(i).fill(0);
        }
        self.buffer.trim(device, PageNo(lpa.0))
    }

    /// Merges every logged block; the pages are then in [`LogPart::to_flash`].
    pub fn flush(&mut self, device: &mut PcmDevice) -> PcmResult<AccessCost> {
        self.pending.clear();
        self.pending_lpas.clear();
        self.pending_log_ops.clear();
        self.work.clear();
        let cost = self
            .buffer
            .flush_all(device, &self.mirrors, &mut self.work)?;
        self.apply_work(None);
        Ok(cost)
    }
}
