//! The power-loss driver on [`Ssd`]: start the trace on an idle device, admit requests and
//! step events one at a time (so a cut can fall between any two), and cut.
//!
//! Nothing here is on the normal run path ([`Ssd::run`] never calls it).

use super::Ssd;
use crate::address::{Lpa, Ppa};
use crate::error::{FtlError, FtlResult};
use crate::host::HostRequest;
use crate::power::cut::{CutContext, DieAtCut, EnergyCosts, StagePage, apply_cut};
use crate::power::image::{FlashImage, PageImage};
use crate::power::trace::{TRACE_OPS_MAX, Trace};
use crate::power::{CutConfig, PowerCut};
use nandlab_core::SimTime;
use nandlab_nand::Stage;
use nandlab_nand::energy::EnergyModel;

fn power_error(message: String) -> FtlError {
    FtlError::BadRequest { message }
}

impl Ssd {
    /// Starts the power-loss trace: from now on every decided flash op is recorded so that a
    /// cut can rebuild the array. The device must be idle (nothing in flight or queued).
    pub fn start_power_trace(&mut self) -> FtlResult<()> {
        // the trace folds each die's completions in submission order, one traced op per
        // completion: a merged multiplane op submits and completes member by member (one
        // traced op each, `submit_merged`, `complete_merged`), and in cache mode a die's ops
        // still complete in submission order (a cache program's cell stage starts when the
        // previous one's ends; the chip model's rule), so both are modelled
        // a cached mapping table (DFTL) is traced like the page mapping it fronts: the mount
        // rebuilds the host's entries from the pages' OOB (a full scan, or a checkpoint and
        // the pages after it), so the dirty entries the cut loses come back from the data
        // pages; translation pages (logical pages above the host's range) are left out of the
        // mount, and the remounted device starts with an empty cache (issue 34 item 4)
        if self.host.requests.in_flight() > 0
            || !self.chip.nand.is_idle()
            || !self.sched.all_empty()
            || !self.flash.emit.ops.is_empty()
        {
            return Err(power_error(
                "start_power_trace: the device is not idle (drain it first)".into(),
            ));
        }
        let released = self.flash.payload.released_total();
        if released > 0 {
            return Err(power_error(format!(
                "start_power_trace: {released} stale page payloads were released (Ssd::set_release_stale_payloads), so a recovery scan could not read them; start the trace before the device releases any"
            )));
        }
        // a traced device keeps every stale page's bytes until its block's erase
        self.flash.payload.set_release_stale(false);
        let dies = self.layout.geometry.total_dies();
        let pages_per_die = (self.layout.geometry.total_pages() / u64::from(dies)) as u32;
        let base = (0..dies as usize)
            .map(|d| self.flash.oob.completed_ops(d))
            .collect();
        let physical = self.layout.geometry.total_pages() as u32;
        let mut image = FlashImage::new(physical, self.layout.geometry.pages_per_block, base);
        for ppa in (0..physical).map(Ppa) {
            if let Some(content) = self.flash.page_content(ppa) {
                image.pages[ppa.index()] = PageImage::Programmed(content);
            }
        }
        let interval = self.stages.checkpoint_interval_pages;
        let mut trace = Trace::new(
            dies,
            pages_per_die,
            interval,
            self.metadata_page_ps(),
            self.layout.geometry.page_size_bytes,
        );
        trace.image = Some(image);
        self.flash.add_observer(Box::new(trace));
        if interval > 0 {
            // the state the device starts from (a mount's, loaded by `load_recovered`) gets a
            // checkpoint at once: the next mount reads it instead of scanning everything
            self.take_checkpoint();
        }
        Ok(())
    }

    /// Releases (`on`) or keeps the payload slot of a page the mapping invalidates (an
    /// overwrite, a TRIM, a transactional shadow dropped or switched), `full` payload mode
    /// only. Kept (the default), a stale page holds its bytes until its block is erased, as on
    /// flash, which a power trace's recovery scan needs; released, the payload store holds
    /// only the live pages' bytes (plus those of GC sources until their erase), which is what
    /// a run that is never cut needs. The OOB table (LPA, sequence number, program completion)
    /// is kept either way, so simulated behaviour does not change. Refused while the power
    /// trace is on; once a page was released, [`Ssd::start_power_trace`] is refused, and
    /// reading a released page's bytes or spare area ([`Ssd::physical_page`],
    /// [`Ssd::read_oob`]) panics.
    pub fn set_release_stale_payloads(&mut self, on: bool) -> FtlResult<()> {
        if on && self.power_trace_on() {
            return Err(power_error(
                "set_release_stale_payloads: the power trace is on (its recovery scan needs stale pages' bytes)".into(),
            ));
        }
        self.flash.payload.set_release_stale(on);
        Ok(())
    }

    /// Bytes the payload store has allocated for page bytes so far (full mode; 0 in
    /// timing-only mode): pages are stored as first written, and the slots of erased and
    /// released pages are reused.
    pub fn payload_allocated_bytes(&self) -> u64 {
        self.flash.payload.allocated_bytes()
    }

    /// Whether stale pages' payload slots are released ([`Ssd::set_release_stale_payloads`];
    /// always false outside `full` payload mode).
    pub fn releases_stale_payloads(&self) -> bool {
        self.flash.payload.releases_stale()
    }

    /// Whether the power-loss trace is on.
    pub fn power_trace_on(&self) -> bool {
        self.flash.power_trace().is_some()
    }

    /// Admits `request` now (`data`: a write's bytes, full payload mode) if the queue has room;
    /// whether it did.
    pub fn power_admit(&mut self, request: &HostRequest, data: Option<&[u8]>) -> FtlResult<bool> {
        if !self.host.requests.has_room() {
            return Ok(false);
        }
        let now = self.now;
        self.admit(request, now, data)?;
        self.fold_trace()?;
        Ok(true)
    }

    /// Requests admitted and not completed.
    pub fn requests_in_flight(&self) -> u32 {
        self.host.requests.in_flight()
    }

    /// The time of the next event of any source (`None`: nothing pending), the trim log's
    /// metadata writes included.
    pub fn next_event_time(&self) -> Option<SimTime> {
        let world = self.world_next_event_time();
        match self.metadata_next_ps().map(SimTime::from_ps) {
            Some(t) => Some(world.map_or(t, |w| w.min(t))),
            None => world,
        }
    }

    /// The time of the next event of the world loop's sources.
    fn world_next_event_time(&self) -> Option<SimTime> {
        let mut next = self.host.events.peek_time();
        let mut fold = |t: Option<SimTime>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n: SimTime| n.min(t)));
            }
        };
        fold(self.chip.nand.next_event_time());
        if let Some(c) = &self.stages.controller {
            fold(c.events.peek_time());
        }
        if self.front.is_timed() {
            fold(self.front.next_event().map(|(_, t)| t));
        }
        next
    }

    /// Processes the next event; its time, or `None` when nothing was pending.
    pub fn power_step(&mut self) -> FtlResult<Option<SimTime>> {
        if let Some(t) = self.metadata_next_ps().map(SimTime::from_ps)
            && self.world_next_event_time().is_none_or(|w| t <= w)
        {
            // a write to the metadata area ends: a trim-log record (the flushes waiting for it
            // go on) or a map checkpoint's pages (it commits if its data is on flash)
            self.set_now(t.max(self.now));
            self.trim_log_step();
            self.fold_trace()?;
            return Ok(Some(self.now));
        }
        let stepped = self.step()?;
        self.fold_trace()?;
        Ok(stepped.map(|_| self.now))
    }

    /// Processes events until nothing is pending (the trim log's writes included).
    pub fn power_drain(&mut self) -> FtlResult<()> {
        while self.power_step()?.is_some() {}
        if self.host.requests.in_flight() > 0 {
            return Err(power_error(format!(
                "power_drain: {} requests in flight but no event pending",
                self.host.requests.in_flight()
            )));
        }
        Ok(())
    }

    /// Whether request `slot` (as [`Ssd::power_admit_slot`] returned it) is still in flight.
    pub fn request_in_flight(&self, slot: u32) -> bool {
        self.host
            .requests
            .slots
            .get(slot as usize)
            .is_some_and(|s| s.in_use)
    }

    /// [`Ssd::power_admit`], returning the request slot it took (`None`: the queue is full).
    /// A slot is reused only by a later admission, so a driver that checks its slots between
    /// admissions sees each completion ([`Ssd::request_in_flight`]).
    pub fn power_admit_slot(
        &mut self,
        request: &HostRequest,
        data: Option<&[u8]>,
    ) -> FtlResult<Option<u32>> {
        let Some(slot) = self.host.requests.next_free() else {
            return Ok(None);
        };
        let now = self.now;
        self.admit(request, now, data)?;
        self.fold_trace()?;
        Ok(Some(slot))
    }

    /// Chip ops completed since the trace started.
    pub fn chip_ops_completed(&self) -> u64 {
        match self.flash.power_trace().and_then(|t| t.image.as_ref()) {
            Some(image) => (0..image.base.len())
                .map(|d| self.flash.oob.completed_ops(d) - image.base[d])
                .sum(),
            None => 0,
        }
    }

    /// Folds the ops the chip model completed into the trace's image.
    fn fold_trace(&mut self) -> FtlResult<()> {
        let Some((trace, oob)) = self.flash.power_trace_with_oob() else {
            return Ok(());
        };
        let mut image = trace.image.take().expect("the trace has an image");
        image.fold(trace, |d| oob.completed_ops(d));
        trace.image = Some(image);
        if trace.unfolded > TRACE_OPS_MAX {
            return Err(power_error(format!(
                "power trace: more than {TRACE_OPS_MAX} decided ops not completed"
            )));
        }
        self.checkpoint_step();
        self.flush_barrier_step();
        Ok(())
    }

    /// Cuts the power now: the array as the ops completed, in flight and queued leave it, and
    /// the front-end stages' pages lost or saved. The device itself is left as it was (a new
    /// one is mounted from the result, [`crate::power::recover`]).
    pub fn power_cut(&mut self, config: &CutConfig) -> FtlResult<PowerCut> {
        config
            .validate()
            .map_err(|m| power_error(format!("power cut: {m}")))?;
        self.fold_trace()?;
        let Some(trace) = self.flash.power_trace() else {
            return Err(power_error(
                "power_cut: the power trace is not on (start_power_trace)".into(),
            ));
        };
        let image = trace.image.clone().expect("the trace has an image");
        let mut cell_started: Vec<Vec<bool>> = vec![Vec::new(); trace.dies.len()];
        for op in self.chip.nand.in_flight_ops() {
            // a merged multiplane op stands for its members, traced one by one in the order
            // they complete: one cell stage for all, so a cut during it tears every member
            let members = match crate::flash::emit::Tag::decode(op.tag) {
                crate::flash::emit::Tag::Multi(id) => self.sched.merged_members(id).len(),
                _ => 1,
            };
            for _ in 0..members {
                cell_started[op.die as usize].push(op.cell_started);
            }
        }
        let mut dies = Vec::with_capacity(trace.dies.len());
        for (die, started) in cell_started.into_iter().enumerate() {
            let pending = &trace.dies[die];
            if started.len() > pending.len() {
                return Err(power_error(format!(
                    "power cut: die {die} has {} ops in the chip but {} traced",
                    started.len(),
                    pending.len()
                )));
            }
            dies.push(DieAtCut {
                pending,
                staged: &trace.staged[die],
                in_chip_cell_started: started,
            });
        }
        let mut stage_pages = Vec::new();
        for lpa in (0..self.layout.logical_pages).map(Lpa) {
            // (the SLC cache's pages are on flash, in its blocks: the mount scans them)
            if let Some(stage) = self.front.holder(lpa)
                && stage.slc_blocks() == 0
            {
                stage_pages.push(StagePage {
                    lpa,
                    volatile: stage.volatile(),
                    data: self.front.page(lpa).map(Box::<[u8]>::from),
                });
            }
        }
        let timing = self.chip.nand.timing();
        let energy_model = EnergyModel::new(self.chip.nand.config());
        let ppb = self.layout.geometry.pages_per_block;
        let slowest = (0..ppb).map(|p| timing.program_time(p)).max();
        let energy = EnergyCosts {
            program_pj: energy_model.stage_pj(Stage::Tin, slowest.unwrap_or(SimTime::ZERO))
                + energy_model.stage_pj(
                    Stage::Tir,
                    timing.transfer_time(self.layout.geometry.page_size_bytes),
                ),
            erase_pj: energy_model.stage_pj(Stage::Ber, timing.erase),
        };
        let context = CutContext {
            layout: timing.layout,
            energy,
            next_sequence: self.flash.write_sequence + 1,
            time: self.now,
            slc_blocks: self.flash.slc_block_ids(),
        };
        let mut cut = apply_cut(image, dies, stage_pages, &context, config);
        cut.report.chip_ops_completed = self.chip_ops_completed();
        (cut.report.checkpoints_committed, cut.report.checkpoint_lost) = self.checkpoint_state();
        (cut.report.trim_records_written, _) = self.trim_log_written();
        cut.report.trim_records_lost = trace.trim_log.pending.len() as u64;
        Ok(cut)
    }
}

impl Ssd {
    /// Mounts the device `cut` left, as a device configured like this one reads it
    /// ([`crate::power::recover`] with this device's logical capacity, geometry and timing;
    /// blocks are scanned in page order under the page mapping, whose blocks are programmed
    /// from page 0 without gaps).
    pub fn recover_cut(
        &self,
        cut: &PowerCut,
        variant: crate::power::RecoveryVariant,
    ) -> crate::power::Recovered {
        crate::power::recover(
            cut,
            self.logical_pages() as u32,
            self.geometry(),
            self.nand().timing(),
            variant,
            matches!(self.mapper, crate::mapping::Mapper::Page(_)),
        )
    }

    /// Loads a mount's result into this new, idle device so that it can run on (cut–recover–
    /// continue cycles): each recovered LPA is written functionally (no op timed) with its
    /// recovered bytes and sequence number, oldest first (on the zoned mapping in LBA order,
    /// holes in a zone padded: `ZonedFtl::pad_to`), and new writes get sequence numbers
    /// above every intact page of the cut array and its dump area (as a mount that read them
    /// all would). With paired-page padding the open blocks are then padded to the end of
    /// their word lines. The logical content is exactly the mount's; the physical placement, the
    /// stale and torn pages and the erase counts of the cut device are not carried over. A SiM
    /// region's pages are loaded into the pool's own placement id and then programmed on the
    /// chip (timed) into match-mode blocks, randomized for their addresses (with
    /// `ftl.sim_integrity`: sealed with a header stamped at the mount), so searches run on
    /// the chip again ([`Ssd::load_search_pool`]).
    pub fn load_recovered(
        &mut self,
        cut: &PowerCut,
        recovered: &crate::power::Recovered,
    ) -> FtlResult<()> {
        use crate::flash::HostWrite;
        use crate::flash::emit::Tag;
        use crate::mapping::Mapping;
        if self.host.requests.in_flight() > 0
            || !self.chip.nand.is_idle()
            || self.flash.write_sequence > 0
            || self.power_trace_on()
        {
            return Err(power_error(
                "load_recovered: needs a new, idle device without a power trace".into(),
            ));
        }
        if recovered.map.len() != self.layout.logical_pages as usize {
            return Err(power_error(format!(
                "load_recovered: the mount has {} logical pages, the device {}",
                recovered.map.len(),
                self.layout.logical_pages
            )));
        }
        let mut pages: Vec<(u64, Lpa)> = (0..self.layout.logical_pages)
            .map(Lpa)
            .filter(|lpa| recovered.map[lpa.index()].is_some())
            .map(|lpa| (recovered.sequence[lpa.index()], lpa))
            .collect();
        // (a zoned mapping takes each zone's pages in LBA order, with their sequence numbers;
        // a zone whose reset the cut interrupted may hold newer pages below older ones)
        if !matches!(self.mapper, crate::mapping::Mapper::Zoned(_)) {
            pages.sort_unstable();
        }
        let highest = highest_intact_sequence(cut);
        self.flash.emit.enabled = false;
        let mut result = Ok(());
        // a SiM region's pages go back into the pool's blocks (its own placement id)
        let pool = self
            .stages
            .search
            .as_ref()
            .map(|s| (s.pool, s.first_lpa..s.first_lpa + s.pages));
        for &(sequence, lpa) in &pages {
            let placement = match &pool {
                Some((id, region)) if region.contains(&lpa.0) => *id,
                _ => 0,
            };
            let write = HostWrite {
                lpa,
                sequence,
                data: recovered.read(cut, lpa).into(),
                placement,
            };
            // (the holes the mount found below a zone's intact page are padded)
            if let crate::mapping::Mapper::Zoned(z) = &mut self.mapper {
                z.pad_to(&mut self.flash, lpa, Tag::Internal);
            }
            result = self.mapper.write(&mut self.flash, write, Tag::Internal);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            // paired-page padding: the loaded pages' word lines are completed before the
            // device runs on (a mount closes what a torn upper page could still destroy)
            self.mapper.pad_open_blocks(&mut self.flash, Tag::Internal);
        }
        self.flash.emit.enabled = true;
        self.flash.emit.ops.clear();
        self.flash.write_sequence = self.flash.write_sequence.max(highest);
        result?;
        if self.stages.search.is_some() {
            self.load_search_pool()?;
        }
        Ok(())
    }
}

/// The highest sequence number of an intact page of `cut`'s array or dump area.
fn highest_intact_sequence(cut: &PowerCut) -> u64 {
    let mut highest = cut.dump.iter().map(|d| d.sequence).max().unwrap_or(0);
    for ppa in (0..cut.image.physical_pages()).map(Ppa) {
        if let Some(PageImage::Programmed(c)) = cut.image.page(ppa)
            && c.crc_ok()
        {
            highest = highest.max(c.sequence);
        }
    }
    highest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PayloadMode;
    use crate::power::{RecoveryVariant, Source};

    fn ssd(payload: PayloadMode) -> Ssd {
        let mut c = crate::ssd::test_device::small_slc(2, 1, 4);
        c.ftl.payload = payload;
        Ssd::new(c, 3).unwrap()
    }

    fn write(s: &mut Ssd, lpa: u32) {
        let r = HostRequest::write(u64::from(lpa) * 512, 512);
        assert!(s.power_admit(&r, None).unwrap());
    }

    /// A mount after an idle cut rebuilds exactly the FTL's own mapping (GC and erases
    /// included), in both payload modes: the trace, the image and the scan agree with the FTL.
    #[test]
    fn an_idle_cut_mounts_to_the_ftls_own_mapping() {
        for payload in [PayloadMode::Full, PayloadMode::TimingOnly] {
            let mut s = ssd(payload);
            s.start_power_trace().unwrap();
            for i in 0..300u32 {
                write(&mut s, (i * 7) % 20);
                while s.requests_in_flight() > 0 {
                    s.power_step().unwrap();
                }
            }
            s.drain().unwrap();
            let cut = s.power_cut(&CutConfig::default()).unwrap();
            assert_eq!(cut.report.torn_programs + cut.report.ops_not_run, 0);
            let logical = s.logical_pages() as u32;
            let r = s.recover_cut(&cut, RecoveryVariant::Correct);
            for lpa in (0..logical).map(Lpa) {
                let mounted = r.map[lpa.index()].map(|src| match src {
                    Source::Flash(ppa) => ppa,
                    Source::Dump(_) => unreachable!("no buffer"),
                });
                assert_eq!(mounted, s.locate(lpa), "lpa {lpa:?} ({payload:?})");
            }
            assert!(s.nand().stats().kind(nandlab_nand::OpKind::Erase).ops > 0);
        }
    }

    /// A cut with a program in its cell stage tears that page; the mount discards it and keeps
    /// the LPA's previous write.
    #[test]
    fn a_torn_program_is_discarded_at_mount() {
        let mut s = ssd(PayloadMode::Full);
        s.start_power_trace().unwrap();
        write(&mut s, 5);
        s.drain().unwrap();
        let old = s.locate(Lpa(5)).unwrap();
        write(&mut s, 5);
        let cut = s.power_cut(&CutConfig::default()).unwrap();
        assert_eq!(cut.report.torn_programs, 1, "{:?}", cut.report);
        let r = s.recover_cut(&cut, RecoveryVariant::Correct);
        assert_eq!(r.map[5], Some(Source::Flash(old)));
        assert_eq!(r.report.pages_discarded, 1);
        assert!(
            s.power_cut(&CutConfig {
                paired_damage_probability: -1.0,
                ..CutConfig::default()
            })
            .unwrap_err()
            .to_string()
            .contains("paired_damage_probability")
        );
    }

    /// A merged multiplane program cut in its cell stage tears every member page (one cell
    /// stage for all planes), never one alone; cut before it, neither page is touched.
    #[test]
    fn a_cut_multiplane_program_tears_every_member() {
        let (mut both, mut one, mut merged) = (0, 0, 0);
        for steps in 0..12 {
            let mut c = crate::ssd::test_device::small_slc(1, 2, 4);
            c.ftl.scheduler.multiplane = true;
            c.ftl.payload = PayloadMode::Full;
            let mut s = Ssd::new(c, 3).unwrap();
            s.start_power_trace().unwrap();
            let r = HostRequest::write(0, 2 * 512);
            assert!(s.power_admit(&r, Some(&[7u8; 1024])).unwrap());
            for _ in 0..steps {
                if s.power_step().unwrap().is_none() {
                    break;
                }
            }
            merged += s.multiplane_ops();
            let cut = s.power_cut(&CutConfig::default()).unwrap();
            match cut.report.torn_programs {
                2 => both += 1,
                1 => one += 1,
                _ => {}
            }
            if cut.report.torn_programs == 2 {
                let r = s.recover_cut(&cut, RecoveryVariant::Correct);
                assert_eq!(r.report.pages_discarded, 2);
                assert_eq!((r.map[0], r.map[1]), (None, None));
            }
        }
        assert!(merged > 0, "the two pages were not merged");
        assert!(both > 0 && one == 0, "both {both}, one {one}");
    }

    /// Starting the trace on a busy device is an error, not a wrong image.
    #[test]
    fn the_trace_starts_only_on_an_idle_device() {
        let mut s = ssd(PayloadMode::TimingOnly);
        let r = HostRequest::write(0, 512);
        let now = s.now();
        s.admit(&r, now, None).unwrap();
        assert!(s.start_power_trace().is_err());
        assert!(s.power_cut(&CutConfig::default()).is_err());
    }
}
