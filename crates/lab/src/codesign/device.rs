//! [`SsdDevice`]: the simulated SSD as the engine's [`BlockDevice`] and [`CoDesignHints`].
//!
//! Each engine call is one host request executed at queue depth 1 (the paper's
//! query-at-a-time model): the SSD simulates until that request completes, GC included when it
//! blocks the request (on the request's die). With `wait_for_gc` a write also waits until the
//! SSD has nothing left in flight, so GC it triggered on other dies blocks it too (paper 000
//! §2's foreground t_GC). The hint is the FTL's list of valid LPAs in its next victim block.
//!
//! With a host write buffer (`buffered_writes(n)`, the host-write path of paper 000's
//! emulator, Fujii et al. VLSI 2012) a page write returns once the SSD has taken it (command
//! decided, data in the controller), and its program runs in the background, striped over the
//! dies by the page mapping; at most `n` writes are in flight (a full buffer makes the next
//! write wait for the oldest). A write that triggers GC waits until the SSD is idle: GC stays
//! serial and blocks the query that triggered it (foreground t_GC). The buffer holds the last
//! `n` pages written (FIFO): a read of one of them is served from the controller's DRAM (no
//! flash read, no time; the controller's per-command energy is still paid); other reads stay
//! synchronous and queue behind the programs of their die. Rewrites are not coalesced: every
//! page write is programmed.

use nandlab_core::SimTime;
use nandlab_engine::{BlockDevice, CoDesignHints, DeviceCounters, EngineError, Lpa};
use nandlab_ftl::{CutOutcome, HostRequest, RequestHook, Ssd, hook_as};
use nandlab_nand::OpKind;
use std::collections::VecDeque;

/// The SSD behind the engine. Requires the FTL's `full` payload mode (rows are really stored).
#[derive(Debug)]
pub struct SsdDevice {
    ssd: Ssd,
    page_size_bytes: usize,
    wait_for_gc: bool,
    /// Host writes that may be in flight (0: every write completes before it returns).
    write_buffer_pages: u32,
    /// The pages in the write buffer, oldest first (at most `write_buffer_pages`).
    buffered: VecDeque<Lpa>,
    /// Reads served from the write buffer.
    buffer_hits: u64,
    /// A hook on the requests (a crash test's armed power cut, [`SsdDevice::set_request_hook`]),
    /// none on the product path.
    hook: Option<Box<dyn RequestHook>>,
}

/// The reason a request after the cut fails with.
pub const POWER_LOST: &str = "power lost";

impl SsdDevice {
    /// The engine never reads a page the mapping dropped, so without a power trace the SSD
    /// releases stale pages' bytes (`Ssd::set_release_stale_payloads`): its payload store
    /// follows the live pages, and a page rewritten in place reuses the slot it just freed
    /// (hot in cache) instead of touching fresh memory.
    pub fn new(mut ssd: Ssd) -> Self {
        if !ssd.power_trace_on() {
            ssd.set_release_stale_payloads(true)
                .expect("no power trace: releasing stale payloads is allowed");
        }
        let page_size_bytes = ssd.page_size_bytes() as usize;
        SsdDevice {
            ssd,
            page_size_bytes,
            wait_for_gc: false,
            write_buffer_pages: 0,
            buffered: VecDeque::new(),
            buffer_hits: 0,
            hook: None,
        }
    }

    /// Installs `hook` on the device's requests (a crash harness's armed power cut, which
    /// needs synchronous writes: no `buffered_writes`); every request goes through it from
    /// now on, and one it refuses (the power is off) fails with a device error whose reason
    /// is [`POWER_LOST`].
    pub fn set_request_hook(&mut self, hook: Box<dyn RequestHook>) -> Result<(), String> {
        if self.write_buffer_pages > 0 {
            return Err("request hook: needs synchronous writes (buffered_writes 0)".into());
        }
        self.hook = Some(hook);
        Ok(())
    }

    /// The installed request hook as a `T`, with the SSD under it (for the harness that
    /// installed it); `None` without one, or when it is not a `T`.
    pub fn request_hook<T: RequestHook>(&mut self) -> Option<(&mut T, &mut Ssd)> {
        let hook = hook_as::<T>(self.hook.as_deref_mut()?)?;
        Some((hook, &mut self.ssd))
    }

    /// Runs one request, through the request hook when one is installed; a request the hook
    /// refuses (the power is off) fails.
    fn exec(
        &mut self,
        op: &'static str,
        lpa: Lpa,
        request: &HostRequest,
        data: Option<&[u8]>,
    ) -> Result<nandlab_ftl::Executed, EngineError> {
        let outcome = match self.hook.as_mut() {
            None => self.ssd.execute(request, data).map(CutOutcome::Executed),
            Some(hook) => hook.execute(&mut self.ssd, request, data, false),
        };
        match outcome.map_err(|e| Self::request_error(op, lpa, e))? {
            CutOutcome::Executed(executed) => Ok(executed),
            CutOutcome::PowerLost => Err(EngineError::Device {
                op,
                lpa,
                reason: POWER_LOST.into(),
            }),
        }
    }

    /// Page writes go through a host write buffer of `pages` pages (0: synchronous writes).
    /// At most the SSD's submission-queue depth of them can be in flight.
    pub fn buffered_writes(self, pages: u32) -> Self {
        let pages = pages.min(self.ssd.queue_depth());
        SsdDevice {
            write_buffer_pages: pages,
            buffered: VecDeque::with_capacity(pages as usize),
            ..self
        }
    }

    /// Each write returns only when the SSD is idle (GC it triggered done, on any die).
    pub fn waiting_for_gc(self, wait_for_gc: bool) -> Self {
        SsdDevice {
            wait_for_gc,
            ..self
        }
    }

    pub fn ssd(&self) -> &Ssd {
        &self.ssd
    }

    pub fn into_ssd(self) -> Ssd {
        self.ssd
    }

    /// The energy of the SSD's PCM front end so far (0 without one), mJ.
    pub fn pcm_energy_mj(&self) -> f64 {
        self.ssd
            .front_end::<nandlab_ftl::PcmStage>()
            .map_or(0.0, |stage| stage.energy_pj() / 1e9)
    }

    fn request_error(op: &'static str, lpa: Lpa, e: nandlab_ftl::FtlError) -> EngineError {
        EngineError::Device {
            op,
            lpa,
            reason: e.to_string(),
        }
    }

    /// The buffered host-write path: wait for a free buffer slot, hand the write to the SSD,
    /// let it decide the write (zero-time controller steps), and wait for the SSD to go idle
    /// only if the write triggered GC.
    fn buffered_write(
        &mut self,
        offset: u64,
        size: u64,
        data: &[u8],
    ) -> Result<(), nandlab_ftl::FtlError> {
        let request = HostRequest::write(offset, size);
        while self.ssd.requests_in_flight() >= self.write_buffer_pages {
            self.step()?;
        }
        let gc_before = self.ssd.gc_runs();
        while !self.ssd.power_admit(&request, Some(data))? {
            self.step()?;
        }
        // a controller decides the command in its own (here zero-time) event
        while self.ssd.next_event_time() == Some(self.ssd.now()) {
            self.step()?;
        }
        if self.buffered.len() == self.write_buffer_pages as usize {
            self.buffered.pop_front();
        }
        self.buffered.push_back(Lpa((offset / size) as u32));
        if self.ssd.gc_runs() != gc_before {
            self.ssd.drain()?;
        }
        Ok(())
    }

    /// One event of the SSD; an error if nothing is pending while requests are in flight.
    fn step(&mut self) -> Result<(), nandlab_ftl::FtlError> {
        if self.ssd.power_step()?.is_none() {
            // nothing pending: drain reports the stall (or returns if nothing is in flight)
            self.ssd.drain()?;
        }
        Ok(())
    }

    /// A page read (the write buffer's copy, else a flash read at queue depth 1) into `buf`;
    /// with `compare`, a page equal to `buf` is left uncopied and `Ok(true)` returned
    /// ([`BlockDevice::read_page_expecting`]).
    fn read_page_into(
        &mut self,
        lpa: Lpa,
        buf: &mut [u8],
        compare: bool,
    ) -> Result<bool, EngineError> {
        nandlab_engine::device::check_page_access(
            lpa,
            buf.len(),
            self.page_size_bytes,
            self.logical_page_count(),
        )?;
        let (offset, size) = self.byte_range(lpa);
        if self.buffered.contains(&lpa) {
            let equal = compare
                && self
                    .ssd
                    .bytes_equal(offset, buf)
                    .map_err(|e| Self::request_error("read", lpa, e))?;
            if !equal {
                self.ssd
                    .read_bytes_into(offset, buf)
                    .map_err(|e| Self::request_error("read", lpa, e))?;
            }
            self.buffer_hits += 1;
            return Ok(equal);
        }
        let request = HostRequest::read(offset, size);
        if self.hook.is_none() {
            // the page's bytes are taken where they lie once the read completes (no copy into
            // the request's own buffer): no write to this page can be decided meanwhile, as
            // every write in flight is to a page in the write buffer
            self.ssd
                .execute_read_uncopied(&request)
                .map_err(|e| Self::request_error("read", lpa, e))?;
            let read = |e| Self::request_error("read", lpa, e);
            let equal = compare && self.ssd.bytes_equal(offset, buf).map_err(read)?;
            if !equal {
                self.ssd.read_bytes_into(offset, buf).map_err(read)?;
            }
            return Ok(equal);
        }
        let done = self.exec("read", lpa, &request, None)?;
        if done.data.len() != buf.len() {
            return Err(EngineError::Device {
                op: "read",
                lpa,
                reason: format!(
                    "the SSD returned {} bytes for a {}-byte page (is the payload mode `full`?)",
                    done.data.len(),
                    buf.len()
                ),
            });
        }
        if compare && done.data == buf {
            return Ok(true);
        }
        buf.copy_from_slice(&done.data);
        Ok(false)
    }

    fn byte_range(&self, lpa: Lpa) -> (u64, u64) {
        let size = self.page_size_bytes as u64;
        (lpa.offset_bytes(size), size)
    }
}

impl BlockDevice for SsdDevice {
    fn page_size_bytes(&self) -> usize {
        self.page_size_bytes
    }

    fn logical_page_count(&self) -> u64 {
        self.ssd.logical_pages()
    }

    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError> {
        self.read_page_into(lpa, buf, false).map(|_| ())
    }

    /// Compares the page with `buf` where its bytes lie (the controller's buffer or the
    /// request's data), copying only a page that differs.
    fn read_page_expecting(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<bool, EngineError> {
        self.read_page_into(lpa, buf, true)
    }

    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError> {
        nandlab_engine::device::check_page_access(
            lpa,
            data.len(),
            self.page_size_bytes,
            self.logical_page_count(),
        )?;
        let (offset, size) = self.byte_range(lpa);
        if self.write_buffer_pages > 0 {
            return self
                .buffered_write(offset, size, data)
                .map_err(|e| Self::request_error("write", lpa, e));
        }
        self.exec("write", lpa, &HostRequest::write(offset, size), Some(data))?;
        if self.wait_for_gc {
            self.ssd
                .drain()
                .map_err(|e| Self::request_error("write", lpa, e))?;
        }
        Ok(())
    }

    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        nandlab_engine::device::check_page_access(
            lpa,
            self.page_size_bytes,
            self.page_size_bytes,
            self.logical_page_count(),
        )?;
        let (offset, size) = self.byte_range(lpa);
        self.exec("trim", lpa, &HostRequest::trim(offset, size), None)?;
        Ok(())
    }

    /// An NVMe Flush (after the buffered writes in flight, if any, have completed): the
    /// controller's write buffer goes to flash (docs/power.md, the durability contract).
    fn flush(&mut self) -> Result<(), EngineError> {
        let no_lpa = Lpa(0);
        if self.write_buffer_pages > 0 {
            while self.ssd.requests_in_flight() > 0 {
                self.step()
                    .map_err(|e| Self::request_error("flush", no_lpa, e))?;
            }
        }
        self.exec("flush", no_lpa, &HostRequest::flush(), None)?;
        Ok(())
    }

    fn now(&self) -> SimTime {
        self.ssd.now()
    }

    /// Chip operation energy, plus the controller's (0 without controller costs) and, with a
    /// PCM front end (`[pcm]`), the PCM's reads, writes and SHA-1 hashing.
    fn energy_mj(&self) -> f64 {
        let stats = self.ssd.nand().stats();
        let command_nj = self
            .ssd
            .controller_costs()
            .map_or(0.0, |c| c.controller_command_nj);
        let hits_nj = self.buffer_hits as f64 * command_nj;
        let nand_mj = OpKind::ALL.iter().map(|k| stats.energy_uj(*k)).sum::<f64>() / 1e3;
        nand_mj + self.ssd.controller_energy_mj() + hits_nj / 1e6 + self.pcm_energy_mj()
    }

    fn counters(&self) -> DeviceCounters {
        let report = self.ssd.report();
        let c = &report.counters;
        DeviceCounters {
            host_reads: c.host_pages_read,
            host_writes: c.host_pages_written,
            host_trims: c.host_pages_trimmed,
            page_copies: c.gc_page_copies,
            erases: c.erases,
            gc_count: c.gc_runs,
            gc_time: SimTime::from_us_f64(
                report.gc_latency.mean_us * report.gc_latency.count as f64,
            ),
        }
    }

    fn erase_counts(&self) -> Vec<u32> {
        self.ssd.nand().blocks().erase_counts().collect()
    }
}

impl CoDesignHints for SsdDevice {
    fn next_erase_block_valid_lpas(&self, lpas_out: &mut Vec<Lpa>) {
        lpas_out.clear();
        // the engine and the FTL share one `Lpa` type (nandlab_core::Lpa)
        lpas_out.extend(self.ssd.next_erase_block_valid_lpas());
    }
}

#[cfg(test)]
mod tests;
