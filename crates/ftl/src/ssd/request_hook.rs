//! The hook a driver above the SSD (the engine's block device, the SQLite disk) exposes on its
//! host requests: a test harness installs one to take the requests over (`nandlab-power`'s
//! `ArmedCut` cuts the power inside one); the product path has none, and a
//! request goes straight to [`Ssd::execute`]. The drivers carry no cut logic of their own.

use super::{Executed, Ssd};
use crate::error::FtlResult;
use crate::host::HostRequest;

/// What a request run through a [`RequestHook`] did.
#[derive(Debug)]
pub enum CutOutcome {
    /// It ran to completion.
    Executed(Executed),
    /// The power is off: the hook cut it inside this request, or before it.
    PowerLost,
}

/// A hook on the host requests of a driver above the SSD.
pub trait RequestHook: std::any::Any + std::fmt::Debug + Send {
    /// Runs `request` (`data`: a write's bytes) on `ssd`, or refuses it
    /// ([`CutOutcome::PowerLost`]). `step_after`: one more world event after a request that
    /// ran to completion (the SQLite disk's crash cases were measured with it).
    fn execute(
        &mut self,
        ssd: &mut Ssd,
        request: &HostRequest,
        data: Option<&[u8]>,
        step_after: bool,
    ) -> FtlResult<CutOutcome>;
}

/// `hook` as a `T`, when it is one (for the harness that installed it).
pub fn hook_as<T: RequestHook>(hook: &mut dyn RequestHook) -> Option<&mut T> {
    let any: &mut dyn std::any::Any = hook;
    any.downcast_mut::<T>()
}
