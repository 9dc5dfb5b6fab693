//! Named PCM device presets. Each is a TOML file under `crates/pcm/presets/`, embedded in the
//! binary, with a `source` naming where every number comes from (and which are assumed).

use crate::config::PcmConfig;
use crate::error::{PcmError, PcmResult};

const PRESETS: &[(&str, &str)] = &[
    (
        "thesis-table2.2",
        include_str!("../presets/thesis-table2.2.toml"),
    ),
    (
        "thesis-table2.1",
        include_str!("../presets/thesis-table2.1.toml"),
    ),
    ("cidr11", include_str!("../presets/cidr11.toml")),
    (
        "samsung-isscc2012",
        include_str!("../presets/samsung-isscc2012.toml"),
    ),
];

/// Names of every built-in preset.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(name, _)| *name).collect()
}

/// The TOML text of a preset.
pub fn preset_toml(name: &str) -> PcmResult<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .ok_or_else(|| PcmError::UnknownPreset {
            name: name.to_string(),
            known: preset_names().join(", "),
        })
}

/// A validated preset.
pub fn preset(name: &str) -> PcmResult<PcmConfig> {
    parse_config(name, preset_toml(name)?)
}

/// Parses and validates a PCM config from TOML text (`origin` names it in errors).
pub fn parse_config(origin: &str, text: &str) -> PcmResult<PcmConfig> {
    let config: PcmConfig = toml::from_str(text).map_err(|e| PcmError::Parse {
        origin: origin.to_string(),
        message: nandlab_core::message::with_line(e.message(), text, e.span().map(|s| s.start)),
    })?;
    config.validate()?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_core::SimTime;

    #[test]
    fn every_preset_parses_validates_and_names_a_source() {
        for name in preset_names() {
            let c = preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c.name, name);
            assert!(c.source.len() > 40, "{name} has no real source");
        }
    }

    #[test]
    fn cidr11_cycles_resolve_at_the_stated_clock() {
        let t = preset("cidr11").unwrap().timing.resolve().unwrap();
        assert_eq!(t.read_line, SimTime::from_ns(115));
        assert_eq!(t.write_word, SimTime::from_ns(225));
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let e = preset("nope").unwrap_err().to_string();
        assert!(e.contains("cidr11") && e.contains("nope"), "{e}");
    }

    fn with(edit: impl Fn(&str) -> String) -> PcmResult<PcmConfig> {
        parse_config("test", &edit(preset_toml("cidr11").unwrap()))
    }

    #[test]
    fn bad_values_name_their_key() {
        let cases: &[(&str, &str, &str)] = &[
            ("banks = 4 ", "banks = 0 ", "geometry.banks"),
            (
                "line_size_bytes = 64 ",
                "line_size_bytes = 48 ",
                "geometry.line_size_bytes",
            ),
            (
                "capacity_bytes = 16777216 ",
                "capacity_bytes = 100 ",
                "geometry.capacity_bytes",
            ),
            (
                "read_bit_energy_pj = 2.0 ",
                "read_bit_energy_pj = -2.0 ",
                "energy.read_bit_energy_pj",
            ),
            (
                "writes_cov = 0.0 ",
                "writes_cov = 0.9 ",
                "endurance.writes_cov",
            ),
            ("clock_ghz = 2.0 ", "", "timing.clock_ghz"),
            (
                "read_line_cycles = 230 ",
                "read_line_cycles = 230\nread_line_ns = 1 ",
                "timing.read_line_ns",
            ),
        ];
        for (from, to, key) in cases {
            let e = with(|t| t.replace(from, to)).unwrap_err().to_string();
            assert!(e.contains(key), "{from} -> {to}: {e}");
        }
    }

    #[test]
    fn unknown_keys_are_refused_with_the_line() {
        let e = with(|t| t.replace("[energy]", "[energy]\nbogus_pj = 1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus_pj") && e.contains("line"), "{e}");
    }
}
