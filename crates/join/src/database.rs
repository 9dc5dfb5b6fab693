//! A [`Database`]: the SSB tables in one layout in a PCM device of the right size, with a
//! scratch area for the joins, and the query runner.

use crate::access::{PAGE_BYTES, Reader};
use crate::cost::PcmCost;
use crate::error::{JoinResult, argument};
use crate::join::{JoinCounts, JoinInput, JoinSettings, Predicate, Scratch, hash_join};
use crate::query::{Query, Selection};
use crate::store::{Layout, StoredTable, load_table, row_counts, table_bytes};
use nandlab_pcm::{PcmConfig, PcmDevice};
use nandlab_workload::ssb::{SsbData, Table};

/// Most partitions a join may use (bounds the scratch area's page slack).
pub const PARTITIONS_MAX: u32 = 1_024;
/// Most result columns a query may select.
pub const SELECT_COLUMNS_MAX: u64 = 8;

/// The SSB tables in PCM.
#[derive(Debug)]
pub struct Database {
    pub(crate) device: PcmDevice,
    pub(crate) tables: Vec<StoredTable>,
    scratch: Scratch,
    results_at: u64,
    build_cost: PcmCost,
}

/// What one query did and cost.
#[derive(Clone, Debug)]
pub struct QueryRun {
    /// The query's name.
    pub query: &'static str,
    /// Result rows (selected columns as codes), in LINEORDER tuple-id order.
    pub rows: Vec<Vec<u32>>,
    /// Cost of each join and its counts.
    pub joins: Vec<(JoinCounts, PcmCost)>,
    /// Cost of reading the selected columns (and, in main memory, writing the result rows).
    pub projection: PcmCost,
    /// Whole query.
    pub total: PcmCost,
}

impl Database {
    /// Loads every table of `data` in `layout` into a PCM device built from `pcm` (its
    /// capacity is set to what the tables and the join scratch need; `device_seed` draws the
    /// per-word endurance).
    pub fn build(
        data: &SsbData,
        layout: Layout,
        pcm: &PcmConfig,
        device_seed: u64,
    ) -> JoinResult<Self> {
        Self::build_with_room(data, layout, pcm, device_seed, 0)
    }

    /// [`Database::build`] with room for `extra_facts` LINEORDER rows beyond the generated
    /// ones, for inserts (`maintain.rs`); the join scratch is sized for the full capacity.
    pub fn build_with_room(
        data: &SsbData,
        layout: Layout,
        pcm: &PcmConfig,
        device_seed: u64,
        extra_facts: u32,
    ) -> JoinResult<Self> {
        let rows = row_counts(data);
        let mut capacities = rows;
        capacities[0] = rows[0].checked_add(extra_facts).ok_or_else(|| {
            argument(
                "extra_facts",
                format!("{extra_facts} more rows overflow the tuple ids"),
            )
        })?;
        let mut tables_bytes = 0;
        for (table, &n) in Table::ALL.iter().zip(&capacities) {
            tables_bytes += table_bytes(*table, n, layout).div_ceil(PAGE_BYTES) * PAGE_BYTES;
        }
        let facts = u64::from(capacities[0]);
        let dims_max = u64::from(*rows[1..].iter().max().unwrap_or(&1));
        let row_max = 4 + 4 * 17;
        let scratch_bytes = dims_max * 12
            + dims_max.next_power_of_two() * 4
            + facts * 8
            + dims_max * row_max
            + facts * row_max
            + 2 * u64::from(PARTITIONS_MAX) * PAGE_BYTES
            + 4 * PAGE_BYTES;
        let results_bytes = (facts * 4 * SELECT_COLUMNS_MAX).div_ceil(PAGE_BYTES) * PAGE_BYTES;
        let mut config = pcm.clone();
        config.geometry.capacity_bytes =
            tables_bytes + scratch_bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES + results_bytes;
        let mut device = PcmDevice::new(config, device_seed)?;
        let before = device.stats().clone();
        let mut tables = Vec::new();
        let mut at = 0;
        for ((table, &n), &capacity) in Table::ALL.iter().zip(&rows).zip(&capacities) {
            let stored = load_table(&mut device, data, *table, (n, capacity), layout, at)?;
            at += stored.bytes().div_ceil(PAGE_BYTES) * PAGE_BYTES;
            tables.push(stored);
        }
        let build_cost = PcmCost::between(&before, device.stats(), &device);
        let results_at = device.capacity_bytes() - results_bytes;
        Ok(Database {
            device,
            tables,
            scratch: Scratch {
                start: at,
                end: results_at,
            },
            results_at,
            build_cost,
        })
    }

    /// The device (its stats and wear).
    pub fn device(&self) -> &PcmDevice {
        &self.device
    }

    /// The cost of loading the tables.
    pub fn build_cost(&self) -> PcmCost {
        self.build_cost
    }

    /// Where `table` lies.
    pub fn table(&self, table: Table) -> &StoredTable {
        &self.tables[Table::ALL.iter().position(|t| *t == table).unwrap_or(0)]
    }

    fn predicates(table: Table, selections: &[Selection]) -> JoinResult<Vec<Predicate>> {
        selections
            .iter()
            .map(|s| {
                Ok(Predicate {
                    column: table.column(s.column)?,
                    low: s.low,
                    high: s.high,
                    values: s.values,
                })
            })
            .collect()
    }

    /// Runs `query` with `settings`; every PCM access is charged to the device.
    pub fn run(&mut self, query: &Query, settings: &JoinSettings) -> JoinResult<QueryRun> {
        if settings.partitions == 0 || settings.partitions > PARTITIONS_MAX {
            return Err(argument(
                "partitions",
                format!("{} is not in 1..={PARTITIONS_MAX}", settings.partitions),
            ));
        }
        if query.joins.is_empty() {
            return Err(argument("query", format!("{} joins nothing", query.name)));
        }
        if query.select.is_empty() || query.select.len() as u64 > SELECT_COLUMNS_MAX {
            return Err(argument(
                "query",
                format!("{} selects 1..={SELECT_COLUMNS_MAX} columns", query.name),
            ));
        }
        let start = self.device.stats().clone();
        let mut reader = Reader::new(settings.mode, &self.device)?;
        let fact = *self.table(Table::Lineorder);
        let fact_filters = Self::predicates(Table::Lineorder, &query.fact_selections)?;
        // intermediate result: fact tids (ascending) and the dimension tids matched so far
        let mut tids: Option<Vec<u32>> = None;
        let mut carried: Vec<Vec<u32>> = Vec::new();
        let mut joins = Vec::new();
        for (k, join) in query.joins.iter().enumerate() {
            let dimension = *self.table(join.dimension);
            let dimension_filters = Self::predicates(join.dimension, &join.selections)?;
            let build = JoinInput {
                table: &dimension,
                key: join.dimension.column(join.dimension_key)?,
                filters: &dimension_filters,
                tids: None,
            };
            let probe = JoinInput {
                table: &fact,
                key: Table::Lineorder.column(join.fact_key)?,
                filters: if k == 0 { &fact_filters } else { &[] },
                tids: tids.as_deref(),
            };
            let before = self.device.stats().clone();
            let (mut pairs, counts) = hash_join(
                &mut self.device,
                &mut reader,
                settings,
                &build,
                &probe,
                self.scratch,
            )?;
            joins.push((
                counts,
                PcmCost::between(&before, self.device.stats(), &self.device),
            ));
            pairs.sort_unstable_by_key(|&(_, probe_tid)| probe_tid);
            if pairs.windows(2).any(|w| w[0].1 == w[1].1) {
                return Err(argument(
                    "query",
                    format!(
                        "{}: {} is not unique in {}",
                        query.name,
                        join.dimension_key,
                        join.dimension.name()
                    ),
                ));
            }
            let mut next_carried: Vec<Vec<u32>> =
                vec![Vec::with_capacity(pairs.len()); carried.len() + 1];
            for &(dim_tid, fact_tid) in &pairs {
                if let Some(old) = &tids {
                    let i = old.binary_search(&fact_tid).map_err(|_| {
                        argument("query", "a join returned a tuple it was not given")
                    })?;
                    for (c, column) in carried.iter().enumerate() {
                        next_carried[c].push(column[i]);
                    }
                }
                next_carried[carried.len()].push(dim_tid);
            }
            tids = Some(pairs.iter().map(|&(_, t)| t).collect());
            carried = next_carried;
        }
        let before = self.device.stats().clone();
        let rows = self.project(
            query,
            settings,
            &mut reader,
            tids.as_deref().unwrap_or(&[]),
            &carried,
        )?;
        let projection = PcmCost::between(&before, self.device.stats(), &self.device);
        let total = PcmCost::between(&start, self.device.stats(), &self.device);
        Ok(QueryRun {
            query: query.name,
            rows,
            joins,
            projection,
            total,
        })
    }

    /// Reads the selected columns of every result; with PCM as main memory the result rows are
    /// written to PCM.
    fn project(
        &mut self,
        query: &Query,
        settings: &JoinSettings,
        reader: &mut Reader,
        tids: &[u32],
        carried: &[Vec<u32>],
    ) -> JoinResult<Vec<Vec<u32>>> {
        reader.reset();
        let mut sources = Vec::new();
        for (table, column) in &query.select {
            let which = if *table == Table::Lineorder {
                None
            } else {
                Some(
                    query
                        .joins
                        .iter()
                        .position(|j| j.dimension == *table)
                        .ok_or_else(|| {
                            argument(
                                "query",
                                format!(
                                    "{} selects from {} which it does not join",
                                    query.name,
                                    table.name()
                                ),
                            )
                        })?,
                )
            };
            sources.push((*self.table(*table), table.column(column)?, which));
        }
        let mut rows = Vec::with_capacity(tids.len());
        let mut scratch_row = Vec::new();
        let mut bytes = Vec::new();
        let mut lines = crate::access::LineWriter::new(&self.device);
        for (i, &fact_tid) in tids.iter().enumerate() {
            let mut out = Vec::with_capacity(sources.len());
            for (table, column, which) in &sources {
                let tid = which.map_or(fact_tid, |j| carried[j][i]);
                out.push(table.read_value(
                    reader,
                    &mut self.device,
                    *column,
                    tid,
                    &mut scratch_row,
                )?);
            }
            if settings.mode == crate::access::Mode::MainMemory {
                bytes.clear();
                for v in &out {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
                let at = self.results_at + (i * sources.len() * 4) as u64;
                lines.write(&mut self.device, at, &bytes)?;
            }
            rows.push(out);
        }
        lines.flush(&mut self.device)?;
        Ok(rows)
    }
}
