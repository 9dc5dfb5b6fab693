//! Generated content for block workloads without bytes of their own (issue 15 item 5 (c): trace
//! replay, synthetic and fio streams), deterministic by seed.
//!
//! A write is cut at page boundaries. A piece that covers a whole page gets, with probability
//! `duplicate_fraction`, one of `common_contents` recurring contents (skewed towards the first
//! ones; content 0 is the zero page), else content never seen before. A piece smaller than a
//! page — the head or tail of an unaligned write, or a small write — is a small in-page update
//! and gets new bytes. Reads, TRIMs and flushes carry none.

use super::fill_keyed;
use crate::error::WorkloadError;
use crate::request::{BlockRequest, IoOp};
use nandlab_core::SimRng;
use serde::{Deserialize, Serialize};

/// `[content]`: how block-workload writes get their bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentSpec {
    /// Share of whole-page pieces whose content recurs.
    #[serde(default = "default_duplicates")]
    pub duplicate_fraction: f64,
    /// Distinct recurring contents.
    #[serde(default = "default_common")]
    pub common_contents: u32,
}

fn default_duplicates() -> f64 {
    0.3
}
fn default_common() -> u32 {
    64
}

impl Default for ContentSpec {
    fn default() -> Self {
        ContentSpec {
            duplicate_fraction: default_duplicates(),
            common_contents: default_common(),
        }
    }
}

impl ContentSpec {
    /// Errors name the key (relative to the section).
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if !(0.0..=1.0).contains(&self.duplicate_fraction) {
            return Err(WorkloadError::invalid(
                "duplicate_fraction",
                format!("{} is not in [0, 1]", self.duplicate_fraction),
            ));
        }
        if self.common_contents == 0 {
            return Err(WorkloadError::invalid(
                "common_contents",
                "0, at least 1 (content 0 is the zero page)",
            ));
        }
        Ok(())
    }
}

/// Gives each write of a block stream its bytes (module docs).
#[derive(Debug)]
pub struct BlockContent {
    spec: ContentSpec,
    page_size_bytes: u64,
    rng: SimRng,
    seed: u64,
    data: Vec<u8>,
    unique_key: u64,
}

impl BlockContent {
    /// Content for pages of `page_size_bytes`, seeded by `seed`.
    pub fn new(spec: ContentSpec, page_size_bytes: u32, seed: u64) -> Result<Self, WorkloadError> {
        spec.validate()?;
        if page_size_bytes == 0 {
            return Err(WorkloadError::invalid("page_size_bytes", "0, at least 1"));
        }
        Ok(BlockContent {
            spec,
            page_size_bytes: u64::from(page_size_bytes),
            rng: SimRng::stream(seed, "workload.content"),
            seed,
            data: Vec::new(),
            unique_key: 0,
        })
    }

    /// The bytes of `request` if it is a write (`size_bytes` of them), else `None`.
    pub fn bytes_of(&mut self, request: &BlockRequest) -> Option<&[u8]> {
        if request.op != IoOp::Write {
            return None;
        }
        let page = self.page_size_bytes;
        self.data.clear();
        self.data.resize(request.size_bytes as usize, 0);
        let (start, end) = (
            request.offset_bytes,
            request.offset_bytes + request.size_bytes,
        );
        let mut at = start;
        while at < end {
            let piece_end = ((at / page + 1) * page).min(end);
            let range = (at - start) as usize..(piece_end - start) as usize;
            let whole = at.is_multiple_of(page) && piece_end - at == page;
            let key = if whole && self.rng.chance(self.spec.duplicate_fraction) {
                // skewed towards the first contents (a few very common ones)
                let n = u64::from(self.spec.common_contents);
                let k = self.rng.below(n).min(self.rng.below(n));
                (k > 0).then(|| self.key(u64::MAX - k))
            } else {
                self.unique_key += 1;
                Some(self.key(self.unique_key))
            };
            match key {
                Some(key) => fill_keyed(key, &mut self.data[range]),
                None => self.data[range].fill(0), // the zero page
            }
            at = piece_end;
        }
        Some(&self.data)
    }

    fn key(&self, n: u64) -> u64 {
        self.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ n ^ 0x436F_6E74_656E_7400
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(offset_bytes: u64, size_bytes: u64) -> BlockRequest {
        BlockRequest {
            arrival: None,
            op: IoOp::Write,
            offset_bytes,
            size_bytes,
            placement_id: 0,
        }
    }

    /// Whole pages repeat at about the configured share and only among the recurring contents;
    /// partial pieces are always new; the same seed gives the same bytes.
    #[test]
    fn whole_pages_repeat_at_the_configured_share() {
        let spec = ContentSpec {
            duplicate_fraction: 0.4,
            common_contents: 8,
        };
        let mut c = BlockContent::new(spec.clone(), 4096, 3).unwrap();
        let mut seen = std::collections::HashMap::new();
        let mut repeats = 0;
        let pages = 4_000;
        for i in 0..pages {
            let bytes = c.bytes_of(&write(i * 4096, 4096)).unwrap().to_vec();
            let n = seen.entry(bytes).or_insert(0u32);
            if *n > 0 {
                repeats += 1;
            }
            *n += 1;
        }
        let share = f64::from(repeats) / pages as f64;
        assert!((0.36..0.44).contains(&share), "repeat share {share}");
        assert!(seen.len() <= pages as usize - repeats as usize);
        let recurring = seen.values().filter(|&&n| n > 1).count();
        assert!(recurring <= 8, "{recurring} recurring contents");
        // an unaligned write: head and tail pieces are new bytes, the middle page a whole page
        let mut again = BlockContent::new(spec, 4096, 3).unwrap();
        let first = again.bytes_of(&write(0, 4096)).unwrap().to_vec();
        let mut c = BlockContent::new(
            ContentSpec {
                duplicate_fraction: 0.4,
                common_contents: 8,
            },
            4096,
            3,
        )
        .unwrap();
        assert_eq!(c.bytes_of(&write(0, 4096)).unwrap(), &first[..]);
        let odd = c.bytes_of(&write(100, 3 * 4096)).unwrap();
        assert_eq!(odd.len(), 3 * 4096);
        let read = BlockRequest {
            op: IoOp::Read,
            ..write(0, 4096)
        };
        assert!(c.bytes_of(&read).is_none());
    }

    #[test]
    fn bad_specs_name_the_key() {
        let bad = ContentSpec {
            duplicate_fraction: 1.5,
            common_contents: 8,
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("duplicate_fraction")
        );
        let bad = ContentSpec {
            duplicate_fraction: 0.5,
            common_contents: 0,
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("common_contents")
        );
    }
}
