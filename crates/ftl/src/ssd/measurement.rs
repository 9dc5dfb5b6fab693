//! The measurement: the host-visible counters of the run being measured, the counters of the
//! parts that keep their own taken when it started, and the co-design hint (SPEC F7) with the
//! host requests since it was refreshed.

use crate::address::Lpa;
use crate::controller::Totals as ControllerTotals;
use crate::stats::timeseries::TimeSeries;
use crate::stats::{ChipOpModes, Measure};

#[derive(Debug, Default)]
pub(super) struct Measurement {
    pub measure: Measure,
    /// The measurement per interval of simulated time.
    pub series: TimeSeries,
    /// The counters at the start of the measurement ([`super::Ssd::reset_measurement`]).
    pub start: MeasureStart,
    /// The LPAs of the valid pages of the block GC erases next, as of the last refresh.
    pub hint: Vec<Lpa>,
    host_ops_since_hint: u32,
    /// Host requests between refreshes of the hint (`ftl.hint_refresh_ops`; 0: never).
    hint_refresh_ops: u32,
}

/// What the report subtracts: the counters of the parts that keep their own, taken when the
/// measurement starts.
#[derive(Debug, Default)]
pub(super) struct MeasureStart {
    /// The chip ops per register mode.
    pub chip_ops: ChipOpModes,
    /// The controller's resource totals (controller costs on).
    pub controller: ControllerTotals,
    /// Per placement id host and GC page counters.
    pub placement: (Vec<u64>, Vec<u64>),
}

impl Measurement {
    pub fn new(hint_refresh_ops: u32) -> Self {
        Measurement {
            hint_refresh_ops,
            ..Measurement::default()
        }
    }

    /// A host request was admitted; whether the hint is due for a refresh.
    #[inline]
    pub fn host_op(&mut self) -> bool {
        self.measure.submitted += 1;
        self.host_ops_since_hint += 1;
        self.hint_refresh_ops > 0 && self.host_ops_since_hint >= self.hint_refresh_ops
    }

    /// The hint was refreshed: its buffer, to fill.
    pub fn refreshing_hint(&mut self) -> &mut Vec<Lpa> {
        self.host_ops_since_hint = 0;
        &mut self.hint
    }
}
