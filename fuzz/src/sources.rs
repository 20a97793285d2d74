//! Hostile sources over the case's data: short reads, `Pending`, injected errors, refused seeks,
//! driven by [`Faults`]. Both count what they inject, so that the harness can tell an injected
//! error from a wrong one.

use std::future::Future;
use std::io::{self, ErrorKind, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use abi_testkit::splitmix64;
use async_buffered_input::source::PositionalSource;
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

use crate::case::Faults;

/// The kind of an injected read error.
pub const READ_ERROR: ErrorKind = ErrorKind::ConnectionReset;
/// The kind of an injected seek error (stream).
pub const SEEK_ERROR: ErrorKind = ErrorKind::TimedOut;
/// The kind of an injected length error (positional).
pub const LENGTH_ERROR: ErrorKind = ErrorKind::ConnectionAborted;
/// Every kind the sources inject; no correct operation fails so otherwise.
pub const INJECTED_KINDS: [ErrorKind; 3] = [READ_ERROR, SEEK_ERROR, LENGTH_ERROR];

/// How many errors a source injected, shared with the harness.
pub type Injected = Arc<AtomicU64>;

fn inject(injected: &Injected, kind: ErrorKind, what: &str) -> io::Error {
    injected.fetch_add(1, Ordering::SeqCst);
    io::Error::new(kind, format!("injected {what} failure"))
}

/// The splitmix64 sequence from `state`, for short-read sizes.
fn next(state: &mut u64) -> u64 {
    let z = splitmix64(*state);
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z
}

/// Whether the `polls`-th poll (counted from 1) returns `Pending`.
fn pends(faults: &Faults, polls: u64) -> bool {
    faults.pending > 0 && polls.is_multiple_of(u64::from(faults.pending) + 1)
}

/// An `AsyncRead + AsyncSeek` over the data, strict about the seek protocol as tokio's `File`
/// is: reading or starting a seek while a seek is in flight is an error (of kind `Other`, which
/// the harness never accepts).
#[derive(Debug)]
pub struct HostileStream {
    data: Bytes,
    pos: u64,
    faults: Faults,
    rng: u64,
    read_polls: u64,
    complete_polls: u64,
    read_calls: u64,
    delivered: u64,
    fail_after_fired: bool,
    seek_fail_fired: bool,
    in_flight: Option<SeekFrom>,
    injected: Injected,
    /// `poll_read` calls that returned `Ready`, as `Stats::underlying_reads` counts them.
    pub ready_reads: u64,
    /// `start_seek` calls, as `Stats::underlying_seeks` counts them.
    pub seeks: u64,
    /// Bytes delivered, as `Stats::bytes_from_source` counts them.
    pub bytes: u64,
}

impl HostileStream {
    pub fn new(data: Bytes, faults: Faults, injected: Injected) -> Self {
        Self {
            data,
            pos: 0,
            rng: u64::from(faults.seed),
            faults,
            read_polls: 0,
            complete_polls: 0,
            read_calls: 0,
            delivered: 0,
            fail_after_fired: false,
            seek_fail_fired: false,
            in_flight: None,
            injected,
            ready_reads: 0,
            seeks: 0,
            bytes: 0,
        }
    }

    /// Moves the cursor behind the input's back (through `get_mut()`).
    pub fn jump(&mut self, pos: u64) {
        self.pos = pos;
    }
}

impl AsyncRead for HostileStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        me.read_polls += 1;
        if pends(&me.faults, me.read_polls) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        me.ready_reads += 1;
        if let Some(seek) = me.in_flight {
            return Poll::Ready(Err(io::Error::other(format!(
                "protocol violation: poll_read while the seek {seek:?} is in flight"
            ))));
        }
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        me.read_calls += 1;
        if me.faults.fail_every > 0
            && me
                .read_calls
                .is_multiple_of(u64::from(me.faults.fail_every) + 1)
        {
            return Poll::Ready(Err(inject(&me.injected, READ_ERROR, "read")));
        }
        let mut limit = usize::MAX;
        if let (Some(after), false) = (me.faults.fail_after, me.fail_after_fired) {
            let after = u64::from(after);
            if me.delivered >= after {
                me.fail_after_fired = true;
                return Poll::Ready(Err(inject(&me.injected, READ_ERROR, "read")));
            }
            limit = (after - me.delivered) as usize;
        }
        let len = me.data.len() as u64;
        let start = me.pos.min(len) as usize;
        let mut n = buf.remaining().min(me.data.len() - start).min(limit);
        if me.faults.chunk > 0 {
            n = n.min(1 + (next(&mut me.rng) % u64::from(me.faults.chunk)) as usize);
        }
        buf.put_slice(&me.data[start..start + n]);
        me.pos += n as u64;
        me.delivered += n as u64;
        me.bytes += n as u64;
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for HostileStream {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        if let Some(seek) = me.in_flight {
            return Err(io::Error::other(format!(
                "protocol violation: start_seek({position:?}) while the seek {seek:?} is in \
                 flight"
            )));
        }
        let k = me.seeks;
        me.seeks += 1;
        if me.faults.seek_fail == Some(k as u8)
            && k < 16
            && k.is_multiple_of(2)
            && !me.seek_fail_fired
        {
            me.seek_fail_fired = true;
            return Err(inject(&me.injected, SEEK_ERROR, "start_seek"));
        }
        me.in_flight = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let me = self.get_mut();
        me.complete_polls += 1;
        if pends(&me.faults, me.complete_polls) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let Some(seek) = me.in_flight.take() else {
            return Poll::Ready(Ok(me.pos));
        };
        let k = me.seeks - 1;
        if me.faults.seek_fail == Some(k as u8)
            && k < 16
            && !k.is_multiple_of(2)
            && !me.seek_fail_fired
        {
            me.seek_fail_fired = true;
            return Poll::Ready(Err(inject(&me.injected, SEEK_ERROR, "seek")));
        }
        let len = me.data.len() as u64;
        let target = match seek {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => me.pos.checked_add_signed(d),
            SeekFrom::End(d) => len.checked_add_signed(d),
        };
        let Some(target) = target else {
            return Poll::Ready(Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("seek {seek:?} to a negative or overflowing position"),
            )));
        };
        if me.faults.refuse_far_seeks && target > len.saturating_add(64) {
            return Poll::Ready(Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("seek to {target}: past the largest file (refused like EINVAL)"),
            )));
        }
        me.pos = target;
        Poll::Ready(Ok(target))
    }
}

/// A future that returns `Pending` once (waking itself) if asked to, then its value.
struct YieldThen<T> {
    pend: bool,
    value: Option<T>,
}

impl<T: Unpin> Future for YieldThen<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let me = self.get_mut();
        if std::mem::take(&mut me.pend) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(
            me.value
                .take()
                .expect("YieldThen polled after it completed"),
        )
    }
}

/// A [`PositionalSource`] over the data: requests that are `Pending` first (so the fetcher
/// spawns them), that fail, bytes "at hand" in short pieces, length requests that fail. It keeps
/// the contract: a request returns all the bytes asked for unless the data ends first.
#[derive(Debug)]
pub struct HostileSource {
    data: Bytes,
    faults: Faults,
    state: Mutex<SourceState>,
    injected: Injected,
}

#[derive(Debug, Default)]
struct SourceState {
    rng: u64,
    polls: u64,
    requests: u64,
    delivered: u64,
    fail_after_fired: bool,
    length_requests: u64,
    length_fail_fired: bool,
}

impl HostileSource {
    pub fn new(data: Bytes, faults: Faults, injected: Injected) -> Self {
        Self {
            data,
            state: Mutex::new(SourceState {
                rng: u64::from(faults.seed),
                ..SourceState::default()
            }),
            faults,
            injected,
        }
    }
}

impl PositionalSource for HostileSource {
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send {
        let mut st = self.state.lock().expect("source state");
        st.polls += 1;
        st.requests += 1;
        let pend = pends(&self.faults, st.polls);
        let size = self.data.len() as u64;
        let start = offset.min(size);
        let end = start.saturating_add(len as u64).min(size);
        let n = end - start;
        let value = if self.faults.fail_every > 0
            && st
                .requests
                .is_multiple_of(u64::from(self.faults.fail_every) + 1)
        {
            Err(inject(&self.injected, READ_ERROR, "request"))
        } else if self.faults.fail_after.is_some_and(|after| {
            !st.fail_after_fired && n > 0 && st.delivered + n > u64::from(after)
        }) {
            st.fail_after_fired = true;
            Err(inject(&self.injected, READ_ERROR, "request"))
        } else {
            st.delivered += n;
            Ok(self.data.slice(start as usize..end as usize))
        };
        YieldThen {
            pend,
            value: Some(value),
        }
    }

    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send {
        let mut st = self.state.lock().expect("source state");
        st.polls += 1;
        let pend = pends(&self.faults, st.polls);
        let k = st.length_requests;
        st.length_requests += 1;
        let value = if self.faults.seek_fail == Some(k as u8) && k < 16 && !st.length_fail_fired {
            st.length_fail_fired = true;
            Err(inject(&self.injected, LENGTH_ERROR, "length request"))
        } else {
            Ok(self.data.len() as u64)
        };
        YieldThen {
            pend,
            value: Some(value),
        }
    }

    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        if self.faults.chunk == 0 {
            return 0;
        }
        let mut st = self.state.lock().expect("source state");
        let size = self.data.len() as u64;
        let start = offset.min(size) as usize;
        let n = (next(&mut st.rng) % (u64::from(self.faults.chunk) + 1)) as usize;
        let n = n.min(buf.len()).min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        n
    }
}
