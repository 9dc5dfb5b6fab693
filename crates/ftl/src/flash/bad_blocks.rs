//! Bad blocks (SPEC C4): factory bad blocks, drawn per block from
//! `[nand.reliability] factory_bad_block_fraction` with the device's seed and marked before first
//! use, and grown bad blocks, retired when an erase fails (probability
//! [`ReliabilityConfig::erase_fail_probability`], rising with the block's erase count). A bad
//! block leaves its plane's free list for good ([`BlockUse::Bad`]): it is never allocated,
//! collected or counted by wear-leveling again. An erased block holds no valid page, so
//! retiring it moves no data.
//!
//! The device may retire at most its spare blocks (the physical blocks beyond the logical
//! space, less one open block and the GC threshold per plane), each plane its equal share (GC
//! works within a plane): a factory draw that exceeds a plane's share
//! is refused when the device is built, naming the key; an erase failure after they are used up
//! leaves the block in service and is counted (`spare_exhausted_failures`), the point where a
//! real drive turns read-only.
//!
//! Built only when the reliability config asks for bad blocks
//! ([`ReliabilityConfig::bad_blocks_enabled`]); off, the erase path pays one `Option` test.

use crate::address::BlockId;
use crate::config::{FtlConfig, MappingKind};
use crate::error::{FtlResult, config_error};
use crate::flash::blocks::{BlockManager, BlockUse};
use nandlab_core::SimRng;
use nandlab_nand::ReliabilityConfig;
use serde::Serialize;

/// Bad-block state of the device.
#[derive(Debug)]
pub(crate) struct BadBlocks {
    config: ReliabilityConfig,
    rng: SimRng,
    counts: BadBlockReport,
    /// Per plane, the blocks it may still retire (GC works within a plane: each keeps its
    /// share of the spare).
    plane_spare: Vec<u32>,
}

/// The bad-block part of a report (present when bad blocks are modelled): counts since the
/// device was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct BadBlockReport {
    /// Blocks marked bad at the factory.
    pub factory: u32,
    /// Blocks retired after a failed erase.
    pub grown: u32,
    /// Pages of the retired blocks (factory and grown).
    pub retired_pages: u64,
    /// Spare blocks the device may still retire (the sum of the planes' shares).
    pub spare_left: u32,
    /// Erase failures after the spare ran out (the block stayed in service).
    pub spare_exhausted_failures: u32,
    /// Program-status failures: each block's data was rewritten elsewhere and the block
    /// retired (counted in `grown` too) while spare blocks remained (reported when non-zero).
    #[serde(skip_serializing_if = "is_zero")]
    pub program_failures: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl BadBlocks {
    /// Draws the factory bad blocks of `blocks` (one draw per block in id order, a stream of
    /// its own so no other draw of the run changes) and retires them; `spare` blocks may be
    /// retired in all. `None` when bad blocks are off.
    pub fn build(
        config: &ReliabilityConfig,
        seed: u64,
        blocks: &mut BlockManager,
        spare: u32,
    ) -> FtlResult<Option<Self>> {
        if !config.bad_blocks_enabled() {
            return Ok(None);
        }
        let mut rng = SimRng::stream(seed, "bad-blocks");
        let total = blocks.planes() * blocks.blocks_per_plane();
        let mut factory = Vec::new();
        for b in 0..total {
            if rng.chance(config.factory_bad_block_fraction) {
                factory.push(BlockId(b));
            }
        }
        let share = spare / blocks.planes();
        let mut plane_spare = vec![share; blocks.planes() as usize];
        for &block in &factory {
            let plane = blocks.plane_of_block(block);
            let Some(left) = plane_spare[plane.index()].checked_sub(1) else {
                return Err(config_error(
                    "nand.reliability.factory_bad_block_fraction",
                    format!(
                        "plane {}: factory bad blocks exceed its {share} spare blocks (raise ftl.op_fraction)",
                        plane.0
                    ),
                ));
            };
            plane_spare[plane.index()] = left;
            let retired = blocks.retire_free(block);
            debug_assert!(retired, "factory bad block {block} was not free");
        }
        let n = factory.len() as u32;
        Ok(Some(BadBlocks {
            config: config.clone(),
            rng,
            counts: BadBlockReport {
                factory: n,
                grown: 0,
                retired_pages: u64::from(n) * u64::from(blocks.pages_per_block()),
                spare_left: plane_spare.iter().sum(),
                spare_exhausted_failures: 0,
                program_failures: 0,
            },
            plane_spare,
        }))
    }

    /// Draws whether the erase of `block`, just released to its free list, failed; if so
    /// retires it (while spare blocks remain). Whether the block was retired.
    pub fn after_erase(&mut self, blocks: &mut BlockManager, block: BlockId) -> bool {
        let before = blocks.erase_count(block).saturating_sub(1);
        let p = self.config.erase_fail_probability(before);
        if p <= 0.0 || !self.rng.chance(p) {
            return false;
        }
        let plane = blocks.plane_of_block(block).index();
        if self.plane_spare[plane] == 0 {
            self.counts.spare_exhausted_failures += 1;
            return false;
        }
        self.plane_spare[plane] -= 1;
        let retired = blocks.retire_free(block);
        debug_assert!(retired, "erased block {block} was not free");
        self.counts.grown += 1;
        self.counts.spare_left -= 1;
        self.counts.retired_pages += u64::from(blocks.pages_per_block());
        true
    }

    /// Whether programs may fail (`program_fail_base`, `program_fail_wear_coeff`).
    #[inline]
    pub fn programs_fail(&self) -> bool {
        self.config.programs_fail()
    }

    /// Draws whether a program into `block` failed (program status).
    pub fn program_failed(&mut self, blocks: &BlockManager, block: BlockId) -> bool {
        let p = self
            .config
            .program_fail_probability(blocks.erase_count(block));
        p > 0.0 && self.rng.chance(p)
    }

    /// Retires `block` after a failed program, its data moved and the block erased (unless
    /// its erase failed and retired it already, or the plane's spare is used up).
    pub fn retire_after_program_failure(&mut self, blocks: &mut BlockManager, block: BlockId) {
        self.counts.program_failures += 1;
        if blocks.state(block) != BlockUse::Free {
            return; // its erase failed too: retired already
        }
        let plane = blocks.plane_of_block(block).index();
        if self.plane_spare[plane] == 0 {
            self.counts.spare_exhausted_failures += 1;
            return;
        }
        self.plane_spare[plane] -= 1;
        let retired = blocks.retire_free(block);
        debug_assert!(retired, "erased block {block} was not free");
        self.counts.grown += 1;
        self.counts.spare_left -= 1;
        self.counts.retired_pages += u64::from(blocks.pages_per_block());
    }

    pub fn report(&self) -> BadBlockReport {
        self.counts
    }
}

/// The device's bad blocks under `f` (`None` when off); only the page mapping retires blocks
/// (the block, hybrid and zoned mappings own fixed blocks).
pub(crate) fn build_for(
    config: &ReliabilityConfig,
    f: &FtlConfig,
    seed: u64,
    blocks: &mut BlockManager,
    logical_pages: u32,
) -> FtlResult<Option<Box<BadBlocks>>> {
    if !config.bad_blocks_enabled() {
        return Ok(None);
    }
    if f.mapping.kind != MappingKind::Page {
        return Err(config_error(
            "nand.reliability.factory_bad_block_fraction",
            format!(
                "bad blocks need ftl.mapping = \"page\" (not {:?})",
                f.mapping.kind
            ),
        ));
    }
    let spare = spare_blocks(blocks, logical_pages, f.gc.threshold_blocks);
    Ok(BadBlocks::build(config, seed, blocks, spare)?.map(Box::new))
}

/// Blocks the device may retire: the physical blocks beyond those the logical space fills,
/// less one open block and `gc_threshold_blocks` free blocks per plane.
pub(crate) fn spare_blocks(blocks: &BlockManager, logical_pages: u32, gc_threshold: u32) -> u32 {
    let total = u64::from(blocks.planes()) * u64::from(blocks.blocks_per_plane());
    let data = u64::from(logical_pages).div_ceil(u64::from(blocks.pages_per_block()));
    let kept = u64::from(blocks.planes()) * (1 + u64::from(gc_threshold));
    total.saturating_sub(data + kept) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::PlaneId;

    /// Bad blocks of `plane` (tests and the report's map).
    fn bad_in_plane(blocks: &BlockManager, plane: PlaneId) -> u32 {
        blocks
            .blocks_of_plane(plane)
            .filter(|&b| blocks.state(b) == BlockUse::Bad)
            .count() as u32
    }

    fn config(factory: f64, base: f64) -> ReliabilityConfig {
        ReliabilityConfig {
            factory_bad_block_fraction: factory,
            erase_fail_base: base,
            ..ReliabilityConfig::default()
        }
    }

    #[test]
    fn bbrd_off_builds_nothing() {
        let mut m = BlockManager::new(2, 8, 4);
        let b = BadBlocks::build(&ReliabilityConfig::default(), 1, &mut m, 10).unwrap();
        assert!(b.is_none());
        assert_eq!(m.free_total(), 16);
    }

    /// The factory draw by hand: the same stream, one `chance` per block in id order.
    #[test]
    fn bbrd_factory_draw_by_hand() {
        let mut m = BlockManager::new(2, 64, 4);
        let bad = BadBlocks::build(&config(0.1, 0.0), 7, &mut m, 100)
            .unwrap()
            .unwrap();
        let mut rng = SimRng::stream(7, "bad-blocks");
        let expected: Vec<u32> = (0..128).filter(|_| rng.chance(0.1)).collect();
        let marked: Vec<u32> = (0..128)
            .filter(|&b| m.state(BlockId(b)) == BlockUse::Bad)
            .collect();
        assert_eq!(marked, expected);
        assert!(!expected.is_empty());
        let r = bad.report();
        assert_eq!(r.factory as usize, expected.len());
        assert_eq!(r.retired_pages, 4 * expected.len() as u64);
        assert_eq!(r.spare_left, 100 - r.factory);
        assert_eq!(bad.plane_spare.iter().sum::<u32>(), r.spare_left);
        assert_eq!(m.free_total(), 128 - r.factory);
        let per_plane = bad_in_plane(&m, PlaneId(0)) + bad_in_plane(&m, PlaneId(1));
        assert_eq!(per_plane, r.factory);
        // bad blocks are never allocated
        while let Some(b) = m.take_free(PlaneId(0)) {
            assert_ne!(m.state(b), BlockUse::Bad);
            assert!(!expected.contains(&b.0));
        }
    }

    #[test]
    fn bbrd_too_many_factory_bad_blocks_are_refused_naming_the_key() {
        let mut m = BlockManager::new(1, 64, 4);
        let err = BadBlocks::build(&config(0.5, 0.0), 3, &mut m, 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("factory_bad_block_fraction"), "{err}");
        assert!(
            err.contains("plane 0: factory bad blocks exceed its 2 spare blocks"),
            "{err}"
        );
    }

    #[test]
    fn bbrd_failed_erases_retire_until_the_spare_runs_out() {
        let mut m = BlockManager::new(1, 8, 2);
        let mut bad = BadBlocks::build(&config(0.0, 1.0), 3, &mut m, 2)
            .unwrap()
            .unwrap();
        let mut retired = 0;
        for _ in 0..4 {
            let b = m.take_free(PlaneId(0)).unwrap();
            m.close(b);
            m.release(b);
            if bad.after_erase(&mut m, b) {
                retired += 1;
                assert_eq!(m.state(b), BlockUse::Bad);
            } else {
                assert_eq!(m.state(b), BlockUse::Free);
            }
        }
        let r = bad.report();
        assert_eq!((retired, r.grown, r.spare_left), (2, 2, 0));
        assert_eq!(r.spare_exhausted_failures, 2);
        assert_eq!(r.retired_pages, 4);
        assert_eq!(m.free_total(), 6);
    }

    #[test]
    fn bbrd_spare_blocks_by_hand() {
        // 2 planes x 10 blocks of 4 pages; 50 logical pages fill 13 blocks; 2 x (1 + 1) kept
        let m = BlockManager::new(2, 10, 4);
        assert_eq!(spare_blocks(&m, 50, 1), 20 - 13 - 4);
        assert_eq!(spare_blocks(&m, 80, 1), 0);
    }
}
