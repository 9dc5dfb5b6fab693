//! The simulated SSD a database lives on, as this crate sees it: a [`SsdSource`] makes new SSDs
//! (a crash run starts every cut from a new one). Naming a device (an SSD preset, a device file,
//! a stack config, device TOML text) is the stack builder's job: `nandlab_lab::sql::DeviceSpec`
//! implements the trait, so this crate names no config format.

use crate::error::SqlResult;
use nandlab_ftl::Ssd;

/// Makes the SSDs a database lives on, in full payload mode.
pub trait SsdSource: std::fmt::Debug {
    /// A new SSD, its precondition (if any) applied; seeded with `seed` when given, else the
    /// device's own seed, else 0. Returns the SSD and the seed used.
    fn new_ssd(&self, seed: Option<u64>) -> SqlResult<(Ssd, u64)>;

    /// Whether a PCM stage sits in front of the SSD (atomic-write crash runs refuse one).
    fn has_pcm_stage(&self) -> bool;
}

/// A plain SSD config (no PCM stage, no precondition) is a device.
impl SsdSource for nandlab_ftl::SsdConfig {
    fn new_ssd(&self, seed: Option<u64>) -> SqlResult<(Ssd, u64)> {
        let seed = seed.unwrap_or(0);
        Ok((Ssd::new(self.clone(), seed)?, seed))
    }

    fn has_pcm_stage(&self) -> bool {
        false
    }
}

/// Devices named as the front ends name them, resolved through the stack builder (tests only).
#[cfg(test)]
pub(crate) mod named {
    use super::SsdSource;
    use crate::db::{SqlDb, SqlOptions};
    use crate::error::{SqlError, SqlResult};
    use nandlab_ftl::{Ssd, SsdConfig};

    /// A device named by preset, file or TOML text.
    #[derive(Debug)]
    pub(crate) struct Named(pub String);

    fn lab(e: nandlab_lab::LabError) -> SqlError {
        SqlError::Usage(e.to_string())
    }

    impl SsdSource for Named {
        fn new_ssd(&self, seed: Option<u64>) -> SqlResult<(Ssd, u64)> {
            build_ssd(&self.0, seed)
        }

        fn has_pcm_stage(&self) -> bool {
            nandlab_lab::sql::device_spec(&self.0).is_ok_and(|s| s.pcm.is_some())
        }
    }

    pub(crate) fn build_ssd(device: &str, seed: Option<u64>) -> SqlResult<(Ssd, u64)> {
        nandlab_lab::sql::build_ssd(device, seed).map_err(lab)
    }

    pub(crate) fn ssd_config(device: &str) -> SqlResult<(SsdConfig, Option<u64>)> {
        nandlab_lab::sql::ssd_config(device).map_err(lab)
    }

    pub(crate) fn open(device: &str, seed: Option<u64>, options: SqlOptions) -> SqlResult<SqlDb> {
        SqlDb::open_device(&Named(device.into()), seed, options)
    }
}
