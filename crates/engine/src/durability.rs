//! The row-level crash oracle: what the engine's durability contract ([`Engine::flush`],
//! docs/engine.md "Durability") allows a reopened table to hold.
//!
//! It follows each row id's states (absent, or live at a version) as queries complete: the
//! state at the last completed flush (*durable*), every state set since, and the one the query
//! in flight would set. After a power loss and a reopen, each row must be in its durable
//! state or in one set after it (or the in-flight one): never an older version (*stale*),
//! never gone when its durable state is live (*lost*), never a version or row no query wrote
//! (*unknown*). Row bytes are checked by the reopen itself (every slot is zeros or an exact
//! row image) and by [`Engine::verify_all`].

use crate::device::{BlockDevice, CoDesignHints};
use crate::engine::{Engine, Query};
use crate::table::RowId;
use serde::Serialize;

/// A deliberately broken crash-consistent engine ([`Engine::set_mutation`]): the oracle must
/// catch each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineMutation {
    /// The engine as documented.
    #[default]
    None,
    /// A slot a moved row (U2DI) left is free at once (no quarantine): the write reusing it
    /// can survive a cut that loses the row's new copy.
    ReuseMovedSlots,
    /// A flush does not zero deleted rows' slots: a durable delete comes back.
    KeepDeletedRows,
    /// A flush issues no device Flush (the engine trusts completed writes).
    NoDeviceFlush,
}

impl EngineMutation {
    /// Parses `none`, `reuse-moved-slots`, `keep-deleted-rows` or `no-device-flush`.
    pub fn parse(text: &str) -> Result<Self, String> {
        Ok(match text {
            "none" => EngineMutation::None,
            "reuse-moved-slots" => EngineMutation::ReuseMovedSlots,
            "keep-deleted-rows" => EngineMutation::KeepDeletedRows,
            "no-device-flush" => EngineMutation::NoDeviceFlush,
            _ => {
                return Err(format!(
                    "engine mutation {text:?}: expected none, reuse-moved-slots, keep-deleted-rows or no-device-flush"
                ));
            }
        })
    }
}

/// A row's states.
#[derive(Clone, Debug, Default)]
struct RowHistory {
    durable: Option<u32>,
    current: Option<u32>,
    since_flush: Vec<Option<u32>>,
}

/// Violations of the contract found by [`RowOracle::check`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowViolations {
    /// Rows live at the last flush (or written since) and absent after the reopen.
    pub lost: u64,
    /// Rows at a version older than their durable one (or present after a durable delete).
    pub stale: u64,
    /// Rows at a version no query wrote, or row ids never handed out.
    pub unknown: u64,
    /// Up to five examples.
    pub examples: Vec<String>,
}

impl RowViolations {
    pub fn total(&self) -> u64 {
        self.lost + self.stale + self.unknown
    }

    pub fn add(&mut self, other: &RowViolations) {
        self.lost += other.lost;
        self.stale += other.stale;
        self.unknown += other.unknown;
        for e in &other.examples {
            if self.examples.len() < 5 {
                self.examples.push(e.clone());
            }
        }
    }
}

/// Follows the queries and flushes of one engine (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct RowOracle {
    rows: Vec<RowHistory>,
    /// The state the query in flight would set.
    pending: Option<(RowId, Option<u32>)>,
}

impl RowOracle {
    /// An oracle whose durable state is `engine`'s current one (a new or reopened table).
    pub fn of<D>(engine: &Engine<D>) -> Self {
        let mut oracle = RowOracle::default();
        for id in 0..engine.row_id_bound() {
            let state = engine.row_version(RowId(id));
            let h = oracle.history_mut(RowId(id));
            h.durable = state;
            h.current = state;
        }
        oracle
    }

    fn history_mut(&mut self, row: RowId) -> &mut RowHistory {
        let i = row.0 as usize;
        if self.rows.len() <= i {
            self.rows.resize(i + 1, RowHistory::default());
        }
        &mut self.rows[i]
    }

    /// Notes the state `query` sets if it completes (call before running it).
    pub fn query_issued<D: BlockDevice + CoDesignHints>(
        &mut self,
        engine: &Engine<D>,
        query: Query,
    ) {
        self.pending = match query {
            Query::Insert => engine
                .next_row_id()
                .map(|row| (row, Some(engine.next_version(row)))),
            Query::Update(row) => Some((row, Some(engine.next_version(row)))),
            Query::Delete(row) => Some((row, None)),
        };
    }

    /// The query noted last completed (returned `Ok`).
    pub fn query_completed(&mut self) {
        if let Some((row, state)) = self.pending.take() {
            let h = self.history_mut(row);
            h.current = state;
            h.since_flush.push(state);
        }
    }

    /// A flush returned: every row's current state is durable.
    pub fn flush_completed(&mut self) {
        for h in &mut self.rows {
            h.durable = h.current;
            h.since_flush.clear();
        }
    }

    /// Rows whose durable state is live.
    pub fn durable_rows(&self) -> u64 {
        self.rows.iter().filter(|h| h.durable.is_some()).count() as u64
    }

    /// Checks a reopened engine against the states allowed.
    pub fn check<D>(&self, engine: &Engine<D>) -> RowViolations {
        let mut v = RowViolations::default();
        let bound = (self.rows.len() as u64).max(engine.row_id_bound());
        let none = RowHistory::default();
        for id in 0..bound {
            let row = RowId(id);
            let got = engine.row_version(row);
            let h = self.rows.get(id as usize).unwrap_or(&none);
            let pending = self.pending.filter(|p| p.0 == row).map(|p| p.1);
            if got == h.durable || h.since_flush.contains(&got) || pending == Some(got) {
                continue;
            }
            let class = match (got, h.durable) {
                (None, _) => {
                    v.lost += 1;
                    "lost"
                }
                (Some(g), Some(d)) if g < d => {
                    v.stale += 1;
                    "stale"
                }
                (Some(_), None) if h.current.is_none() && h.since_flush.is_empty() => {
                    v.stale += 1;
                    "stale (deleted before the flush)"
                }
                _ => {
                    v.unknown += 1;
                    "unknown"
                }
            };
            if v.examples.len() < 5 {
                v.examples.push(format!(
                    "row {row}: {class}: reopened at {got:?}, durable {:?}, since the flush {:?}, in flight {pending:?}",
                    h.durable, h.since_flush
                ));
            }
        }
        v
    }
}
