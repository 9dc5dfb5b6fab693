//! Exact parsing of the numbers found in traces and job files.
//!
//! Times are parsed from their decimal text into integers (never through `f64`), so a trace
//! timestamp of `0.000000001` s is exactly 1 ns. Errors are messages naming the field and the
//! text; the caller adds file and line.

/// Bytes per sector in blkparse and DiskSim traces.
pub const SECTOR_BYTES: u64 = 512;

/// Parses a decimal unsigned integer: `bad {field} "{text}": expected an integer`.
pub(crate) fn parse_u64(text: &str, field: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad {field} \"{text}\": expected an integer"));
    }
    text.parse::<u64>()
        .map_err(|_| format!("bad {field} \"{text}\": larger than {}", u64::MAX))
}

/// Parses a hexadecimal unsigned integer, with or without a `0x` prefix.
pub(crate) fn parse_hex_u64(text: &str, field: &str) -> Result<u64, String> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "bad {field} \"{text}\": expected a hexadecimal integer"
        ));
    }
    u64::from_str_radix(digits, 16)
        .map_err(|_| format!("bad {field} \"{text}\": larger than {}", u64::MAX))
}

/// Parses a non-negative decimal number (`12`, `12.5`, `.5`, `12.`) into an integer count of
/// `10^-frac_digits` units: `parse_decimal_scaled("1.5", 3, _) == Ok(1500)`. Digits beyond
/// `frac_digits` are truncated (they are finer than the unit).
pub(crate) fn parse_decimal_scaled(
    text: &str,
    frac_digits: u32,
    field: &str,
) -> Result<u64, String> {
    let bad = || format!("bad {field} \"{text}\": expected a non-negative decimal number");
    let (int_part, frac_part) = match text.split_once('.') {
        Some((i, f)) => (i, f),
        None => (text, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return Err(bad());
    }
    let too_large = || format!("bad {field} \"{text}\": too large");
    let scale = 10u64.checked_pow(frac_digits).ok_or_else(too_large)?;
    let mut value: u64 = 0;
    for b in int_part.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_large)?;
    }
    value = value.checked_mul(scale).ok_or_else(too_large)?;
    let mut frac_value: u64 = 0;
    let mut used: u32 = 0;
    for b in frac_part.bytes().take(frac_digits as usize) {
        frac_value = frac_value * 10 + u64::from(b - b'0');
        used += 1;
    }
    frac_value *= 10u64.pow(frac_digits - used);
    value.checked_add(frac_value).ok_or_else(too_large)
}

/// `sectors * 512`, or an error naming the field when it overflows.
pub(crate) fn sectors_to_bytes(sectors: u64, field: &str) -> Result<u64, String> {
    sectors
        .checked_mul(SECTOR_BYTES)
        .ok_or_else(|| format!("bad {field} {sectors}: byte value overflows 64 bits"))
}

/// Checks a request range: non-empty and `offset + size` representable.
pub(crate) fn check_range(offset_bytes: u64, size_bytes: u64) -> Result<(), String> {
    if size_bytes == 0 {
        return Err("request size is 0".to_owned());
    }
    if offset_bytes.checked_add(size_bytes).is_none() {
        return Err(format!(
            "request {offset_bytes} + {size_bytes} bytes overflows 64 bits"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64("223490", "sector"), Ok(223_490));
        assert_eq!(
            parse_u64("x1f", "offset"),
            Err("bad offset \"x1f\": expected an integer".into())
        );
        assert!(parse_u64("-1", "size").is_err());
        assert!(parse_u64("99999999999999999999", "size").is_err());
        assert_eq!(parse_hex_u64("1", "flags"), Ok(1));
        assert_eq!(parse_hex_u64("0x1F", "flags"), Ok(31));
        assert!(parse_hex_u64("0x", "flags").is_err());
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_decimal_scaled("0.000000001", 9, "t"), Ok(1));
        assert_eq!(parse_decimal_scaled("1.5", 3, "t"), Ok(1_500));
        assert_eq!(parse_decimal_scaled("12", 2, "t"), Ok(1_200));
        assert_eq!(parse_decimal_scaled(".25", 2, "t"), Ok(25));
        assert_eq!(parse_decimal_scaled("3.", 1, "t"), Ok(30));
        // Digits finer than the unit are truncated.
        assert_eq!(parse_decimal_scaled("0.1239", 3, "t"), Ok(123));
        for bad in ["", ".", "-1", "1e3", "1.2.3", " 1", "abc"] {
            assert!(parse_decimal_scaled(bad, 3, "t").is_err(), "{bad:?}");
        }
        assert!(parse_decimal_scaled("99999999999", 12, "t").is_err());
    }

    #[test]
    fn ranges() {
        assert_eq!(sectors_to_bytes(8, "count"), Ok(4096));
        assert!(sectors_to_bytes(u64::MAX, "count").is_err());
        assert!(check_range(0, 0).is_err());
        assert!(check_range(u64::MAX, 1).is_err());
        assert!(check_range(u64::MAX - 1, 1).is_ok());
    }
}
