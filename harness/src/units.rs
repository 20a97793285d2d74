//! Units: the sizes, durations and rates the command line reads, and the sizes, numbers and
//! durations the reports print.

use std::time::Duration;

// ----- reading -----

/// `100`, `8K`, `8KiB`, `1.5MiB`, `64MB`, `1e6`: a number of bytes and a unit, any case. K, M, G
/// and T are powers of 1024 like KiB, MiB, GiB and TiB; KB, MB, GB and TB powers of 1000.
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty size (two commas in a row?)".into());
    }
    let number = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[number.len()..];
    // parse-size reads a bare K like KB (decimal); here it is KiB, as in `dd` and `head -c`.
    let config = if unit.len() == 1 && !unit.eq_ignore_ascii_case("b") {
        parse_size::Config::new().with_binary()
    } else {
        parse_size::Config::new()
    };
    let bytes = config.parse_size(t).map_err(|e| match e {
        parse_size::Error::PosOverflow => "too large".to_string(),
        _ if parse_size::parse_size(number).is_ok() => {
            format!("unknown unit {unit:?}: use B, KiB, MiB, GiB, KB, MB or GB")
        }
        _ => "not a size: expected a number of bytes like 100, 8KiB or 64MB".to_string(),
    })?;
    // parse-size rounds to the nearest byte: a fraction of a byte is a mistake here.
    let per_unit = config.parse_size(format!("1{unit}")).unwrap_or(1);
    if number
        .trim()
        .parse::<f64>()
        .is_ok_and(|n| (n * per_unit as f64).fract() != 0.0)
    {
        return Err("not a whole number of bytes".to_string());
    }
    Ok(bytes)
}

/// A [size](parse_size()) of at least 1 byte.
pub(crate) fn parse_nonzero_size(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err("must be at least 1 byte, got 0".to_string()),
        n => Ok(n),
    }
}

/// A [size](parse_size()) of at least 1 byte that fits a `usize`.
pub(crate) fn parse_nonzero_usize(s: &str) -> Result<usize, String> {
    let n = parse_nonzero_size(s)?;
    usize::try_from(n).map_err(|_| "too large".to_string())
}

/// `150us`, `2ms`, `1.5s`, `1min 30s`, `0`: humantime's durations, and a bare 0.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    use humantime::DurationError;

    let t = s.trim();
    if t.parse::<f64>() == Ok(0.0) {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(t).map_err(|e| match e {
        DurationError::UnknownUnit { unit, .. } if unit.is_empty() => {
            "needs a unit: ns, us, ms or s".to_string()
        }
        DurationError::UnknownUnit { unit, .. } => {
            format!("unknown unit {unit:?}: use ns, us, ms, s, min or h")
        }
        DurationError::NumberOverflow => e.to_string(),
        _ => "not a duration: expected a number and a unit, like 2ms or 1.5s".to_string(),
    })
}

/// `100MB/s`, `1GiB/s`, `unlimited` (0).
pub(crate) fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if matches!(t, "unlimited" | "none" | "0") {
        return Ok(0);
    }
    let size = t.strip_suffix("/s").unwrap_or(t);
    match parse_size(size)? {
        0 => Err("a bandwidth of 0 moves nothing; use \"unlimited\" for no cap".to_string()),
        n => Ok(n),
    }
}

// ----- writing -----

/// `100 B`, `8 KiB`, `1.50 MiB`: the test kit's, which the benches print with too.
pub(crate) use abi_testkit::binary_size;

/// `x` with about `digits` significant digits, without exponents: `1234`, `12.3`, `0.00123`.
pub(crate) fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    format!("{x:.decimals$}")
}

/// A ratio as the table prints it: three significant digits and an `x` (`1.25x`, `0.00133x`),
/// and below 0.001 as a fraction, `1/N x` with `N` to two significant digits (`1/1900x` for
/// 0.000521), since a long run of zeros reads badly; `0x` for zero.
pub(crate) fn ratio(x: f64) -> String {
    if x > 0.0 && x < 0.001 {
        format!("1/{}x", significant(rounded(1.0 / x, 2), 2))
    } else {
        format!("{}x", significant(x, 3))
    }
}

/// `x` rounded to `digits` significant digits (`1918.6` to 2 is `1900`).
fn rounded(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// `text` broken at spaces into lines of at most `width` characters (a word longer than that
/// stands alone on its line, whole), the first line starting with `first`, the others with
/// `rest`. Set in full, so that another crate's textwrap features cannot change the breaks.
pub(crate) fn wrap(text: &str, first: &str, rest: &str, width: usize) -> Vec<String> {
    use textwrap::{Options, WordSeparator, WordSplitter, WrapAlgorithm};

    let options = Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(false)
        .word_separator(WordSeparator::AsciiSpace)
        .word_splitter(WordSplitter::NoHyphenation)
        .wrap_algorithm(WrapAlgorithm::FirstFit);
    textwrap::wrap(text, options)
        .into_iter()
        .map(String::from)
        .collect()
}

/// Seconds, with millisecond resolution for short times.
pub(crate) fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.3}")
    } else {
        format!("{s:.1}")
    }
}

/// A short duration with three significant digits and its unit: `85ns`, `8.12µs`, `1.50ms`,
/// `2.10s`.
pub(crate) fn short_duration(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    let (value, unit) = if ns < 1e3 {
        return format!("{}ns", d.as_nanos());
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{}{unit}", significant(value, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_below_a_thousandth_are_fractions() {
        for (x, text) in [
            (0.0, "0x"),
            (1.0, "1.00x"),
            (170.4, "170x"),
            (0.858, "0.858x"),
            (0.00133, "0.00133x"),
            (0.001, "0.00100x"),
            (0.000999, "1/1000x"),
            (0.000521, "1/1900x"),
            (0.0000514, "1/19000x"),
            (0.00000746, "1/130000x"),
        ] {
            assert_eq!(ratio(x), text, "{x}");
        }
    }

    #[test]
    fn wrapping_keeps_words_whole_and_lines_short() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        let lines = wrap(text, "  ", "    ", 16);
        assert_eq!(
            lines,
            [
                "  one two three",
                "    four five",
                "    six seven",
                "    eight nine",
                "    ten eleven",
                "    twelve"
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 16));
        assert_eq!(
            lines
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            text
        );
        // A word longer than the width stands alone, whole.
        assert_eq!(
            wrap("a verylongword b", "", "", 5),
            ["a", "verylongword", "b"]
        );
    }

    #[test]
    fn sizes_take_binary_and_decimal_units() {
        for (text, bytes) in [
            ("100", 100),
            ("100B", 100),
            ("8K", 8 << 10),
            ("8k", 8 << 10),
            ("8Ki", 8 << 10),
            ("8KiB", 8 << 10),
            ("8 KiB", 8 << 10),
            ("1.5MiB", 3 << 19),
            ("2M", 2 << 20),
            ("1G", 1 << 30),
            ("1GiB", 1 << 30),
            ("10KB", 10_000),
            ("10kb", 10_000),
            ("64MB", 64_000_000),
            ("1GB", 1_000_000_000),
            ("1e3", 1000),
            ("0", 0),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn bad_sizes_say_what_is_wrong() {
        for (text, message) in [
            ("", "empty size (two commas in a row?)"),
            ("x", "not a size"),
            ("fast", "not a size"),
            ("1.2.3", "not a size"),
            ("8XB", "unknown unit \"XB\""),
            ("8 QB", "unknown unit \"QB\""),
            ("1.5", "not a whole number of bytes"),
            ("0.1KiB", "not a whole number of bytes"),
            ("99999999999999999999", "too large"),
            ("100000PB", "too large"),
        ] {
            let err = parse_size(text).unwrap_err();
            assert!(err.starts_with(message), "{text:?}: {err}");
        }
        assert_eq!(
            parse_nonzero_size("0KiB"),
            Err("must be at least 1 byte, got 0".into())
        );
    }

    #[test]
    fn rates_are_sizes_per_second() {
        assert_eq!(parse_rate("100MB/s"), Ok(100_000_000));
        assert_eq!(parse_rate("1GiB/s"), Ok(1 << 30));
        assert_eq!(parse_rate("unlimited"), Ok(0));
        assert!(parse_rate("0B/s")
            .unwrap_err()
            .contains("use \"unlimited\""));
    }

    #[test]
    fn durations_need_a_unit_except_zero() {
        for (text, duration) in [
            ("150us", Duration::from_micros(150)),
            ("150µs", Duration::from_micros(150)),
            ("2ms", Duration::from_millis(2)),
            ("2 ms", Duration::from_millis(2)),
            ("1.5s", Duration::from_millis(1500)),
            ("1min 30s", Duration::from_secs(90)),
            ("0", Duration::ZERO),
            ("0s", Duration::ZERO),
        ] {
            assert_eq!(parse_duration(text), Ok(duration), "{text}");
        }
        for (text, message) in [
            ("2", "needs a unit"),
            ("2 fortnights", "unknown unit \"fortnights\""),
            ("fast", "not a duration"),
        ] {
            let err = parse_duration(text).unwrap_err();
            assert!(err.starts_with(message), "{text:?}: {err}");
        }
    }

    #[test]
    fn numbers_print_with_significant_digits() {
        assert_eq!(significant(1234.4, 3), "1234");
        assert_eq!(significant(12.345, 3), "12.3");
        assert_eq!(significant(0.0012345, 3), "0.00123");
        assert_eq!(significant(0.0, 3), "0");
        assert_eq!(seconds(0.0123), "0.012");
        assert_eq!(seconds(12.34), "12.3");
    }

    #[test]
    fn durations_print_short() {
        assert_eq!(short_duration(Duration::from_nanos(85)), "85ns");
        assert_eq!(short_duration(Duration::from_nanos(8123)), "8.12µs");
        assert_eq!(short_duration(Duration::from_micros(1500)), "1.50ms");
        assert_eq!(short_duration(Duration::from_millis(2100)), "2.10s");
        assert_eq!(short_duration(Duration::ZERO), "0ns");
    }
}
