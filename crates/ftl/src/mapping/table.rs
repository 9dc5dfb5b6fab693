//! The page-level mapping tables (SPEC F2): L2P (logical page → physical page), P2L (its
//! reverse) and the valid-page bitmap, as flat vectors indexed by dense ids. The two directions
//! are asserted to agree on every change in debug builds and checked in full by
//! [`PageTable::check`].
//!
//! **Shared pages** (for deduplication, SPEC P2): several LPAs may map to one physical page.
//! P2L holds the page's first LPA; the others are kept in a side table keyed by the page
//! (empty unless something was shared, so the one-to-one path pays one branch). A page's
//! reference count is 1 + its extra sharers; it becomes invalid when the last LPA leaves it
//! (overwrite or TRIM). A GC move relocates the page once and repoints every sharer.

use crate::address::{BlockId, Lpa, Ppa};
use nandlab_core::prefetch::prefetch;
use std::collections::HashMap;

/// L2P, P2L and the valid bitmap. Empty entries are `Ppa::NONE` / `Lpa::NONE`.
#[derive(Clone, Debug)]
pub(crate) struct PageTable {
    l2p: Vec<Ppa>,
    p2l: Vec<Lpa>,
    valid_bits: Vec<u64>,
    /// LPAs beyond the first (P2L's) mapped to a shared page.
    shared: HashMap<Ppa, Vec<Lpa>>,
}

impl PageTable {
    pub fn new(logical_pages: u32, physical_pages: u32) -> Self {
        PageTable {
            l2p: vec![Ppa::NONE; logical_pages as usize],
            p2l: vec![Lpa::NONE; physical_pages as usize],
            valid_bits: vec![0; (physical_pages as usize).div_ceil(64)],
            shared: HashMap::new(),
        }
    }

    /// How many LPAs map to `ppa` (0: invalid).
    pub fn refcount(&self, ppa: Ppa) -> u32 {
        if self.p2l[ppa.index()].is_none() {
            return 0;
        }
        1 + self.shared.get(&ppa).map_or(0, |extra| extra.len() as u32)
    }

    /// Every LPA mapped to `ppa` (the P2L one first).
    pub fn lpas_of(&self, ppa: Ppa) -> impl Iterator<Item = Lpa> + '_ {
        let extra = self.shared.get(&ppa).map(|v| &v[..]).unwrap_or(&[]);
        self.p2l[ppa.index()]
            .get()
            .into_iter()
            .chain(extra.iter().copied())
    }

    /// `lpa` leaves its page `old`; returns whether `old` is now invalid (no LPA left).
    #[inline]
    fn leave(&mut self, old: Ppa, lpa: Lpa) -> bool {
        if self.shared.is_empty() {
            debug_assert_eq!(self.p2l[old.index()], lpa, "L2P and P2L disagree at {lpa}");
            self.p2l[old.index()] = Lpa::NONE;
            self.set_valid(old, false);
            return true;
        }
        self.leave_shared(old, lpa)
    }

    fn leave_shared(&mut self, old: Ppa, lpa: Lpa) -> bool {
        let Some(extra) = self.shared.get_mut(&old) else {
            debug_assert_eq!(self.p2l[old.index()], lpa, "L2P and P2L disagree at {lpa}");
            self.p2l[old.index()] = Lpa::NONE;
            self.set_valid(old, false);
            return true;
        };
        if self.p2l[old.index()] == lpa {
            self.p2l[old.index()] = extra.pop().expect("shared entries are never empty");
        } else {
            let at = extra.iter().position(|&l| l == lpa);
            debug_assert!(at.is_some(), "lpa {lpa} does not share ppa {old}");
            if let Some(at) = at {
                extra.swap_remove(at);
            }
        }
        if extra.is_empty() {
            self.shared.remove(&old);
        }
        false
    }

    /// Maps `lpa` to the valid page `ppa` that other LPAs already hold (a duplicate write);
    /// returns the page `lpa` left if that page is now invalid.
    pub fn share(&mut self, lpa: Lpa, ppa: Ppa) -> Option<Ppa> {
        debug_assert!(self.is_valid(ppa), "sharing invalid ppa {ppa}");
        let old = self.l2p[lpa.index()];
        if old == ppa {
            return None;
        }
        let freed = !old.is_none() && self.leave(old, lpa);
        self.l2p[lpa.index()] = ppa;
        self.shared.entry(ppa).or_default().push(lpa);
        freed.then_some(old)
    }

    /// Adds `pages` unmapped logical pages after the last one (hidden LPAs of the
    /// transactional mode, `mapping/txn.rs`).
    pub fn grow_logical(&mut self, pages: u32) {
        self.l2p.resize(self.l2p.len() + pages as usize, Ppa::NONE);
    }

    pub fn logical_pages(&self) -> u32 {
        self.l2p.len() as u32
    }
    /// Physical page of `lpa`, if mapped.
    #[inline]
    pub fn ppa_of(&self, lpa: Lpa) -> Option<Ppa> {
        self.l2p[lpa.index()].get()
    }
    /// Logical page stored at `ppa`, if the page is valid.
    #[inline]
    pub fn lpa_of(&self, ppa: Ppa) -> Option<Lpa> {
        self.p2l[ppa.index()].get()
    }
    #[inline]
    pub fn is_valid(&self, ppa: Ppa) -> bool {
        self.valid_bits[(ppa.0 / 64) as usize] & (1 << (ppa.0 % 64)) != 0
    }
    #[inline]
    fn set_valid(&mut self, ppa: Ppa, valid: bool) {
        let word = &mut self.valid_bits[(ppa.0 / 64) as usize];
        if valid {
            *word |= 1 << (ppa.0 % 64);
        } else {
            *word &= !(1 << (ppa.0 % 64));
        }
    }

    /// Prefetch hint: `lpa`'s L2P entry will be used soon.
    #[inline]
    pub fn prefetch_l2p(&self, lpa: Lpa) {
        prefetch(&self.l2p, lpa.index());
    }

    /// Prefetch hint: `lpa` is about to be rewritten, so the P2L entry and valid word of its
    /// current page will be used soon. Reads the L2P entry: call it once a
    /// [`PageTable::prefetch_l2p`] of `lpa` has had time to land.
    #[inline]
    pub fn prefetch_old_page(&self, lpa: Lpa) {
        if let Some(&old) = self.l2p.get(lpa.index())
            && !old.is_none()
        {
            prefetch(&self.p2l, old.index());
            prefetch(&self.valid_bits, (old.0 / 64) as usize);
        }
    }

    /// Maps `lpa` to the fresh page `ppa`; returns the page it replaced if that page is now
    /// invalid (always, unless the old page was shared).
    #[inline(always)]
    pub fn map(&mut self, lpa: Lpa, ppa: Ppa) -> Option<Ppa> {
        debug_assert!(
            self.p2l[ppa.index()].is_none(),
            "ppa {ppa} already holds data"
        );
        let old = self.l2p[lpa.index()];
        self.l2p[lpa.index()] = ppa;
        self.p2l[ppa.index()] = lpa;
        self.set_valid(ppa, true);
        if old.is_none() {
            return None;
        }
        if self.shared.is_empty() {
            debug_assert_eq!(self.p2l[old.index()], lpa, "L2P and P2L disagree at {lpa}");
            self.p2l[old.index()] = Lpa::NONE;
            self.set_valid(old, false);
            return Some(old);
        }
        self.leave_shared(old, lpa).then_some(old)
    }

    /// Forgets `lpa` (TRIM); returns the page that held it if that page is now invalid.
    pub fn unmap(&mut self, lpa: Lpa) -> Option<Ppa> {
        let old = self.l2p[lpa.index()];
        if old.is_none() {
            return None;
        }
        let freed = self.leave(old, lpa);
        self.l2p[lpa.index()] = Ppa::NONE;
        freed.then_some(old)
    }

    /// Moves the valid page `source` to the fresh page `target` (GC), with every LPA sharing
    /// it; returns its (first) LPA.
    pub fn relocate(&mut self, source: Ppa, target: Ppa) -> Lpa {
        let lpa = self.p2l[source.index()];
        debug_assert!(!lpa.is_none(), "relocating invalid ppa {source}");
        debug_assert_eq!(
            self.l2p[lpa.index()],
            source,
            "L2P and P2L disagree at {lpa}"
        );
        debug_assert!(self.p2l[target.index()].is_none());
        self.p2l[source.index()] = Lpa::NONE;
        self.set_valid(source, false);
        self.p2l[target.index()] = lpa;
        self.set_valid(target, true);
        self.l2p[lpa.index()] = target;
        if !self.shared.is_empty()
            && let Some(extra) = self.shared.remove(&source)
        {
            for &l in &extra {
                self.l2p[l.index()] = target;
            }
            self.shared.insert(target, extra);
        }
        lpa
    }

    /// Full check that the two directions, the shared-page table and the bitmap agree;
    /// returns the number of valid pages per physical block (to compare with the block
    /// manager's counts).
    pub fn check(&self, pages_per_block: u32) -> Result<Vec<u32>, String> {
        let mut per_block = vec![0u32; self.p2l.len() / pages_per_block as usize];
        for (lpa, &ppa) in self.l2p.iter().enumerate() {
            let lpa = Lpa(lpa as u32);
            if ppa.is_none() {
                continue;
            }
            if self.p2l[ppa.index()] != lpa && !self.lpas_of(ppa).any(|l| l == lpa) {
                return Err(format!(
                    "l2p[{lpa}] = {ppa} but p2l[{ppa}] = {}",
                    self.p2l[ppa.index()]
                ));
            }
            if !self.is_valid(ppa) {
                return Err(format!(
                    "ppa {ppa} mapped by lpa {lpa} but not marked valid"
                ));
            }
        }
        for (&ppa, extra) in &self.shared {
            if extra.is_empty() || self.p2l[ppa.index()].is_none() {
                return Err(format!("shared ppa {ppa} has no first LPA or no sharers"));
            }
            if let Some(l) = extra.iter().find(|l| self.l2p[l.index()] != ppa) {
                return Err(format!(
                    "lpa {l} listed as sharing ppa {ppa} but maps elsewhere"
                ));
            }
        }
        for (ppa, &lpa) in self.p2l.iter().enumerate() {
            let ppa = Ppa(ppa as u32);
            let mapped = !lpa.is_none();
            if mapped != self.is_valid(ppa) {
                return Err(format!(
                    "ppa {ppa}: p2l = {lpa} but valid bit = {}",
                    !mapped
                ));
            }
            if mapped && self.l2p[lpa.index()] != ppa {
                return Err(format!(
                    "p2l[{ppa}] = {lpa} but l2p[{lpa}] = {}",
                    self.l2p[lpa.index()]
                ));
            }
            if mapped {
                per_block[BlockId(ppa.0 / pages_per_block).index()] += 1;
            }
        }
        Ok(per_block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Action {
        Write(u32),
        Trim(u32),
        Move(u32),
        Share(u32, u32),
    }

    fn action() -> impl Strategy<Value = Action> {
        prop_oneof![
            (0u32..16).prop_map(Action::Write),
            (0u32..16).prop_map(Action::Trim),
            (0u32..64).prop_map(Action::Move),
        ]
    }

    fn action_with_shares() -> impl Strategy<Value = Action> {
        prop_oneof![
            3 => (0u32..16).prop_map(Action::Write),
            1 => (0u32..16).prop_map(Action::Trim),
            2 => (0u32..64).prop_map(Action::Move),
            3 => (0u32..16, 0u32..16).prop_map(|(a, b)| Action::Share(a, b)),
        ]
    }

    proptest! {
        /// Shared pages: any mix of writes, trims, moves and shares keeps every LPA on the page
        /// it was last written, shared or moved to; a page is valid exactly while some LPA maps
        /// to it, its reference count is the number of those LPAs, and a page is reported
        /// freed exactly when its last LPA leaves.
        #[test]
        fn shared_pages_are_reference_counted(
            actions in proptest::collection::vec(action_with_shares(), 0..300)
        ) {
            let mut t = PageTable::new(16, 4096);
            let mut model: std::collections::HashMap<Lpa, Ppa> = std::collections::HashMap::new();
            let mut next = Ppa(0);
            let holders = |model: &std::collections::HashMap<Lpa, Ppa>, p: Ppa| {
                model.values().filter(|&&q| q == p).count() as u32
            };
            for a in actions {
                match a {
                    Action::Write(lpa) => {
                        let lpa = Lpa(lpa);
                        let freed = t.map(lpa, next);
                        let old = model.insert(lpa, next);
                        let expect = old.filter(|&o| holders(&model, o) == 0);
                        prop_assert_eq!(freed, expect);
                        next.0 += 1;
                    }
                    Action::Trim(lpa) => {
                        let lpa = Lpa(lpa);
                        let freed = t.unmap(lpa);
                        let old = model.remove(&lpa);
                        prop_assert_eq!(freed, old.filter(|&o| holders(&model, o) == 0));
                    }
                    Action::Move(ppa) => {
                        let ppa = Ppa(ppa);
                        if ppa < next && t.is_valid(ppa) {
                            t.relocate(ppa, next);
                            for p in model.values_mut().filter(|p| **p == ppa) {
                                *p = next;
                            }
                            next.0 += 1;
                        }
                    }
                    Action::Share(lpa, same_as) => {
                        let (lpa, same_as) = (Lpa(lpa), Lpa(same_as));
                        if let Some(&target) = model.get(&same_as) {
                            let freed = t.share(lpa, target);
                            let old = model.insert(lpa, target);
                            let expect = old.filter(|&o| o != target && holders(&model, o) == 0);
                            prop_assert_eq!(freed, expect);
                        }
                    }
                }
                let per_block = t.check(64).map_err(TestCaseError::fail)?;
                let mut pages: Vec<Ppa> = model.values().copied().collect();
                pages.sort_unstable();
                pages.dedup();
                prop_assert_eq!(per_block.iter().sum::<u32>() as usize, pages.len());
                for &p in &pages {
                    prop_assert_eq!(t.refcount(p), holders(&model, p));
                    let mut lpas: Vec<Lpa> = t.lpas_of(p).collect();
                    lpas.sort_unstable();
                    let mut expect: Vec<Lpa> =
                        model.iter().filter(|(_, q)| **q == p).map(|(l, _)| *l).collect();
                    expect.sort_unstable();
                    prop_assert_eq!(lpas, expect);
                }
            }
            for lpa in (0..16).map(Lpa) {
                prop_assert_eq!(t.ppa_of(lpa), model.get(&lpa).copied());
            }
        }

        /// Whatever sequence of writes, trims and moves, L2P, P2L and the bitmap agree and
        /// every LPA maps to the page it was last written or moved to.
        #[test]
        fn directions_agree(actions in proptest::collection::vec(action(), 0..200)) {
            let mut t = PageTable::new(16, 4096);
            let mut model = std::collections::HashMap::new();
            let mut next = Ppa(0);
            for a in actions {
                match a {
                    Action::Write(lpa) => {
                        let lpa = Lpa(lpa);
                        let old = t.map(lpa, next);
                        prop_assert_eq!(old, model.insert(lpa, next));
                        next.0 += 1;
                    }
                    Action::Trim(lpa) => {
                        let lpa = Lpa(lpa);
                        let old = t.unmap(lpa);
                        prop_assert_eq!(old, model.remove(&lpa));
                    }
                    Action::Move(ppa) => {
                        let ppa = Ppa(ppa);
                        if ppa < next && t.is_valid(ppa) {
                            let lpa = t.relocate(ppa, next);
                            model.insert(lpa, next);
                            next.0 += 1;
                        }
                    }
                    Action::Share(..) => {}
                }
                let per_block = t.check(64).map_err(TestCaseError::fail)?;
                prop_assert_eq!(per_block.iter().sum::<u32>() as usize, model.len());
            }
            for lpa in (0..16).map(Lpa) {
                prop_assert_eq!(t.ppa_of(lpa), model.get(&lpa).copied());
            }
        }
    }
}
