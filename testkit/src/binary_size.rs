//! A byte count for people, in binary units: the one formatter of the harness's reports and the
//! benches' summaries. (The crate keeps its own for `Stats`' `Display`: it cannot depend on this
//! kit.)

/// `100 B`, `8 KiB`, `1.50 MiB`, `64 MiB`: `n` bytes in binary units (KiB = 1024 B, up to TiB),
/// exact where they can be, else to three significant digits.
///
/// # Examples
///
/// ```
/// use abi_testkit::binary_size;
///
/// assert_eq!(binary_size(1000), "1000 B");
/// assert_eq!(binary_size(64 << 20), "64 MiB");
/// assert_eq!(binary_size(1536 << 10), "1.50 MiB");
/// ```
pub fn binary_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    let mut value = n as f64;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    // Above 1 KiB, 1 <= value < 1024: three significant digits need 2, 1 or 0 decimals.
    let decimals = match value {
        _ if unit == 0 || value.fract() == 0.0 => 0,
        v if v < 10.0 => 2,
        v if v < 100.0 => 1,
        _ => 0,
    };
    format!("{value:.decimals$} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(binary_size(0), "0 B");
        assert_eq!(binary_size(1), "1 B");
        assert_eq!(binary_size(1000), "1000 B");
        assert_eq!(binary_size(1023), "1023 B");
        assert_eq!(binary_size(8192), "8 KiB");
        assert_eq!(binary_size(64 << 20), "64 MiB");
        assert_eq!(binary_size(1536 << 10), "1.50 MiB");
        assert_eq!(binary_size(1_000_000), "977 KiB");
        assert_eq!(binary_size(200_000), "195 KiB");
        assert_eq!(binary_size(25 << 19), "12.5 MiB");
        assert_eq!(binary_size(3 << 40), "3 TiB");
        assert_eq!(binary_size(5 << 50), "5120 TiB");
    }
}
