//! Checks of a program's text output (a table, a report) that print the whole text when they
//! fail.

/// Asserts that `text` contains `needle`; the failure prints both.
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} not found in:\n{text}");
}

/// Asserts that `needle` stands `count` times in `text`; the failure prints the text.
#[track_caller]
pub fn assert_count(text: &str, needle: &str, count: usize) {
    let found = text.matches(needle).count();
    assert_eq!(
        found, count,
        "{needle:?} {found} times, not {count}, in:\n{text}"
    );
}
