//! The transactional mode on [`Ssd`] (X-FTL, Kang et al., SIGMOD'13): page writes between
//! [`Ssd::tx_begin`] and [`Ssd::tx_commit`] become visible together, on one durable commit
//! record, or not at all. The mapping side is `mapping/txn.rs`; recovery discards the pages of
//! transactions without a durable commit record (`power/recovery.rs`).
//!
//! A commit is three steps: a Flush (the transaction's pages durable), the commit record (one
//! page written with FUA at the hidden LPA just past the host's range; its sequence number is
//! the commit watermark), then the mapping switch. [`Ssd::tx_commit`] runs them as requests;
//! a power-cut driver runs them one by one ([`Ssd::tx_record_request`],
//! [`Ssd::tx_finish_commit`]) to cut between or inside them.

use super::Ssd;
use crate::address::Lpa;
use crate::error::{FtlError, FtlResult};
use crate::host::{HostOp, HostRequest};
use crate::mapping::Mapper;
use nandlab_core::SimTime;
use serde::Serialize;

/// Magic at the start of a commit record's bytes (full payload mode).
pub const COMMIT_RECORD_MAGIC: &[u8; 16] = b"X-FTL commit rec";

/// Counters of the transactional mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TxStats {
    /// Transactions opened.
    pub begun: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Transactions aborted.
    pub aborts: u64,
    /// Logical pages switched by commits.
    pub pages_committed: u64,
    /// Plain rewrites of the committed bytes after aborts.
    pub abort_rewrites: u64,
}

/// The device's transactional state outside the mapping.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TxCounters {
    pub stats: TxStats,
    /// The commit record's write may be admitted now.
    pub record_armed: bool,
}

fn usage(message: String) -> FtlError {
    FtlError::BadRequest { message }
}

impl Ssd {
    /// Turns the transactional mode on: up to `shadow_pages` logical pages per transaction.
    /// Needs the page mapping and no front-end stage (a write buffer would hold a
    /// transaction's pages past its commit); the device must not be in a transaction.
    pub fn enable_transactions(&mut self, shadow_pages: u32) -> FtlResult<()> {
        if shadow_pages == 0 {
            return Err(usage(
                "transactions: shadow_pages = 0: a transaction needs at least one page".into(),
            ));
        }
        if self.cmt.is_some() {
            return Err(usage(
                "transactions: ssd.mapping.cache_entries > 0 (the cached mapping table keeps its translation pages where the commit record goes); use the full table in DRAM".into(),
            ));
        }
        if !self.front.is_empty() {
            return Err(usage(
                "transactions: the device has a front-end stage (write buffer or [pcm]); the transactional mode needs buffer.pages = 0 and no [pcm]".into(),
            ));
        }
        let Mapper::Page(page) = &mut self.mapper else {
            return Err(usage(
                "transactions: ftl.mapping must be \"page\" (the block and hybrid mappings have no shadow pages)".into(),
            ));
        };
        if page.tx.is_some() {
            return Err(usage("transactions: already enabled".into()));
        }
        page.enable_transactions(shadow_pages);
        Ok(())
    }

    /// Whether the transactional mode is on.
    pub fn transactional(&self) -> bool {
        matches!(&self.mapper, Mapper::Page(p) if p.tx.is_some())
    }

    /// Whether a transaction is open.
    pub fn tx_open(&self) -> bool {
        matches!(&self.mapper, Mapper::Page(p) if p.tx.as_deref().is_some_and(|t| t.open))
    }

    /// Logical pages the open transaction has written (0 when none is open).
    pub fn tx_pages(&self) -> usize {
        match &self.mapper {
            Mapper::Page(p) => p.tx.as_deref().map_or(0, |t| t.pending_pages()),
            _ => 0,
        }
    }

    /// Whether the open transaction has written `lpa`.
    pub fn tx_has(&self, lpa: Lpa) -> bool {
        match &self.mapper {
            Mapper::Page(p) => p.tx_shadow(lpa).is_some(),
            _ => false,
        }
    }

    /// Logical pages the open transaction can still add (its free shadow pages).
    pub fn tx_room(&self) -> u64 {
        match &self.mapper {
            Mapper::Page(p) => p.tx.as_deref().map_or(0, |t| t.shadows_free() as u64),
            _ => 0,
        }
    }

    /// The transactional mode's counters since the device was built.
    pub fn tx_stats(&self) -> TxStats {
        self.host.txn.stats
    }

    /// Opens a transaction: host writes from now until the commit or abort belong to it.
    pub fn tx_begin(&mut self) -> FtlResult<()> {
        match &mut self.mapper {
            Mapper::Page(p) => p.tx_begin()?,
            _ => return Err(usage("transactions: not enabled".into())),
        }
        self.host.txn.stats.begun += 1;
        Ok(())
    }

    /// Commits the open transaction: a Flush, the commit record (FUA), the mapping switch.
    /// Returns the simulated time it took.
    pub fn tx_commit(&mut self) -> FtlResult<SimTime> {
        if !self.tx_open() {
            return Err(usage("transaction: none is open".into()));
        }
        let start = self.now;
        self.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)?;
        let (record, data) = self.tx_record_request()?;
        let written = self.execute(&record, data.as_deref());
        if let Err(e) = written {
            self.host.txn.record_armed = false;
            return Err(e);
        }
        self.tx_finish_commit()?;
        Ok(self.now.saturating_sub(start))
    }

    /// Step 2 of a commit (after a Flush that completed): the commit record's write request
    /// (FUA, at the LPA past the host's range) and its bytes (full payload mode). Admitting it
    /// is allowed until [`Ssd::tx_finish_commit`].
    pub fn tx_record_request(&mut self) -> FtlResult<(HostRequest, Option<Vec<u8>>)> {
        let (record_lpa, pages) = match &self.mapper {
            Mapper::Page(p) => match p.tx.as_deref() {
                Some(t) if t.open => (t.record_lpa(), t.pending_pages()),
                _ => return Err(usage("transaction: none is open".into())),
            },
            _ => return Err(usage("transactions: not enabled".into())),
        };
        let page = u64::from(self.layout.page_size_bytes);
        self.host.txn.record_armed = true;
        let request =
            HostRequest::new(HostOp::Write, u64::from(record_lpa.0) * page, page).with_fua();
        let data = self.flash.payload.enabled().then(|| {
            let mut bytes = vec![0u8; page as usize];
            bytes[..16].copy_from_slice(COMMIT_RECORD_MAGIC);
            bytes[16..24].copy_from_slice(&(self.host.txn.stats.commits + 1).to_le_bytes());
            bytes[24..32].copy_from_slice(&(pages as u64).to_le_bytes());
            bytes
        });
        Ok((request, data))
    }

    /// Step 3 of a commit (after the commit record's write completed): the mapping switch.
    pub fn tx_finish_commit(&mut self) -> FtlResult<()> {
        self.host.txn.record_armed = false;
        let Mapper::Page(p) = &mut self.mapper else {
            return Err(usage("transactions: not enabled".into()));
        };
        let pages = p.tx_switch(&mut self.flash)?;
        self.host.txn.stats.commits += 1;
        self.host.txn.stats.pages_committed += pages as u64;
        Ok(())
    }

    /// Aborts the open transaction: its pages are dropped, then every LPA it wrote is
    /// rewritten (plain writes) with its committed bytes, zeros when it had none, so that no
    /// later commit watermark can make an aborted page win at a mount.
    pub fn tx_abort(&mut self) -> FtlResult<()> {
        self.host.txn.record_armed = false;
        let lpas = match &mut self.mapper {
            Mapper::Page(p) => p.tx_drop(&mut self.flash)?,
            _ => return Err(usage("transactions: not enabled".into())),
        };
        self.host.txn.stats.aborts += 1;
        let page = u64::from(self.layout.page_size_bytes);
        for lpa in lpas {
            let data = self.flash.payload.enabled().then(|| {
                self.read_bytes(u64::from(lpa.0) * page, page)
                    .unwrap_or_else(|_| vec![0; page as usize])
            });
            let request = HostRequest::new(HostOp::Write, u64::from(lpa.0) * page, page);
            self.execute(&request, data.as_deref())?;
            self.host.txn.stats.abort_rewrites += 1;
        }
        Ok(())
    }

    /// Whether a request of `size_bytes` at `offset_bytes` is the armed commit record.
    pub(super) fn is_commit_record(&self, offset_bytes: u64, size_bytes: u64) -> bool {
        let page = u64::from(self.layout.page_size_bytes);
        self.host.txn.record_armed
            && size_bytes == page
            && offset_bytes == u64::from(self.layout.logical_pages) * page
    }

    /// The LPA of the commit record (just past the host's range).
    pub fn tx_record_lpa(&self) -> Lpa {
        Lpa(self.layout.logical_pages)
    }
}

#[cfg(test)]
mod tests;
