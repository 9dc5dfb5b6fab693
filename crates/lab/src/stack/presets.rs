//! SSD presets: `presets/ssd/NAME.toml`, each a partial stack config (`[nand]` and `[ssd]`)
//! with a `name`, a `description` and a `source` for every number. Embedded in the binary;
//! `[ssd] preset = "NAME"` starts a stack config from one.

/// The embedded preset files, in listing order.
const PRESETS: &[(&str, &str)] = &[
    (
        "bench-ssd",
        include_str!("../../../../presets/ssd/bench-ssd.toml"),
    ),
    (
        "miyaji2014-emulator",
        include_str!("../../../../presets/ssd/miyaji2014-emulator.toml"),
    ),
    (
        "miyaji2014-ssd",
        include_str!("../../../../presets/ssd/miyaji2014-ssd.toml"),
    ),
    (
        "mqsim-mlc",
        include_str!("../../../../presets/ssd/mqsim-mlc.toml"),
    ),
    (
        "tlc-nvme",
        include_str!("../../../../presets/ssd/tlc-nvme.toml"),
    ),
];

/// A parsed SSD preset.
#[derive(Clone, Debug, PartialEq)]
pub struct SsdPreset {
    pub name: String,
    pub description: String,
    pub source: String,
    /// The `[nand]` and `[ssd]` tables (what a stack config merges its own keys over).
    pub table: toml::Table,
}

/// Names of every SSD preset.
pub fn ssd_preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(name, _)| *name).collect()
}

/// The SSD preset `name`, or an error listing the known ones.
pub fn ssd_preset(name: &str) -> Result<SsdPreset, String> {
    let text = PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .ok_or_else(|| {
            format!(
                "unknown SSD preset `{name}` (known: {})",
                ssd_preset_names().join(", ")
            )
        })?;
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| format!("SSD preset `{name}` does not parse: {e}"))?;
    let mut text_of = |key: &str| match table.remove(key) {
        Some(toml::Value::String(s)) => Ok(s),
        _ => Err(format!("SSD preset `{name}` has no `{key}` string")),
    };
    let (name_field, description, source) = (
        text_of("name")?,
        text_of("description")?,
        text_of("source")?,
    );
    if let Some(extra) = table.keys().find(|k| *k != "nand" && *k != "ssd") {
        return Err(format!(
            "SSD preset `{name}`: only [nand] and [ssd] belong in a preset, not `{extra}`"
        ));
    }
    Ok(SsdPreset {
        name: name_field,
        description,
        source,
        table,
    })
}
