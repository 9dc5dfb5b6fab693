//! The log-buffer half of the PCM stage (SPEC P3/P4): a whole page arriving is compared with
//! the page's current content; the changed byte range goes to the [`LogBuffer`] (the thesis's
//! PCM log region, dPRAM or In-Page Logging), whose merges and flushes come back as whole page
//! writes for flash. The stage keeps two host-side mirrors per logical page: what flash holds
//! (as the buffer's [`FlashPages`]) and the current content (what reads return); every page
//! the buffer writes to flash is checked against the current content.

use crate::address::Lpa;
use nandlab_pcm::{
    AccessCost, FlashPages, FlashShape, FlashWork, LogBuffer, PageNo, PcmResult, WriteOutcome,
};
use nandlab_pcm::{PcmDevice, logbuf::LogStats};

/// Page contents by logical page, with whether flash holds a copy.
#[derive(Debug)]
pub(crate) struct FlashMirror {
    bytes: Vec<u8>,
    present: Vec<bool>,
    page_size_bytes: usize,
}

impl FlashPages for FlashMirror {
    fn page(&self, page: PageNo) -> Option<&[u8]> {
        let i = page.0 as usize;
        self.present[i].then(|| &self.bytes[i * self.page_size_bytes..][..self.page_size_bytes])
    }
}

impl FlashMirror {
    fn new(pages: u32, page_size_bytes: u32) -> Self {
        FlashMirror {
            bytes: vec![0; pages as usize * page_size_bytes as usize],
            present: vec![false; pages as usize],
            page_size_bytes: page_size_bytes as usize,
        }
    }
    fn slice(&self, i: usize) -> &[u8] {
        &self.bytes[i * self.page_size_bytes..][..self.page_size_bytes]
    }
    fn slice_mut(&mut self, i: usize) -> &mut [u8] {
        &mut self.bytes[i * self.page_size_bytes..][..self.page_size_bytes]
    }
}

/// A page the log buffer sends to flash.
pub(crate) struct ToFlash<'a> {
    pub lpa: Lpa,
    pub data: &'a [u8],
}

pub(crate) struct LogPart {
    buffer: Box<dyn LogBuffer + Send>,
    flash: FlashMirror,
    current: FlashMirror,
    /// Whether the log holds a delta of the page (its current content differs from flash).
    logged: Vec<bool>,
    work: FlashWork,
    /// Pages for flash from the last call (reused).
    pending: Vec<u8>,
    pending_lpas: Vec<Lpa>,
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
            flash: FlashMirror::new(shape.pages, shape.page_size_bytes),
            current: FlashMirror::new(shape.pages, shape.page_size_bytes),
            logged: vec![false; shape.pages as usize],
            work: FlashWork::default(),
            pending: Vec::new(),
            pending_lpas: Vec::new(),
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
        self.logged[lpa.index()].then(|| self.current.slice(lpa.index()))
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
        let i = lpa.index();
        let old = self.current.slice(i);
        let Some(first) = old.iter().zip(data).position(|(a, b)| a != b) else {
            return Ok(AccessCost::default());
        };
        let last = old
            .iter()
            .zip(data)
            .rposition(|(a, b)| a != b)
            .expect("one differs");
        self.current.slice_mut(i).copy_from_slice(data);
        self.current.present[i] = true;
        self.work.clear();
        let result = self.buffer.write(
            device,
            PageNo(lpa.0),
            first as u32,
            &data[first..=last],
            &self.flash,
            &mut self.work,
        )?;
        self.apply_work(Some(lpa));
        match result.outcome {
            WriteOutcome::ToFlash => self.send(lpa, None),
            WriteOutcome::Logged => {
                let equal = self.flash.present[i] && self.flash.slice(i) == self.current.slice(i);
                self.logged[i] = !equal;
            }
        }
        Ok(result.cost)
    }

    /// Applies the buffer's flash writes to the mirror and queues them for flash.
    fn apply_work(&mut self, writing: Option<Lpa>) {
        let work = std::mem::take(&mut self.work);
        for (page, bytes) in work.writes() {
            let lpa = Lpa(page.0);
            // the page being written goes to flash after its old merged copy (ToFlash)
            let expected = Some(lpa) == writing || self.current.slice(lpa.index()) == bytes;
            if !expected {
                self.mismatches += 1;
            }
            self.send(lpa, Some(bytes));
        }
        self.work = work;
    }

    /// `lpa` goes to flash with `bytes` (its current content when `None`).
    fn send(&mut self, lpa: Lpa, bytes: Option<&[u8]>) {
        let i = lpa.index();
        let size = self.flash.page_size_bytes;
        match bytes {
            Some(b) => self.flash.slice_mut(i).copy_from_slice(b),
            None => {
                let (f, c) = (&mut self.flash.bytes, &self.current.bytes);
                f[i * size..][..size].copy_from_slice(&c[i * size..][..size]);
            }
        }
        self.flash.present[i] = true;
        self.logged[i] = self.flash.slice(i) != self.current.slice(i);
        self.pending.extend_from_slice(self.flash.slice(i));
        self.pending_lpas.push(lpa);
    }

    /// The pages the last call sends to flash, in order.
    pub fn to_flash(&self) -> impl Iterator<Item = ToFlash<'_>> {
        let size = self.flash.page_size_bytes;
        self.pending_lpas
            .iter()
            .zip(self.pending.chunks_exact(size.max(1)))
            .map(|(&lpa, data)| ToFlash { lpa, data })
    }

    /// A host read of a logged page: the log merged with the flash copy (checked).
    pub fn read(&mut self, device: &mut PcmDevice, lpa: Lpa) -> PcmResult<AccessCost> {
        let i = lpa.index();
        let flash = self.flash.present[i].then(|| self.flash.slice(i));
        let cost = self
            .buffer
            .read(device, PageNo(lpa.0), flash, &mut self.scratch)?;
        self.reads_merged += 1;
        if self.scratch != self.current.slice(i) {
            self.mismatches += 1;
        }
        Ok(cost)
    }

    pub fn trim(&mut self, device: &mut PcmDevice, lpa: Lpa) -> PcmResult<AccessCost> {
        let i = lpa.index();
        self.logged[i] = false;
        self.flash.present[i] = false;
        self.current.present[i] = false;
        self.flash.slice_mut(i).fill(0);
        self.current.slice_mut(i).fill(0);
        self.buffer.trim(device, PageNo(lpa.0))
    }

    /// Merges every logged block; the pages are then in [`LogPart::to_flash`].
    pub fn flush(&mut self, device: &mut PcmDevice) -> PcmResult<AccessCost> {
        self.pending.clear();
        self.pending_lpas.clear();
        self.work.clear();
        let cost = self.buffer.flush_all(device, &self.flash, &mut self.work)?;
        self.apply_work(None);
        Ok(cost)
    }
}
