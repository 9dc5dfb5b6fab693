//! Crash tests of the paper-000 engine on the simulated SSD (issue 14, item 6): the
//! crash-consistent engine (`EngineConfig::crash_consistent`, docs/engine.md "Durability")
//! runs its queries on a traced SSD and flushes ([`Engine::flush`]) at random points; the
//! power is cut inside a device request (torn programs, damaged paired pages, interrupted
//! erases, the write buffer lost), the device is mounted from its OOB ([`Ssd::recover_cut`],
//! [`Ssd::load_recovered`]), the engine is reopened from the pages ([`Engine::open`]: every
//! slot must be zeros or an exact row image) and checked by the row oracle
//! ([`RowOracle`]: every row in its state at the last completed flush or a later one), then
//! every live row is read back through the device ([`Engine::verify_all`]); the reopened
//! engine continues with the next segment (cut–recover–continue).
//!
//! Case `i` of seed `s` is drawn from `(s, i)` alone: the device as the FTL crash harness
//! draws it ([`super::crash::draw_case`]: cell type, mapping, GC policy and scheduling, write
//! buffer and PLP, checkpoints, dies, planes, OP), the engine variant (conventional,
//! co-designed, U2DI only), the row size, the queries and the flush probability, 1–3 cycles.

use super::CrashDevice;
use super::crash::{Mutation, draw_case};
use crate::codesign::SsdDevice;
use nandlab_core::SimRng;
pub use nandlab_engine::durability::EngineMutation;
use nandlab_engine::durability::{RowOracle, RowViolations};
use nandlab_engine::{Engine, EngineConfig, EngineError, Query, QueryGenerator, QueryMix};
use nandlab_ftl::Ssd;
use nandlab_ftl::power::{CutConfig, RecoveryVariant};
use nandlab_power::ArmedCut;
use serde::Serialize;

/// The engine's placement switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineVariant {
    /// Paper 000 Fig. 8: first-fit insert, in-place update.
    Conventional,
    /// Figs. 9–11: IAA and U2DI.
    CoDesigned,
    /// U2DI without IAA (rows move to the lowest hole).
    U2diOnly,
}

impl EngineVariant {
    fn switches(self) -> (bool, bool) {
        match self {
            EngineVariant::Conventional => (false, false),
            EngineVariant::CoDesigned => (true, true),
            EngineVariant::U2diOnly => (false, true),
        }
    }
}

/// One engine crash case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineCrashCase {
    pub index: u64,
    pub device: CrashDevice,
    pub variant: EngineVariant,
    pub row_size_bytes: usize,
    /// Queries over all cycles (the fill included).
    pub queries: u32,
    /// Free space the table is filled down to before the mixed queries.
    pub fill_free_space: f64,
    /// Probability of a flush after each query.
    pub flush_probability: f64,
    pub cycles: u64,
    pub paired_damage_probability: f64,
    pub hold_up_energy_uj: Option<f64>,
    pub mutation: EngineMutation,
    pub seed: u64,
}

/// Case `index` of `seed`.
pub fn draw_engine_case(seed: u64, index: u64, mutation: EngineMutation) -> EngineCrashCase {
    let ftl = draw_case(seed, index, Mutation::None);
    let mut rng = SimRng::stream(
        seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        "power.engine",
    );
    let mut variant = [
        EngineVariant::Conventional,
        EngineVariant::CoDesigned,
        EngineVariant::CoDesigned,
        EngineVariant::U2diOnly,
    ][rng.below(4) as usize];
    let mut device = ftl.case.device;
    let mut hold_up = ftl.case.hold_up_energy_uj;
    match mutation {
        EngineMutation::ReuseMovedSlots => variant = EngineVariant::CoDesigned,
        EngineMutation::NoDeviceFlush => {
            let pages = device
                .get("ssd.buffer.pages")
                .and_then(toml::Value::as_integer)
                .unwrap_or(0);
            device.set("ssd.buffer.pages", pages.max(8));
            hold_up = None;
        }
        _ => {}
    }
    EngineCrashCase {
        index,
        device,
        variant,
        row_size_bytes: [40, 64, 100][rng.below(3) as usize],
        queries: 60 + rng.below(241) as u32,
        fill_free_space: 0.3 + 0.1 * rng.below(4) as f64,
        flush_probability: [0.02, 0.05, 0.1, 0.2][rng.below(4) as usize],
        cycles: 1 + rng.below(3),
        paired_damage_probability: ftl.case.paired_damage_probability,
        hold_up_energy_uj: hold_up,
        mutation,
        seed: rng.below(u64::MAX) | 1,
    }
}

/// What one case found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EngineCrashOutcome {
    /// Cut–recover–reopen cycles checked.
    pub cycles: u64,
    /// Engine queries and flushes completed (over the cycles).
    pub queries: u64,
    pub flushes: u64,
    /// Rows durable at the cuts (summed), i.e. checked to be exact.
    pub durable_rows_checked: u64,
    pub violations: RowViolations,
    /// Reopens that failed (a slot holding no row image) or read-backs that found a row
    /// differing from its reopened version: counted in `violations.unknown` too.
    pub garbage: u64,
    /// The first failing cycle (0-based).
    pub failing_cycle: Option<u64>,
    pub torn_programs: u64,
    pub damaged_lower_pages: u64,
    pub interrupted_erases: u64,
    pub volatile_pages_lost: u64,
}

fn engine_config(case: &EngineCrashCase) -> EngineConfig {
    let (iaa, u2di) = case.variant.switches();
    EngineConfig {
        row_size_bytes: case.row_size_bytes,
        crash_consistent: true,
        ..EngineConfig::conventional().with_switches(iaa, u2di)
    }
}

fn is_power_lost(e: &EngineError) -> bool {
    matches!(e, EngineError::Device { reason, .. } if reason == crate::codesign::POWER_LOST)
}

/// Runs one case.
pub fn run_engine_case(case: &EngineCrashCase) -> Result<EngineCrashOutcome, String> {
    let ssd_config = super::device_config(&case.device)?;
    let config = engine_config(case);
    let ctx = |e: String| format!("engine case {}: {e}", case.index);
    let mut ssd = Ssd::new(ssd_config.clone(), case.seed).map_err(|e| ctx(e.to_string()))?;
    ssd.start_power_trace().map_err(|e| ctx(e.to_string()))?;
    let mut engine =
        Engine::new(SsdDevice::new(ssd), config.clone()).map_err(|e| ctx(e.to_string()))?;
    engine.set_mutation(case.mutation);
    let mut oracle = RowOracle::of(&engine);
    let mix = QueryMix::new(0.35, 0.25, 0.4).map_err(|e| ctx(e.to_string()))?;
    let mut generator = QueryGenerator::new(mix, case.seed).map_err(|e| ctx(e.to_string()))?;
    let mut rng = SimRng::stream(case.seed, "power.engine.run");
    let mut out = EngineCrashOutcome::default();
    let mut queries_left = case.queries;
    for cycle in 0..case.cycles {
        let cut_config = CutConfig {
            paired_damage_probability: case.paired_damage_probability,
            hold_up_energy_uj: case.hold_up_energy_uj,
            seed: case.seed ^ cycle.wrapping_mul(0x9E37),
        };
        // the cut falls in this cycle's share of the queries (a query is about one to two
        // requests), or at the end of the queries
        let share = queries_left / (case.cycles - cycle) as u32;
        let at_request = 1 + rng.below(2 * u64::from(share) + 2);
        // a synchronous request takes a few events: mostly inside it (a program or erase in
        // flight), sometimes after it (then background work, buffer evictions or GC, is)
        let after_events = if rng.chance(0.75) {
            rng.below(6)
        } else {
            rng.below(64)
        };
        engine
            .device_mut()
            .set_request_hook(Box::new(ArmedCut::new(
                at_request,
                after_events,
                cut_config,
            )))
            .map_err(ctx)?;
        // run until the power is lost
        while queries_left > 0 {
            let query = if engine.free_space_fraction() > case.fill_free_space + 0.05 {
                Query::Insert
            } else if engine.free_space_fraction() < 0.15 {
                generator
                    .random_live_row(&engine)
                    .map_or(Query::Insert, Query::Delete)
            } else {
                generator.next_query(&engine)
            };
            oracle.query_issued(&engine, query);
            match engine.execute(query) {
                Ok(_) => {
                    oracle.query_completed();
                    out.queries += 1;
                    queries_left -= 1;
                }
                Err(e) if is_power_lost(&e) => break,
                Err(e) => return Err(ctx(format!("cycle {cycle}: query {query:?}: {e}"))),
            }
            if rng.chance(case.flush_probability) {
                match engine.flush() {
                    Ok(()) => {
                        oracle.flush_completed();
                        out.flushes += 1;
                    }
                    Err(e) if is_power_lost(&e) => break,
                    Err(e) => return Err(ctx(format!("cycle {cycle}: flush: {e}"))),
                }
            }
        }
        // (the queries ran out first: the cut falls at the end)
        let mut device = engine.into_device();
        let (armed, ssd) = device
            .request_hook::<ArmedCut>()
            .ok_or_else(|| ctx("power cut: none armed".into()))?;
        armed.cut_now(ssd).map_err(|e| ctx(e.to_string()))?;
        let cut = armed.take().ok_or_else(|| ctx("no cut".into()))?;
        out.cycles += 1;
        out.durable_rows_checked += oracle.durable_rows();
        out.torn_programs += cut.report.torn_programs;
        out.damaged_lower_pages += cut.report.damaged_lower_pages;
        out.interrupted_erases += cut.report.interrupted_erases;
        out.volatile_pages_lost += cut.report.volatile_pages_lost;
        // mount, reopen, check
        let mut ssd = Ssd::new(ssd_config.clone(), case.seed.wrapping_add(cycle + 1))
            .map_err(|e| ctx(e.to_string()))?;
        let recovered = ssd.recover_cut(&cut, RecoveryVariant::Correct);
        ssd.load_recovered(&cut, &recovered)
            .map_err(|e| ctx(format!("cycle {cycle}: mount: {e}")))?;
        ssd.start_power_trace().map_err(|e| ctx(e.to_string()))?;
        let mut reopened = match Engine::open(SsdDevice::new(ssd), config.clone()) {
            Ok(e) => e,
            Err(e) => {
                out.garbage += 1;
                out.violations.unknown += 1;
                out.violations
                    .examples
                    .push(format!("cycle {cycle}: reopen: {e}"));
                out.failing_cycle = Some(cycle);
                return Ok(out);
            }
        };
        reopened.set_mutation(case.mutation);
        let mut found = oracle.check(&reopened);
        if let Err(e) = reopened.verify_all() {
            out.garbage += 1;
            found.unknown += 1;
            found.examples.push(format!("read-back: {e}"));
        }
        if found.total() > 0 {
            for e in &mut found.examples {
                *e = format!("cycle {cycle}: {e}");
            }
            out.violations.add(&found);
            out.failing_cycle = Some(cycle);
            return Ok(out);
        }
        oracle = RowOracle::of(&reopened);
        engine = reopened;
    }
    Ok(out)
}

/// Totals of an engine harness run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EngineCrashSummary {
    pub seed: u64,
    pub mutation: Option<EngineMutation>,
    pub cases: u64,
    pub cycles: u64,
    pub failing_cases: u64,
    pub violations: RowViolations,
    pub garbage: u64,
    pub queries: u64,
    pub flushes: u64,
    pub durable_rows_checked: u64,
    pub torn_programs: u64,
    pub damaged_lower_pages: u64,
    pub interrupted_erases: u64,
    pub volatile_pages_lost: u64,
    /// Cases per engine variant: conventional, co-designed, U2DI only.
    pub cases_conventional: u64,
    pub cases_co_designed: u64,
    pub cases_u2di_only: u64,
    /// The first failing case (reproduce: `nandlab crash --engine --seed SEED --case INDEX`).
    pub first_failure: Option<Box<(EngineCrashCase, EngineCrashOutcome)>>,
}

/// Draws and runs engine cases of `seed` until `cuts` cycles have been checked.
pub fn engine_crash(
    seed: u64,
    cuts: u64,
    mutation: EngineMutation,
    mut progress: impl FnMut(u64) -> std::ops::ControlFlow<()>,
) -> Result<EngineCrashSummary, String> {
    let mut s = EngineCrashSummary {
        seed,
        mutation: (mutation != EngineMutation::None).then_some(mutation),
        ..EngineCrashSummary::default()
    };
    let mut index = 0;
    while s.cycles < cuts {
        let case = draw_engine_case(seed, index, mutation);
        index += 1;
        let o = run_engine_case(&case)?;
        s.cases += 1;
        s.cycles += o.cycles;
        s.garbage += o.garbage;
        s.queries += o.queries;
        s.flushes += o.flushes;
        s.durable_rows_checked += o.durable_rows_checked;
        s.torn_programs += o.torn_programs;
        s.damaged_lower_pages += o.damaged_lower_pages;
        s.interrupted_erases += o.interrupted_erases;
        s.volatile_pages_lost += o.volatile_pages_lost;
        match case.variant {
            EngineVariant::Conventional => s.cases_conventional += 1,
            EngineVariant::CoDesigned => s.cases_co_designed += 1,
            EngineVariant::U2diOnly => s.cases_u2di_only += 1,
        }
        if o.violations.total() > 0 {
            s.failing_cases += 1;
            s.violations.add(&o.violations);
            if s.first_failure.is_none() {
                s.first_failure = Some(Box::new((case, o)));
            }
        }
        if progress(s.cycles).is_break() {
            break;
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hundreds of cut–recover–reopen cycles of every engine variant on random devices: every
    /// row flushed before the cut is back with its exact bytes, the others are old or new.
    #[test]
    fn flushed_rows_survive_random_power_cuts() {
        let s = engine_crash(1, 1000, EngineMutation::None, |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(s.violations.total(), 0, "{:?}", s.first_failure);
        assert!(s.cases_conventional > 0 && s.cases_co_designed > 0 && s.cases_u2di_only > 0);
        assert!(s.torn_programs > 0 && s.flushes > 100 && s.durable_rows_checked > 1000);
        assert!(s.volatile_pages_lost > 0, "{s:?}");
    }

    /// The broken engines are caught on the SSD too.
    #[test]
    fn engine_mutations_are_caught_on_the_ssd() {
        for mutation in [
            EngineMutation::KeepDeletedRows,
            EngineMutation::NoDeviceFlush,
        ] {
            let s =
                engine_crash(1, 300, mutation, |_| std::ops::ControlFlow::Continue(())).unwrap();
            assert!(s.violations.total() > 0, "{mutation:?}: {s:?}");
            let (case, outcome) = *s.first_failure.unwrap();
            assert_eq!(run_engine_case(&case).unwrap(), outcome, "{mutation:?}");
        }
    }

    #[test]
    fn cases_are_deterministic() {
        let a = draw_engine_case(3, 5, EngineMutation::None);
        assert_eq!(a, draw_engine_case(3, 5, EngineMutation::None));
        assert_eq!(run_engine_case(&a).unwrap(), run_engine_case(&a).unwrap());
    }
}
