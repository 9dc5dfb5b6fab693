//! The page-level mapping tables (SPEC F2): L2P (logical page → physical page), P2L (its
//! reverse) and the valid-page bitmap, as flat vectors indexed by dense ids. The two directions
//! are asserted to agree on every change in debug builds and checked in full by
//! [`PageTable::check`].

use crate::address::{BlockId, Lpa, Ppa};
use nandlab_core::prefetch::prefetch;

/// L2P, P2L and the valid bitmap. Empty entries are `Ppa::NONE` / `Lpa::NONE`.
#[derive(Clone, Debug)]
pub(crate) struct PageTable {
    l2p: Vec<Ppa>,
    p2l: Vec<Lpa>,
    valid_bits: Vec<u64>,
}

impl PageTable {
    pub fn new(logical_pages: u32, physical_pages: u32) -> Self {
        PageTable {
            l2p: vec![Ppa::NONE; logical_pages as usize],
            p2l: vec![Lpa::NONE; physical_pages as usize],
            valid_bits: vec![0; (physical_pages as usize).div_ceil(64)],
        }
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

    /// Maps `lpa` to the fresh page `ppa`; returns the page it replaced.
    pub fn map(&mut self, lpa: Lpa, ppa: Ppa) -> Option<Ppa> {
        debug_assert!(
            self.p2l[ppa.index()].is_none(),
            "ppa {ppa} already holds data"
        );
        let old = self.l2p[lpa.index()];
        if !old.is_none() {
            debug_assert_eq!(self.p2l[old.index()], lpa, "L2P and P2L disagree at {lpa}");
            self.p2l[old.index()] = Lpa::NONE;
            self.set_valid(old, false);
        }
        self.l2p[lpa.index()] = ppa;
        self.p2l[ppa.index()] = lpa;
        self.set_valid(ppa, true);
        old.get()
    }

    /// Forgets `lpa` (TRIM); returns the page that held it.
    pub fn unmap(&mut self, lpa: Lpa) -> Option<Ppa> {
        let old = self.l2p[lpa.index()];
        if !old.is_none() {
            debug_assert_eq!(self.p2l[old.index()], lpa, "L2P and P2L disagree at {lpa}");
            self.p2l[old.index()] = Lpa::NONE;
            self.set_valid(old, false);
            self.l2p[lpa.index()] = Ppa::NONE;
        }
        old.get()
    }

    /// Moves the valid page `source` to the fresh page `target` (GC); returns its LPA.
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
        lpa
    }

    /// Full check that the two directions and the bitmap agree; returns the number of mapped
    /// LPAs per physical block (to compare with the block manager's counts).
    pub fn check(&self, pages_per_block: u32) -> Result<Vec<u32>, String> {
        let mut per_block = vec![0u32; self.p2l.len() / pages_per_block as usize];
        for (lpa, &ppa) in self.l2p.iter().enumerate() {
            let lpa = Lpa(lpa as u32);
            if ppa.is_none() {
                continue;
            }
            if self.p2l[ppa.index()] != lpa {
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
            per_block[BlockId(ppa.0 / pages_per_block).index()] += 1;
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
    }

    fn action() -> impl Strategy<Value = Action> {
        prop_oneof![
            (0u32..16).prop_map(Action::Write),
            (0u32..16).prop_map(Action::Trim),
            (0u32..64).prop_map(Action::Move),
        ]
    }

    proptest! {
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
