//! The dedup half of the PCM stage (SPEC P2, thesis §3.2.2): every page on its way to flash is
//! fingerprinted (SHA-1) and looked up in the redundant write finder; on a hit it leaves as a
//! duplicate of the logical page the finder names, so the mapping shares that page's physical
//! page instead of programming another.
//!
//! The finder's locations are LPAs. Logical pages holding the same bytes form a group (a doubly
//! linked list over LPAs); the finder records one member of each group (its anchor). When the
//! anchor is overwritten or trimmed the fingerprint moves to another member, or is removed with
//! the group's last member, so a hit always names an LPA whose mapped page holds exactly the
//! bytes looked up (checked on every hit).

use crate::address::Lpa;
use crate::frontend::PageWrites;
use nandlab_pcm::{
    AccessCost, DedupConfig, Fingerprint, Location, PcmAddr, PcmDevice, PcmResult,
    RedundantWriteFinder,
};
use serde::Serialize;

/// What the dedup half did (monotone).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DedupCounters {
    /// Pages fingerprinted.
    pub pages_checked: u64,
    /// Pages passed on as duplicates of another LPA (shared physical pages).
    pub duplicates_shared: u64,
    /// Pages whose LPA already held exactly these bytes (nothing written).
    pub duplicates_unchanged: u64,
    /// Pages passed on to be programmed.
    pub pages_written: u64,
    /// Fingerprints moved to another member when their anchor left.
    pub anchors_moved: u64,
    /// Hits that named an LPA not holding the bytes (must stay 0).
    pub stale_hits: u64,
}

#[derive(Debug)]
pub(crate) struct DedupFilter {
    finder: RedundantWriteFinder,
    /// Fingerprint of each LPA's content as last passed on (valid when `member`).
    fingerprint: Vec<Fingerprint>,
    member: Vec<bool>,
    next: Vec<Lpa>,
    prev: Vec<Lpa>,
    pub counters: DedupCounters,
}

impl DedupFilter {
    pub fn new(
        config: DedupConfig,
        base: PcmAddr,
        logical_pages: u32,
        device: &PcmDevice,
    ) -> PcmResult<Self> {
        let n = logical_pages as usize;
        Ok(DedupFilter {
            finder: RedundantWriteFinder::new(config, base, logical_pages, device)?,
            fingerprint: vec![Fingerprint([0; 20]); n],
            member: vec![false; n],
            next: vec![Lpa::NONE; n],
            prev: vec![Lpa::NONE; n],
            counters: DedupCounters::default(),
        })
    }

    pub fn finder(&self) -> &RedundantWriteFinder {
        &self.finder
    }

    /// A page on its way to flash: pushes it, or a duplicate, or nothing (unchanged) onto
    /// `out`. Returns the PCM cost (hashing included).
    /// `fingerprint` is `data`'s SHA-1 (computed by the caller: hashed here, ahead on threads
    /// or remembered); the simulated hashing is charged here either way.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        device: &mut PcmDevice,
        lpa: Lpa,
        sequence: u64,
        placement: u16,
        data: &[u8],
        fingerprint: Fingerprint,
        out: &mut PageWrites,
    ) -> PcmResult<AccessCost> {
        self.counters.pages_checked += 1;
        debug_assert!(fingerprint == Fingerprint::of(data));
        let found = self.finder.lookup_hashed(device, fingerprint)?;
        let mut cost = found.cost;
        let i = lpa.index();
        if self.member[i] && self.fingerprint[i] == found.fingerprint {
            self.counters.duplicates_unchanged += 1;
            return Ok(cost);
        }
        cost += self.forget(device, lpa)?;
        let hit = found.existing.map(|l| Lpa(l.0)).filter(|&l| {
            let holds = l != lpa
                && self.member[l.index()]
                && self.fingerprint[l.index()] == found.fingerprint;
            if !holds {
                self.counters.stale_hits += 1;
            }
            holds
        });
        self.fingerprint[i] = found.fingerprint;
        self.member[i] = true;
        match hit {
            Some(same_as) => {
                // join same_as's group, right after it
                let after = self.next[same_as.index()];
                self.prev[i] = same_as;
                self.next[i] = after;
                self.next[same_as.index()] = lpa;
                if let Some(a) = after.get() {
                    self.prev[a.index()] = lpa;
                }
                out.push_duplicate(lpa, sequence, same_as);
                self.counters.duplicates_shared += 1;
            }
            None => {
                self.next[i] = Lpa::NONE;
                self.prev[i] = Lpa::NONE;
                out.push_placed(lpa, sequence, Some(data), placement);
                cost += self
                    .finder
                    .insert(device, found.fingerprint, Location(lpa.0))?;
                self.counters.pages_written += 1;
            }
        }
        Ok(cost)
    }

    /// `lpa` no longer holds its bytes (overwritten or trimmed): it leaves its group, and the
    /// finder's record moves to another member or goes.
    pub fn forget(&mut self, device: &mut PcmDevice, lpa: Lpa) -> PcmResult<AccessCost> {
        let i = lpa.index();
        if !self.member[i] {
            return Ok(AccessCost::default());
        }
        self.member[i] = false;
        let (p, n) = (self.prev[i], self.next[i]);
        if let Some(p) = p.get() {
            self.next[p.index()] = n;
        }
        if let Some(n) = n.get() {
            self.prev[n.index()] = p;
        }
        self.prev[i] = Lpa::NONE;
        self.next[i] = Lpa::NONE;
        let location = Location(lpa.0);
        let Some(fingerprint) = self.finder.fingerprint_at(location) else {
            // not the anchor, or its fingerprint was evicted
            return Ok(AccessCost::default());
        };
        match n.get().or(p.get()) {
            Some(other) => {
                self.counters.anchors_moved += 1;
                self.finder.insert(device, fingerprint, Location(other.0))
            }
            None => self.finder.remove(device, location),
        }
    }

    /// Checks the invariant: every fingerprint the finder records sits at a member holding
    /// it, and group neighbours hold the same bytes. `Err` names the first violation.
    pub fn check(&self) -> Result<(), String> {
        for (i, &m) in self.member.iter().enumerate() {
            let location = Location(i as u32);
            if let Some(f) = self.finder.fingerprint_at(location)
                && (!m || self.fingerprint[i] != f)
            {
                return Err(format!(
                    "finder names lpa {i}, which does not hold the bytes"
                ));
            }
            if m && let Some(n) = self.next[i].get()
                && (!self.member[n.index()] || self.fingerprint[n.index()] != self.fingerprint[i])
            {
                return Err(format!("lpa {i} and its group neighbour {n:?} differ"));
            }
        }
        Ok(())
    }
}
