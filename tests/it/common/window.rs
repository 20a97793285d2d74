//! Checks of an input's observable window against the file contents.

use abi_testkit::assert_bytes;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::Fetch;

/// Checks an input's observable state against the file contents and the expected position, as
/// the test kit's model does ([`abi_testkit::model::check_window`]: `position()`, `buffer()`
/// and `window()`); panics with what is wrong and `ctx`.
#[track_caller]
pub fn check_window<F: Fetch>(input: &AsyncBufferedInput<F>, data: &[u8], pos: u64, ctx: &str) {
    if let Err(wrong) = abi_testkit::model::check_window(input, data, pos) {
        panic!("{wrong}: {ctx}");
    }
}

/// True when `pos` lies inside (or at the end of) the input's window.
pub fn in_window<F: Fetch>(input: &AsyncBufferedInput<F>, pos: u64) -> bool {
    let w = input.window();
    w.start <= pos && pos <= w.end
}

/// Reads `n` bytes at the input's position with `read_bytes`, checks them against `data` (the
/// file) and then the window with [`check_window`]; panics naming `ctx` if the read fails.
pub async fn read_ok<F: Fetch>(
    input: &mut AsyncBufferedInput<F>,
    data: &[u8],
    n: usize,
    ctx: &str,
) {
    let p = input.position() as usize;
    let mut buf = vec![0u8; n];
    input
        .read_bytes(&mut buf)
        .await
        .unwrap_or_else(|e| panic!("{ctx}: read_bytes({n}) at {p}: {e:?}"));
    assert_bytes(&buf, &data[p..p + n], p as u64, ctx);
    check_window(input, data, (p + n) as u64, ctx);
}
