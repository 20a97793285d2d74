//! The future behind the hot reads (`read_byte`, `read_bytes`, the fixed-width and varint
//! reads): a synchronous fast path on the window, always inlined into the caller, and a
//! poll-form slow path kept out of line.
//!
//! Why not `async fn`: an `async fn`'s state machine is one function holding the fast path and
//! the whole slow path it awaits (refills, direct reads, error context). It is too big for the
//! compiler to inline, so every window hit would pay for a call into it, the spill of its
//! arguments into the state machine and a jump on its state. Here a window hit is the few
//! instructions of [`WindowRead::fast`] at the call site (`#[inline(always)]`), whatever the
//! number of call sites, and the slow path is one call to a function kept out of line, whose
//! state ([`WindowRead::Slow`]) is only created when it runs.
//!
//! Errors are made public here, once: the slow path returns the crate's internal
//! [`Error`](crate::error::Error), and the future names it with the operation and the position
//! the read started at (which is still the input's position: reads are all-or-nothing).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::error::{Amount, Error};
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// One read, split into what the window can serve without I/O and the rest.
pub(super) trait WindowRead<F> {
    type Output;
    /// What the slow path keeps across `Pending`; created when the slow path starts, so that a
    /// window hit never pays for initializing it.
    type Slow: Default;

    /// The operation's name and how many bytes it asks for, for its errors.
    fn op(&self) -> (&'static str, Amount);

    /// Serves the whole read from the window if it holds it, consuming what it returns; `None`
    /// (having consumed nothing) when the slow path must run, including for data that is
    /// malformed: the slow path then finds and reports the error.
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<Self::Output>;

    /// Runs the read through refills and source reads. Called only after `fast` returned `None`,
    /// with a fresh `slow`, and again after every `Pending` with the `slow` it left.
    fn poll_slow(
        &mut self,
        slow: &mut Self::Slow,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::Output, Error>>;
}

/// The future of a [`WindowRead`]. Lazy like an `async fn`: nothing happens before the first
/// poll, and dropping it before it completes consumes nothing.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub(super) struct ReadFuture<'a, F, Op: WindowRead<F>> {
    input: &'a mut AsyncBufferedInput<F>,
    op: Op,
    /// `None` until the fast path declined.
    slow: Option<Op::Slow>,
}

impl<'a, F, Op: WindowRead<F>> ReadFuture<'a, F, Op> {
    #[inline(always)]
    pub(super) fn new(input: &'a mut AsyncBufferedInput<F>, op: Op) -> Self {
        Self {
            input,
            op,
            slow: None,
        }
    }
}

impl<F, Op> Future for ReadFuture<'_, F, Op>
where
    F: Fetch,
    Op: WindowRead<F> + Unpin,
    Op::Slow: Unpin,
{
    type Output = io::Result<Op::Output>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        if me.slow.is_none() {
            if let Some(value) = me.op.fast(me.input) {
                return Poll::Ready(Ok(value));
            }
        }
        poll_slow(&mut me.op, &mut me.slow, me.input, cx)
    }
}

#[inline(never)]
fn poll_slow<F: Fetch, Op: WindowRead<F>>(
    op: &mut Op,
    slow: &mut Option<Op::Slow>,
    input: &mut AsyncBufferedInput<F>,
    cx: &mut Context<'_>,
) -> Poll<io::Result<Op::Output>> {
    op.poll_slow(slow.get_or_insert_with(Default::default), input, cx)
        .map_err(|e| {
            let (name, amount) = op.op();
            input.error(e, name, input.position(), amount)
        })
}
