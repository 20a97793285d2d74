//! The seam: a fetch served from held bytes, from bytes at hand, or from the request serving its
//! offset, started if needed; and the length, asked once.

use std::io;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::ReadBuf;

use super::fetcher::PositionalFetch;
use super::request::Request;
use crate::input::fetch::seam::Seam;
use crate::source::PositionalSource;

/// The most a plain request asks for, whatever the caller's buffer.
const MAX_PLAIN_REQUEST: usize = 16 << 20;

impl<S: PositionalSource> Seam for PositionalFetch<S> {
    /// Fetches at `at`: from a prefetched range that holds `at` (waiting for it), from held
    /// read-ahead bytes if there are some, otherwise from what the
    /// source has at hand, otherwise from the request serving `at`, started if needed. Fewer
    /// bytes than `buf` has room for when a chunk or request ends first; none at the view's end.
    ///
    /// Dropping the call leaves requests in flight, and the next fetch at the same offset picks
    /// them up.
    fn poll_fetch(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let (before, room) = (buf.filled().len(), buf.remaining());
        let fetched = ready!(self.poll_fetch_uncounted(cx, at, buf));
        self.reads += 1;
        let n = buf.filled().len() - before;
        let end = at.saturating_add(n as u64);
        if fetched.is_ok() {
            if n > 0 && self.length().is_none() {
                self.learn_end(end);
            }
            // The end, known or just found (nothing came): nothing ahead is worth keeping.
            if (room > 0 && n == 0) || self.length().is_some_and(|length| end >= length) {
                self.release_held();
            }
        }
        Poll::Ready(fetched)
    }

    fn poll_length(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        if let Some(length) = self.length() {
            return Poll::Ready(Ok(length));
        }
        let request = match &mut self.length_request {
            Some(request) => request,
            None => {
                let source = Arc::clone(&self.source);
                let request = Request::start(cx, 0, 0, async move { source.len().await });
                self.length_request.insert(request)
            }
        };
        let result = ready!(request.poll(cx));
        self.length_request = None;
        let length = result?.saturating_sub(self.base);
        Poll::Ready(Ok(*self.length.get_or_init(|| length)))
    }

    fn known_length(&self) -> Option<u64> {
        self.length()
    }

    fn reads(&self) -> u64 {
        self.reads
    }

    fn resource(&self) -> Arc<str> {
        Arc::from(self.source.description())
    }

    fn held(&mut self, at: u64) -> usize {
        if let Some(held) = self.ready_from(at) {
            return held.len();
        }
        if self.stream.as_ref().is_some_and(|open| !open.standby) {
            return self.stream_held(at);
        }
        match self.requests.front_mut() {
            Some(front) if front.at == at => match front.answer() {
                Some(Ok(bytes)) => bytes.len(),
                _ => 0,
            },
            _ => 0,
        }
    }

    fn prefetch(&mut self, at: u64, len: u64) {
        self.start_prefetch(at, len);
    }

    fn release(&mut self) {
        self.release_held();
        self.prefetches.clear();
        self.release_kept_ranges();
        self.source.release_buffers();
    }
}

impl<S: PositionalSource> PositionalFetch<S> {
    /// [`Seam::poll_fetch`], before it is counted.
    fn poll_fetch_uncounted(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if ready!(self.poll_prefetched(cx, at, buf)) {
            return Poll::Ready(Ok(()));
        }
        self.want_end = at.saturating_add(buf.remaining() as u64);
        loop {
            if self.length().is_some_and(|length| at >= length) {
                return Poll::Ready(Ok(())); // the end: read nothing
            }
            if let Some(served) = self.poll_stream(cx, at, buf) {
                self.debug_assert_invariants();
                return served;
            }
            if let Some(held) = self.ready_from(at) {
                let n = held.len().min(buf.remaining());
                buf.put_slice(&held[..n]);
                self.consume_ready(at, n);
                self.next_sequential = Some(at + n as u64);
                self.pace.served(n, false, u64::MAX);
                self.top_up(cx);
                self.debug_assert_invariants();
                return Poll::Ready(Ok(()));
            }
            self.retarget(cx, at);
            if self.requests.is_empty() {
                if ready!(self.poll_read_now(cx, at, buf)) {
                    self.debug_assert_invariants();
                    return Poll::Ready(Ok(()));
                }
                // Requests bring their own buffers: keep memory within the read-ahead's bound.
                self.drop_spare();
                let sequential = self.next_sequential == Some(at);
                if !sequential {
                    self.reset_shape(at); // a read elsewhere: read-ahead starts small again
                }
                let run = sequential || self.pace.rescan();
                if self.read_ahead.is_some() && run && self.read_now_end != Some(at) {
                    if self.open_stream(at) {
                        continue; // served from the stream
                    }
                    self.ahead_at = Some(at);
                    self.top_up(cx);
                    if self.requests.is_empty() {
                        self.ahead_at = None; // no budget: on without read-ahead
                    }
                }
                if self.ahead_at.is_none() {
                    let mut len = buf.remaining().min(MAX_PLAIN_REQUEST);
                    if let Some(length) = self.length() {
                        len = len.min(usize::try_from(length - at).unwrap_or(usize::MAX));
                    }
                    let request = self.request(cx, at, len);
                    self.requests.push_back(request);
                }
            }
            self.debug_assert_invariants();
            let Some(front) = self.requests.front_mut() else {
                return Poll::Ready(Ok(())); // nothing left to request: the end
            };
            let Poll::Ready(result) = front.poll(cx) else {
                if self.pace.poll_trial_lost(cx) {
                    // The trial is over (ranges too late to beat the stream, as a rule): the
                    // stream serves the run again from here (the one on standby, or a new one:
                    // `open_stream`), and the chunks asked are dropped.
                    if self.stream.is_none() && self.pace.stream_chosen() {
                        self.discard_requests();
                    }
                    continue;
                }
                let Some(front) = self.requests.front_mut() else {
                    continue;
                };
                front.waited = true;
                self.pace.waiting();
                self.read_now_streak = 0; // the task yields anyway
                return Poll::Pending;
            };
            let Some(mut done) = self.requests.pop_front() else {
                return Poll::Ready(Ok(()));
            };
            match result {
                Ok(bytes) => {
                    let end = done.at + bytes.len() as u64;
                    if bytes.len() < done.len {
                        // The source ends inside this request: later ones are past the end.
                        // An empty answer only says the end is at or before `done.at`; it is
                        // there if the last fetch ended there, having found bytes before it.
                        if !bytes.is_empty() || self.next_sequential == Some(done.at) {
                            let _ = self.length.set(end);
                        }
                        self.requests.clear();
                        self.ahead_at = None;
                    }
                    if end <= at {
                        return Poll::Ready(Ok(())); // the end: read nothing
                    }
                    self.ready = bytes;
                    self.ready_at = done.at;
                    self.ready_budget = done.budget.take();
                    self.ready_to_stream = done.to_stream;
                    if self.ahead_at.is_some() {
                        self.chunk_came(cx, done.asked.elapsed(), done.waited);
                    }
                }
                Err(e) => {
                    // Keep the chunks after this one that arrived intact or are still in
                    // flight, for the retry, which requests only the gap this one leaves
                    // (`retarget`). Dropping those in flight would make every attempt ask for
                    // the same requests again, and a source that fails every few requests
                    // could fail each attempt at the same one, forever (the fuzzer found it:
                    // two requests per attempt, every 2nd failing). Those from the first one
                    // that failed too on are dropped, to be asked again.
                    let mut intact = 0;
                    for request in self.requests.iter_mut() {
                        if !request.not_failed() {
                            break;
                        }
                        intact += 1;
                    }
                    self.requests.truncate(intact);
                    match self.requests.back() {
                        Some(last) if self.ahead_at.is_some() => self.ahead_at = Some(last.end()),
                        _ => self.discard_requests(),
                    }
                    if done.asked_after < self.errors {
                        // Asked before the last error the consumer was told of, during the
                        // trouble it reported: a chunk kept for the retry that failed as well.
                        // Ask for it again (the gap it leaves) rather than fail a retry made
                        // once the trouble is over. A request asked now reports its own error.
                        tracing::debug!(at = done.at, len = done.len, error = %e, "a chunk asked before the last error failed too: asked again");
                        continue;
                    }
                    self.errors += 1;
                    return Poll::Ready(Err(e));
                }
            }
        }
    }

    /// A fetch ended at `end`, the length not known: if the request there has already come
    /// back empty, `end` is the view's end.
    fn learn_end(&mut self, end: u64) {
        if self.ready_from(end).is_some() {
            return; // bytes there
        }
        if let Some(front) = self.requests.front_mut() {
            if front.at == end && matches!(front.answer(), Some(Ok(bytes)) if bytes.is_empty()) {
                let _ = self.length.set(end);
            }
        }
    }
}
