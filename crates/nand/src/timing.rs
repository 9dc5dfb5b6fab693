//! The timing model compiled from a [`NandConfig`]: stage durations in integer picoseconds.
//!
//! Bus stage durations follow from the ONFI cycle times: one command cycle per CLE, one per
//! address byte (ALE), and `bytes / (bus_width / 8)` data transfers for TIR/TOR at
//! `1 / data_rate`. Cell stage durations come from the preset, by page type.

use crate::cell::{PageLayout, PageType};
use crate::config::NandConfig;
use crate::geometry::PageAddress;
use nandlab_core::SimTime;

#[derive(Clone, Debug)]
pub struct TimingModel {
    pub layout: PageLayout,
    pub pages_per_block: u32,
    /// tWC: one command or address cycle.
    pub command_cycle: SimTime,
    /// One data transfer on the bus (1 / data rate).
    pub transfer: SimTime,
    pub bytes_per_transfer: u32,
    pub page_address_cycles: u32,
    pub block_address_cycles: u32,
    read: [SimTime; 4],
    program: [SimTime; 4],
    pub erase: SimTime,
    /// TON and TIN of a page in a block programmed in SLC mode (`timing.slc_read_us` /
    /// `slc_program_us`; the page-type times of page 0 when absent).
    pub slc_read: SimTime,
    pub slc_program: SimTime,
    /// One data transfer of a SiM op on the bus in match mode (equals `transfer` without a
    /// `[search]` section).
    pub match_transfer: SimTime,
    /// TON and TIN of a match-mode (SLC) page.
    pub match_read: SimTime,
    pub match_program: SimTime,
    /// Bit matching of one key over the page buffers (SiM clock cycles / SiM clock).
    pub match_per_key: SimTime,
    /// Bytes of the verification window a page-open sends, and ECC bytes per gathered chunk.
    pub page_open_transfer_bytes: u32,
    pub chunk_ecc_bytes: u32,
    /// Page-type of each page offset, precomputed (flat table, no per-op branching on layout).
    page_type_of_page: Vec<PageType>,
    /// Relative half-width of the per-page TIN spread (`timing.program_variation`; 0 = off).
    program_variation: f64,
    /// Seed of the per-page TIN spread (the run's seed; see [`TimingModel::with_seed`]).
    variation_seed: u64,
}

impl TimingModel {
    pub fn new(config: &NandConfig) -> Self {
        let t = &config.timing;
        let layout = config.cell.layout;
        let mut read = [SimTime::ZERO; 4];
        let mut program = [SimTime::ZERO; 4];
        for i in 0..4 {
            read[i] = SimTime::from_us_f64(t.read_us.for_type(i));
            program[i] = SimTime::from_us_f64(t.program_us.for_type(i));
        }
        let pages_per_block = config.geometry.pages_per_block;
        let transfer = SimTime::from_ps((1e6 / t.bus_data_rate_mts).round() as u64);
        let (match_transfer, match_read, match_program, match_per_key) = match &config.search {
            Some(s) => (
                SimTime::from_ps((1e6 / s.match_bus_data_rate_mts).round() as u64),
                SimTime::from_us_f64(s.match_read_us),
                SimTime::from_us_f64(s.match_program_us),
                SimTime::from_ps(
                    (f64::from(s.match_cycles_per_key) * 1e6 / s.match_clock_mhz).round() as u64,
                ),
            ),
            None => (transfer, read[0], program[0], SimTime::ZERO),
        };
        TimingModel {
            layout,
            pages_per_block,
            command_cycle: SimTime::from_ns_f64(t.command_cycle_ns),
            transfer,
            bytes_per_transfer: t.bus_width_bits / 8,
            page_address_cycles: t.page_address_cycles,
            block_address_cycles: t.block_address_cycles,
            read,
            program,
            erase: SimTime::from_us_f64(t.erase_us),
            slc_read: t.slc_read_us.map_or(read[0], SimTime::from_us_f64),
            slc_program: t.slc_program_us.map_or(program[0], SimTime::from_us_f64),
            match_transfer,
            match_read,
            match_program,
            match_per_key,
            page_open_transfer_bytes: config
                .search
                .as_ref()
                .map_or(0, |s| s.page_open_transfer_bytes),
            chunk_ecc_bytes: config.search.as_ref().map_or(0, |s| s.chunk_ecc_bytes),
            page_type_of_page: (0..pages_per_block)
                .map(|p| layout.page_type(p, pages_per_block))
                .collect(),
            program_variation: t.program_variation,
            variation_seed: 0,
        }
    }

    /// The same model with the per-page TIN spread drawn from `seed`.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.variation_seed = seed;
        self
    }

    pub fn page_type(&self, page: u32) -> PageType {
        self.page_type_of_page[page as usize]
    }

    /// TON: array read of `page`.
    pub fn read_time(&self, page: u32) -> SimTime {
        self.read[self.page_type(page).index()]
    }

    /// TIN: array program of `page`.
    pub fn program_time(&self, page: u32) -> SimTime {
        self.program[self.page_type(page).index()]
    }

    /// Whether TIN varies within a page type (`timing.program_variation` > 0).
    #[inline]
    pub fn varies_program(&self) -> bool {
        self.program_variation > 0.0
    }

    /// TIN of the page at `address` in a block erased `erase_count` times: its type's time,
    /// times a factor uniform in `[1 - v, 1 + v]` when `timing.program_variation` = v > 0. The
    /// factor is a hash of the seed, the address and the erase count: the same page programmed
    /// in the same cycle always takes the same time, in any order of operations.
    #[inline]
    pub fn program_time_at(&self, address: &PageAddress, erase_count: u32) -> SimTime {
        let base = self.program_time(address.page);
        if self.program_variation == 0.0 {
            return base;
        }
        let u = unit_hash(&[
            self.variation_seed,
            u64::from(address.channel),
            u64::from(address.chip),
            u64::from(address.die),
            u64::from(address.plane),
            u64::from(address.block),
            u64::from(address.page),
            u64::from(erase_count),
        ]);
        let factor = 1.0 + self.program_variation * (2.0 * u - 1.0);
        SimTime::from_ps((base.as_ps() as f64 * factor).round() as u64)
    }

    /// Bus time to move `bytes` through the data register (TIR or TOR).
    pub fn transfer_time(&self, bytes: u32) -> SimTime {
        self.transfer * u64::from(bytes.div_ceil(self.bytes_per_transfer))
    }

    /// Bus time of a SiM transfer of `bytes` in match mode.
    pub fn match_transfer_time(&self, bytes: u32) -> SimTime {
        self.match_transfer * u64::from(bytes.div_ceil(self.bytes_per_transfer))
    }

    /// CLE: one command cycle.
    pub fn cle(&self) -> SimTime {
        self.command_cycle
    }

    /// ALE: `cycles` address cycles.
    pub fn ale(&self, cycles: u32) -> SimTime {
        self.command_cycle * u64::from(cycles)
    }

    /// Status read: the 70h/78h command cycle and one status byte out.
    pub fn status(&self) -> SimTime {
        self.command_cycle + self.transfer
    }
}

/// Uniform in `[0, 1)` from a splitmix64 chain over `words` (a stateless draw).
fn unit_hash(words: &[u64]) -> f64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for &w in words {
        h ^= w;
        h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    }
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::preset;

    #[test]
    fn mlc1_stage_times_by_hand() {
        let t = TimingModel::new(&preset("mlc1").unwrap());
        assert_eq!(t.cle(), SimTime::from_ns(25));
        assert_eq!(t.ale(5), SimTime::from_ns(125));
        assert_eq!(t.transfer_time(2048), SimTime::from_ns(51_200));
        assert_eq!(t.read_time(0), SimTime::from_us(50));
        assert_eq!(t.program_time(0), SimTime::from_us(250)); // LSB
        assert_eq!(t.program_time(4), SimTime::from_us(2200)); // MSB (pair 4,5)
        assert_eq!(t.program_time(6), SimTime::from_us(250)); // LSB (pair 6,7)
        assert_eq!(t.program_time(127), SimTime::from_us(2200));
        assert_eq!(t.erase, SimTime::from_us(2500));
        assert_eq!(t.status(), SimTime::from_ns(50));
    }

    #[test]
    fn program_variation_spreads_tin_within_the_page_type_deterministically() {
        let mut c = preset("mlc1").unwrap();
        let off = TimingModel::new(&c);
        let a = PageAddress {
            page: 4, // MSB: 2,200 us
            ..PageAddress::default()
        };
        assert_eq!(off.program_time_at(&a, 3), SimTime::from_us(2200));
        c.timing.program_variation = 0.5;
        let t = TimingModel::new(&c).with_seed(7);
        let mut sum_us = 0.0;
        let n = 2000u32;
        let (mut lo, mut hi) = (f64::MAX, 0.0f64);
        for block in 0..n {
            let at = PageAddress { block, ..a };
            let us = t.program_time_at(&at, 0).as_us_f64();
            assert_eq!(t.program_time_at(&at, 0).as_us_f64(), us, "same draw twice");
            assert!((1100.0..=3300.0).contains(&us), "{us}");
            lo = lo.min(us);
            hi = hi.max(us);
            sum_us += us;
        }
        // uniform over [1,100, 3,300] us: mean 2,200, extremes near the ends
        assert!(
            (sum_us / f64::from(n) - 2200.0).abs() < 40.0,
            "{}",
            sum_us / f64::from(n)
        );
        assert!(lo < 1150.0 && hi > 3250.0, "{lo} {hi}");
        // another erase cycle or seed draws anew
        assert_ne!(t.program_time_at(&a, 0), t.program_time_at(&a, 1));
        let other = TimingModel::new(&c).with_seed(8);
        assert_ne!(t.program_time_at(&a, 0), other.program_time_at(&a, 0));
        c.timing.program_variation = 1.0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("timing.program_variation"), "{e}");
    }

    #[test]
    fn ddr_bus_transfer_is_1250_ps_per_byte_at_800_mts() {
        let mut c = preset("mlc1").unwrap();
        c.timing.bus_data_rate_mts = 800.0;
        let t = TimingModel::new(&c);
        assert_eq!(t.transfer, SimTime::from_ps(1250));
        c.timing.bus_width_bits = 16;
        let t = TimingModel::new(&c);
        assert_eq!(t.transfer_time(2048), SimTime::from_ps(1250 * 1024));
    }
}
