//! `pcm-hashjoin` (SPEC P6, R-P3; thesis 001 §5.2, Figs. 5.9 and 5.11): the three thesis
//! queries over SSB data in PCM, with the traditional (Grace) and the virtual-partitioning hash
//! join, for the row and the column store, with PCM as storage and as main memory; and the
//! database-size sweep of Fig. 5.9 (PCM as storage). Costs are the PCM device model's (`cidr11`
//! preset), summed over the three queries; the thesis's formulas are reported beside them.

use super::paper::{Paper, PaperValue, pv};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::{LabError, LabResult};
use nandlab_join::{Algorithm, Database, JoinSettings, Layout, Mode, PcmCost, thesis_queries};
use nandlab_workload::ssb::SsbData;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// Thesis 001 Fig. 5.11 (R-P3): virtual partitioning against Grace, row store, PCM as main
/// memory.
const HASHJOIN_PAPER: &[PaperValue] = &[
    pv(
        "mainmemory_row_wear_reduction",
        "mainmemory_row_wear_reduction",
        0.6,
        "",
        "Fig. 5.11",
        "row store, PCM as main memory",
    ),
    pv(
        "mainmemory_row_energy_reduction",
        "mainmemory_row_energy_reduction",
        0.5,
        "",
        "Fig. 5.11",
        "row store, PCM as main memory",
    ),
    pv(
        "mainmemory_row_latency_reduction",
        "mainmemory_row_latency_reduction",
        0.3,
        "",
        "Fig. 5.11",
        "row store, PCM as main memory",
    ),
];

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "pcm-hashjoin",
    reference: "R-P3, paper 001 Figs. 5.9, 5.11",
    title: "PCM wear, energy and latency of Grace vs virtual-partitioning hash joins (row/column store, PCM as storage/main memory)",
    run: hash_join,
    paper: Paper::Values(HASHJOIN_PAPER),
}];

/// Partitions per join.
pub(super) const PARTITIONS: u32 = 32;
/// DRAM buffer with PCM as storage at scale factor 1: the thesis's 256 MB (Table 5.3), scaled
/// with the database of the comparison and held at the base size in the size sweep (the thesis
/// grows the database, not the buffer).
const BUFFER_BYTES_AT_SF1: f64 = 256e6;
pub(super) const LAYOUTS: [Layout; 2] = [Layout::Row, Layout::Column];
pub(super) const ALGORITHMS: [Algorithm; 2] = [Algorithm::Grace, Algorithm::Virtual];

/// PCM as storage with the thesis's DRAM buffer scaled to `sf`.
pub(super) fn storage(sf: f64) -> Mode {
    Mode::Storage {
        buffer_bytes: ((BUFFER_BYTES_AT_SF1 * sf) as u64).max(nandlab_join::PAGE_BYTES),
    }
}

/// (scale factor of the main comparison, database-size factors of the Fig. 5.9 sweep, their
/// base scale factor).
fn scales(scale: Scale) -> (f64, &'static [u32], f64) {
    match scale {
        Scale::Quick => (0.01, &[1, 2], 0.005),
        Scale::Standard => (0.1, &[1, 2, 3, 4], 0.025),
        Scale::Full => (1.0, &[1, 2, 3, 4], 0.25),
    }
}

/// The PCM main memory of the join experiments: the device of a stack config's `[pcm]`
/// section with the `cidr11` preset (the joins run on the memory alone, no SSD behind it).
pub(super) fn join_memory() -> LabResult<nandlab_pcm::PcmConfig> {
    crate::stack::PcmSection::of_preset("cidr11")
        .device()
        .map_err(|(key, message)| LabError::Usage(format!("{key}: {message}")))
}

/// The three queries once, on a fresh database: their summed cost and the partition bytes.
fn run_point(
    data: &SsbData,
    layout: Layout,
    algorithm: Algorithm,
    mode: Mode,
    seed: u64,
) -> LabResult<(PcmCost, u64, u64, PcmCost)> {
    let mut db = Database::build(data, layout, &join_memory()?, seed)?;
    let settings = JoinSettings {
        algorithm,
        mode,
        partitions: PARTITIONS,
    };
    let mut total = PcmCost::default();
    let mut partition_bytes = 0;
    let mut rows = 0;
    for query in thesis_queries() {
        let run = db.run(&query, &settings)?;
        total = total.plus(&run.total);
        partition_bytes += run
            .joins
            .iter()
            .map(|(c, _)| c.partition_bytes)
            .sum::<u64>();
        rows += run.rows.len() as u64;
    }
    Ok((total, partition_bytes, rows, db.build_cost()))
}

const COLUMNS: [&str; 16] = [
    "scale_factor",
    "layout",
    "mode",
    "algorithm",
    "result_rows",
    "partition_bytes",
    "words_written",
    "words_read",
    "bits_programmed",
    "kappa",
    "energy_uj",
    "latency_ms",
    "formula_wear_bits",
    "formula_energy_uj",
    "formula_latency_ms",
    "formula_over_device_latency",
];

fn row(
    sf: f64,
    layout: Layout,
    mode: Mode,
    algorithm: Algorithm,
    c: &PcmCost,
    parts: u64,
    rows: u64,
) -> Vec<super::CurveValue> {
    vec![
        sf.into(),
        layout.label().into(),
        mode.label().into(),
        algorithm.label().into(),
        (rows as f64).into(),
        (parts as f64).into(),
        (c.words_written as f64).into(),
        (c.words_read as f64).into(),
        (c.bits_programmed as f64).into(),
        c.kappa.into(),
        (c.energy_pj / 1e6).into(),
        (c.latency_ns / 1e6).into(),
        c.formula_wear_bits.into(),
        (c.formula_energy_pj / 1e6).into(),
        (c.formula_latency_ns / 1e6).into(),
        (c.formula_latency_ns / c.latency_ns.max(1e-9)).into(),
    ]
}

/// What [`run_point`] measures: the queries' summed cost, partition bytes, result rows and
/// the build cost.
type Measure = (PcmCost, u64, u64, PcmCost);

/// The SSB data of scale factor `sf` and `seed`, generated once per process while points of
/// the same data follow one another (the points of a sweep run on a process's threads, or one
/// after another on a worker process).
pub(super) fn ssb_data(sf: f64, seed: u64) -> LabResult<Arc<SsbData>> {
    type Last = Option<((u64, u64), Arc<SsbData>)>;
    static LAST: Mutex<Last> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    let key = (sf.to_bits(), seed);
    if let Some((k, data)) = last.as_ref()
        && *k == key
    {
        return Ok(Arc::clone(data));
    }
    *last = None; // free the old data before generating the new
    let data = Arc::new(SsbData::new(sf, seed)?);
    *last = Some((key, Arc::clone(&data)));
    Ok(data)
}

/// One point of `pcm-hashjoin`: the three queries on SSB data of scale factor `sf`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct JoinPoint {
    sf: f64,
    layout: Layout,
    mode: Mode,
    algorithm: Algorithm,
    seed: u64,
}

/// The registered measure of `pcm-hashjoin` ([`run_point`] of a [`JoinPoint`]), so that its
/// points run on worker processes and Dask like the others.
#[derive(Debug)]
pub(super) struct HashJoin;

impl super::measure::Measure for HashJoin {
    const NAME: &'static str = "pcm-hashjoin";
    type Point = JoinPoint;
    type Output = Measure;
    fn measure(p: &JoinPoint, _: &crate::control::Control) -> LabResult<Option<Measure>> {
        let data = ssb_data(p.sf, p.seed)?;
        run_point(&data, p.layout, p.algorithm, p.mode, p.seed).map(Some)
    }
}

/// Runs `points` (layout, mode, algorithm) on SSB data of scale factor `sf` through the point
/// runner ([`super::measure::measure_all`]: the machine's cores or worker processes, the result
/// cache).
fn measure(
    options: &RunOptions,
    sf: f64,
    points: &[(Layout, Mode, Algorithm)],
) -> LabResult<Vec<Option<Measure>>> {
    let points: Vec<JoinPoint> = points
        .iter()
        .map(|&(layout, mode, algorithm)| JoinPoint {
            sf,
            layout,
            mode,
            algorithm,
            seed: options.seed,
        })
        .collect();
    super::measure::measure_all::<HashJoin>(options, &points)
}

fn hash_join(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (sf, factors, base_sf) = scales(options.scale);
    let modes = [storage(sf), Mode::MainMemory];
    let main_points = LAYOUTS.len() * modes.len() * ALGORITHMS.len();
    let size_points = factors.len() * LAYOUTS.len() * ALGORITHMS.len();
    let buffer_points = BUFFER_SHARES.len() * ALGORITHMS.len();
    options
        .control
        .start(Some((main_points + size_points + buffer_points) as u64));
    let mut result = ExperimentResult::default();
    let mut compare = Curve::new("joins", &COLUMNS);
    let data = ssb_data(sf, options.seed)?;
    let mut points = Vec::with_capacity(main_points);
    for layout in LAYOUTS {
        for mode in modes {
            for algorithm in ALGORITHMS {
                points.push((layout, mode, algorithm));
            }
        }
    }
    let measured = measure(options, sf, &points)?;
    for (group, runs) in points
        .chunks(ALGORITHMS.len())
        .zip(measured.chunks(ALGORITHMS.len()))
    {
        let mut costs = Vec::new();
        for (&(layout, mode, algorithm), run) in group.iter().zip(runs) {
            let Some((c, parts, rows, build)) = *run else {
                result.interrupted = true;
                result.curves.push(compare);
                options.control.finish();
                return Ok(result);
            };
            let key = format!("build_{}", layout.label());
            result.metric(&format!("{key}_words_written"), build.words_written as f64);
            result.metric(
                &format!("{key}_bits_programmed"),
                build.bits_programmed as f64,
            );
            result.metric(&format!("{key}_energy_uj"), build.energy_pj / 1e6);
            compare.push(row(sf, layout, mode, algorithm, &c, parts, rows));
            costs.push(c);
        }
        let (layout, mode, _) = group[0];
        let (g, v) = (&costs[0], &costs[1]);
        let key = format!("{}_{}", mode.label().replace('-', ""), layout.label());
        reduction_metrics(&mut result, &key, g, v);
        result.metric(
            &format!("{key}_formula_energy_reduction"),
            less(g.formula_energy_pj, v.formula_energy_pj),
        );
        result.metric(
            &format!("{key}_formula_latency_reduction"),
            less(g.formula_latency_ns, v.formula_latency_ns),
        );
    }
    result.metric("scale_factor", sf);
    result.curves.push(compare);

    let mut sizes = Curve::new("dbsize", &COLUMNS);
    let storage = storage(base_sf);
    for &factor in factors {
        let factor_sf = base_sf * f64::from(factor);
        let mut points = Vec::new();
        for layout in LAYOUTS {
            for algorithm in ALGORITHMS {
                points.push((layout, storage, algorithm));
            }
        }
        let measured = measure(options, factor_sf, &points)?;
        for (&(layout, mode, algorithm), run) in points.iter().zip(&measured) {
            let Some((c, parts, rows, _)) = *run else {
                result.interrupted = true;
                result.curves.push(sizes);
                options.control.finish();
                return Ok(result);
            };
            sizes.push(row(factor_sf, layout, mode, algorithm, &c, parts, rows));
        }
    }
    result.curves.push(sizes);

    // PCM as storage, row store: the DRAM buffer against LINEORDER's size
    let mut buffers = Curve::new("buffer", &[&["buffer_share"][..], &COLUMNS[..]].concat());
    let lineorder_bytes = nandlab_join::store::row_counts(&data)[0] as f64 * 68.0;
    let mut points = Vec::new();
    for share in BUFFER_SHARES {
        let mode = Mode::Storage {
            buffer_bytes: ((lineorder_bytes * share) as u64).max(nandlab_join::PAGE_BYTES),
        };
        for algorithm in ALGORITHMS {
            points.push((Layout::Row, mode, algorithm));
        }
    }
    let measured = measure(options, sf, &points)?;
    for ((share, group), runs) in BUFFER_SHARES
        .iter()
        .zip(points.chunks(ALGORITHMS.len()))
        .zip(measured.chunks(ALGORITHMS.len()))
    {
        let mut energy = Vec::new();
        for (&(layout, mode, algorithm), run) in group.iter().zip(runs) {
            let Some((c, parts, rows, _)) = *run else {
                result.interrupted = true;
                result.curves.push(buffers);
                options.control.finish();
                return Ok(result);
            };
            let mut cells = vec![(*share).into()];
            cells.extend(row(sf, layout, mode, algorithm, &c, parts, rows));
            buffers.push(cells);
            energy.push(c.energy_pj);
        }
        result.metric(
            &format!("storage_row_energy_reduction_buffer{:.0}pct", share * 100.0),
            1.0 - energy[1] / energy[0].max(1e-9),
        );
    }
    result.curves.push(buffers);
    options.control.finish();
    Ok(result)
}

/// 1 − virtual / Grace (0 when Grace is 0).
fn less(grace: f64, virt: f64) -> f64 {
    if grace > 0.0 { 1.0 - virt / grace } else { 0.0 }
}

/// `{key}_wear_reduction`, `…_energy_reduction`, `…_latency_reduction`: 1 − virtual / Grace of
/// the device model's cells programmed, energy and latency.
pub(super) fn reduction_metrics(
    result: &mut ExperimentResult,
    key: &str,
    grace: &PcmCost,
    virt: &PcmCost,
) {
    let wear = less(grace.bits_programmed as f64, virt.bits_programmed as f64);
    result.metric(&format!("{key}_wear_reduction"), wear);
    let energy = less(grace.energy_pj, virt.energy_pj);
    result.metric(&format!("{key}_energy_reduction"), energy);
    let latency = less(grace.latency_ns, virt.latency_ns);
    result.metric(&format!("{key}_latency_reduction"), latency);
}

/// DRAM buffer sizes of the buffer sweep, as shares of LINEORDER's row-store bytes.
const BUFFER_SHARES: [f64; 3] = [0.25, 1.0, 2.0];

#[cfg(test)]
mod tests {
    use super::*;

    /// R-P3's shape at the quick scale: with PCM as main memory and the row store (the thesis's
    /// §5.2.3 setting), virtual partitioning wears, spends and waits less than Grace; in every
    /// layout and mode it wears less; and the row store gains more than the column store.
    /// Fig. 5.9's orderings: Grace wears the row store more than the column store, and the two
    /// virtual joins wear about the same.
    #[test]
    fn quick_run_has_the_shape_of_r_p3() {
        let options = RunOptions {
            scale: Scale::Quick,
            seed: 1,
            ..RunOptions::default()
        };
        let r = hash_join(&options).unwrap();
        for what in ["wear", "energy", "latency"] {
            let less = r.get(&format!("mainmemory_row_{what}_reduction"));
            assert!(less > 0.15, "main memory, row store: {what} −{less}");
        }
        for layout in ["row", "column"] {
            for mode in ["mainmemory", "storage"] {
                let wear = r.get(&format!("{mode}_{layout}_wear_reduction"));
                assert!(wear > 0.25, "{mode} {layout}: wear −{wear}");
            }
        }
        let bits = |row: usize| match r.curves[0].rows[row][8] {
            super::super::CurveValue::Number(n) => n,
            _ => f64::NAN,
        };
        // rows 0..8: (row, column) × (storage, main memory) × (grace, virtual)
        assert!(
            bits(0) > 3.0 * bits(4),
            "grace: row store should wear more than column store"
        );
        assert!(
            (bits(1) - bits(5)).abs() <= 0.1 * bits(1),
            "virtual: same wear in both layouts"
        );
        assert!(r.get("mainmemory_row_wear_reduction") > r.get("mainmemory_column_wear_reduction"));
        assert_eq!(r.curves[0].rows.len(), 8);
        assert_eq!(r.curves[1].rows.len(), 8);
        // a buffer holding LINEORDER makes virtual partitioning's random reads cheap
        assert!(
            r.get("storage_row_energy_reduction_buffer200pct")
                > r.get("storage_row_energy_reduction_buffer25pct")
        );
    }
}
