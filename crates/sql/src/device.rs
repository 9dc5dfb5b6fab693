//! The simulated SSD a database lives on: an SSD preset, a device file (`[nand]` and `[ssd]`),
//! a whole stack config (its `[nand]`, `[ssd]` and `[run] seed`; the `[workload]` is not run)
//! or device TOML text, always in full payload mode.

use crate::error::{SqlError, SqlResult};
use nandlab_ftl::{PayloadMode, Ssd, SsdConfig};
use nandlab_lab::stack::{DeviceFile, Stack, ssd_preset_names};
use std::path::Path;

/// The device used when none is named.
pub const DEFAULT_DEVICE: &str = "bench-ssd";

/// The SSD config `device` names and the seed it carries (a stack config's `[run] seed`).
///
/// `device` is an SSD preset name (empty: [`DEFAULT_DEVICE`]), a path to a device file or a
/// stack config, or device TOML text (it holds a newline or a `[`). The payload mode is set to
/// `full` whatever the file says: SQLite reads back what it wrote.
pub fn ssd_config(device: &str) -> SqlResult<(SsdConfig, Option<u64>)> {
    let device = device.trim();
    let (mut config, seed) = if device.is_empty() {
        (DeviceFile::preset(DEFAULT_DEVICE)?, None)
    } else if ssd_preset_names().contains(&device) {
        (DeviceFile::preset(device)?, None)
    } else if device.contains('\n') || device.starts_with('[') {
        (DeviceFile::load("device", device, Path::new("."))?, None)
    } else {
        from_file(device)?
    };
    config.ftl.payload = PayloadMode::Full;
    Ok((config, seed))
}

/// A new SSD of `device` (see [`ssd_config`]); `seed` when given, else the config's, else 0.
pub fn build_ssd(device: &str, seed: Option<u64>) -> SqlResult<(Ssd, u64)> {
    let (config, config_seed) = ssd_config(device)?;
    let seed = seed.or(config_seed).unwrap_or(0);
    Ok((Ssd::new(config, seed)?, seed))
}

fn from_file(path: &str) -> SqlResult<(SsdConfig, Option<u64>)> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        SqlError::Usage(format!(
            "device `{path}`: {e} (a device is an SSD preset: {}, a device file or a stack config)",
            ssd_preset_names().join(", ")
        ))
    })?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| SqlError::Usage(format!("device `{path}`: {}", e.message())))?;
    if table.contains_key("workload") {
        let stack = Stack::load(Path::new(path))?;
        return Ok((stack.ssd_config(), Some(stack.config.run.seed)));
    }
    let dir = Path::new(path).parent().unwrap_or(Path::new("."));
    Ok((DeviceFile::load(path, &text, dir)?, None))
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
    fn a_missing_file_is_named() {
        let e = ssd_config("no-such-device.toml").unwrap_err().to_string();
        assert!(e.contains("no-such-device.toml"), "{e}");
        assert!(e.contains("bench-ssd"), "{e}");
    }
}
