//! Search and gather as NVMe-style vendor I/O commands (paper 004 §VI-A1: two new NVMe
//! commands whose payload the driver encodes), routed by logical page to the physical page
//! through the store's map. The 64-byte submission-queue entry keeps NVMe's layout (opcode in
//! byte 0, namespace id in bytes 4..8, command dwords 10–15 in bytes 40..64); the opcodes are
//! in NVMe's vendor-specific I/O range (80h–FFh) and the payload in CDW10–15 is nandlab's:
//!
//! | command | opcode | CDW10–11 | CDW12–13 | CDW14–15 | returns |
//! |---|---|---|---|---|---|
//! | search | `0x81` | logical page | key | mask | the 64-byte match bitmap (slot `i` = bit `i % 64` of little-endian word `i / 64`) |
//! | gather | `0x82` | logical page | chunk bitmap | 0 | the chunks' 64 bytes each, in order |
//!
//! Not wired through `nandlab-ftl`'s host interface: [`CommandRunner`] executes commands on a
//! [`SearchStore`] directly (page-open, search, page-close; or a gather of an unopened page).

use super::error::{StoreError, StoreResult};
use super::store::{LogicalPage, SearchStore};
use nandlab_core::SimTime;
use nandlab_nand::{ChunkMask, NandSim, SearchKey};

/// Vendor-specific I/O opcode of search.
pub const OPCODE_SEARCH: u8 = 0x81;
/// Vendor-specific I/O opcode of gather.
pub const OPCODE_GATHER: u8 = 0x82;
/// Size of an NVMe submission-queue entry.
pub const SQE_BYTES: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A decoded search or gather command.
pub enum SearchCommand {
    /// Search `81h`: the page's slots matching `key`.
    Search {
        /// The logical page.
        page: LogicalPage,
        /// The key and mask.
        key: SearchKey,
    },
    /// Gather `82h`: the page's chunks of `chunks`.
    Gather {
        /// The logical page.
        page: LogicalPage,
        /// The chunks to return (chunk 0 is the header).
        chunks: ChunkMask,
    },
}

fn dwords(sqe: &[u8; SQE_BYTES], at: usize) -> u64 {
    u64::from_le_bytes(sqe[at..at + 8].try_into().expect("8 bytes"))
}

impl SearchCommand {
    /// The submission-queue entry for namespace `nsid`.
    pub fn encode(&self, nsid: u32) -> [u8; SQE_BYTES] {
        let mut sqe = [0u8; SQE_BYTES];
        sqe[4..8].copy_from_slice(&nsid.to_le_bytes());
        let (opcode, page, a, b) = match *self {
            SearchCommand::Search { page, key } => (OPCODE_SEARCH, page, key.key, key.mask),
            SearchCommand::Gather { page, chunks } => (OPCODE_GATHER, page, chunks.0, 0),
        };
        sqe[0] = opcode;
        sqe[40..48].copy_from_slice(&u64::from(page.0).to_le_bytes());
        sqe[48..56].copy_from_slice(&a.to_le_bytes());
        sqe[56..64].copy_from_slice(&b.to_le_bytes());
        sqe
    }

    /// Parses a submission-queue entry; a bad opcode, page or chunk bitmap is named.
    pub fn decode(sqe: &[u8; SQE_BYTES]) -> StoreResult<Self> {
        let bad = |message: String| StoreError::Argument {
            argument: "sqe",
            message,
        };
        let page = dwords(sqe, 40);
        let page = u32::try_from(page).map(LogicalPage).map_err(|_| {
            bad(format!(
                "logical page {page} (CDW10-11) does not fit 32 bits"
            ))
        })?;
        match sqe[0] {
            OPCODE_SEARCH => Ok(SearchCommand::Search {
                page,
                key: SearchKey {
                    key: dwords(sqe, 48),
                    mask: dwords(sqe, 56),
                },
            }),
            OPCODE_GATHER => {
                let chunks = ChunkMask(dwords(sqe, 48));
                if dwords(sqe, 56) != 0 {
                    return Err(bad("gather: CDW14-15 must be 0".into()));
                }
                if chunks.0 == 0 {
                    return Err(bad("gather: empty chunk bitmap (CDW12-13)".into()));
                }
                Ok(SearchCommand::Gather { page, chunks })
            }
            other => Err(bad(format!(
                "opcode {other:#04x} is not a SiM command (search {OPCODE_SEARCH:#04x}, gather {OPCODE_GATHER:#04x})"
            ))),
        }
    }
}

/// Executes SiM vendor commands on a store (see the module docs).
#[derive(Debug)]
pub struct CommandRunner {
    store: SearchStore,
}

impl CommandRunner {
    /// A runner over `store`.
    pub fn new(store: SearchStore) -> Self {
        CommandRunner { store }
    }

    /// The store it runs on.
    pub fn store(&self) -> &SearchStore {
        &self.store
    }

    /// The store, to write pages.
    pub fn store_mut(&mut self) -> &mut SearchStore {
        &mut self.store
    }

    /// Runs one command at `now`; returns the bytes the host receives.
    pub fn execute(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        sqe: &[u8; SQE_BYTES],
    ) -> StoreResult<Vec<u8>> {
        match SearchCommand::decode(sqe)? {
            SearchCommand::Search { page, key } => {
                let open = self.store.open(sim, now, page)?;
                let bitmap = self.store.search(sim, now, &open, &[key])?[0];
                self.store.close(sim, now, open)?;
                Ok(bitmap.0.iter().flat_map(|w| w.to_le_bytes()).collect())
            }
            SearchCommand::Gather { page, chunks } => {
                self.store.gather_page(sim, now, page, chunks)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::store::StoreConfig;
    use nandlab_nand::search::header::DATA_BYTES;
    use nandlab_nand::{PageAddress, preset};

    #[test]
    fn commands_round_trip_and_bad_entries_are_named() {
        for command in [
            SearchCommand::Search {
                page: LogicalPage(7),
                key: SearchKey {
                    key: 42,
                    mask: 0xff,
                },
            },
            SearchCommand::Gather {
                page: LogicalPage(9),
                chunks: ChunkMask(0b110),
            },
        ] {
            let sqe = command.encode(1);
            assert_eq!(u32::from_le_bytes(sqe[4..8].try_into().unwrap()), 1);
            assert_eq!(SearchCommand::decode(&sqe).unwrap(), command);
        }
        let mut sqe = SearchCommand::Gather {
            page: LogicalPage(1),
            chunks: ChunkMask(2),
        }
        .encode(1);
        sqe[0] = 0x02;
        assert!(
            SearchCommand::decode(&sqe)
                .unwrap_err()
                .to_string()
                .contains("opcode 0x02")
        );
        sqe[0] = OPCODE_GATHER;
        sqe[48..56].fill(0);
        assert!(
            SearchCommand::decode(&sqe)
                .unwrap_err()
                .to_string()
                .contains("empty chunk bitmap")
        );
        sqe[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(
            SearchCommand::decode(&sqe)
                .unwrap_err()
                .to_string()
                .contains("32 bits")
        );
    }

    #[test]
    fn search_and_gather_commands_reach_the_page_of_their_logical_page() {
        let mut sim = NandSim::new(preset("sim2024").unwrap(), 1).unwrap();
        let blocks = vec![PageAddress::default()];
        let store = SearchStore::new(&mut sim, blocks, StoreConfig::default()).unwrap();
        let mut controller = CommandRunner::new(store);
        let mut data = vec![0u8; DATA_BYTES];
        // data slot 20 (page slot 28, chunk 3) holds the key on logical page 5 only
        data[20 * 8..21 * 8].copy_from_slice(&0xABCD_u64.to_le_bytes());
        let now = sim.now();
        controller
            .store_mut()
            .write(&mut sim, now, LogicalPage(4), &vec![0u8; DATA_BYTES])
            .unwrap();
        controller
            .store_mut()
            .write(&mut sim, now, LogicalPage(5), &data)
            .unwrap();
        let search = |page| {
            SearchCommand::Search {
                page: LogicalPage(page),
                key: SearchKey::exact(0xABCD),
            }
            .encode(1)
        };
        let bitmap = controller.execute(&mut sim, now, &search(5)).unwrap();
        assert_eq!(bitmap.len(), 64);
        let word = u64::from_le_bytes(bitmap[0..8].try_into().unwrap());
        assert_eq!(word, 1 << 28);
        let none = controller.execute(&mut sim, now, &search(4)).unwrap();
        assert!(none.iter().all(|b| *b == 0));
        let gather = SearchCommand::Gather {
            page: LogicalPage(5),
            chunks: ChunkMask(1 << 3),
        }
        .encode(1);
        let chunk = controller.execute(&mut sim, now, &gather).unwrap();
        assert_eq!(
            u64::from_le_bytes(chunk[32..40].try_into().unwrap()),
            0xABCD
        ); // slot 28 = chunk 3, slot 4
        let unwritten = controller.execute(&mut sim, now, &search(6)).unwrap_err();
        assert!(
            unwritten.to_string().contains("never written"),
            "{unwritten}"
        );
    }
}
