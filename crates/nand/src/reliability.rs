//! Reliability constraints (SPEC N8, paper 003 §7.3): NOP, in-order programming within a block,
//! endurance; per-block erase counts; and a raw-bit-error model with ECC and read-retry.
//!
//! The [`BlockTable`] is the functional state of the array: it changes when an op is accepted
//! (submitted), before its timing is simulated. A violation is returned as an error and the
//! state is left unchanged: nothing is silently accepted.

use crate::config::ReliabilityConfig;
use crate::error::{NandError, NandResult, config_error};
use crate::geometry::{BlockId, Geometry, PageAddress};
use nandlab_core::{SimRng, SimTime};

/// Per-block state. `last_page` is the highest programmed page offset (None when erased).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockState {
    pub erase_count: u32,
    pub last_page: Option<u32>,
    /// Programs of `last_page` since the block was erased (for the NOP limit).
    pub last_page_programs: u32,
    /// Time of the last program (for retention errors).
    pub programmed_at: SimTime,
    /// Reads of the block since its last erase (read disturb; counted only when
    /// `read_disturb_coeff` > 0).
    pub reads_since_erase: u32,
}

/// The functional state of every block of the device.
#[derive(Clone, Debug)]
pub struct BlockTable {
    geometry: Geometry,
    config: ReliabilityConfig,
    blocks: Vec<BlockState>,
    /// Per-page program counts, kept only when out-of-order programming is allowed (otherwise
    /// only the last programmed page can be programmed again and `BlockState` suffices).
    page_programs: Vec<u8>,
    /// Whether reads disturb (`read_disturb_coeff` > 0): then reads are counted per block.
    read_disturb: bool,
}

impl BlockTable {
    pub fn new(geometry: &Geometry, config: &ReliabilityConfig) -> Self {
        let page_programs = if config.in_order_programming {
            Vec::new()
        } else {
            vec![0; geometry.total_pages() as usize]
        };
        BlockTable {
            geometry: geometry.clone(),
            config: config.clone(),
            blocks: vec![BlockState::default(); geometry.total_blocks() as usize],
            page_programs,
            read_disturb: config.read_disturb_coeff > 0.0,
        }
    }

    /// Whether reads are counted per block (read disturb modelled).
    #[inline]
    pub fn read_disturb(&self) -> bool {
        self.read_disturb
    }

    /// Records a read of `address`'s block (after its errors were drawn): read disturb.
    pub fn apply_read(&mut self, address: &PageAddress) {
        let block = &mut self.blocks[self.geometry.block_id(address).index()];
        block.reads_since_erase = block.reads_since_erase.saturating_add(1);
    }

    pub fn block(&self, id: BlockId) -> &BlockState {
        &self.blocks[id.index()]
    }

    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().map(|b| b.erase_count)
    }

    /// Whether `address` holds data written since its block's last erase.
    pub fn is_programmed(&self, address: &PageAddress) -> bool {
        if self.config.in_order_programming {
            let block = &self.blocks[self.geometry.block_id(address).index()];
            block.last_page.is_some_and(|last| address.page <= last)
        } else {
            self.page_programs[self.geometry.ppa(address).0 as usize] > 0
        }
    }

    /// Checks that `address` may be programmed now, without changing state.
    pub fn check_program(&self, address: &PageAddress) -> NandResult<()> {
        let block = &self.blocks[self.geometry.block_id(address).index()];
        let limit = self.config.nop_limit;
        if self.config.in_order_programming {
            match block.last_page {
                Some(last) if address.page < last => Err(NandError::OutOfOrderProgram {
                    address: *address,
                    page: address.page,
                    last_page: last,
                }),
                Some(last) if address.page == last && block.last_page_programs >= limit => {
                    Err(NandError::NopExceeded {
                        address: *address,
                        count: block.last_page_programs + 1,
                        limit,
                    })
                }
                _ => Ok(()),
            }
        } else {
            let count = u32::from(self.page_programs[self.geometry.ppa(address).0 as usize]);
            if count >= limit {
                Err(NandError::NopExceeded {
                    address: *address,
                    count: count + 1,
                    limit,
                })
            } else {
                Ok(())
            }
        }
    }

    /// Records a program of `address` at `now` (after [`BlockTable::check_program`]).
    pub fn apply_program(&mut self, address: &PageAddress, now: SimTime) {
        debug_assert!(self.check_program(address).is_ok());
        let id = self.geometry.block_id(address);
        if !self.config.in_order_programming {
            let ppa = self.geometry.ppa(address).0 as usize;
            self.page_programs[ppa] = self.page_programs[ppa].saturating_add(1);
        }
        let block = &mut self.blocks[id.index()];
        match block.last_page {
            Some(last) if address.page == last => block.last_page_programs += 1,
            Some(last) if address.page < last => {}
            _ => {
                block.last_page = Some(address.page);
                block.last_page_programs = 1;
            }
        }
        block.programmed_at = now;
    }

    pub fn check_erase(&self, address: &PageAddress) -> NandResult<()> {
        let block = &self.blocks[self.geometry.block_id(address).index()];
        if block.erase_count >= self.config.endurance_cycles {
            return Err(NandError::EnduranceExceeded {
                address: *address,
                count: block.erase_count + 1,
                limit: self.config.endurance_cycles,
            });
        }
        Ok(())
    }

    pub fn apply_erase(&mut self, address: &PageAddress) {
        debug_assert!(self.check_erase(address).is_ok());
        let id = self.geometry.block_id(address);
        if !self.config.in_order_programming {
            let first = self.geometry.ppa(&address.with_page(0)).0 as usize;
            let n = self.geometry.pages_per_block as usize;
            self.page_programs[first..first + n].fill(0);
        }
        let block = &mut self.blocks[id.index()];
        block.erase_count += 1;
        block.last_page = None;
        block.last_page_programs = 0;
        block.reads_since_erase = 0;
    }

    /// Raw bit error rate of a page of `address` read at `now`.
    pub fn raw_bit_error_rate(&self, address: &PageAddress, now: SimTime) -> f64 {
        let c = &self.config;
        let block = &self.blocks[self.geometry.block_id(address).index()];
        let days = now.saturating_sub(block.programmed_at).as_s_f64() / 86_400.0;
        c.rber_base
            + c.rber_wear_coeff * f64::from(block.erase_count).powf(c.rber_wear_exponent)
            + c.rber_retention_coeff_per_day * days
            + c.read_disturb_coeff * f64::from(block.reads_since_erase)
    }

    /// Whether the raw-bit-error model is active (any coefficient non-zero).
    pub fn error_model_enabled(&self) -> bool {
        let c = &self.config;
        c.rber_base > 0.0
            || c.rber_wear_coeff > 0.0
            || c.rber_retention_coeff_per_day > 0.0
            || c.read_disturb_coeff > 0.0
    }

    /// Draws the number of read-retry steps a read of `address` needs: 0 when the first read
    /// decodes; `None` when even the last retry fails (an uncorrectable read).
    pub fn draw_read_retries(
        &self,
        address: &PageAddress,
        now: SimTime,
        rng: &mut SimRng,
    ) -> Option<u32> {
        if !self.error_model_enabled() {
            return Some(0);
        }
        let c = &self.config;
        let codewords = self.geometry.page_size_bytes.div_ceil(c.ecc_codeword_bytes);
        let bits = f64::from(c.ecc_codeword_bytes) * 8.0;
        let mut rber = self.raw_bit_error_rate(address, now);
        for retry in 0..=c.read_retry_max {
            let codeword_fail = poisson_tail(rber * bits, c.ecc_correctable_bits);
            let page_fail = 1.0 - (1.0 - codeword_fail).powf(f64::from(codewords));
            if !rng.chance(page_fail) {
                return Some(retry);
            }
            rber /= c.read_retry_rber_divisor;
        }
        None
    }
}

impl ReliabilityConfig {
    /// Whether factory or grown bad blocks are modelled (SPEC C4).
    pub fn bad_blocks_enabled(&self) -> bool {
        self.factory_bad_block_fraction > 0.0
            || self.erase_fail_base > 0.0
            || self.erase_fail_wear_coeff > 0.0
            || self.programs_fail()
    }

    /// Whether programs may fail (program-status failures retire their block).
    pub fn programs_fail(&self) -> bool {
        self.program_fail_base > 0.0 || self.program_fail_wear_coeff > 0.0
    }

    /// Probability that a program into a block erased `erase_count` times fails:
    /// `program_fail_base + program_fail_wear_coeff · erase_count^rber_wear_exponent`, at most 1.
    pub fn program_fail_probability(&self, erase_count: u32) -> f64 {
        let wear = if self.program_fail_wear_coeff > 0.0 {
            self.program_fail_wear_coeff * f64::from(erase_count).powf(self.rber_wear_exponent)
        } else {
            0.0
        };
        (self.program_fail_base + wear).min(1.0)
    }

    /// Probability that an erase of a block erased `erase_count` times before fails (the block
    /// then grows bad): `erase_fail_base + erase_fail_wear_coeff · erase_count^rber_wear_exponent`,
    /// at most 1.
    pub fn erase_fail_probability(&self, erase_count: u32) -> f64 {
        let wear = if self.erase_fail_wear_coeff > 0.0 {
            self.erase_fail_wear_coeff * f64::from(erase_count).powf(self.rber_wear_exponent)
        } else {
            0.0
        };
        (self.erase_fail_base + wear).min(1.0)
    }

    /// Whether the controller reclaims read-disturbed blocks (read disturb modelled and a
    /// reclaim margin set).
    pub fn read_reclaim_enabled(&self) -> bool {
        self.read_disturb_coeff > 0.0 && self.read_reclaim_margin > 0.0
    }

    /// Raw bit error rate of a block erased `erase_count` times and read `reads` times since,
    /// without retention: `rber_base + rber_wear_coeff · PE^rber_wear_exponent +
    /// read_disturb_coeff · reads` (what the controller can estimate without the program time).
    pub fn disturbed_rber(&self, erase_count: u32, reads: u32) -> f64 {
        let wear = if self.rber_wear_coeff > 0.0 {
            self.rber_wear_coeff * f64::from(erase_count).powf(self.rber_wear_exponent)
        } else {
            0.0
        };
        self.rber_base + wear + self.read_disturb_coeff * f64::from(reads)
    }

    /// Whether a block erased `erase_count` times and read `reads` times since needs read
    /// reclaim: its expected bit errors per ECC codeword (`disturbed_rber · codeword bits`)
    /// reach `read_reclaim_margin · ecc_correctable_bits`.
    pub fn needs_read_reclaim(&self, erase_count: u32, reads: u32) -> bool {
        let bits = f64::from(self.ecc_codeword_bytes) * 8.0;
        self.disturbed_rber(erase_count, reads) * bits
            >= self.read_reclaim_margin * f64::from(self.ecc_correctable_bits)
    }

    /// Checks the bad-block and read-disturb keys (called by `NandConfig::validate`).
    pub(crate) fn validate_bad_blocks(&self) -> NandResult<()> {
        for (key, v, max) in [
            (
                "reliability.factory_bad_block_fraction",
                self.factory_bad_block_fraction,
                0.5,
            ),
            ("reliability.erase_fail_base", self.erase_fail_base, 1.0),
            (
                "reliability.erase_fail_wear_coeff",
                self.erase_fail_wear_coeff,
                1.0,
            ),
            ("reliability.program_fail_base", self.program_fail_base, 1.0),
            (
                "reliability.program_fail_wear_coeff",
                self.program_fail_wear_coeff,
                1.0,
            ),
            (
                "reliability.read_disturb_coeff",
                self.read_disturb_coeff,
                1e-3,
            ),
            (
                "reliability.read_reclaim_margin",
                self.read_reclaim_margin,
                1.0,
            ),
        ] {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                return Err(config_error(
                    key,
                    format!("{v}; must be between 0 and {max}"),
                ));
            }
        }
        Ok(())
    }
}

/// P(X > t) for X ~ Poisson(lambda).
fn poisson_tail(lambda: f64, t: u32) -> f64 {
    if lambda <= 0.0 {
        return 0.0;
    }
    let mut term = (-lambda).exp();
    let mut cdf = term;
    for k in 1..=t {
        term *= lambda / f64::from(k);
        cdf += term;
    }
    (1.0 - cdf).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::preset;

    fn table(nop: u32, endurance: u32, in_order: bool) -> (BlockTable, Geometry) {
        let c = preset("slc").unwrap();
        let r = ReliabilityConfig {
            nop_limit: nop,
            endurance_cycles: endurance,
            in_order_programming: in_order,
            ..ReliabilityConfig::default()
        };
        (BlockTable::new(&c.geometry, &r), c.geometry)
    }

    fn at(block: u32, page: u32) -> PageAddress {
        PageAddress {
            block,
            page,
            ..PageAddress::default()
        }
    }

    #[test]
    fn in_order_programming_is_enforced() {
        let (mut t, _) = table(1, 10, true);
        t.check_program(&at(0, 0)).unwrap();
        t.apply_program(&at(0, 0), SimTime::ZERO);
        t.apply_program(&at(0, 5), SimTime::ZERO); // skipping pages forward is allowed
        let err = t.check_program(&at(0, 3)).unwrap_err();
        assert!(
            matches!(err, NandError::OutOfOrderProgram { last_page: 5, .. }),
            "{err}"
        );
        assert!(t.is_programmed(&at(0, 3)) && !t.is_programmed(&at(0, 6)));
    }

    #[test]
    fn nop_limit_is_enforced() {
        let (mut t, _) = table(2, 10, true);
        t.apply_program(&at(1, 0), SimTime::ZERO);
        t.apply_program(&at(1, 0), SimTime::ZERO);
        let err = t.check_program(&at(1, 0)).unwrap_err();
        assert!(
            matches!(
                err,
                NandError::NopExceeded {
                    count: 3,
                    limit: 2,
                    ..
                }
            ),
            "{err}"
        );
        // and without the in-order rule, per page
        let (mut t, _) = table(1, 10, false);
        t.apply_program(&at(1, 4), SimTime::ZERO);
        t.check_program(&at(1, 2)).unwrap();
        assert!(t.check_program(&at(1, 4)).is_err());
        t.apply_erase(&at(1, 0));
        t.check_program(&at(1, 4)).unwrap();
    }

    #[test]
    fn endurance_limit_is_enforced_and_erase_resets_the_block() {
        let (mut t, g) = table(1, 2, true);
        t.apply_program(&at(2, 0), SimTime::ZERO);
        t.apply_erase(&at(2, 0));
        assert!(!t.is_programmed(&at(2, 0)));
        t.apply_erase(&at(2, 0));
        let err = t.check_erase(&at(2, 0)).unwrap_err();
        assert!(
            matches!(
                err,
                NandError::EnduranceExceeded {
                    count: 3,
                    limit: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(t.block(g.block_id(&at(2, 0))).erase_count, 2);
    }

    #[test]
    fn poisson_tail_by_hand() {
        // P(X > 0) = 1 - e^-1 for lambda 1
        assert!((poisson_tail(1.0, 0) - (1.0 - (-1.0f64).exp())).abs() < 1e-12);
        assert!(poisson_tail(1e-3, 40) < 1e-100);
        assert_eq!(poisson_tail(0.0, 3), 0.0);
    }

    #[test]
    fn bbrd_erase_fail_probability_by_hand() {
        let r = ReliabilityConfig {
            erase_fail_base: 1e-4,
            erase_fail_wear_coeff: 1e-7,
            rber_wear_exponent: 2.0,
            ..ReliabilityConfig::default()
        };
        assert!(r.bad_blocks_enabled());
        assert!(!ReliabilityConfig::default().bad_blocks_enabled());
        assert_eq!(r.erase_fail_probability(0), 1e-4);
        // 1e-4 + 1e-7 * 100^2 = 1e-4 + 1e-3
        assert!((r.erase_fail_probability(100) - 1.1e-3).abs() < 1e-15);
        assert_eq!(r.erase_fail_probability(1_000_000), 1.0);
        let bad = ReliabilityConfig {
            factory_bad_block_fraction: 0.7,
            ..ReliabilityConfig::default()
        };
        let err = bad.validate_bad_blocks().unwrap_err().to_string();
        assert!(err.contains("factory_bad_block_fraction"), "{err}");
    }

    #[test]
    fn worn_blocks_need_read_retries() {
        let c = preset("slc").unwrap();
        let r = ReliabilityConfig {
            rber_base: 1e-4,
            rber_wear_coeff: 1e-6,
            ecc_correctable_bits: 8,
            ..ReliabilityConfig::default()
        };
        let mut t = BlockTable::new(&c.geometry, &r);
        let mut rng = SimRng::seed_from_u64(1);
        let fresh: u32 = (0..200)
            .map(|_| {
                t.draw_read_retries(&at(0, 0), SimTime::ZERO, &mut rng)
                    .unwrap_or(99)
            })
            .sum();
        for _ in 0..2000 {
            t.apply_erase(&at(0, 0));
        }
        let worn: u32 = (0..200)
            .map(|_| {
                t.draw_read_retries(&at(0, 0), SimTime::ZERO, &mut rng)
                    .unwrap_or(99)
            })
            .sum();
        assert!(worn > fresh, "worn {worn} fresh {fresh}");
    }

    /// Read disturb by hand: rber = 1e-4 + 1e-8 · reads; a codeword of 1024 B is 8192 bits,
    /// so expected errors = 0.8192 + 8.192e-5 · reads; with t = 40 and margin 0.5 the limit
    /// is 20 errors: reads ≥ (20 − 0.8192) / 8.192e-5 = 234,140.6…, so 234,141 reads.
    #[test]
    fn rd_read_reclaim_threshold_by_hand() {
        let r = ReliabilityConfig {
            rber_base: 1e-4,
            read_disturb_coeff: 1e-8,
            read_reclaim_margin: 0.5,
            ..ReliabilityConfig::default()
        };
        assert!(r.read_reclaim_enabled());
        assert!((r.disturbed_rber(0, 1000) - 1.1e-4).abs() < 1e-15);
        assert!(!r.needs_read_reclaim(0, 234_140));
        assert!(r.needs_read_reclaim(0, 234_141));
        // wear adds to the base: 1e-6 · 100 = 1e-4 more, 0.8192 more errors
        let worn = ReliabilityConfig {
            rber_wear_coeff: 1e-6,
            ..r.clone()
        };
        assert!(worn.needs_read_reclaim(100, 224_141));
        assert!(!worn.needs_read_reclaim(100, 224_139));
        assert!(!ReliabilityConfig::default().read_reclaim_enabled());
        let bad = ReliabilityConfig {
            read_reclaim_margin: 1.5,
            ..r
        };
        let err = bad.validate_bad_blocks().unwrap_err().to_string();
        assert!(err.contains("read_reclaim_margin"), "{err}");
    }

    #[test]
    fn rd_reads_raise_the_error_rate_until_the_erase() {
        let c = preset("slc").unwrap();
        let r = ReliabilityConfig {
            read_disturb_coeff: 1e-6,
            ..ReliabilityConfig::default()
        };
        let mut t = BlockTable::new(&c.geometry, &r);
        assert!(t.read_disturb() && t.error_model_enabled());
        for _ in 0..10 {
            t.apply_read(&at(3, 1));
        }
        assert!((t.raw_bit_error_rate(&at(3, 0), SimTime::ZERO) - 1e-5).abs() < 1e-18);
        assert_eq!(t.raw_bit_error_rate(&at(4, 0), SimTime::ZERO), 0.0);
        t.apply_erase(&at(3, 0));
        assert_eq!(t.raw_bit_error_rate(&at(3, 0), SimTime::ZERO), 0.0);
    }
}
