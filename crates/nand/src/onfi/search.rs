//! Search-in-Memory vendor commands on the die state machine (paper 004 §III-B, §IV-B), for a
//! device with a `[search]` config section. Sequences (see [`super::chain`] for full chains):
//!
//! - `C8h row C9h` / `C8h row CAh`: switch a block to match / storage mode (only while it holds
//!   no programmed page and none of its pages is latched);
//! - `C0h page C1h`: page-open (TON at the match-mode read time; the verification window is then
//!   read out); `C0h page C2h`: page-open-cache (with a page active, sense into Latch 1; R/B#
//!   ready at once, searches of the active page go on);
//! - `C3h`: page-close (a page in Latch 1 moves up, once its sense has ended; its window can be
//!   read out);
//! - `C4h page DataIn(16 k) C5h`: search of the active page with k keys (MATCH for k x the SiM
//!   time per key, then k 64-byte bitmaps out); `C6h page DataIn(8) C7h`: gather (the active
//!   page at once, another page after its sense; then the chunks out).
//!
//! Data moves at the match-mode bus rate. Like the rest of this interface the die checks and
//! times sequences and byte counts; it carries no data values (the transaction interface's
//! [`crate::NandSim`] matches real bytes).

use super::commands as op;
use super::cycle::{ArrayStage, Cycle, CycleOutcome};
use super::die::OnfiDie;
use super::state::Target;
use crate::error::{NandError, NandResult};
use crate::geometry::PageAddress;
use crate::search::BlockMode;
use crate::search::format::{CHUNK_BYTES, CHUNK_MASK_BYTES, MATCH_BITMAP_BYTES, SEARCH_KEY_BYTES};
use crate::stage::Stage;
use nandlab_core::SimTime;

/// SiM latches of one plane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SimLatches {
    /// Latch 2: the active page.
    pub active: Option<PageAddress>,
    /// Latch 1: a page sensed by page-open-cache, and when its sense ends.
    pub cached: Option<(PageAddress, SimTime)>,
}

impl OnfiDie {
    /// Refuses SiM commands on a die without `[search]`.
    pub(super) fn check_sim_device(&self, code: u8) -> NandResult<()> {
        if self.search.is_none() {
            return Err(self.refuse(
                "a command of this device (SiM vendor commands need a [search] config section)",
                Cycle::Command(code),
            ));
        }
        Ok(())
    }

    fn sim_rule(&self, message: String) -> NandError {
        NandError::SearchRule {
            message: format!("die {}: {message}", self.id.0),
        }
    }

    fn mode_of(&self, address: &PageAddress) -> BlockMode {
        self.block_modes
            .get(self.local_geometry.block_id(&self.local(address)).index())
            .copied()
            .unwrap_or_default()
    }

    /// Whether the block of `address` is in match mode (legacy ops there use SLC times).
    pub(super) fn in_match_mode(&self, address: &PageAddress) -> bool {
        self.mode_of(address) == BlockMode::Match
    }

    /// Refuses a legacy op on a plane whose latches hold a SiM page.
    pub(super) fn check_sim_latches(&self, address: &PageAddress) -> NandResult<()> {
        let Some(latches) = self.sim_latches.get(address.plane as usize) else {
            return Ok(());
        };
        if let Some(page) = latches.active.or(latches.cached.map(|c| c.0)) {
            return Err(self.sim_rule(format!(
                "{address}: the plane's page buffers hold SiM page {page} (C3h page-close first)"
            )));
        }
        Ok(())
    }

    fn require_match_mode(&self, what: &str, address: &PageAddress) -> NandResult<()> {
        if self.mode_of(address) != BlockMode::Match {
            return Err(self.sim_rule(format!(
                "{what} of {address}: its block is in storage mode (C8h-row-C9h while erased)"
            )));
        }
        Ok(())
    }

    /// C9h / CAh after C8h-row: the block's mode.
    pub(super) fn sim_block_mode(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
        code: u8,
    ) -> NandResult<CycleOutcome> {
        let mode = if code == op::SIM_MODE_MATCH_CONFIRM {
            BlockMode::Match
        } else {
            BlockMode::Storage
        };
        let address = target.address;
        let local = self.local(&address);
        let id = self.local_geometry.block_id(&local);
        if self.block_modes[id.index()] != mode {
            if let Some(last) = self.blocks.block(id).last_page {
                return Err(self.sim_rule(format!(
                    "block of {address} holds programmed pages (up to page {last}): erase it \
                     before switching it to {mode:?} mode"
                )));
            }
            let latched = self.sim_latches[address.plane as usize];
            if let Some(page) = latched
                .active
                .into_iter()
                .chain(latched.cached.map(|c| c.0))
                .find(|p| p.block == address.block)
            {
                return Err(self.sim_rule(format!(
                    "{page} is in a latch: close it before switching its block"
                )));
            }
            self.block_modes[id.index()] = mode;
        }
        self.phase = super::state::Phase::Idle;
        Ok(self.outcome(start, end, Some(Stage::Cle), None))
    }

    /// C1h / C2h after C0h-page: page-open or page-open-cache.
    pub(super) fn sim_page_open(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
        cache: bool,
    ) -> NandResult<CycleOutcome> {
        let address = target.address;
        self.require_match_mode("page-open", &address)?;
        if !self.blocks.is_programmed(&self.local(&address)) {
            return Err(self.sim_rule(format!(
                "page-open of {address}: the page holds no data since its block's erase"
            )));
        }
        let plane = address.plane as usize;
        let latches = self.sim_latches[plane];
        let window = self.timing.page_open_transfer_bytes;
        let read = self.timing.match_read;
        self.phase = super::state::Phase::Idle;
        match (latches.active, cache) {
            (None, _) => {
                let array = self.start_array(end, Stage::Ton, read);
                self.ready_at = array.end;
                self.sim_latches[plane].active = Some(address);
                self.sim_output = window;
                Ok(self.outcome(start, end, Some(Stage::Cle), Some(array)))
            }
            (Some(open), false) => Err(self.sim_rule(format!(
                "page-open of {address}: {open} is active in Latch 2 (C3h page-close, or C2h \
                 page-open-cache)"
            ))),
            (Some(open), true) => {
                if let Some((waiting, _)) = latches.cached {
                    return Err(self.sim_rule(format!(
                        "page-open-cache of {address}: {waiting} already waits in Latch 1"
                    )));
                }
                if open.block != address.block {
                    return Err(self.sim_rule(format!(
                        "page-open-cache of {address}: the active page {open} is in another block"
                    )));
                }
                let array = self.start_array(end, Stage::Ton, read);
                self.sim_latches[plane].cached = Some((address, array.end));
                self.sim_output = 0;
                Ok(self.outcome(start, end, Some(Stage::Cle), Some(array)))
            }
        }
    }

    /// C3h: page-close of the plane holding an active page.
    pub(super) fn sim_page_close(
        &mut self,
        start: SimTime,
        end: SimTime,
    ) -> NandResult<CycleOutcome> {
        let Some(plane) = self.sim_latches.iter().position(|l| l.active.is_some()) else {
            return Err(self.sim_rule("page-close (C3h) but no page is active".into()));
        };
        let latches = &mut self.sim_latches[plane];
        latches.active = None;
        self.sim_output = 0;
        if let Some((page, sensed_at)) = latches.cached.take() {
            latches.active = Some(page);
            self.ready_at = end.max(sensed_at);
            self.sim_output = self.timing.page_open_transfer_bytes;
        }
        Ok(self.outcome(start, end, Some(Stage::Cle), None))
    }

    /// C5h after C4h-page-keys: match `bytes_in / 16` keys against the active page.
    pub(super) fn sim_search(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
        bytes_in: u32,
    ) -> NandResult<CycleOutcome> {
        let address = target.address;
        if self.sim_latches[address.plane as usize].active != Some(address) {
            return Err(self.sim_rule(format!(
                "search of {address}: the page is not active (C0h-page-C1h first)"
            )));
        }
        let keys = bytes_in / SEARCH_KEY_BYTES;
        let limit = self.search.as_ref().map_or(0, |s| s.batch_keys_max);
        if !bytes_in.is_multiple_of(SEARCH_KEY_BYTES) || keys == 0 || keys > limit {
            return Err(self.refuse(
                format!(
                    "1 to {limit} keys of {SEARCH_KEY_BYTES} bytes (key, mask) before C5h, \
                     {bytes_in} bytes in"
                ),
                Cycle::Command(op::SIM_SEARCH_CONFIRM),
            ));
        }
        self.phase = super::state::Phase::Idle;
        let matching = ArrayStage {
            stage: Stage::Match,
            start: end,
            end: end + self.timing.match_per_key * u64::from(keys),
        };
        self.ready_at = matching.end;
        self.sim_output = MATCH_BITMAP_BYTES * keys;
        Ok(self.outcome(start, end, Some(Stage::Cle), Some(matching)))
    }

    /// C7h after C6h-page-bitmap: the chunks of the active page, or of another page sensed
    /// into Latch 1 first.
    pub(super) fn sim_gather(
        &mut self,
        start: SimTime,
        end: SimTime,
        target: Target,
        bytes_in: u32,
    ) -> NandResult<CycleOutcome> {
        let address = target.address;
        if bytes_in != CHUNK_MASK_BYTES {
            return Err(self.refuse(
                format!("the {CHUNK_MASK_BYTES}-byte chunk bitmap before C7h, {bytes_in} bytes in"),
                Cycle::Command(op::SIM_GATHER_CONFIRM),
            ));
        }
        self.require_match_mode("gather", &address)?;
        let latches = self.sim_latches[address.plane as usize];
        let mut array = None;
        if latches.active != Some(address) {
            if !self.blocks.is_programmed(&self.local(&address)) {
                return Err(self.sim_rule(format!(
                    "gather of {address}: the page holds no data since its block's erase"
                )));
            }
            if let Some((waiting, _)) = latches.cached {
                return Err(self.sim_rule(format!(
                    "gather of {address}: Latch 1 holds {waiting} (C3h page-close first)"
                )));
            }
            let sense = self.start_array(end, Stage::Ton, self.timing.match_read);
            self.ready_at = sense.end;
            array = Some(sense);
        }
        self.phase = super::state::Phase::Idle;
        // the chunk count travels in the bitmap's bits, which the die does not see: the host
        // may read out up to every chunk
        self.sim_output =
            crate::search::format::CHUNKS_PER_PAGE * (CHUNK_BYTES + self.timing.chunk_ecc_bytes);
        Ok(self.outcome(start, end, Some(Stage::Cle), array))
    }

    /// Data output of SiM results (window, bitmaps, chunks) at the match-mode rate.
    pub(super) fn sim_data_out(&mut self, start: SimTime, bytes: u32) -> NandResult<CycleOutcome> {
        let got = Cycle::DataOut { bytes };
        if start < self.ready_at {
            return Err(self.refuse(
                format!("R/B# ready (the die is busy until {})", self.ready_at),
                format!("{got} at {start}"),
            ));
        }
        if bytes > self.sim_output {
            return Err(self.refuse(
                format!("at most {} more bytes of SiM output", self.sim_output),
                got,
            ));
        }
        self.sim_output -= bytes;
        let end = start + self.timing.match_transfer_time(bytes);
        Ok(self.outcome(start, end, Some(Stage::Tor), None))
    }
}
