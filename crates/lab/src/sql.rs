//! SQLite on the simulated SSD, wired to the stack builder: the device a database lives on is an
//! SSD preset, a device file (`[nand]` and `[ssd]`), a whole stack config (its `[nand]`,
//! `[ssd]`, `[pcm]`, `[run] seed` and `[precondition]`; the `[workload]` is not run) or device
//! TOML text, always in full payload mode. `nandlab_sql` takes it as a [`SsdSource`]; its API is
//! re-exported here for the front ends.

pub use nandlab_power::sql as crash;
pub use nandlab_sql::*;

use crate::error::{LabError, LabResult};
use crate::stack::{DeviceFile, Stack, new_ssd_with_pcm, ssd_preset_names};
use nandlab_ftl::{PayloadMode, PcmStageConfig, Precondition, Ssd, SsdConfig};
use std::path::Path;

/// The device used when none is named.
pub const DEFAULT_DEVICE: &str = "bench-ssd";

/// A small MLC device for crash runs (bench-ssd's chip, 1 channel × 1 chip × 2 dies × 2
/// planes × 32 blocks × 64 pages of 8 KiB; paired-page padding on, as the power-loss contract
/// needs on MLC).
pub const CRASH_DEVICE: &str = "[ssd]\npreset = \"bench-ssd\"\n[ssd.mapping]\npaired_page_padding = true\n[nand.geometry]\nchannels = 1\nchips_per_channel = 1\nblocks_per_plane = 32\npages_per_block = 64\n";

/// What a device names: the SSD config, and from a stack config its seed, precondition and
/// PCM stage.
#[derive(Clone, Debug)]
pub struct DeviceSpec {
    pub config: SsdConfig,
    pub seed: Option<u64>,
    pub precondition: Option<Precondition>,
    /// The `[pcm]` stage in front of the SSD (dedup and/or PCM log buffer).
    pub pcm: Option<PcmStageConfig>,
}

impl DeviceSpec {
    /// A new SSD of this device; `seed` when given, else the config's, else 0. The `[pcm]`
    /// stage is put in front of it; its `[precondition]` is applied (functionally: no
    /// simulated time) and the SSD's measurement starts after it.
    pub fn build(&self, seed: Option<u64>) -> LabResult<(Ssd, u64)> {
        let seed = seed.or(self.seed).unwrap_or(0);
        let mut ssd = new_ssd_with_pcm(self.config.clone(), self.pcm.clone(), seed)?;
        if let Some(p) = &self.precondition {
            ssd.precondition(p)?;
            ssd.reset_measurement();
        }
        Ok((ssd, seed))
    }
}

impl SsdSource for DeviceSpec {
    fn new_ssd(&self, seed: Option<u64>) -> SqlResult<(Ssd, u64)> {
        self.build(seed).map_err(|e| SqlError::Usage(e.to_string()))
    }

    fn has_pcm_stage(&self) -> bool {
        self.pcm.is_some()
    }
}

/// The SSD config `device` names and the seed it carries (a stack config's `[run] seed`).
///
/// `device` is an SSD preset name (empty: [`DEFAULT_DEVICE`]), a path to a device file or a
/// stack config, or device TOML text (it holds a newline or a `[`). The payload mode is set to
/// `full` whatever the file says: SQLite reads back what it wrote.
pub fn ssd_config(device: &str) -> LabResult<(SsdConfig, Option<u64>)> {
    let spec = device_spec(device)?;
    Ok((spec.config, spec.seed))
}

/// Everything `device` names (see [`ssd_config`]).
pub fn device_spec(device: &str) -> LabResult<DeviceSpec> {
    let device = device.trim();
    let plain = |config| DeviceSpec {
        config,
        seed: None,
        precondition: None,
        pcm: None,
    };
    let mut spec = if device.is_empty() {
        plain(DeviceFile::preset(DEFAULT_DEVICE)?)
    } else if ssd_preset_names().contains(&device) {
        plain(DeviceFile::preset(device)?)
    } else if device.contains('\n') || device.starts_with('[') {
        let (config, pcm) = DeviceFile::load_with_pcm("device", device, Path::new("."), true)?;
        DeviceSpec {
            pcm,
            ..plain(config)
        }
    } else {
        from_file(device)?
    };
    spec.config.ftl.payload = PayloadMode::Full;
    Ok(spec)
}

/// A new SSD of `device` (see [`ssd_config`] and [`DeviceSpec::build`]).
pub fn build_ssd(device: &str, seed: Option<u64>) -> LabResult<(Ssd, u64)> {
    device_spec(device)?.build(seed)
}

/// [`SqlDb::open`] on a new SSD of `device` (see [`ssd_config`]).
pub fn open_device(device: &str, seed: Option<u64>, options: SqlOptions) -> LabResult<SqlDb> {
    let spec = device_spec(device)?;
    SqlDb::open_device(&spec, seed, options).map_err(|e| LabError::Usage(e.to_string()))
}

fn from_file(path: &str) -> LabResult<DeviceSpec> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        LabError::Usage(format!(
            "device `{path}`: {e} (a device is an SSD preset: {}, a device file or a stack config)",
            ssd_preset_names().join(", ")
        ))
    })?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| LabError::Usage(format!("device `{path}`: {}", e.message())))?;
    if table.is_empty() {
        return Err(LabError::Usage(format!(
            "device `{path}`: the file has no settings (a device file has [nand] and [ssd] \
             sections, as examples/device-mlc.toml; or name an SSD preset: {})",
            ssd_preset_names().join(", ")
        )));
    }
    if table.contains_key("workload") {
        let stack = Stack::load(Path::new(path))?;
        let pcm = stack.pcm_stage()?;
        return Ok(DeviceSpec {
            config: stack.ssd_config(),
            seed: Some(stack.config.run.seed),
            precondition: stack.config.precondition,
            pcm,
        });
    }
    let dir = Path::new(path).parent().unwrap_or(Path::new("."));
    let (config, pcm) = DeviceFile::load_with_pcm(path, &text, dir, true)?;
    Ok(DeviceSpec {
        config,
        seed: None,
        precondition: None,
        pcm,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_files_and_text_give_full_payload_devices() {
        let (c, seed) = ssd_config("").unwrap();
        assert_eq!(c.ftl.payload, PayloadMode::Full);
        assert_eq!(seed, None);
        let (c, _) =
            ssd_config("[ssd]\npreset = \"miyaji2014-ssd\"\npayload = \"timing-only\"\n").unwrap();
        assert_eq!(c.ftl.payload, PayloadMode::Full);
    }

    #[test]
    fn robust5_an_empty_device_file_says_so() {
        let path = std::env::temp_dir().join(format!("robust5-empty-{}.toml", std::process::id()));
        std::fs::write(&path, "# nothing\n\n").unwrap();
        let e = ssd_config(path.to_str().unwrap()).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(e.contains("has no settings") && e.contains("[nand]"), "{e}");
    }

    #[test]
    fn a_missing_file_is_named() {
        let e = ssd_config("no-such-device.toml").unwrap_err().to_string();
        assert!(e.contains("no-such-device.toml"), "{e}");
        assert!(e.contains("bench-ssd"), "{e}");
    }
}
