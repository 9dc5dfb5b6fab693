//! `pcm-join-users` (SPEC P6, R-P3; thesis 001 §5.2.2, Fig. 5.10): Grace vs virtual-partitioning
//! hash joins with `U` users running the three thesis queries between inserts, updates and
//! deletes of LINEORDER rows, under the thesis's locking rule (updates wait for readers), for the
//! row and the column store, with PCM as storage (the thesis's setting: a DRAM buffer of 256 MB
//! at SF 1, shared by the queries running at once) and as main memory. Costs are the PCM device
//! model's (`cidr11` preset); as in Fig. 5.10 they are also given relative to Grace on the row
//! store at the largest `U` (= 1), per role of PCM.

use super::paper::Paper;
use super::pcm_join::{
    ALGORITHMS, LAYOUTS, PARTITIONS, join_memory, reduction_metrics, ssb_data, storage,
};
use super::{Curve, CurveValue, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;
use nandlab_join::{
    Algorithm, Database, JoinSettings, Layout, Mode, UsersConfig, UsersRun, extra_facts_for,
    run_users,
};
use nandlab_workload::ssb::SsbData;
use serde::{Deserialize, Serialize};

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "pcm-join-users",
    reference: "R-P3, paper 001 Fig. 5.10",
    title: "PCM wear, energy and latency of Grace vs virtual-partitioning hash joins with 20-200 users, inserts, updates and deletes",
    run: users,
    paper: Paper::None(
        "thesis Fig. 5.10 is read as a shape: virtual partitioning beats Grace irrespective of the number of users; no number taken",
    ),
}];

/// Share of transactions that are queries, percent (the rest: inserts, updates, deletes). The
/// thesis gives no mix; its users run "multiple queries of insert, update and delete operation
/// besides the three queries".
const QUERY_PERCENT: u32 = 50;

/// (scale factor, users, transactions per user).
fn scales(scale: Scale) -> (f64, &'static [u32], u32) {
    match scale {
        Scale::Quick => (0.001, &[20, 100, 200], 2),
        Scale::Standard => (0.01, &[20, 50, 100, 150, 200], 4),
        Scale::Full => (0.1, &[20, 50, 100, 150, 200], 4),
    }
}

const COLUMNS: [&str; 24] = [
    "users",
    "layout",
    "mode",
    "algorithm",
    "queries",
    "inserts",
    "updates",
    "deletes",
    "result_rows",
    "bits_programmed",
    "energy_uj",
    "latency_ms",
    "relative_wear",
    "relative_energy",
    "relative_latency",
    "maintenance_bits_programmed",
    "maintenance_energy_uj",
    "maintenance_latency_ms",
    "makespan_ms",
    "query_wait_ms",
    "update_wait_ms",
    "readers_max",
    "buffer_share_min_bytes",
    "verified_queries",
];

fn run_point(
    data: &SsbData,
    layout: Layout,
    algorithm: Algorithm,
    mode: Mode,
    users: u32,
    transactions: u32,
    seed: u64,
) -> LabResult<UsersRun> {
    let pcm = join_memory()?;
    let config = UsersConfig {
        users,
        transactions_per_user: transactions,
        query_percent: QUERY_PERCENT,
        seed,
        verify: true,
    };
    let mut db = Database::build_with_room(data, layout, &pcm, seed, extra_facts_for(&config))?;
    let settings = JoinSettings {
        algorithm,
        mode,
        partitions: PARTITIONS,
    };
    Ok(run_users(&mut db, data, &settings, &config)?)
}

/// One point of `pcm-join-users`: U users on SSB data of scale factor `sf`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct UsersPoint {
    sf: f64,
    mode: Mode,
    users: u32,
    layout: Layout,
    algorithm: Algorithm,
    transactions: u32,
    seed: u64,
}

/// The registered measure of `pcm-join-users` ([`run_point`] of a [`UsersPoint`]), so that its
/// points run on worker processes and Dask like the others.
#[derive(Debug)]
pub(super) struct Users;

impl super::measure::Measure for Users {
    const NAME: &'static str = "pcm-join-users";
    type Point = UsersPoint;
    type Output = UsersRun;
    fn measure(p: &UsersPoint, _: &crate::control::Control) -> LabResult<Option<UsersRun>> {
        let data = ssb_data(p.sf, p.seed)?;
        let run = run_point(
            &data,
            p.layout,
            p.algorithm,
            p.mode,
            p.users,
            p.transactions,
            p.seed,
        )?;
        Ok(Some(run))
    }
}

fn users(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (sf, counts, transactions) = scales(options.scale);
    // partitions, layouts, algorithms and the storage buffer (256 MB × SF) as pcm-hashjoin
    let modes = [storage(sf), Mode::MainMemory];
    let points = counts.len() * modes.len() * LAYOUTS.len() * ALGORITHMS.len();
    let mut result = ExperimentResult::default();
    // (mode, users, layout, algorithm) → run, in that nesting order; the points run several
    // at once on the machine's cores (super::parallel), their runs kept in that order
    let mut combos = Vec::with_capacity(points);
    for mode in modes {
        for &users in counts {
            for layout in LAYOUTS {
                for algorithm in ALGORITHMS {
                    combos.push((mode, users, layout, algorithm));
                }
            }
        }
    }
    let points: Vec<UsersPoint> = combos
        .iter()
        .map(|&(mode, users, layout, algorithm)| UsersPoint {
            sf,
            mode,
            users,
            layout,
            algorithm,
            transactions,
            seed: options.seed,
        })
        .collect();
    let measured = super::measure::run_measure::<Users>(options, &points)?;
    // the runs finished in order (a cancel keeps the ones before the first point it stopped)
    let runs: Vec<(Mode, u32, Layout, Algorithm, UsersRun)> = combos
        .iter()
        .zip(&measured)
        .map_while(|(&(mode, users, layout, algorithm), run)| {
            run.map(|run| (mode, users, layout, algorithm, run))
        })
        .collect();
    if runs.len() < combos.len() {
        result.interrupted = true;
        result.curves.push(curve(&runs));
        return Ok(result);
    }
    let find = |mode: &str, users: u32, layout: Layout, algorithm: Algorithm| {
        runs.iter()
            .find(|r| r.0.label() == mode && r.1 == users && r.2 == layout && r.3 == algorithm)
            .map(|r| r.4)
    };
    let (first, last) = (counts[0], counts[counts.len() - 1]);
    for mode in ["storage", "main-memory"] {
        let key = mode.replace('-', "");
        for layout in LAYOUTS {
            for &users in [first, last].iter() {
                let (Some(g), Some(v)) = (
                    find(mode, users, layout, Algorithm::Grace),
                    find(mode, users, layout, Algorithm::Virtual),
                ) else {
                    continue;
                };
                let k = format!("{key}_{}_u{users}", layout.label());
                reduction_metrics(&mut result, &k, &g.query_cost, &v.query_cost);
            }
            if let (Some(a), Some(b)) = (
                find(mode, first, layout, Algorithm::Grace),
                find(mode, last, layout, Algorithm::Grace),
            ) {
                result.metric(
                    &format!("{key}_{}_grace_wear_growth", layout.label()),
                    b.query_cost.bits_programmed as f64
                        / (a.query_cost.bits_programmed as f64).max(1.0),
                );
            }
        }
        // maintenance: cells an insert/update/delete programs, column store over row store
        if let (Some(r), Some(c)) = (
            find(mode, last, Layout::Row, Algorithm::Grace),
            find(mode, last, Layout::Column, Algorithm::Grace),
        ) {
            let per = |u: &UsersRun| {
                u.maintenance_cost.bits_programmed as f64
                    / ((u.inserts + u.updates + u.deletes) as f64).max(1.0)
            };
            result.metric(
                &format!("{key}_maintenance_column_over_row"),
                per(&c) / per(&r).max(1e-9),
            );
        }
    }
    result.metric("scale_factor", sf);
    result.metric("transactions_per_user", f64::from(transactions));
    result.metric("query_percent", f64::from(QUERY_PERCENT));
    result.curves.push(curve(&runs));
    Ok(result)
}

/// The `users` curve; relative figures against Grace on the row store at the largest `U` of the
/// same role of PCM (Fig. 5.10's normalisation).
fn curve(runs: &[(Mode, u32, Layout, Algorithm, UsersRun)]) -> Curve {
    let mut c = Curve::new("users", &COLUMNS);
    for (mode, users, layout, algorithm, r) in runs {
        let base = runs
            .iter()
            .filter(|b| b.0 == *mode && b.2 == Layout::Row && b.3 == Algorithm::Grace)
            .max_by_key(|b| b.1)
            .map(|b| b.4.query_cost)
            .unwrap_or_default();
        let ratio = |x: f64, b: f64| if b > 0.0 { x / b } else { f64::NAN };
        let q = r.query_cost;
        let m = r.maintenance_cost;
        let row: Vec<CurveValue> = vec![
            f64::from(*users).into(),
            layout.label().into(),
            mode.label().into(),
            algorithm.label().into(),
            (r.queries as f64).into(),
            (r.inserts as f64).into(),
            (r.updates as f64).into(),
            (r.deletes as f64).into(),
            (r.result_rows as f64).into(),
            (q.bits_programmed as f64).into(),
            (q.energy_pj / 1e6).into(),
            (q.latency_ns / 1e6).into(),
            ratio(q.bits_programmed as f64, base.bits_programmed as f64).into(),
            ratio(q.energy_pj, base.energy_pj).into(),
            ratio(q.latency_ns, base.latency_ns).into(),
            (m.bits_programmed as f64).into(),
            (m.energy_pj / 1e6).into(),
            (m.latency_ns / 1e6).into(),
            (r.makespan_ns / 1e6).into(),
            (r.query_wait_ns / 1e6).into(),
            (r.update_wait_ns / 1e6).into(),
            f64::from(r.readers_max).into(),
            (r.buffer_share_min_bytes as f64).into(),
            (r.verified_queries as f64).into(),
        ];
        c.push(row);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fig. 5.10's shape at the quick scale: virtual partitioning wears PCM less than Grace at
    /// every number of users, in both layouts and both roles of PCM; with PCM as main memory on
    /// the row store it also costs less energy and latency; the work grows with the users; the
    /// column store pays more cells per insert/update/delete than the row store; every query's
    /// rows were checked against the reference.
    #[test]
    fn quick_run_has_the_shape_of_fig_5_10() {
        let options = RunOptions {
            scale: Scale::Quick,
            seed: 1,
            ..RunOptions::default()
        };
        let r = users(&options).unwrap();
        let (_, counts, _) = scales(Scale::Quick);
        for mode in ["storage", "mainmemory"] {
            for layout in ["row", "column"] {
                for u in [counts[0], counts[counts.len() - 1]] {
                    let wear = r.get(&format!("{mode}_{layout}_u{u}_wear_reduction"));
                    assert!(wear > 0.25, "{mode} {layout} U{u}: wear −{wear}");
                }
                let growth = r.get(&format!("{mode}_{layout}_grace_wear_growth"));
                assert!(growth > 3.0, "{mode} {layout}: U20→U200 wear ×{growth}");
            }
            let m = r.get(&format!("{mode}_maintenance_column_over_row"));
            assert!(
                m > 1.0,
                "{mode}: column-store maintenance ×{m} the row store's"
            );
        }
        for u in [counts[0], counts[counts.len() - 1]] {
            for what in ["energy", "latency"] {
                let less = r.get(&format!("mainmemory_row_u{u}_{what}_reduction"));
                assert!(less > 0.1, "main memory, row store, U{u}: {what} −{less}");
            }
        }
        let c = &r.curves[0];
        assert_eq!(c.rows.len(), counts.len() * 8);
        let col = |name: &str| c.columns.iter().position(|x| x == name).unwrap();
        for row in &c.rows {
            assert_eq!(row[col("queries")], row[col("verified_queries")]);
        }
    }
}
