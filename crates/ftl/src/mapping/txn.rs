//! Transactional page mapping (X-FTL, Kang et al., SIGMOD'13): the page writes of one
//! transaction are copy-on-write in the mapping until a single durable record commits them.
//!
//! While a transaction is open, a write of host LPA `L` is programmed to a fresh page like any
//! write, but its OOB names `L | TX_LPA_BIT` (a *transactional* page) and the mapping does not
//! move `L`: the new page is mapped under a *shadow* LPA `S` of a hidden range above the host's
//! logical pages (so GC keeps and moves it like any valid page) and `L → S` is kept in the
//! transaction's table. `L` keeps its old page (valid, mapped) until the commit, so readers and
//! a power cut see the old data. Reads of `L` inside the transaction (a partial-page write's
//! read-modify-write) see the new page.
//!
//! Commit (driven by `Ssd::tx_commit`): a Flush makes the transaction's pages durable, then the
//! **commit record** — one page written with FUA at the hidden LPA `C = host pages` — is
//! programmed; its OOB sequence number is the commit watermark `W` (every write decided before
//! it has a lower number). Only then is the mapping switched: `L` takes the shadow page, its old
//! page becomes invalid. Abort drops the shadow pages; the FTL then rewrites each touched `L`
//! with its committed bytes (zeros when unmapped) as plain writes, so that the aborted pages
//! are older than a plain copy of every LPA they name (they would pass a later watermark).
//!
//! Recovery (`power::recovery`): the newest intact page of `C` gives `W`; a transactional page
//! counts as a write of `L` when its sequence number is at most `W`, and is discarded
//! otherwise (its transaction had no durable commit record). One transaction is open at a time.

use super::page::PageFtl;
use crate::address::Lpa;
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use std::collections::HashMap;

pub use crate::address::{TX_LPA_BIT, host_lpa, resolve};

/// The transactional state of a page mapping.
#[derive(Debug)]
pub(crate) struct TxMap {
    /// Host logical pages (LPAs below this are the host's; `host_pages` is the commit record).
    pub host_pages: u32,
    /// Shadow LPAs `[host_pages + 1, host_pages + 1 + shadow_pages)`.
    pub shadow_pages: u32,
    /// A transaction is open.
    pub open: bool,
    /// Host LPA → its shadow LPA, for the open transaction.
    pending: HashMap<Lpa, Lpa>,
    /// Shadow LPAs not in use.
    free_shadows: Vec<Lpa>,
}

impl TxMap {
    pub fn new(host_pages: u32, shadow_pages: u32) -> Self {
        let first = host_pages + 1;
        TxMap {
            host_pages,
            shadow_pages,
            open: false,
            pending: HashMap::new(),
            free_shadows: (first..first + shadow_pages).rev().map(Lpa).collect(),
        }
    }

    /// The LPA of the commit record.
    pub fn record_lpa(&self) -> Lpa {
        Lpa(self.host_pages)
    }

    /// Host LPAs written by the open transaction, sorted.
    pub fn pending_lpas(&self) -> Vec<Lpa> {
        let mut v: Vec<Lpa> = self.pending.keys().copied().collect();
        v.sort_unstable();
        v
    }

    pub fn shadows_free(&self) -> usize {
        self.free_shadows.len()
    }

    pub fn pending_pages(&self) -> usize {
        self.pending.len()
    }
}

impl PageFtl {
    /// Turns the transactional mode on: the table grows by the commit record and
    /// `shadow_pages` shadow LPAs.
    pub(crate) fn enable_transactions(&mut self, shadow_pages: u32) {
        let host = self.map.table.logical_pages();
        self.map.table.grow_logical(1 + shadow_pages);
        self.tx = Some(Box::new(TxMap::new(host, shadow_pages)));
    }

    /// The shadow LPA of `lpa` in the open transaction, if it wrote it.
    #[inline]
    pub(crate) fn tx_shadow(&self, lpa: Lpa) -> Option<Lpa> {
        let tx = self.tx.as_deref()?;
        if !tx.open {
            return None;
        }
        tx.pending.get(&lpa).copied()
    }

    /// Whether `write` belongs to the open transaction (a host LPA while one is open).
    #[inline]
    pub(crate) fn tx_captures(&self, lpa: Lpa) -> bool {
        self.tx
            .as_deref()
            .is_some_and(|tx| tx.open && lpa.0 < tx.host_pages)
    }

    /// A write of the open transaction: a fresh page whose OOB marks it transactional, mapped
    /// under the LPA's shadow.
    #[cold]
    pub(crate) fn tx_write(
        &mut self,
        flash: &mut Flash,
        write: HostWrite<'_>,
        tag: Tag,
    ) -> FtlResult<()> {
        let lpa = write.lpa;
        let tx = self.tx.as_deref_mut().expect("tx_captures checked");
        let shadow = match tx.pending.get(&lpa) {
            Some(&s) => s,
            None => {
                let Some(s) = tx.free_shadows.pop() else {
                    return Err(FtlError::DeviceFull {
                        message: format!(
                            "transaction: more than {} pages written (ftl transactional shadow pages)",
                            tx.shadow_pages
                        ),
                    });
                };
                tx.pending.insert(lpa, s);
                s
            }
        };
        let marked = HostWrite {
            lpa: Lpa(lpa.0 | TX_LPA_BIT),
            ..write
        };
        self.write_mapped(flash, shadow, marked, tag)
    }

    /// Trims `lpa` inside the open transaction: its shadow page, if any, is dropped too.
    #[cold]
    pub(crate) fn tx_trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        let Some(tx) = self.tx.as_deref_mut() else {
            return;
        };
        if let Some(shadow) = tx.pending.remove(&lpa) {
            tx.free_shadows.push(shadow);
            if let Some(old) = self.map.table.unmap(shadow) {
                flash.invalidate(old);
            }
        }
    }

    /// Starts a transaction.
    pub(crate) fn tx_begin(&mut self) -> FtlResult<()> {
        let tx = self.tx.as_deref_mut().ok_or_else(not_enabled)?;
        if tx.open {
            return Err(FtlError::BadRequest {
                message: "transaction: one is already open (one at a time)".into(),
            });
        }
        debug_assert!(tx.pending.is_empty());
        tx.open = true;
        Ok(())
    }

    /// Switches the mapping of every page of the open transaction to its new page (after the
    /// commit record is durable); returns how many pages it committed.
    pub(crate) fn tx_switch(&mut self, flash: &mut Flash) -> FtlResult<usize> {
        let tx = self.tx.as_deref_mut().ok_or_else(not_enabled)?;
        if !tx.open {
            return Err(no_open());
        }
        tx.open = false;
        let pending = std::mem::take(&mut tx.pending);
        let count = pending.len();
        for (lpa, shadow) in pending {
            self.tx
                .as_deref_mut()
                .expect("on")
                .free_shadows
                .push(shadow);
            let Some(page) = self.map.table.ppa_of(shadow) else {
                continue;
            };
            // the page changes owner: shadow → host LPA; its valid count is unchanged
            let left = self.map.table.unmap(shadow);
            debug_assert_eq!(left, Some(page));
            if let Some(old) = self.map.table.map(lpa, page) {
                flash.invalidate(old);
            }
        }
        Ok(count)
    }

    /// Drops the open transaction's pages; returns the host LPAs it had written (to be
    /// rewritten with their committed bytes).
    pub(crate) fn tx_drop(&mut self, flash: &mut Flash) -> FtlResult<Vec<Lpa>> {
        let tx = self.tx.as_deref_mut().ok_or_else(not_enabled)?;
        if !tx.open {
            return Err(no_open());
        }
        tx.open = false;
        let lpas = tx.pending_lpas();
        let pending = std::mem::take(&mut tx.pending);
        for (_, shadow) in pending {
            self.tx
                .as_deref_mut()
                .expect("on")
                .free_shadows
                .push(shadow);
            if let Some(old) = self.map.table.unmap(shadow) {
                flash.invalidate(old);
            }
        }
        Ok(lpas)
    }
}

fn not_enabled() -> FtlError {
    FtlError::BadRequest {
        message: "transaction: the device is not in transactional mode (Ssd::enable_transactions; page mapping only)".into(),
    }
}

fn no_open() -> FtlError {
    FtlError::BadRequest {
        message: "transaction: none is open".into(),
    }
}
