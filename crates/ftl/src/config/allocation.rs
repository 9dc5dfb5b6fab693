//! `ftl.allocation_order`: the striping order of page writes over the parallel units.

use crate::error::{FtlResult, config_error};

/// One level of the parallel hierarchy used for striping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Channels (independent buses).
    Channel,
    /// Chips (ways) of a channel.
    Chip,
    /// Dies of a chip.
    Die,
    /// Planes of a die.
    Plane,
}

/// Parses `allocation_order` into four levels, fastest-varying first.
pub fn parse_allocation_order(text: &str) -> FtlResult<[Level; 4]> {
    let mut levels: Vec<Level> = Vec::with_capacity(4);
    for part in text.split('-').map(str::trim).filter(|p| !p.is_empty()) {
        let level = match part {
            "channel" => Level::Channel,
            "chip" | "way" => Level::Chip,
            "die" => Level::Die,
            "plane" => Level::Plane,
            other => {
                return Err(config_error(
                    "ftl.allocation_order",
                    format!("unknown level `{other}` (use channel, chip, die, plane)"),
                ));
            }
        };
        if levels.contains(&level) {
            return Err(config_error(
                "ftl.allocation_order",
                format!("level `{part}` named twice in `{text}`"),
            ));
        }
        levels.push(level);
    }
    for level in [Level::Channel, Level::Chip, Level::Die, Level::Plane] {
        if !levels.contains(&level) {
            levels.push(level);
        }
    }
    Ok([levels[0], levels[1], levels[2], levels[3]])
}
