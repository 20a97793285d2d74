//! Reading `key=value` words out of a text (a vector file's header, a script's output).

use std::fmt::Debug;
use std::str::FromStr;

/// The value of the first `key=value` word of `text` (words are split at white space, so a
/// line per variable works as well as a line of several), parsed as a `T`.
///
/// # Panics
///
/// When `text` has no such word or its value does not parse, naming `key` and `text`.
///
/// # Examples
///
/// ```
/// assert_eq!(abi_testkit::value_of::<usize>("# vectors version=2 count=14", "count"), 14);
/// assert_eq!(abi_testkit::value_of::<u16>("started\nHTTP_PORT=8080\n", "HTTP_PORT"), 8080);
/// ```
#[track_caller]
pub fn value_of<T>(text: &str, key: &str) -> T
where
    T: FromStr,
    T::Err: Debug,
{
    let value = text
        .split_whitespace()
        .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key}= in {text:?}"));
    value
        .parse()
        .unwrap_or_else(|e| panic!("{key}={value} in {text:?}: {e:?}"))
}
