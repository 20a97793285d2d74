//! Checks the harness's test binaries share (each includes this module with `mod common;`).

/// The table has a legend line for the read-ahead reader: its row label, then what it is.
#[track_caller]
pub fn assert_read_ahead_legend(table: &str) {
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("  AsyncBufferedInput+RA ")
                && l.contains(
                    "  AsyncBufferedInput over the source's positional reads with read-ahead"
                )),
        "{table}"
    );
}

/// The table's header line names every one of `titles`.
#[track_caller]
pub fn assert_columns(header: &str, titles: &[&str]) {
    for title in titles {
        assert!(header.contains(title), "{title}: {header}");
    }
}
