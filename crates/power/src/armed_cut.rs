//! A power cut armed on the host requests of a driver above the SSD (the engine's block
//! device, the SQLite disk), installed as the driver's [`RequestHook`]: requests are counted
//! from the moment it is armed, the armed one is admitted and stepped event by event, the
//! power is cut inside it, and every request after the cut is refused.
//!
//! The SSD's power trace must be on ([`Ssd::start_power_trace`]; the cut fails without it).

use nandlab_ftl::power::{CutConfig, PowerCut};
use nandlab_ftl::{CutOutcome, FtlResult, HostRequest, RequestHook, Ssd};

/// A power cut armed on a driver's requests.
#[derive(Debug)]
pub struct ArmedCut {
    at_request: u64,
    after_events: u64,
    config: CutConfig,
    /// Requests counted since arming (the armed one included once reached).
    requests: u64,
    /// The cut happened (stays set after [`ArmedCut::take`]).
    lost: bool,
    result: Option<PowerCut>,
}

impl ArmedCut {
    /// Cuts the `at_request`-th request from now (from 1; 0 is taken as 1) after
    /// `after_events` world events, or at its completion if it needs fewer.
    pub fn new(at_request: u64, after_events: u64, config: CutConfig) -> ArmedCut {
        ArmedCut {
            at_request: at_request.max(1),
            after_events,
            config,
            requests: 0,
            lost: false,
            result: None,
        }
    }

    /// Cuts the power now, between requests, unless it was cut already.
    pub fn cut_now(&mut self, ssd: &mut Ssd) -> FtlResult<()> {
        if !self.lost {
            self.lost = true;
            self.requests = self.requests.max(self.at_request);
            self.result = Some(ssd.power_cut(&self.config)?);
        }
        Ok(())
    }

    /// Whether the cut happened (its request was reached, or [`ArmedCut::cut_now`]).
    pub fn happened(&self) -> bool {
        self.lost
    }

    /// Requests counted since arming.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// The power cut, once it happened (taken once; the power stays off).
    pub fn take(&mut self) -> Option<PowerCut> {
        self.result.take()
    }
}

impl RequestHook for ArmedCut {
    /// Runs `request` (`data`: a write's bytes) on `ssd`. Before the armed request it runs to
    /// completion ([`Ssd::execute`]), followed by one more world event if `step_after` (the
    /// SQLite disk's crash cases were measured with that step); the armed request is admitted,
    /// stepped at most `after_events` events and cut; once cut, nothing reaches the SSD.
    fn execute(
        &mut self,
        ssd: &mut Ssd,
        request: &HostRequest,
        data: Option<&[u8]>,
        step_after: bool,
    ) -> FtlResult<CutOutcome> {
        if self.lost {
            return Ok(CutOutcome::PowerLost);
        }
        self.requests += 1;
        if self.requests < self.at_request {
            let executed = ssd.execute(request, data)?;
            if step_after {
                ssd.power_step()?;
            }
            return Ok(CutOutcome::Executed(executed));
        }
        self.lost = true;
        if ssd.power_admit(request, data)? {
            let mut stepped = 0;
            while ssd.requests_in_flight() > 0 && stepped < self.after_events {
                ssd.power_step()?;
                stepped += 1;
            }
        }
        self.result = Some(ssd.power_cut(&self.config)?);
        Ok(CutOutcome::PowerLost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CrashDevice, TEST_BUILD};

    const PAGE: u64 = 512;

    fn traced_ssd() -> Ssd {
        let c = CrashDevice::default().config(TEST_BUILD).unwrap();
        let mut s = Ssd::new(c, 9).unwrap();
        s.start_power_trace().unwrap();
        s
    }

    fn write(ssd: &mut Ssd, cut: &mut ArmedCut, lpa: u64) -> CutOutcome {
        let request = HostRequest::write(lpa * PAGE, PAGE);
        let bytes = vec![lpa as u8 + 1; PAGE as usize];
        cut.execute(ssd, &request, Some(&bytes), false).unwrap()
    }

    /// Requests before the armed one complete; the armed one is cut after its events; after
    /// the cut nothing reaches the SSD, and the cut is taken once.
    #[test]
    fn the_armed_request_is_cut_and_later_ones_never_reach_the_ssd() {
        let mut ssd = traced_ssd();
        let mut cut = ArmedCut::new(3, 0, CutConfig::default());
        for lpa in 0..2 {
            assert!(matches!(
                write(&mut ssd, &mut cut, lpa),
                CutOutcome::Executed(_)
            ));
            assert!(!cut.happened());
        }
        let time_before = ssd.now();
        assert!(matches!(
            write(&mut ssd, &mut cut, 2),
            CutOutcome::PowerLost
        ));
        assert!(cut.happened());
        // cut after 0 events: the armed write was admitted, its program started, none ended
        let report = cut.take().expect("the cut's result").report;
        assert_eq!(report.time_ps, time_before.as_ps());
        assert_eq!(report.torn_programs, 1, "{report:?}");
        assert!(cut.take().is_none(), "taken once");
        assert!(matches!(
            write(&mut ssd, &mut cut, 3),
            CutOutcome::PowerLost
        ));
        assert!(cut.happened(), "still off after take");
        assert_eq!(cut.requests(), 3, "a request after the cut is not counted");
        cut.cut_now(&mut ssd).unwrap();
        assert!(cut.take().is_none(), "cut_now after the cut does nothing");
    }

    /// `cut_now` cuts between requests; the count jumps to the armed request.
    #[test]
    fn cut_now_cuts_between_requests() {
        let mut ssd = traced_ssd();
        let mut cut = ArmedCut::new(10, 5, CutConfig::default());
        assert!(matches!(
            write(&mut ssd, &mut cut, 0),
            CutOutcome::Executed(_)
        ));
        cut.cut_now(&mut ssd).unwrap();
        assert!(cut.happened());
        assert_eq!(cut.requests(), 10);
        assert_eq!(cut.take().unwrap().report.torn_programs, 0);
        assert!(matches!(
            write(&mut ssd, &mut cut, 1),
            CutOutcome::PowerLost
        ));
    }
}
