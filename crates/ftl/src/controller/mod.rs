//! The controller's own resources (issue 12 item 3): its processor (firmware), the DRAM buffer,
//! the host link and the ECC decoder. Each is a FIFO server: a job starts when the server is
//! free and the job is ready, and holds the server for its duration. Jobs that make a request
//! wait become timed events of the world loop ([`Controller::events`], one of its sources).
//!
//! A request with costs: its write data crosses the host link, the firmware processes the
//! command, then the FTL decides its page operations (the chip model runs them); buffered pages
//! move through the DRAM; each page read from flash is ECC-decoded; read data crosses the link
//! back; then the request completes. GC page moves occupy the processor (delaying later
//! commands) but are not themselves delayed. With every cost zero the controller is absent and
//! the request path is exactly the pure-chip one.

pub mod costs;

pub use costs::ControllerCosts;

use nandlab_core::{EventQueue, SimTime};
use serde::Serialize;

/// What a controller event does to request slot `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CtrlEvent {
    /// The firmware has processed the command: decide its page operations.
    Decide(u32),
    /// One step the request waited for (DRAM transfer, ECC decode) is done.
    StepDone(u32),
    /// Read data has crossed the host link: the request completes.
    Complete(u32),
}

/// Busy time of each controller resource over a run, in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct ControllerTime {
    pub firmware_us: f64,
    pub dram_us: f64,
    pub host_link_us: f64,
    pub ecc_us: f64,
}

/// Energy of the controller side over a run, in millijoules.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct ControllerEnergy {
    pub controller_mj: f64,
    pub dram_mj: f64,
    pub host_link_mj: f64,
    pub idle_mj: f64,
}

/// The controller section of a report (present when the device has controller costs).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct ControllerSection {
    pub busy: ControllerTime,
    pub energy: ControllerEnergy,
    /// Chip energy + controller energy, in millijoules.
    pub device_total_mj: f64,
    /// Where the cost figures come from.
    pub source: String,
}

/// A FIFO server.
#[derive(Clone, Copy, Debug, Default)]
struct Server {
    free_at: SimTime,
    busy: SimTime,
}

impl Server {
    /// Runs a job ready at `ready` for `duration`; returns when it ends.
    fn run(&mut self, ready: SimTime, duration: SimTime) -> SimTime {
        let start = self.free_at.max(ready);
        self.free_at = start + duration;
        self.busy += duration;
        self.free_at
    }
}

/// Running totals (energy in picojoules).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Totals {
    firmware: SimTime,
    dram: SimTime,
    link: SimTime,
    ecc: SimTime,
    controller_pj: f64,
    dram_pj: f64,
    link_pj: f64,
}

impl Totals {
    /// Controller, DRAM and host-link energy, in picojoules.
    pub fn energy_pj(&self) -> f64 {
        self.controller_pj + self.dram_pj + self.link_pj
    }
}

/// The controller's resources and their pending events.
#[derive(Debug)]
pub(crate) struct Controller {
    costs: ControllerCosts,
    firmware_command: SimTime,
    firmware_gc_move: SimTime,
    ecc_decode: SimTime,
    ecc_retry: SimTime,
    /// Picoseconds per byte on the link and into / out of the DRAM (0: none).
    link_ps_per_byte: f64,
    dram_ps_per_byte: f64,
    dram_access: SimTime,
    page_size_bytes: u32,
    firmware: Server,
    dram: Server,
    link: Server,
    ecc: Server,
    controller_pj: f64,
    dram_pj: f64,
    link_pj: f64,
    pub events: EventQueue<CtrlEvent>,
}

fn ps_per_byte(mb_s: f64) -> f64 {
    if mb_s > 0.0 { 1e6 / mb_s } else { 0.0 }
}

impl Controller {
    /// The controller for `costs`, or `None` when every cost is zero.
    pub fn new(costs: &ControllerCosts, page_size_bytes: u32) -> Option<Self> {
        if costs.is_zero() {
            return None;
        }
        Some(Controller {
            firmware_command: SimTime::from_ns_f64(costs.firmware_command_ns),
            firmware_gc_move: SimTime::from_ns_f64(costs.firmware_gc_move_ns),
            ecc_decode: SimTime::from_ns_f64(costs.ecc_decode_ns),
            ecc_retry: SimTime::from_ns_f64(costs.ecc_retry_decode_ns),
            link_ps_per_byte: costs.link_mb_s().map_or(0.0, ps_per_byte),
            dram_ps_per_byte: ps_per_byte(costs.dram_bandwidth_mb_s),
            dram_access: SimTime::from_ns_f64(costs.dram_access_ns),
            page_size_bytes,
            firmware: Server::default(),
            dram: Server::default(),
            link: Server::default(),
            ecc: Server::default(),
            controller_pj: 0.0,
            dram_pj: 0.0,
            link_pj: 0.0,
            events: EventQueue::with_capacity(64),
            costs: costs.clone(),
        })
    }

    /// The costs it was built from.
    pub fn costs(&self) -> &ControllerCosts {
        &self.costs
    }

    fn transfer(ps_per_byte: f64, bytes: u64) -> SimTime {
        SimTime::from_ps((ps_per_byte * bytes as f64).round() as u64)
    }

    /// A command arrives at `now` carrying `write_bytes` of data: the data crosses the link,
    /// then the firmware processes it. Returns when the FTL may decide it.
    pub fn command(&mut self, now: SimTime, write_bytes: u64) -> SimTime {
        let mut ready = now;
        if write_bytes > 0 {
            let t = Self::transfer(self.link_ps_per_byte, write_bytes);
            ready = self.link.run(ready, t);
            self.link_pj += self.costs.host_link_pj_per_byte * write_bytes as f64;
        }
        self.controller_pj += self.costs.controller_command_nj * 1e3;
        self.firmware.run(ready, self.firmware_command)
    }

    /// `moves` GC / wear-leveling page moves were decided at `now`: the firmware is busy.
    pub fn gc_moves(&mut self, now: SimTime, moves: u64) {
        if moves == 0 {
            return;
        }
        let t = SimTime::from_ps(self.firmware_gc_move.as_ps().saturating_mul(moves));
        self.firmware.run(now, t);
        self.controller_pj += self.costs.controller_gc_move_nj * 1e3 * moves as f64;
    }

    /// `pages` whole pages move into or out of the DRAM buffer from `now`; returns when done
    /// (`None` if that takes no time).
    pub fn dram_pages(&mut self, now: SimTime, pages: u64) -> Option<SimTime> {
        if pages == 0 {
            return None;
        }
        let bytes = pages * u64::from(self.page_size_bytes);
        self.dram_pj += self.costs.dram_pj_per_byte * bytes as f64;
        let per_page = self.dram_access
            + Self::transfer(self.dram_ps_per_byte, u64::from(self.page_size_bytes));
        let t = SimTime::from_ps(per_page.as_ps().saturating_mul(pages));
        (t > SimTime::ZERO).then(|| self.dram.run(now, t))
    }

    /// A page read from flash with `retries` read retries is decoded from `now`; returns when
    /// done (`None` if decoding takes no time).
    pub fn ecc(&mut self, now: SimTime, retries: u32) -> Option<SimTime> {
        let t = self.ecc_decode
            + SimTime::from_ps(self.ecc_retry.as_ps().saturating_mul(u64::from(retries)));
        (t > SimTime::ZERO).then(|| self.ecc.run(now, t))
    }

    /// Read data of `bytes` crosses the link back from `now`; returns when done (`None` if the
    /// link takes no time).
    pub fn read_out(&mut self, now: SimTime, bytes: u64) -> Option<SimTime> {
        self.link_pj += self.costs.host_link_pj_per_byte * bytes as f64;
        let t = Self::transfer(self.link_ps_per_byte, bytes);
        (t > SimTime::ZERO).then(|| self.link.run(now, t))
    }

    /// The running totals (a report shows the difference over its run).
    pub fn totals(&self) -> Totals {
        Totals {
            firmware: self.firmware.busy,
            dram: self.dram.busy,
            link: self.link.busy,
            ecc: self.ecc.busy,
            controller_pj: self.controller_pj,
            dram_pj: self.dram_pj,
            link_pj: self.link_pj,
        }
    }

    /// The report section for a run that started with `start` and lasted `elapsed`.
    pub fn section(&self, start: &Totals, elapsed: SimTime, chip_mj: f64) -> ControllerSection {
        let now = self.totals();
        let us = |a: SimTime, b: SimTime| (a - b).as_us_f64();
        let energy = ControllerEnergy {
            controller_mj: (now.controller_pj - start.controller_pj) / 1e9,
            dram_mj: (now.dram_pj - start.dram_pj) / 1e9,
            host_link_mj: (now.link_pj - start.link_pj) / 1e9,
            // mW × s = mJ
            idle_mj: self.costs.idle_power_mw * elapsed.as_s_f64(),
        };
        let device_total_mj =
            chip_mj + energy.controller_mj + energy.dram_mj + energy.host_link_mj + energy.idle_mj;
        ControllerSection {
            busy: ControllerTime {
                firmware_us: us(now.firmware, start.firmware),
                dram_us: us(now.dram, start.dram),
                host_link_us: us(now.link, start.link),
                ecc_us: us(now.ecc, start.ecc),
            },
            energy,
            device_total_mj,
            source: self.costs.source.clone(),
        }
    }
}
