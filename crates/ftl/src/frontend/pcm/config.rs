//! The typed config of the PCM front-end stage: the device, and which of the two PCM
//! components it runs (SPEC P2 dedup, P3/P4 log buffer). The stack config's `[pcm]` section is
//! turned into this by `crates/lab`.

use crate::error::FtlError;
use nandlab_pcm::{DedupConfig, DpramConfig, IplConfig, LogRegionConfig, PcmConfig, PcmError};
use serde::{Deserialize, Serialize};

/// Which log buffer the stage runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LogBufferConfig {
    /// The thesis's PCM log region (P-blocks mirroring flash blocks).
    Region(LogRegionConfig),
    /// dPRAM (Sun et al., HPCA'10): log sectors assigned dynamically.
    Dpram(DpramConfig),
    /// In-Page Logging (Lee & Moon, SIGMOD'07): log sectors in each erase unit (no PCM).
    Ipl(IplConfig),
}

impl LogBufferConfig {
    /// The kind's name as written in a config.
    pub fn kind(&self) -> &'static str {
        match self {
            LogBufferConfig::Region(_) => "region",
            LogBufferConfig::Dpram(_) => "dpram",
            LogBufferConfig::Ipl(_) => "ipl",
        }
    }
    /// PCM bytes the buffer occupies (IPL: none).
    pub fn pcm_bytes(&self) -> u64 {
        match self {
            LogBufferConfig::Region(c) => c.region_size_bytes,
            LogBufferConfig::Dpram(c) => {
                c.region_size_bytes / c.sector_size_bytes.max(1) * c.sector_size_bytes
            }
            LogBufferConfig::Ipl(_) => 0,
        }
    }
}

/// The PCM stage: a device and at least one component on it. The dedup store occupies PCM
/// from address 0, the log region follows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PcmStageConfig {
    /// The PCM device (a preset with overrides).
    pub device: PcmConfig,
    /// The redundant write finder, when dedup is on.
    pub dedup: Option<DedupConfig>,
    /// The log buffer, when on.
    pub log: Option<LogBufferConfig>,
}

/// A PCM component's error as an FTL config error whose key is under `pcm.` (`dedup.segments`
/// becomes `pcm.dedup.segments`, `log.…`/`dpram.…`/`ipl.…` become `pcm.log.…`, device keys
/// `pcm.device.…`).
pub fn pcm_error(e: PcmError) -> FtlError {
    match e {
        PcmError::Config { key, message } => {
            let (head, rest) = key.split_once('.').unwrap_or((key.as_str(), ""));
            let key = match head {
                "dedup" => format!("pcm.dedup.{rest}"),
                "log" | "dpram" | "ipl" => format!("pcm.log.{rest}"),
                _ => format!("pcm.device.{key}"),
            };
            FtlError::Config { key, message }
        }
        other => FtlError::Config {
            key: "pcm".into(),
            message: other.to_string(),
        },
    }
}

impl PcmStageConfig {
    /// Checks the config against the flash it buffers, without building anything large:
    /// every component valid, and all of them fitting the device. Errors name the `pcm.` key.
    pub fn validate(&self, shape: &nandlab_pcm::FlashShape) -> Result<(), FtlError> {
        if self.dedup.is_none() && self.log.is_none() {
            return Err(FtlError::Config {
                key: "pcm".into(),
                message: "turn on dedup or a log buffer (or remove [pcm])".into(),
            });
        }
        self.device.validate().map_err(pcm_error)?;
        let capacity = self.device.geometry.capacity_bytes;
        let mut used = 0;
        if let Some(d) = &self.dedup {
            d.validate().map_err(pcm_error)?;
            used += d.pcm_bytes();
            if used > capacity {
                return Err(FtlError::Config {
                    key: "pcm.dedup.store_size_bytes".into(),
                    message: format!(
                        "the fingerprint store needs {used} B of PCM but the device has {capacity} B"
                    ),
                });
            }
        }
        if let Some(l) = &self.log {
            match l {
                LogBufferConfig::Region(c) => c.validate(shape),
                LogBufferConfig::Dpram(c) => c.validate(shape),
                LogBufferConfig::Ipl(c) => nandlab_pcm::InPageLog::new(c.clone(), *shape).map(drop),
            }
            .map_err(pcm_error)?;
            if used + l.pcm_bytes() > capacity {
                return Err(FtlError::Config {
                    key: "pcm.log.region_size_bytes".into(),
                    message: format!(
                        "the log region needs {} B of PCM after the {used} B of the fingerprint store, but the device has {capacity} B",
                        l.pcm_bytes()
                    ),
                });
            }
        }
        Ok(())
    }
}
