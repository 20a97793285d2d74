//! Polling a future by hand, for cancellation tests.

use std::task::{Context, Poll, Waker};

/// Polls `future` once with a waker that does nothing, and drops it; its output if it
/// completed.
pub fn poll_once_then_drop<F: std::future::Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}
