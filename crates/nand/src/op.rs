//! Flash operations: what a controller asks of the chip model through the transaction interface
//! (SPEC N4–N6). An op targets one die; with several targets it is a multiplane op, which must
//! obey the plane addressing rule (same die, same page offset, distinct planes).
//!
//! The sixteen operation modes of the paper are the combinations of
//! {legacy, cache, internal data move} × {one plane, multiplane} × {one die, interleaved dies}
//! for reads and programs, and {one plane, multiplane} × {one die, interleaved dies} for erases.
//! Interleaving is how the host issues ops (several dies of a channel busy at once, bus stages
//! serialized); it is chosen by the scheduler, not by the op itself.

use crate::error::{NandError, NandResult};
use crate::geometry::{Geometry, MAX_PLANES_PER_DIE, PageAddress};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Read,
    Program,
    Erase,
    /// Internal data move (copyback): read into the data register, program elsewhere in the
    /// same plane, with no data on the bus.
    Copyback,
    /// SiM page-open (paper 004 §IV-B): sense a match-mode page and make it the active search
    /// operand (Latch 2), sending its verification window to the controller. In
    /// [`RegisterMode::Cache`] it is page-open-cache: with a page active, the sensed page waits
    /// in Latch 1 until page-close.
    #[serde(rename = "page-open")]
    PageOpen,
    /// SiM page-close: release the active page; a page waiting in Latch 1 becomes active.
    #[serde(rename = "page-close")]
    PageClose,
    /// SiM search of the active page: `search_keys` keys (a batch), one 512-bit bitmap each.
    Search,
    /// SiM gather: the chunks of `chunk_mask` of a page (the active page, or sensed first).
    Gather,
}

impl OpKind {
    /// Number of op kinds: per-kind tables are `[T; OpKind::COUNT]`, indexed by
    /// [`OpKind::index`].
    pub const COUNT: usize = 8;
    pub const ALL: [OpKind; OpKind::COUNT] = [
        OpKind::Read,
        OpKind::Program,
        OpKind::Erase,
        OpKind::Copyback,
        OpKind::PageOpen,
        OpKind::PageClose,
        OpKind::Search,
        OpKind::Gather,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Program => "program",
            OpKind::Erase => "erase",
            OpKind::Copyback => "copyback",
            OpKind::PageOpen => "page-open",
            OpKind::PageClose => "page-close",
            OpKind::Search => "search",
            OpKind::Gather => "gather",
        }
    }
    /// The Search-in-Memory kinds (match-mode blocks only; bus stages at the match rate).
    pub fn is_search(self) -> bool {
        matches!(
            self,
            OpKind::PageOpen | OpKind::PageClose | OpKind::Search | OpKind::Gather
        )
    }
}

/// Register usage of an op: legacy (the die is held for the whole op) or cache (the cache
/// register lets the next op's bus stages overlap this op's cell stage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegisterMode {
    #[default]
    Legacy,
    Cache,
}

/// One operation on one die.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlashOp {
    pub kind: OpKind,
    pub mode: RegisterMode,
    /// The pages (or blocks, for erase) addressed; more than one makes a multiplane op.
    pub targets: Vec<PageAddress>,
    /// Copyback destinations, one per target (same plane as its source).
    pub destinations: Vec<PageAddress>,
    /// Bytes moved over the bus per plane for reads and programs (defaults to the page size).
    pub transfer_bytes: Option<u32>,
    /// Caller's tag, returned in the completion.
    pub tag: u64,
    /// Keys of a SiM search batch (0 for other kinds).
    pub search_keys: u32,
    /// Chunks a SiM gather returns, one bit per 64-byte chunk (0 for other kinds).
    pub chunk_mask: u64,
}

impl FlashOp {
    pub fn read(address: PageAddress) -> Self {
        Self::new(OpKind::Read, vec![address])
    }
    pub fn program(address: PageAddress) -> Self {
        Self::new(OpKind::Program, vec![address])
    }
    pub fn erase(block: PageAddress) -> Self {
        Self::new(OpKind::Erase, vec![block])
    }
    pub fn copyback(source: PageAddress, destination: PageAddress) -> Self {
        let mut op = Self::new(OpKind::Copyback, vec![source]);
        op.destinations = vec![destination];
        op
    }
    /// SiM page-open of a match-mode page.
    pub fn page_open(address: PageAddress) -> Self {
        Self::new(OpKind::PageOpen, vec![address])
    }
    /// SiM page-open-cache: sensed into Latch 1 while another page of the block is active.
    pub fn page_open_cache(address: PageAddress) -> Self {
        Self::new(OpKind::PageOpen, vec![address]).cached()
    }
    /// SiM page-close of the active page `address`.
    pub fn page_close(address: PageAddress) -> Self {
        Self::new(OpKind::PageClose, vec![address])
    }
    /// SiM search of the active page `address` with a batch of `keys` keys.
    pub fn search(address: PageAddress, keys: u32) -> Self {
        let mut op = Self::new(OpKind::Search, vec![address]);
        op.search_keys = keys;
        op
    }
    /// SiM gather of the chunks in `chunk_mask` of `address`.
    pub fn gather(address: PageAddress, chunk_mask: u64) -> Self {
        let mut op = Self::new(OpKind::Gather, vec![address]);
        op.chunk_mask = chunk_mask;
        op
    }
    /// An op of `kind` on one address (a template; SiM kinds get one key or every chunk).
    pub fn of_kind(kind: OpKind, address: PageAddress) -> Self {
        match kind {
            OpKind::Copyback => Self::copyback(address, address),
            OpKind::Search => Self::search(address, 1),
            OpKind::Gather => Self::gather(address, !0),
            _ => Self::new(kind, vec![address]),
        }
    }
    pub fn multiplane(kind: OpKind, targets: Vec<PageAddress>) -> Self {
        Self::new(kind, targets)
    }
    pub fn multiplane_copyback(sources: Vec<PageAddress>, destinations: Vec<PageAddress>) -> Self {
        let mut op = Self::new(OpKind::Copyback, sources);
        op.destinations = destinations;
        op
    }
    fn new(kind: OpKind, targets: Vec<PageAddress>) -> Self {
        FlashOp {
            kind,
            mode: RegisterMode::Legacy,
            targets,
            destinations: Vec::new(),
            transfer_bytes: None,
            tag: 0,
            search_keys: 0,
            chunk_mask: 0,
        }
    }
    pub fn cached(mut self) -> Self {
        self.mode = RegisterMode::Cache;
        self
    }
    pub fn with_tag(mut self, tag: u64) -> Self {
        self.tag = tag;
        self
    }
    pub fn with_transfer_bytes(mut self, bytes: u32) -> Self {
        self.transfer_bytes = Some(bytes);
        self
    }
    pub fn plane_count(&self) -> usize {
        self.targets.len()
    }

    /// Checks addresses against the geometry, the plane addressing rule, the copyback rule
    /// (destination in the source's plane) and mode support.
    pub fn validate(&self, geometry: &Geometry) -> NandResult<()> {
        let first = match self.targets.first() {
            Some(first) => *first,
            None => {
                return Err(NandError::Unsupported {
                    message: format!("{} op with no target address", self.kind.name()),
                });
            }
        };
        if self.targets.len() > geometry.planes_per_die.min(MAX_PLANES_PER_DIE) as usize {
            return Err(NandError::PlaneRule {
                message: format!(
                    "{} targets but a die has {} planes",
                    self.targets.len(),
                    geometry.planes_per_die
                ),
            });
        }
        if self.kind.is_search() && self.targets.len() != 1 {
            return Err(NandError::Unsupported {
                message: format!(
                    "{} addresses one page, not {}",
                    self.kind.name(),
                    self.targets.len()
                ),
            });
        }
        let mut planes_seen = 0u32;
        // a single-plane op (the usual one) only needs its address in range
        let others: &[PageAddress] = if self.targets.len() == 1 {
            geometry.check(&first)?;
            &[]
        } else {
            &self.targets
        };
        for target in others {
            geometry.check(target)?;
            let same_die =
                (target.channel, target.chip, target.die) == (first.channel, first.chip, first.die);
            if !same_die {
                return Err(NandError::PlaneRule {
                    message: format!("{target} is not on the die of {first}"),
                });
            }
            if self.kind != OpKind::Erase && target.page != first.page {
                return Err(NandError::PlaneRule {
                    message: format!(
                        "{target} has page offset {} but {first} has {}",
                        target.page, first.page
                    ),
                });
            }
            if planes_seen & (1 << target.plane) != 0 {
                return Err(NandError::PlaneRule {
                    message: format!("plane {} addressed twice ({target})", target.plane),
                });
            }
            planes_seen |= 1 << target.plane;
        }
        match self.kind {
            OpKind::Copyback => {
                if self.destinations.len() != self.targets.len() {
                    return Err(NandError::Unsupported {
                        message: format!(
                            "copyback with {} sources but {} destinations",
                            self.targets.len(),
                            self.destinations.len()
                        ),
                    });
                }
                let dst_page = self.destinations[0].page;
                for (source, destination) in self.targets.iter().zip(&self.destinations) {
                    geometry.check(destination)?;
                    let same_plane = (source.channel, source.chip, source.die, source.plane)
                        == (
                            destination.channel,
                            destination.chip,
                            destination.die,
                            destination.plane,
                        );
                    if !same_plane {
                        return Err(NandError::PlaneRule {
                            message: format!(
                                "copyback from {source} to {destination} leaves the source plane"
                            ),
                        });
                    }
                    if destination.page != dst_page {
                        return Err(NandError::PlaneRule {
                            message: format!(
                                "multiplane copyback destinations at page offsets {dst_page} and {}",
                                destination.page
                            ),
                        });
                    }
                }
                if self.mode == RegisterMode::Cache {
                    return Err(NandError::Unsupported {
                        message: "internal data move (copyback) has no cache mode".into(),
                    });
                }
            }
            OpKind::Erase => {
                if self.mode == RegisterMode::Cache {
                    return Err(NandError::Unsupported {
                        message: "erase has no cache mode".into(),
                    });
                }
            }
            OpKind::PageClose | OpKind::Search | OpKind::Gather
                if self.mode == RegisterMode::Cache =>
            {
                return Err(NandError::Unsupported {
                    message: format!(
                        "{} has no cache mode (only page-open has: page-open-cache)",
                        self.kind.name()
                    ),
                });
            }
            OpKind::Read
            | OpKind::Program
            | OpKind::PageOpen
            | OpKind::PageClose
            | OpKind::Search
            | OpKind::Gather => {
                if !self.destinations.is_empty() {
                    return Err(NandError::Unsupported {
                        message: format!("{} op with copyback destinations", self.kind.name()),
                    });
                }
            }
        }
        if let Some(bytes) = self.transfer_bytes
            && (bytes == 0 || bytes > geometry.page_size_bytes + geometry.spare_bytes_per_page)
        {
            return Err(NandError::Unsupported {
                message: format!(
                    "transfer of {bytes} bytes; a page holds {} + {} spare",
                    geometry.page_size_bytes, geometry.spare_bytes_per_page
                ),
            });
        }
        Ok(())
    }
}
