//! Host memory the PCM layer's tables take, checked against the process's budget
//! (`nandlab_core::memory`) before anything large is allocated, so an oversized argument is an
//! error naming it instead of an abort.

use crate::error::{PcmResult, config_error};
use nandlab_core::memory::{BUDGET_ENV, MemoryBudget};

/// Tables below this size are not checked.
const CHECK_THRESHOLD_BYTES: u64 = 256 << 20;

/// Errs (naming `key`) when `bytes` of host memory exceed the budget.
pub(crate) fn check_host_memory(key: &str, bytes: u64) -> PcmResult<()> {
    if bytes <= CHECK_THRESHOLD_BYTES {
        return Ok(());
    }
    let budget = MemoryBudget::from_environment().map_err(|m| config_error(BUDGET_ENV, m))?;
    if bytes > budget.bytes {
        return Err(config_error(
            key,
            format!(
                "needs about {bytes} B of host memory, over the budget of {} B ({BUDGET_ENV})",
                budget.bytes
            ),
        ));
    }
    Ok(())
}
