//! Checks of an input's observable window against the file contents.

use abi_testkit::assert_bytes;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::Fetch;

/// Which reading of the `window()` contract the checks use.
///
/// API.md only says `window()` is "the file range the window holds" and `buffer()` "the unread
/// part of the window". The stricter reading, `window().start <= position() <= window().end`
/// at all times, does not hold for an input that keeps its window when the position is moved
/// outside it (so that seeking out and back costs no I/O); with that design `position()` may lie
/// outside `window()`, and `buffer()` is then empty. `true` accepts that design; `false` demands
/// the stricter invariant.
pub const POSITION_MAY_LEAVE_WINDOW: bool = true;

/// Checks an input's observable state against the file contents and the expected position:
/// `position() == pos`; if `window().start <= pos <= window().end` then
/// `buffer().len() == window().end - pos`, otherwise `buffer()` is empty (and, unless
/// [`POSITION_MAY_LEAVE_WINDOW`], that case is an error); the window is at most `capacity()`
/// long; a non-empty window lies inside the file; `buffer()` holds the file's bytes at `pos`.
#[track_caller]
pub fn check_window<F: Fetch>(input: &AsyncBufferedInput<F>, data: &[u8], pos: u64, ctx: &str) {
    assert_eq!(input.position(), pos, "position(): {ctx}");
    let w = input.window();
    let buf = input.buffer();
    let inside = w.start <= pos && pos <= w.end;
    assert!(
        inside || POSITION_MAY_LEAVE_WINDOW,
        "window() {w:?} must contain position() {pos}: {ctx}"
    );
    if inside {
        assert_eq!(
            buf.len() as u64,
            w.end - pos,
            "buffer().len() must be window().end - position() (window {w:?}): {ctx}"
        );
    } else {
        assert!(
            buf.is_empty(),
            "buffer() must be empty when position() {pos} is outside window() {w:?}, has {} \
             bytes: {ctx}",
            buf.len()
        );
    }
    assert!(
        w.end - w.start <= input.capacity() as u64,
        "window {w:?} larger than capacity {}: {ctx}",
        input.capacity()
    );
    if w.start < w.end {
        assert!(
            w.end <= data.len() as u64,
            "non-empty window {w:?} extends past the end of the file ({}): {ctx}",
            data.len()
        );
    }
    if !buf.is_empty() {
        let p = pos as usize;
        assert_bytes(
            buf,
            &data[p..p + buf.len()],
            pos,
            &format!("buffer(): {ctx}"),
        );
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
