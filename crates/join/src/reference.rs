//! The reference every join is checked against: the tables in host memory and a plain hash
//! join (a `HashMap` per dimension, one pass over LINEORDER), no PCM.

use crate::error::JoinResult;
use crate::query::{Query, Selection};
use nandlab_workload::ssb::{SsbData, Table};
use std::collections::HashMap;

fn keeps(table: Table, selections: &[Selection], row: &[u32]) -> JoinResult<bool> {
    for s in selections {
        if !s.keeps(row[table.column(s.column)?]) {
            return Ok(false);
        }
    }
    Ok(true)
}

fn rows_of(data: &SsbData, table: Table) -> Vec<Vec<u32>> {
    let mut rows = Vec::new();
    data.for_each_row(table, |v| rows.push(v.to_vec()));
    rows
}

/// The result rows of `query` over `data`, in LINEORDER order.
pub fn reference_rows(data: &SsbData, query: &Query) -> JoinResult<Vec<Vec<u32>>> {
    reference_rows_over(data, query, |each| {
        data.for_each_row(Table::Lineorder, |fact| each(fact))
    })
}

/// The result rows of `query` over `data`'s dimensions and the LINEORDER rows that
/// `for_each_fact` hands to its argument, in that order (a LINEORDER changed by inserts,
/// updates and deletes).
pub fn reference_rows_over(
    data: &SsbData,
    query: &Query,
    for_each_fact: impl FnOnce(&mut dyn FnMut(&[u32])),
) -> JoinResult<Vec<Vec<u32>>> {
    let mut dimensions = Vec::new();
    for join in &query.joins {
        let key = join.dimension.column(join.dimension_key)?;
        let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
        for row in rows_of(data, join.dimension) {
            if keeps(join.dimension, &join.selections, &row)? {
                map.insert(row[key], row);
            }
        }
        dimensions.push((Table::Lineorder.column(join.fact_key)?, map));
    }
    let mut select = Vec::new();
    for (table, column) in &query.select {
        let which = query.joins.iter().position(|j| j.dimension == *table);
        select.push((which, table.column(column)?));
    }
    let mut out = Vec::new();
    let mut error = None;
    for_each_fact(&mut |fact: &[u32]| {
        match keeps(Table::Lineorder, &query.fact_selections, fact) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                error.get_or_insert(e);
                return;
            }
        }
        let mut matched = Vec::with_capacity(dimensions.len());
        for (fk, map) in &dimensions {
            match map.get(&fact[*fk]) {
                Some(row) => matched.push(row),
                None => return,
            }
        }
        out.push(
            select
                .iter()
                .map(|(which, column)| match which {
                    Some(j) => matched[*j][*column],
                    None => fact[*column],
                })
                .collect(),
        );
    });
    match error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
