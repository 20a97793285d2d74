//! Number formatting shared by the reports' `Display` impls.

/// `100 B`, `8 KiB`, `1.5 MiB`, `64 MiB`: binary units, exact where they can be.
pub(crate) fn binary_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    let mut value = n as f64;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{} {}", significant(value, 3), UNITS[unit])
    }
}

/// `x` with about `digits` significant digits, without exponents: `1234`, `12.3`, `0.00123`.
pub(crate) fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    format!("{x:.decimals$}")
}

/// Seconds, with millisecond resolution for short times.
pub(crate) fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.3}")
    } else {
        format!("{s:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(binary_size(1), "1 B");
        assert_eq!(binary_size(1000), "1000 B");
        assert_eq!(binary_size(8192), "8 KiB");
        assert_eq!(binary_size(64 << 20), "64 MiB");
        assert_eq!(binary_size(1536 << 10), "1.50 MiB");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(1234.4, 3), "1234");
        assert_eq!(significant(12.345, 3), "12.3");
        assert_eq!(significant(0.0012345, 3), "0.00123");
        assert_eq!(significant(0.0, 3), "0");
    }
}
