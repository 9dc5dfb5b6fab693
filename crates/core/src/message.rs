//! Pieces of the one-line error messages every layer's config checks write, so that chip, PCM
//! and SSD configs say it the same way.

/// The 1-based line of byte offset `byte` in `text`.
pub fn line_at(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

/// A parser's `message` with the line of `text` it points at (`at`, a byte offset), as every
/// nandlab TOML error shows its position: `… (line N)`.
pub fn with_line(message: &str, text: &str, at: Option<usize>) -> String {
    let message = message.trim_end();
    match at {
        Some(byte) => format!("{message} (line {})", line_at(text, byte)),
        None => message.to_string(),
    }
}

/// A number as a message shows it: plain, or in exponent form when very small or very large
/// (`1e-300`, not three hundred digits).
pub fn number(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-3..1e9).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// `None` if `value` lies within `bounds` (inclusive), else the message saying the supported
/// range with its unit.
pub fn outside_range(value: f64, bounds: (f64, f64), unit: &str) -> Option<String> {
    let (min, max) = bounds;
    if value.is_finite() && (min..=max).contains(&value) {
        return None;
    }
    Some(format!(
        "{} {unit} is outside the supported range {}..={} {unit}",
        number(value),
        number(min),
        number(max)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        assert_eq!(line_at("a\nb\nc", 3), 2);
        assert_eq!(
            with_line("bad value \n", "x\ny", Some(2)),
            "bad value (line 2)"
        );
        assert_eq!(with_line("bad", "x", None), "bad");
        assert_eq!(number(1e-300), "1e-300");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(outside_range(1.0, (0.0, 2.0), "us"), None);
        assert_eq!(
            outside_range(f64::NAN, (0.0, 2.0), "us").unwrap(),
            "NaN us is outside the supported range 0..=2 us"
        );
    }
}
