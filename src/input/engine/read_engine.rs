//! The read engine: every read of an input comes here. [`ReadEngine`] serves it from the
//! window, refills the window, or fetches past it; only a completed read moves the position.

use std::fmt;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use tokio::io::ReadBuf;

use crate::error::Error;
use crate::input::checksum::lazy_crc::Checksum;
use crate::input::engine::cursor::Cursor;
use crate::input::engine::fetcher::Fetcher;
use crate::input::engine::kept::{Kept, MAX_KEPT_FOR_RETRY};
use crate::input::engine::read_exact::ReadExact;
use crate::input::engine::window::Window;
use crate::input::fetch::Fetch;
use crate::stats::{Stats, StatsGroup};

/// The least remainder of a read that goes straight into the caller's buffer, past the window,
/// when the fetcher holds all of it already: below it, the window's copy costs less than the
/// fetch's own work.
const HELD_DIRECT: usize = 4 << 10;

/// The bytes an input has at hand and the way to more of them.
///
/// Invariants: the window holds at most `capacity` bytes (asserted by the window's `spare`
/// and `commit`), and `capacity >= 1`.
pub(crate) struct ReadEngine<F> {
    // The input's only position, independent of the window: a read works on offsets and only
    // moves the position once it has all its bytes, so every read is all-or-nothing.
    cursor: Cursor,
    // The source's bytes at hand, at most `capacity` of them.
    window: Window,
    capacity: usize,
    fetcher: Fetcher<F>,
    // The CRC32 since `start_checksum`, folded in the slow paths only (boxed: most inputs
    // do not checksum).
    checksum: Option<Box<Checksum>>,
    // What failed reads at the position fetched, for their retry; dropped when the position
    // is set (seeks, reads past the window) and on `release`, not by window hits.
    kept: Kept,
}

impl<F> ReadEngine<F> {
    /// An empty window of `capacity` bytes (at least 1) over `fetcher`.
    pub(crate) fn new(capacity: usize, fetcher: Fetcher<F>) -> Self {
        debug_assert!(capacity >= 1, "a window of 0 bytes");
        Self {
            cursor: Cursor::default(),
            window: Window::new(),
            capacity,
            fetcher,
            checksum: None,
            kept: Kept::default(),
        }
    }

    /// The position of the next byte to read.
    #[inline(always)]
    pub(crate) fn position(&self) -> u64 {
        self.cursor.pos()
    }

    /// Sets the position to `pos` for anything but a window read (those only advance it):
    /// books the window reads since the last move first, and drops the bytes kept for a retry.
    #[inline]
    pub(crate) fn move_to(&mut self, pos: u64) {
        self.cursor.move_to(pos);
        self.kept.clear();
    }

    /// A seek to `pos`, without I/O: one back voids the checksum.
    #[inline]
    pub(crate) fn seek_to(&mut self, pos: u64) {
        if let Some(checksum) = self.checksum.as_deref_mut() {
            checksum.note_seek(self.cursor.pos(), pos);
        }
        self.move_to(pos);
    }

    /// The window.
    #[inline(always)]
    pub(crate) fn window(&self) -> &Window {
        &self.window
    }

    /// Consumes `n` bytes of the window at the position; the caller has checked they are there.
    #[inline(always)]
    pub(crate) fn consume_window(&mut self, n: usize) {
        debug_assert!(
            n <= self.window.bytes_from(self.cursor.pos()).len(),
            "consume_window({n}) past the window"
        );
        self.cursor.advance(n); // counted by `stats()`
    }

    /// The window's bytes from the position, and the position itself (for a
    /// [`WindowView`](crate::input::WindowView) to move past what it consumes, as a window
    /// hit does).
    pub(crate) fn window_and_position(&mut self) -> (&[u8], &mut u64) {
        (
            self.window.bytes_from(self.cursor.pos()),
            self.cursor.pos_mut(),
        )
    }

    /// Completes a read of `total` bytes that started at `at` (the position) and went through
    /// a slow path: moves the position past them and counts them, `direct` of them read
    /// straight into the caller's buffer and the rest through the window.
    pub(crate) fn finish_read(&mut self, at: u64, total: usize, direct: usize) {
        debug_assert_eq!(
            at,
            self.cursor.pos(),
            "a read finishing away from the position"
        );
        debug_assert!(direct <= total);
        self.cursor.finish_read(total, direct);
        self.kept.clear();
    }

    /// The window's size in bytes.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The fetcher.
    #[inline]
    pub(crate) fn fetcher(&self) -> &Fetcher<F> {
        &self.fetcher
    }

    /// The fetcher, mutably.
    #[inline]
    pub(crate) fn fetcher_mut(&mut self) -> &mut Fetcher<F> {
        &mut self.fetcher
    }

    /// The fetcher, dropping the window.
    pub(crate) fn into_fetcher(self) -> Fetcher<F> {
        self.fetcher
    }

    /// The checksum, if the input is checksumming.
    pub(crate) fn checksum(&self) -> Option<&Checksum> {
        self.checksum.as_deref()
    }

    /// The checksum, mutably, if the input is checksumming.
    pub(crate) fn checksum_mut(&mut self) -> Option<&mut Checksum> {
        self.checksum.as_deref_mut()
    }

    /// Starts a checksum of the bytes from `from` on (`Some`), dropping the one going on, or
    /// stops checksumming (`None`).
    pub(crate) fn set_checksum(&mut self, from: Option<u64>) {
        self.checksum = from.map(|from| Box::new(Checksum::new(from)));
    }

    /// Refuses a seek from the position to `to` if it goes back while checksumming (the
    /// fallible seeks).
    #[inline]
    pub(crate) fn check_seek(&self, to: u64) -> Result<(), Error> {
        match self.checksum.as_deref() {
            Some(checksum) => checksum.check_seek(self.cursor.pos(), to),
            None => Ok(()),
        }
    }

    /// Hands out the window's first `n` bytes without copying (`n <= ` its length; the caller
    /// has folded them into the checksum); the window then starts `n` bytes later.
    pub(crate) fn split_window(&mut self, n: usize) -> Bytes {
        self.window.split_to(n)
    }

    /// Folds what the window holds of the bytes consumed up to the position (before the
    /// window is dropped); the rest is read when next folded.
    fn fold_window(&mut self) {
        if let Some(checksum) = self.checksum.as_deref_mut() {
            checksum.fold_consumed(&self.window, self.cursor.pos());
        }
    }
}

impl<F: Fetch> ReadEngine<F> {
    /// A snapshot of the counters: the fetches' and the bytes handed out.
    #[inline]
    pub(crate) fn stats(&self) -> Stats {
        self.fetcher.stats() + self.cursor.counts()
    }

    /// The stats group the input counts its work in, if any.
    pub(crate) fn stats_group(&self) -> Option<&StatsGroup> {
        self.cursor.group()
    }

    /// Joins `group`: the bytes handed out and the fetches publish there.
    pub(crate) fn join_stats_group(&mut self, group: &StatsGroup) {
        self.cursor.join(group);
        self.fetcher.join(group);
    }

    /// Gives back the window's buffer, the kept bytes and what the fetcher holds, folding what
    /// the window holds of the consumed bytes (up to the position) first.
    pub(crate) fn release(&mut self) {
        self.kept.clear();
        self.fold_window();
        self.window.release();
        self.fetcher.get_mut().release();
    }

    /// Makes the window hold the bytes `[at, at + need)` (`need` capped at the capacity), or
    /// everything from `at` to the end if that is shorter (the caller tells the two apart).
    ///
    /// Refills continue short fetches until `need` bytes are there or the source ends. One that
    /// continues the window (or the last fetch) starts at `at`; one after a seek elsewhere
    /// starts at the capacity-aligned block that holds `at` (moved back only as far as `need`
    /// requires), so later reads anywhere in that block are served without another refill.
    /// What leaves the window is folded into the checksum first.
    pub(crate) fn poll_fill_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        need: usize,
    ) -> Poll<Result<(), Error>> {
        let need = need.min(self.capacity);
        loop {
            if self.window.bytes_from(at).len() >= need {
                return Poll::Ready(Ok(()));
            }
            // What leaves the window is checksummed first.
            if self.checksum.is_some() {
                ready!(self.poll_fold_until(cx, at))?;
            }
            let continues = self.window.start() <= at && at <= self.window.end();
            let start = if continues || at == self.fetcher.fetched_to() {
                at
            } else {
                let block = at - at % self.capacity as u64;
                block.max(
                    at.saturating_add(need as u64)
                        .saturating_sub(self.capacity as u64),
                )
            };
            debug_assert!(start <= at);
            if ready!(self.poll_refill(cx, start))? == 0 {
                return Poll::Ready(Ok(()));
            }
        }
    }

    /// Fills `dst` with the bytes `[at, at + dst.len())`, without moving the position: one copy
    /// of what the window holds and of what a failed attempt kept, then one fetch for the rest
    /// (continued if short), straight into `dst` if the rest is at least the capacity (or at
    /// least `HELD_DIRECT` bytes the fetcher holds), through a refilled window otherwise.
    /// `state` carries the progress across `Pending`; a past-the-end error counts the bytes
    /// available from `at`. A failure keeps what `dst` got for the retry (`keep_for_retry`),
    /// unless `state` is a [step](ReadExact::step) of a longer read, which keeps its own.
    pub(crate) fn poll_read_exact_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        dst: &mut [u8],
        state: &mut ReadExact,
    ) -> Poll<Result<(), Error>> {
        let have = match state.have {
            Some(have) => have,
            None => {
                let held = self.window.bytes_from(at);
                let window = held.len().min(dst.len());
                dst[..window].copy_from_slice(&held[..window]);
                state.kept = self.kept.copy_from(at + window as u64, &mut dst[window..]);
                state.window = window;
                state.have = Some(window + state.kept);
                window + state.kept
            }
        };
        if state.kept > 0 {
            // Kept bytes are not in the window: fold them here (again after `Pending`, which
            // changes nothing: folding is by offset).
            let kept_at = at + state.window as u64;
            ready!(self.poll_fold_bytes(cx, kept_at, &dst[state.window..have]))
                .map_err(|e| e.after(state.window as u64))?;
        }
        let from = at + have as u64;
        let rest = &mut dst[have..];
        if rest.is_empty() {
            return Poll::Ready(Ok(()));
        }
        // Straight into `dst`, past the window: a remainder of at least the capacity, or one
        // of at least `HELD_DIRECT` bytes the fetcher holds already (read-ahead bytes that
        // arrived), copied once from them rather than twice through the window.
        let direct = rest.len() >= self.capacity
            || (rest.len() >= HELD_DIRECT && self.fetcher.get_mut().held(from) >= rest.len());
        let read = if !direct {
            ready!(self.poll_fill_at(cx, from, rest.len()))
                .map_err(|e| e.after(have as u64))
                .and_then(|()| {
                    let held = self.window.bytes_from(from);
                    if held.len() < rest.len() {
                        return Err(Error::eof((have + held.len()) as u64));
                    }
                    rest.copy_from_slice(&held[..rest.len()]);
                    Ok(())
                })
        } else {
            if self.checksum.is_some() {
                ready!(self.poll_fold_until(cx, from)).map_err(|e| e.after(have as u64))?;
            }
            ready!(self.poll_read_direct(cx, from, rest, &mut state.direct))
                .map_err(|e| e.after(have as u64))
        };
        if let Err(e) = &read {
            // Keep every byte `dst` got (from the window, which a refill for the rest may have
            // moved past them, or straight from the source), or drop what is kept if no retry
            // can get past `e`. The window keeps what its refill fetched.
            if state.keep {
                let fetched = &dst[..have + state.direct];
                self.keep_for_retry(at, fetched.len(), e, |offset, out| {
                    out.copy_from_slice(&fetched[offset..offset + out.len()]);
                });
            }
        }
        Poll::Ready(read)
    }

    /// After a read at the position failed with `e`: keeps the bytes `[at, at + len)` it
    /// had, for its retry, if `e` is an error a retry can get past, at most
    /// [`MAX_KEPT_FOR_RETRY`] from where the kept bytes start; otherwise drops what is kept.
    /// `fill(offset, out)` writes the bytes at `at + offset`, and is asked only for those not
    /// kept yet. Every read that fails part-way calls it with all it had gathered from the
    /// position on: the progress guarantee rests on this (see `kept.rs`).
    pub(crate) fn keep_for_retry(
        &mut self,
        at: u64,
        len: usize,
        e: &Error,
        fill: impl FnOnce(usize, &mut [u8]),
    ) {
        let pos = self.cursor.pos();
        debug_assert!(at >= pos, "keeping bytes before the position");
        if e.can_succeed_on_retry() {
            self.kept.keep(at, len, MAX_KEPT_FOR_RETRY, fill);
            let at_hand = self.kept.at_hand_until(&self.window, pos);
            debug_assert!(
                at_hand
                    >= (at.saturating_add(len as u64))
                        .min(pos.saturating_add(MAX_KEPT_FOR_RETRY as u64)),
                "a failed read at {pos} had [{at}, {}) and its retry would fetch from {at_hand}",
                at.saturating_add(len as u64),
            );
        } else {
            self.kept.clear();
        }
    }

    /// Copies the bytes kept for a retry from `at` on into `dst`, as many as fit, and folds
    /// them into the checksum: how many (0 if none are kept at `at`). Calling it again after
    /// `Pending` starts over, which changes nothing.
    pub(crate) fn poll_take_kept(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        dst: &mut [u8],
    ) -> Poll<Result<usize, Error>> {
        let n = self.kept.copy_from(at, dst);
        if n > 0 {
            ready!(self.poll_fold_bytes(cx, at, &dst[..n]))?;
        }
        Poll::Ready(Ok(n))
    }

    /// One fetch at `at` straight into `buf`, past the window (a caller's buffer of at least
    /// the capacity), folded into the checksum after what comes before it: how many bytes came.
    pub(crate) fn poll_fetch_into(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<Result<usize, Error>> {
        if self.checksum.is_some() {
            ready!(self.poll_fold_until(cx, at))?;
        }
        let before = buf.filled().len();
        let requested = buf.remaining();
        let n = ready!(self.fetcher.poll_fetch_at(cx, at, buf))?;
        tracing::trace!(at, requested, read = n, "direct read");
        if let Some(checksum) = self.checksum.as_deref_mut() {
            checksum.fold(at, &buf.filled()[before..], self.cursor.pos());
        }
        Poll::Ready(Ok(n))
    }

    /// Fetches the bytes at `from + *done..` straight into `dst[*done..]` until `dst` is full.
    /// `*done` survives `Pending`, so short fetches are continued; a past-the-end error counts
    /// the bytes available from `from`.
    fn poll_read_direct(
        &mut self,
        cx: &mut Context<'_>,
        from: u64,
        dst: &mut [u8],
        done: &mut usize,
    ) -> Poll<Result<(), Error>> {
        while *done < dst.len() {
            let mut buf = ReadBuf::new(&mut dst[*done..]);
            match ready!(self.poll_fetch_into(cx, from + *done as u64, &mut buf))? {
                0 => return Poll::Ready(Err(Error::eof(*done as u64))),
                n => *done += n,
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Keeps the window's bytes from `start` on (all of them if `start` is outside it) and
    /// fetches as much after them as it has room for, once: how many bytes came.
    fn poll_refill(&mut self, cx: &mut Context<'_>, start: u64) -> Poll<Result<usize, Error>> {
        self.window.keep(start);
        let end = self.window.end();
        let mut spare = ReadBuf::new(self.window.spare(self.capacity));
        let room = spare.remaining();
        let n = ready!(self.fetcher.poll_fetch_at(cx, end, &mut spare))?;
        self.window.commit(n);
        tracing::trace!(at = end, requested = room, read = n, "window refill");
        Poll::Ready(Ok(n))
    }

    /// Folds `bytes`, which sit at `at` and are not in the window, into the checksum after
    /// what comes before them, if the input is checksumming.
    fn poll_fold_bytes(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        bytes: &[u8],
    ) -> Poll<Result<(), Error>> {
        ready!(self.poll_fold_until(cx, at))?;
        if let Some(checksum) = self.checksum.as_deref_mut() {
            checksum.fold(at, bytes, self.cursor.pos());
        }
        Poll::Ready(Ok(()))
    }

    /// Folds the bytes up to `until` into the checksum, if the input is checksumming: from the
    /// window where it holds them, otherwise fetched into it (bytes a seek skipped). Progress
    /// is kept across `Pending`. Stops early, without an error, where the data ends.
    pub(crate) fn poll_fold_until(
        &mut self,
        cx: &mut Context<'_>,
        until: u64,
    ) -> Poll<Result<(), Error>> {
        let pos = self.cursor.pos();
        loop {
            let Some(checksum) = self.checksum.as_deref_mut() else {
                return Poll::Ready(Ok(()));
            };
            let upto = checksum.upto();
            if upto >= until || checksum.backward().is_some() || checksum.end() == Some(upto) {
                return Poll::Ready(Ok(()));
            }
            let held = self.window.bytes_from(upto);
            if !held.is_empty() {
                let n = held.len().min((until - upto) as usize);
                checksum.fold(upto, &held[..n], pos);
                continue;
            }
            // Bytes no longer (or not yet) in the window: fetch them into it, from `upto`.
            if ready!(self.poll_refill(cx, upto))? == 0 {
                // The end: nothing more to fold, and nothing to fetch here again.
                if let Some(checksum) = self.checksum.as_deref_mut() {
                    checksum.set_end(upto);
                }
                return Poll::Ready(Ok(()));
            }
        }
    }
}

impl<F: fmt::Debug> fmt::Debug for ReadEngine<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadEngine")
            .field("position", &self.cursor.pos())
            .field("window", &(self.window.start()..self.window.end()))
            .field("capacity", &self.capacity)
            .field("fetcher", &self.fetcher)
            .field("checksum", &self.checksum)
            .finish()
    }
}
