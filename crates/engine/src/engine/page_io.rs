//! Page reads and writes of the engine, and the verification of what comes back.

use super::Engine;
use super::digest::PageDigest;
use crate::device::{BlockDevice, CoDesignHints, Lpa};
use crate::error::EngineError;
use crate::layout::{read_row_header, row_payload_matches, write_row_payload};
use crate::table::RowId;

impl<D: BlockDevice + CoDesignHints> Engine<D> {
    /// Reads page `lpa` into the page buffer.
    pub(super) fn read_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        self.buf_page = None;
        self.device.read_page(lpa, &mut self.page_buf)?;
        self.reads_issued += 1;
        Ok(())
    }

    /// Writes `row` at `version` into `slot` by read-modify-write of its page.
    ///
    /// The old page is read only if it holds live rows (otherwise its bytes are dead and the
    /// page is rebuilt from zeros); with `verify` every live row read is checked (through the
    /// page digest, [`Self::verify_page_in_buffer`]). When the page buffer still holds the
    /// bytes last written to this page (consecutive writes of one page, as in a fill), the
    /// device is asked to compare the page with them ([`BlockDevice::read_page_expecting`]):
    /// a page equal to them is the page written, checked as a matching digest is.
    pub(super) fn write_row(
        &mut self,
        row: RowId,
        version: u32,
        slot: u32,
    ) -> Result<(), EngineError> {
        let lpa = self.table.layout().lpa_of_slot(slot);
        let rebuilt = self.table.page_is_empty(lpa);
        let mut digest = if rebuilt {
            self.buf_page = None;
            self.page_buf.fill(0);
            PageDigest::ZEROS
        } else if self.buf_page == Some(lpa) {
            self.buf_page = None;
            let equal = self.device.read_page_expecting(lpa, &mut self.page_buf)?;
            self.reads_issued += 1;
            match (self.config.verify, equal) {
                (false, _) => PageDigest::ZEROS,
                (true, true) => self.page_digests[lpa.0 as usize]
                    .expect("a page written by this engine has a digest"),
                (true, false) => self.verify_page_in_buffer(lpa)?,
            }
        } else {
            self.read_page(lpa)?;
            if self.config.verify {
                self.verify_page_in_buffer(lpa)?
            } else {
                PageDigest::ZEROS
            }
        };
        let range = self.table.layout().byte_range_in_page(slot);
        if self.config.verify {
            digest.replace(&mut self.page_buf, range, |bytes| {
                write_row_payload(row, version, bytes)
            });
            // unknown until the write is known to have happened
            self.page_digests[lpa.0 as usize] = None;
        } else {
            write_row_payload(row, version, &mut self.page_buf[range]);
        }
        self.device.write_page(lpa, &self.page_buf)?;
        if self.config.verify {
            self.page_digests[lpa.0 as usize] = Some(digest);
        }
        self.buf_page = Some(lpa);
        if rebuilt {
            // the other slots of the page were written as zeros
            self.clear_stale_page(lpa);
        } else {
            self.clear_stale(slot);
        }
        self.writes_issued += 1;
        self.iaa.note_written(lpa);
        Ok(())
    }

    /// With `verify`: checks page `lpa` in the page buffer and returns its digest. A page whose
    /// digest is that of the bytes the engine last wrote there passes at once ([`super::digest`]);
    /// any other gets the row-by-row check ([`Self::check_page_in_buffer`]).
    pub(super) fn verify_page_in_buffer(&mut self, lpa: Lpa) -> Result<PageDigest, EngineError> {
        let digest = PageDigest::of(&self.page_buf);
        if self.page_digests[lpa.0 as usize] != Some(digest) {
            self.check_page_in_buffer(lpa)?;
            self.page_digests[lpa.0 as usize] = Some(digest);
        }
        Ok(digest)
    }

    /// Checks every live row of page `lpa` in the page buffer; returns the rows checked.
    /// (Reserved slots hold a moved row's old copy, not a live row: not checked.)
    pub(super) fn check_page_in_buffer(&self, lpa: Lpa) -> Result<u64, EngineError> {
        let mut rows = 0;
        for slot in self.table.slots_of_page(lpa) {
            if !self.table.is_free(slot) && !self.table.is_reserved(slot) {
                self.check_row_in_buffer(slot)?;
                rows += 1;
            }
        }
        Ok(rows)
    }

    /// Checks that the bytes of `slot` in the page buffer are the row the engine placed there,
    /// at its last written version.
    pub(super) fn check_row_in_buffer(&self, slot: u32) -> Result<(), EngineError> {
        let layout = self.table.layout();
        let bytes = &self.page_buf[layout.byte_range_in_page(slot)];
        let (claimed_row, claimed_version) = read_row_header(bytes);
        let corruption = |detail: String| EngineError::Corruption {
            lpa: layout.lpa_of_slot(slot),
            slot_in_page: layout.slot_in_page(slot),
            detail,
        };
        if self.table.slot_of(claimed_row) != Some(slot) {
            return Err(corruption(format!(
                "holds bytes claiming row {claimed_row} version {claimed_version}, \
                 but that row is not placed in this slot"
            )));
        }
        let version = self.table.version_of(claimed_row).unwrap_or_default();
        if !row_payload_matches(claimed_row, version, bytes) {
            return Err(corruption(format!(
                "row {claimed_row} differs from its last written version {version} \
                 (header says version {claimed_version})"
            )));
        }
        Ok(())
    }
}
