//! The memory budget a simulated device may use, checked against an estimate *before* its
//! tables are allocated (a device of 2^31 pages otherwise passes validation and then aborts on
//! a 16 GB allocation).
//!
//! The budget is `NANDLAB_MEMORY_BUDGET_BYTES` when set (bytes, with an optional `K`/`M`/`G`/`T`
//! binary suffix: `512M`, `16G`), otherwise half of the machine's memory (`MemTotal` of
//! `/proc/meminfo` on Linux), otherwise 8 GiB.

/// The environment variable that overrides the memory budget.
pub const BUDGET_ENV: &str = "NANDLAB_MEMORY_BUDGET_BYTES";

/// The budget when neither the environment variable nor `/proc/meminfo` gives one.
pub const FALLBACK_BUDGET_BYTES: u64 = 8 << 30;

/// Where a budget came from, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetSource {
    /// `NANDLAB_MEMORY_BUDGET_BYTES`.
    Environment,
    /// Half of `MemTotal`.
    MachineMemory,
    /// [`FALLBACK_BUDGET_BYTES`].
    Fallback,
}

/// A memory budget in bytes and its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    pub bytes: u64,
    pub source: BudgetSource,
}

impl MemoryBudget {
    /// The budget of this process (see the module documentation). An unreadable value of the
    /// environment variable is an error naming it.
    pub fn from_environment() -> Result<Self, String> {
        let env = std::env::var(BUDGET_ENV).ok();
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
        Self::resolve(env.as_deref(), meminfo.as_deref())
    }

    /// The budget from the variable's value and the text of `/proc/meminfo` (either absent).
    pub fn resolve(env: Option<&str>, meminfo: Option<&str>) -> Result<Self, String> {
        if let Some(text) = env {
            let bytes = parse_bytes(text).ok_or_else(|| {
                format!("{BUDGET_ENV}={text:?} is not a byte count (e.g. 8589934592, 512M, 16G)")
            })?;
            return Ok(MemoryBudget {
                bytes,
                source: BudgetSource::Environment,
            });
        }
        if let Some(total) = meminfo.and_then(mem_total_bytes) {
            return Ok(MemoryBudget {
                bytes: total / 2,
                source: BudgetSource::MachineMemory,
            });
        }
        Ok(MemoryBudget {
            bytes: FALLBACK_BUDGET_BYTES,
            source: BudgetSource::Fallback,
        })
    }

    /// Says where the budget came from and how to change it (for one-line errors).
    pub fn describe(&self) -> String {
        let source = match self.source {
            BudgetSource::Environment => format!("set by {BUDGET_ENV}"),
            BudgetSource::MachineMemory => {
                format!("half of this machine's memory; set {BUDGET_ENV} to change it")
            }
            BudgetSource::Fallback => {
                format!("machine memory unknown; set {BUDGET_ENV} to change it")
            }
        };
        format!("{} ({source})", format_bytes(self.bytes))
    }
}

/// `MemTotal` of `/proc/meminfo` text, in bytes.
fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line["MemTotal:".len()..].split_whitespace();
    let value: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") | None => value.checked_mul(1024),
        _ => None,
    }
}

/// A byte count with an optional binary suffix (`K`, `M`, `G`, `T`, optionally followed by `iB`
/// or `B`); `_` separators allowed.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim().replace('_', "");
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits_end);
    let value: u64 = number.parse().ok()?;
    let shift = match suffix.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    value.checked_mul(1 << shift)
}

/// `bytes` in a readable binary unit: `512 B`, `1.5 KiB`, `16.0 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_then_half_the_machine_then_the_fallback() {
        let meminfo = "MemTotal:       24683656 kB\nMemFree:        21747076 kB\n";
        let b = MemoryBudget::resolve(Some("512M"), Some(meminfo)).unwrap();
        assert_eq!((b.bytes, b.source), (512 << 20, BudgetSource::Environment));
        let b = MemoryBudget::resolve(None, Some(meminfo)).unwrap();
        assert_eq!(b.bytes, 24683656 * 1024 / 2);
        assert_eq!(b.source, BudgetSource::MachineMemory);
        let b = MemoryBudget::resolve(None, Some("garbage")).unwrap();
        assert_eq!((b.bytes, b.source), (8 << 30, BudgetSource::Fallback));
        let err = MemoryBudget::resolve(Some("lots"), None).unwrap_err();
        assert!(err.contains(BUDGET_ENV), "{err}");
    }

    #[test]
    fn byte_counts_parse_and_print() {
        assert_eq!(parse_bytes("8589934592"), Some(8 << 30));
        assert_eq!(parse_bytes("16G"), Some(16 << 30));
        assert_eq!(parse_bytes("1_024 KiB"), Some(1 << 20));
        assert_eq!(parse_bytes("99999999999T"), None);
        assert_eq!(parse_bytes("-1"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(16 << 30), "16.0 GiB");
    }
}
