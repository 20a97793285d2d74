//! Reads of the bytes the source has at hand ([`PositionalSource::try_read_at`]: for a local
//! file, what the page cache holds), on the calling thread, before any request.

use std::mem;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::ReadBuf;

use super::fetcher::PositionalFetch;
use crate::source::PositionalSource;

/// The most one `try_read_at` asks for: it runs on the async thread, so no single read of bytes
/// at hand holds the thread for long (1 MiB is some tens of microseconds of copying).
const MAX_READ_NOW: usize = 1 << 20;

/// The most a fetcher reads at hand before it yields to the runtime once (returns `Pending`
/// after waking itself): tokio's budget counts calls, not bytes, and 128 calls of 1 MiB would
/// hold the thread for several milliseconds.
const READ_NOW_PER_YIELD: usize = 4 << 20;

/// Bytes at hand.
impl<S: PositionalSource> PositionalFetch<S> {
    /// Reads at `at` from what the source has at hand ([`PositionalSource::try_read_at`]);
    /// returns whether it read any. Spends the task's tokio budget like any I/O resource, and
    /// yields once every [`READ_NOW_PER_YIELD`] bytes, so a reader whose reads never wait still
    /// lets other tasks run.
    ///
    /// The bytes go straight into `buf`, except for a sequential read with read-ahead on and a
    /// `buf` smaller than a chunk: then a whole chunk is read into `ready` (in a reused buffer)
    /// and `buf` is served from it, so that small reads cost one call to the source per chunk,
    /// not one each.
    pub(super) fn poll_read_now(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<bool> {
        if self.read_now_streak >= READ_NOW_PER_YIELD {
            self.read_now_streak = 0;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let coop = ready!(tokio::task::coop::poll_proceed(cx));
        // The most this read may take: what is left of the view, at most `MAX_READ_NOW`.
        let most = self
            .length()
            .map_or(MAX_READ_NOW, |length| {
                usize::try_from(length - at).unwrap_or(usize::MAX)
            })
            .min(MAX_READ_NOW);
        let offset = self.base.saturating_add(at);
        let mut chunk = match self.read_ahead {
            Some(_) if self.next_sequential == Some(at) && buf.remaining() < self.shape.0 => {
                self.shape.0.min(most)
            }
            _ => 0,
        };
        // The chunk's buffer: the last one if it is free and large enough, otherwise a new one,
        // if the budget allows (otherwise the bytes go straight into `buf`).
        let mut block = None;
        if chunk > buf.remaining() {
            match mem::take(&mut self.spare).try_into_mut() {
                Ok(reused) if reused.len() >= chunk => block = Some(reused),
                _ => {
                    self.spare_budget = None;
                    match &self.budget {
                        Some(budget) => match budget.try_reserve(chunk) {
                            Some(reservation) => {
                                self.spare_budget = Some(reservation);
                                block = Some(BytesMut::zeroed(chunk));
                            }
                            None => chunk = 0,
                        },
                        None => block = Some(BytesMut::zeroed(chunk)),
                    }
                }
            }
        }
        let copied = if let Some(mut block) = block {
            debug_assert!(self.ready.is_empty(), "reading a chunk over held bytes");
            let got = self
                .source
                .try_read_at(offset, &mut block[..chunk])
                .min(chunk);
            let block = block.freeze();
            let copied = got.min(buf.remaining());
            if got > 0 {
                buf.put_slice(&block[..copied]);
                self.ready = block.slice(..got);
                self.ready_at = at;
                self.consume_ready(at, copied);
            }
            self.spare = block;
            copied
        } else {
            let room = buf.remaining().min(most);
            let n = self
                .source
                .try_read_at(offset, buf.initialize_unfilled_to(room))
                .min(room);
            buf.advance(n);
            n
        };
        if copied == 0 {
            return Poll::Ready(false); // `coop` gives the budget back
        }
        coop.made_progress();
        let end = at + copied as u64;
        self.next_sequential = Some(end);
        self.read_now_end = Some(end);
        self.read_now_streak += copied;
        Poll::Ready(true)
    }

    /// Drops the buffer of the last chunk read at hand, and gives back its budget.
    pub(super) fn drop_spare(&mut self) {
        self.spare = Bytes::new();
        self.spare_budget = None;
    }
}
