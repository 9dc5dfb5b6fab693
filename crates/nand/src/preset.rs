//! Named device presets (SPEC N12). Each is a TOML file under `presets/nand/` of the repository,
//! embedded in the binary, with a `source` naming where every number comes from.

use crate::config::NandConfig;
use crate::error::{NandError, NandResult};

const PRESETS: &[(&str, &str)] = &[
    ("slc", include_str!("../../../presets/nand/slc.toml")),
    ("mlc1", include_str!("../../../presets/nand/mlc1.toml")),
    ("mlc2", include_str!("../../../presets/nand/mlc2.toml")),
    (
        "mlc2-ber",
        include_str!("../../../presets/nand/mlc2-ber.toml"),
    ),
    (
        "qdp-slc",
        include_str!("../../../presets/nand/qdp-slc.toml"),
    ),
    (
        "tlc-b17a",
        include_str!("../../../presets/nand/tlc-b17a.toml"),
    ),
    (
        "qlc-n18a",
        include_str!("../../../presets/nand/qlc-n18a.toml"),
    ),
    (
        "miyaji2014",
        include_str!("../../../presets/nand/miyaji2014.toml"),
    ),
    (
        "sim2024",
        include_str!("../../../presets/nand/sim2024.toml"),
    ),
];

/// Names of every built-in preset.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(name, _)| *name).collect()
}

/// The TOML text of a preset.
pub fn preset_toml(name: &str) -> NandResult<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .ok_or_else(|| NandError::UnknownPreset {
            name: name.to_string(),
            known: preset_names().join(", "),
        })
}

/// A validated preset.
pub fn preset(name: &str) -> NandResult<NandConfig> {
    let text = preset_toml(name)?;
    parse_config(name, text)
}

/// Parses and validates a chip config from TOML text (`origin` names it in errors).
pub fn parse_config(origin: &str, text: &str) -> NandResult<NandConfig> {
    let config: NandConfig = toml::from_str(text).map_err(|e| NandError::PresetParse {
        name: origin.to_string(),
        message: nandlab_core::message::with_line(e.message(), text, e.span().map(|s| s.start)),
    })?;
    config.validate()?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_validates_and_names_a_source() {
        for name in preset_names() {
            let c = preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c.name, name);
            assert!(!c.source.is_empty(), "{name} has no source");
        }
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let err = preset("mlc9").unwrap_err().to_string();
        assert!(err.contains("mlc9") && err.contains("mlc1"), "{err}");
    }

    #[test]
    fn unknown_key_is_named() {
        let text = preset_toml("slc")
            .unwrap()
            .replace("erase_us", "erase_usec");
        let err = parse_config("x", &text).unwrap_err().to_string();
        assert!(err.contains("erase_usec"), "{err}");
    }

    #[test]
    fn table_i_values() {
        let mlc1 = preset("mlc1").unwrap();
        assert_eq!(mlc1.geometry.page_size_bytes, 2048);
        assert_eq!(mlc1.geometry.pages_per_block, 128);
        assert_eq!(mlc1.timing.erase_us, 2500.0);
        let slc = preset("slc").unwrap();
        assert_eq!(slc.timing.program_us.for_type(0), 250.0);
    }
}
