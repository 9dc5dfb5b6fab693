//! Search-in-Memory (SiM) in the chip model (SPEC S1–S3; paper 004, Chen, Chang and Kuo,
//! CODES+ISSS 2024).
//!
//! A SiM chip matches a 64-bit key under a 64-bit mask against every 8-byte slot of a page in
//! its page buffers and returns a 512-bit match bitmap (search); it returns selected 64-byte
//! chunks of a page (gather). A page is made the search operand by page-open (sense into Latch 1,
//! move to Latch 2) or, while another page is active, page-open-cache (sense into Latch 1 only;
//! page-close moves it up). Blocks are in storage mode (the preset's cells and bus) or match mode
//! (SLC, SiM transfers on a slow bus).
//!
//! The transaction interface gains [`crate::OpKind::PageOpen`] (with
//! [`crate::RegisterMode::Cache`] for page-open-cache), [`crate::OpKind::PageClose`],
//! [`crate::OpKind::Search`] and [`crate::OpKind::Gather`]; [`crate::NandSim`] has functional
//! wrappers returning bitmaps and chunks computed from the bytes in its latches
//! (`sim::search_ops`). The ONFI interface has vendor opcodes (`crate::onfi::commands`).
//!
//! Layout: `format` (page format, keys, bitmaps), `randomize` (per-chunk keystream), `config` (the `[search]` parameters), `state`
//! (block modes, stored bytes, latches and the switching rules). The controller-side integrity
//! formats shared by the controller's search component (`nandlab_ftl::search`) are pure
//! functions here too: `header` (the verification header, S4), `chunk_ecc` (the 4-byte ECC of a
//! chunk) and `crc` (their CRCs).

pub mod chunk_ecc;
pub mod config;
pub mod crc;
pub mod format;
pub mod header;
pub mod randomize;
pub(crate) mod state;

pub use config::SearchConfig;
pub use format::{ChunkMask, MatchBitmap, SearchKey};
pub use state::BlockMode;
