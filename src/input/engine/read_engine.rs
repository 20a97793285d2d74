//! The read engine: the window, the fetcher that refills it, the bytes a failed read kept for
//! its retry, and the checksum folded as bytes leave the window.
//!
//! [`Refill`] works on offsets. The position is the input's alone: calls that fold bytes into
//! the checksum (which marks the last point folded at or before the position) or keep bytes
//! for a retry (which start at the position) are told where it is.

use std::fmt;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use tokio::io::ReadBuf;

use crate::error::Error;
use crate::input::checksum::lazy_crc::Checksum;
use crate::input::engine::fetcher::Fetcher;
use crate::input::engine::kept::Kept;
use crate::input::engine::window::Window;
use crate::input::fetch::Fetch;

/// The most bytes a failed read keeps for its retry
/// ([`AsyncBufferedInput::MAX_KEPT_FOR_RETRY`](crate::AsyncBufferedInput::MAX_KEPT_FOR_RETRY)).
pub(crate) const MAX_KEPT_FOR_RETRY: usize = 16 << 20;

/// The least remainder of a read that goes straight into the caller's buffer, past the window,
/// when the fetcher holds all of it already: below it, the window's copy costs less than the
/// fetch's own work.
const HELD_DIRECT: usize = 4 << 10;

/// The bytes an input has at hand and the way to more of them.
///
/// Invariants (`debug_assert_invariants`): the window holds at most `capacity` bytes, and
/// `capacity >= 1`.
pub(crate) struct Refill<F> {
    // The source's bytes at hand, at most `capacity` of them.
    window: Window,
    capacity: usize,
    fetcher: Fetcher<F>,
    // The CRC32 of the bytes consumed since `start_checksum`, folded in the slow paths only
    // (`checksum.rs`); boxed, so that an input that does not checksum stays small.
    checksum: Option<Box<Checksum>>,
    // The bytes reads at the position fetched before they failed, kept for their retry, which
    // starts at the same position and fetches only the rest (`keep_for_retry`). At most
    // `MAX_KEPT_FOR_RETRY` bytes; dropped by the input when it sets the position (seeks, reads
    // that went past the window) and on `release`. Window hits only advance the position, past
    // bytes that stay correct for their offsets: they leave them.
    kept: Kept,
}

/// The progress of a [`poll_read_exact_at`](Refill::poll_read_exact_at).
#[derive(Debug)]
pub(crate) struct ReadExact {
    /// The bytes of the destination's start that are there (copied from the window, then from
    /// the bytes kept by a failed attempt) at the first poll; `None` before it.
    have: Option<usize>,
    /// Of `have`: those copied from the window, and those kept by a failed attempt.
    window: usize,
    kept: usize,
    /// The bytes fetched straight into the destination so far, after `have`.
    direct: usize,
    /// Whether a failure keeps what was fetched (`false` for a step of a longer read).
    keep: bool,
}

impl Default for ReadExact {
    fn default() -> Self {
        Self {
            have: None,
            window: 0,
            kept: 0,
            direct: 0,
            keep: true,
        }
    }
}

impl ReadExact {
    /// The progress of a step of a longer read, which keeps its bytes itself when it fails.
    pub(crate) fn step() -> Self {
        Self {
            keep: false,
            ..Self::default()
        }
    }

    /// The bytes that did not come from the window: fetched straight into the destination, or
    /// kept from a failed attempt (for `stats`).
    pub(crate) fn direct(&self) -> usize {
        self.kept + self.direct
    }

    /// How many bytes at the destination's start are there.
    pub(crate) fn done(&self) -> usize {
        self.have.unwrap_or(0) + self.direct
    }
}

impl<F> Refill<F> {
    /// An empty window of `capacity` bytes (at least 1) over `fetcher`.
    pub(crate) fn new(capacity: usize, fetcher: Fetcher<F>) -> Self {
        debug_assert!(capacity >= 1, "a window of 0 bytes");
        Self {
            window: Window::new(),
            capacity,
            fetcher,
            checksum: None,
            kept: Kept::default(),
        }
    }

    /// The window.
    #[inline(always)]
    pub(crate) fn window(&self) -> &Window {
        &self.window
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

    /// Drops the bytes kept for a retry: the position was set.
    #[inline]
    pub(crate) fn clear_kept(&mut self) {
        self.kept.clear();
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

    /// Refuses a seek from the position `pos` to `to` if it goes back while checksumming (the
    /// fallible seeks).
    #[inline]
    pub(crate) fn check_seek(&self, pos: u64, to: u64) -> Result<(), Error> {
        match self.checksum.as_deref() {
            Some(checksum) if to < pos => Err(Error::InvalidInput(format!(
                "a seek back to {to} while checksumming from {}: a checksum covers one forward \
                 pass",
                checksum.start()
            ))),
            _ => Ok(()),
        }
    }

    /// A seek from the position `pos` to `to`: one back voids the checksum.
    #[inline]
    pub(crate) fn note_seek(&mut self, pos: u64, to: u64) {
        if let Some(checksum) = self.checksum.as_deref_mut() {
            if to < pos {
                checksum.seek_back(to);
            }
        }
    }

    /// Hands out the window's first `n` bytes without copying (`n <= ` its length; the caller
    /// has folded them into the checksum); the window then starts `n` bytes later.
    pub(crate) fn split_window(&mut self, n: usize) -> Bytes {
        let head = self.window.split_to(n);
        self.debug_assert_invariants();
        head
    }

    /// Folds what the window holds of the bytes consumed up to the position `pos` (before the
    /// window is dropped); the rest is read when next folded.
    pub(crate) fn fold_window(&mut self, pos: u64) {
        if let Some(checksum) = self.checksum.as_deref_mut() {
            let upto = checksum.upto();
            let held = self.window.bytes_from(upto);
            let n = held.len().min(pos.saturating_sub(upto) as usize);
            checksum.fold(upto, &held[..n], pos);
        }
    }

    fn debug_assert_invariants(&self) {
        debug_assert!(
            self.window.len() <= self.capacity,
            "window holds {} bytes, capacity {}",
            self.window.len(),
            self.capacity
        );
    }
}

impl<F: Fetch> Refill<F> {
    /// Gives back the window's buffer, the kept bytes and what the fetcher holds, folding what
    /// the window holds of the consumed bytes (up to the position `pos`) first.
    pub(crate) fn release(&mut self, pos: u64) {
        self.kept.clear();
        self.fold_window(pos);
        self.window.release();
        self.fetcher.get_mut().release();
    }

    /// Makes the window hold the bytes `[at, at + need)`, or everything from `at` to the end if
    /// that is shorter (the caller tells the two apart). `need` is capped at the capacity.
    ///
    /// If the window does not hold them, it keeps only its bytes from the refill's start on and
    /// fetches as much as it can hold after them, continuing short fetches until `need` bytes
    /// are there or the source ends. A refill that continues the window (`at` inside it or at
    /// its end) starts at `at`; one that does not (a seek elsewhere) starts at the block of
    /// `capacity` bytes, aligned to the capacity, that holds `at` (moved back only as far as
    /// `need` requires), so later reads anywhere in that block, before `at` too, are served
    /// without another refill. What leaves the window is folded into the checksum first (`pos`:
    /// the input's position).
    pub(crate) fn poll_fill_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        need: usize,
        pos: u64,
    ) -> Poll<Result<(), Error>> {
        let need = need.min(self.capacity);
        loop {
            if self.window.bytes_from(at).len() >= need {
                return Poll::Ready(Ok(()));
            }
            // What leaves the window is checksummed first.
            if self.checksum.is_some() {
                ready!(self.poll_fold_until(cx, at, pos))?;
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
            self.window.keep(start);
            self.debug_assert_invariants();
            let end = self.window.end();
            let mut spare = ReadBuf::new(self.window.spare(self.capacity));
            let room = spare.remaining();
            let n = ready!(self.fetcher.poll_fetch_at(cx, end, &mut spare))?;
            self.window.commit(n);
            tracing::trace!(at = end, requested = room, read = n, "window refill");
            if n == 0 {
                return Poll::Ready(Ok(()));
            }
        }
    }

    /// Fills `dst` with the bytes `[at, at + dst.len())`: one copy of what the window holds and
    /// of what a failed attempt kept (`kept`), then one fetch for the remainder (continued if it
    /// comes back short), straight into `dst` if the remainder is at least the capacity (or at
    /// least `HELD_DIRECT` bytes the fetcher holds already), through a refilled window
    /// otherwise. `state` starts as `ReadExact::default()` (or
    /// `ReadExact::step()`) and carries the progress across `Pending`; a past-the-end error
    /// counts the bytes available from `at`. `pos` is the input's position, which the read does
    /// not move.
    ///
    /// When it fails, it keeps the bytes `dst` got for its retry (`keep_for_retry`), unless
    /// `state` is a step of a longer read, which keeps its own; when no retry can get past its
    /// error, it drops what is kept.
    pub(crate) fn poll_read_exact_at(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        dst: &mut [u8],
        state: &mut ReadExact,
        pos: u64,
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
        if state.kept > 0 && self.checksum.is_some() {
            // Kept bytes are not in the window: fold them here, after what comes before them
            // (folding is by offset, so doing it again after `Pending` changes nothing).
            let kept_at = at + state.window as u64;
            ready!(self.poll_fold_until(cx, kept_at, pos))
                .map_err(|e| e.after(state.window as u64))?;
            if let Some(checksum) = self.checksum.as_deref_mut() {
                checksum.fold(kept_at, &dst[state.window..have], pos);
            }
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
            ready!(self.poll_fill_at(cx, from, rest.len(), pos))
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
                ready!(self.poll_fold_until(cx, from, pos)).map_err(|e| e.after(have as u64))?;
            }
            ready!(self.poll_read_direct(cx, from, rest, &mut state.direct, pos))
                .map_err(|e| e.after(have as u64))
        };
        if let Err(e) = &read {
            // Keep every byte `dst` got (from the window, which a refill for the rest may have
            // moved past them, or straight from the source), or drop what is kept if no retry
            // can get past `e`. The window keeps what its refill fetched.
            if state.keep {
                let fetched = &dst[..have + state.direct];
                self.keep_for_retry(at, fetched.len(), e, pos, |offset, out| {
                    out.copy_from_slice(&fetched[offset..offset + out.len()]);
                });
            }
        }
        Poll::Ready(read)
    }

    /// After a read at the position `pos` failed with `e`: keeps the bytes `[at, at + len)` it
    /// had, for its retry, if `e` is an error a retry can get past, at most
    /// [`MAX_KEPT_FOR_RETRY`] from where the kept bytes start; otherwise drops what is kept.
    /// `fill(offset, out)` writes the bytes at `at + offset`, and is asked only for those not
    /// kept yet.
    ///
    /// The progress guarantee rests on this: every read that fails part-way calls it with all
    /// it had gathered from the position on (`at` is the position, or continues bytes kept
    /// from it), wherever those bytes came from: the window (which a refill for the rest moved
    /// past them), the caller's buffer, the bytes of a varint or a string's prefix. The
    /// window keeps what its refills fetched past them, and the fetcher the read-ahead chunks
    /// that arrived. So its retry, which starts at the same position, gathers them again
    /// without a fetch (the window first, then what is kept: `poll_read_exact_at`,
    /// `poll_peek_varint`), and fetches only what is missing, where the failed attempt
    /// stopped: it never goes back to refill the window before them, which would drop what
    /// the window holds past them. Checked by `at_hand_until` below.
    pub(crate) fn keep_for_retry(
        &mut self,
        at: u64,
        len: usize,
        e: &Error,
        pos: u64,
        fill: impl FnOnce(usize, &mut [u8]),
    ) {
        debug_assert!(at >= pos, "keeping bytes before the position");
        if e.can_succeed_on_retry() {
            self.kept.keep(at, len, MAX_KEPT_FOR_RETRY, fill);
            debug_assert!(
                self.at_hand_until(pos)
                    >= (at.saturating_add(len as u64))
                        .min(pos.saturating_add(MAX_KEPT_FOR_RETRY as u64)),
                "a failed read at {pos} had [{at}, {}) and its retry would fetch from {}",
                at.saturating_add(len as u64),
                self.at_hand_until(pos)
            );
        } else {
            self.kept.clear();
        }
    }

    /// Copies the bytes kept for a retry from `at` on into `dst`, as many as fit, and folds
    /// them into the checksum (after what comes before them) if the input is checksumming:
    /// they are not in the window, where folding finds bytes. Returns how many (0 if none are
    /// kept at `at`). Calling it again after `Pending` starts over, which changes nothing.
    /// `pos` is the input's position.
    pub(crate) fn poll_take_kept(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        dst: &mut [u8],
        pos: u64,
    ) -> Poll<Result<usize, Error>> {
        if self.kept.end_from(at).is_none() {
            return Poll::Ready(Ok(0));
        }
        if self.checksum.is_some() {
            ready!(self.poll_fold_until(cx, at, pos))?;
        }
        let n = self.kept.copy_from(at, dst);
        if let Some(checksum) = self.checksum.as_deref_mut() {
            checksum.fold(at, &dst[..n], pos);
        }
        Poll::Ready(Ok(n))
    }

    /// Where the run of bytes from `from` on that a read gets without a fetch ends: those the
    /// window holds, and those kept for a retry, in either order.
    fn at_hand_until(&self, from: u64) -> u64 {
        let mut to = from;
        loop {
            let window = self.window.bytes_from(to).len() as u64;
            let next = match self.kept.end_from(to) {
                Some(end) => end.max(to + window),
                None => to + window,
            };
            if next == to {
                return to;
            }
            to = next;
        }
    }

    /// One fetch at `at` straight into `buf`, past the window (a caller's buffer of at least
    /// the capacity), folded into the checksum: how many bytes came.
    pub(crate) fn poll_fetch_into(
        &mut self,
        cx: &mut Context<'_>,
        at: u64,
        buf: &mut ReadBuf<'_>,
        pos: u64,
    ) -> Poll<Result<usize, Error>> {
        if self.checksum.is_some() {
            ready!(self.poll_fold_until(cx, at, pos))?;
        }
        let before = buf.filled().len();
        let n = ready!(self.fetcher.poll_fetch_at(cx, at, buf))?;
        tracing::trace!(at, read = n, "direct read");
        if let Some(checksum) = self.checksum.as_deref_mut() {
            checksum.fold(at, &buf.filled()[before..], pos);
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
        pos: u64,
    ) -> Poll<Result<(), Error>> {
        while *done < dst.len() {
            let at = from + *done as u64;
            let mut buf = ReadBuf::new(&mut dst[*done..]);
            let n = ready!(self.fetcher.poll_fetch_at(cx, at, &mut buf))?;
            tracing::trace!(at, requested = dst.len() - *done, read = n, "direct read");
            if let Some(checksum) = self.checksum.as_deref_mut() {
                checksum.fold(at, &dst[*done..*done + n], pos);
            }
            if n == 0 {
                return Poll::Ready(Err(Error::eof(*done as u64)));
            }
            *done += n;
        }
        Poll::Ready(Ok(()))
    }

    /// Folds the bytes up to `until` into the checksum, if the input is checksumming: from the
    /// window where it holds them, otherwise fetched into it (bytes a seek skipped). Progress
    /// is kept across `Pending`. Stops early, without an error, where the data ends. `pos` is
    /// the input's position, for the checksum's mark.
    pub(crate) fn poll_fold_until(
        &mut self,
        cx: &mut Context<'_>,
        until: u64,
        pos: u64,
    ) -> Poll<Result<(), Error>> {
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
            self.window.keep(upto);
            let mut spare = ReadBuf::new(self.window.spare(self.capacity));
            let n = ready!(self.fetcher.poll_fetch_at(cx, upto, &mut spare))?;
            self.window.commit(n);
            if n == 0 {
                // The end: nothing more to fold, and nothing to fetch here again.
                if let Some(checksum) = self.checksum.as_deref_mut() {
                    checksum.set_end(upto);
                }
                return Poll::Ready(Ok(()));
            }
        }
    }
}

impl<F: fmt::Debug> fmt::Debug for Refill<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Refill")
            .field("window", &(self.window.start()..self.window.end()))
            .field("capacity", &self.capacity)
            .field("fetcher", &self.fetcher)
            .field("checksum", &self.checksum)
            .finish()
    }
}
