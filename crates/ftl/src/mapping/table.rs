//! The page-level mapping tables (SPEC F2): L2P (logical page → physical page), P2L (its
//! reverse) and the valid-page bitmap, as flat vectors indexed by dense ids. The two directions
//! are asserted to agree on every change in debug builds and checked in full by
//! [`PageTable::check`].

use crate::flash::blocks::NONE;
use nandlab_core::prefetch::prefetch;

/// L2P, P2L and the valid bitmap.
#[derive(Clone, Debug)]
pub(crate) struct PageTable {
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid_bits: Vec<u64>,
}

impl PageTable {
    pub fn new(logical_pages: u32, physical_pages: u32) -> Self {
        PageTable {
            l2p: vec![NONE; logical_pages as usize],
            p2l: vec![NONE; physical_pages as usize],
            valid_bits: vec![0; (physical_pages as usize).div_ceil(64)],
        }
    }

    pub fn logical_pages(&self) -> u32 {
        self.l2p.len() as u32
    }
    /// Physical page of `lpa`, or `NONE`.
    pub fn ppa_of(&self, lpa: u32) -> u32 {
        self.l2p[lpa as usize]
    }
    /// Logical page stored at `ppa`, or `NONE` when the page is not valid.
    pub fn lpa_of(&self, ppa: u32) -> u32 {
        self.p2l[ppa as usize]
    }
    pub fn is_valid(&self, ppa: u32) -> bool {
        self.valid_bits[(ppa / 64) as usize] & (1 << (ppa % 64)) != 0
    }
    fn set_valid(&mut self, ppa: u32, valid: bool) {
        let word = &mut self.valid_bits[(ppa / 64) as usize];
        if valid {
            *word |= 1 << (ppa % 64);
        } else {
            *word &= !(1 << (ppa % 64));
        }
    }

    /// Prefetch hint: `lpa`'s L2P entry will be used soon.
    #[inline]
    pub fn prefetch_l2p(&self, lpa: u32) {
        prefetch(&self.l2p, lpa as usize);
    }

    /// Prefetch hint: `lpa` is about to be rewritten, so the P2L entry and valid word of its
    /// current page will be used soon. Reads the L2P entry: call it once a
    /// [`PageTable::prefetch_l2p`] of `lpa` has had time to land.
    #[inline]
    pub fn prefetch_old_page(&self, lpa: u32) {
        if let Some(&old) = self.l2p.get(lpa as usize)
            && old != NONE
        {
            prefetch(&self.p2l, old as usize);
            prefetch(&self.valid_bits, (old / 64) as usize);
        }
    }

    /// Maps `lpa` to the fresh page `ppa`; returns the page it replaced (or `NONE`).
    pub fn map(&mut self, lpa: u32, ppa: u32) -> u32 {
        debug_assert_eq!(self.p2l[ppa as usize], NONE, "ppa {ppa} already holds data");
        let old = self.l2p[lpa as usize];
        if old != NONE {
            debug_assert_eq!(self.p2l[old as usize], lpa, "L2P and P2L disagree at {lpa}");
            self.p2l[old as usize] = NONE;
            self.set_valid(old, false);
        }
        self.l2p[lpa as usize] = ppa;
        self.p2l[ppa as usize] = lpa;
        self.set_valid(ppa, true);
        old
    }

    /// Forgets `lpa` (TRIM); returns the page that held it (or `NONE`).
    pub fn unmap(&mut self, lpa: u32) -> u32 {
        let old = self.l2p[lpa as usize];
        if old != NONE {
            debug_assert_eq!(self.p2l[old as usize], lpa, "L2P and P2L disagree at {lpa}");
            self.p2l[old as usize] = NONE;
            self.set_valid(old, false);
            self.l2p[lpa as usize] = NONE;
        }
        old
    }

    /// Moves the valid page `source` to the fresh page `target` (GC); returns its LPA.
    pub fn relocate(&mut self, source: u32, target: u32) -> u32 {
        let lpa = self.p2l[source as usize];
        debug_assert_ne!(lpa, NONE, "relocating invalid ppa {source}");
        debug_assert_eq!(
            self.l2p[lpa as usize], source,
            "L2P and P2L disagree at {lpa}"
        );
        debug_assert_eq!(self.p2l[target as usize], NONE);
        self.p2l[source as usize] = NONE;
        self.set_valid(source, false);
        self.p2l[target as usize] = lpa;
        self.set_valid(target, true);
        self.l2p[lpa as usize] = target;
        lpa
    }

    /// Full check that the two directions and the bitmap agree; returns the number of mapped
    /// LPAs per physical block (to compare with the block manager's counts).
    pub fn check(&self, pages_per_block: u32) -> Result<Vec<u32>, String> {
        let mut per_block = vec![0u32; self.p2l.len() / pages_per_block as usize];
        for (lpa, &ppa) in self.l2p.iter().enumerate() {
            if ppa == NONE {
                continue;
            }
            if self.p2l[ppa as usize] != lpa as u32 {
                return Err(format!(
                    "l2p[{lpa}] = {ppa} but p2l[{ppa}] = {}",
                    self.p2l[ppa as usize]
                ));
            }
            if !self.is_valid(ppa) {
                return Err(format!(
                    "ppa {ppa} mapped by lpa {lpa} but not marked valid"
                ));
            }
            per_block[(ppa / pages_per_block) as usize] += 1;
        }
        for (ppa, &lpa) in self.p2l.iter().enumerate() {
            let mapped = lpa != NONE;
            if mapped != self.is_valid(ppa as u32) {
                return Err(format!(
                    "ppa {ppa}: p2l = {lpa} but valid bit = {}",
                    !mapped
                ));
            }
            if mapped && self.l2p[lpa as usize] != ppa as u32 {
                return Err(format!(
                    "p2l[{ppa}] = {lpa} but l2p[{lpa}] = {}",
                    self.l2p[lpa as usize]
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
            let mut next = 0u32;
            for a in actions {
                match a {
                    Action::Write(lpa) => {
                        let old = t.map(lpa, next);
                        prop_assert_eq!(old, model.insert(lpa, next).unwrap_or(NONE));
                        next += 1;
                    }
                    Action::Trim(lpa) => {
                        let old = t.unmap(lpa);
                        prop_assert_eq!(old, model.remove(&lpa).unwrap_or(NONE));
                    }
                    Action::Move(ppa) => {
                        if ppa < next && t.is_valid(ppa) {
                            let lpa = t.relocate(ppa, next);
                            model.insert(lpa, next);
                            next += 1;
                        }
                    }
                }
                let per_block = t.check(64).map_err(TestCaseError::fail)?;
                prop_assert_eq!(per_block.iter().sum::<u32>() as usize, model.len());
            }
            for lpa in 0..16 {
                prop_assert_eq!(t.ppa_of(lpa), model.get(&lpa).copied().unwrap_or(NONE));
            }
        }
    }
}
