//! An in-memory stream that short-reads, returns `Pending` (by itself, or held by a gate) and
//! injects errors.

use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

use crate::seek::resolve_seek;
use crate::{GateCtl, Rng};
use crate::{HostileConfig, HostileLog, SeekFail, HOSTILE_READ_ERROR, HOSTILE_SEEK_ERROR};

/// An in-memory `AsyncRead + AsyncSeek` over a `Vec<u8>` with configurable misbehaviour (see
/// [`HostileConfig`]).
///
/// It is also strict about the `AsyncSeek` protocol, like `tokio::fs::File`:
/// * `start_seek` while a previous seek has not been completed by `poll_complete` fails with
///   `ErrorKind::Other` (tokio's File does exactly this);
/// * `poll_read` while a seek is in flight fails with `ErrorKind::Other` (a caller must drive
///   `poll_complete` to completion before reading, otherwise it would read at the old position).
///
/// Seeking past the end is allowed (reads there return 0 bytes); seeking before 0 fails with
/// `InvalidInput`.
///
/// A stream made by [`Hostile::gated`] is held by the test instead: its reads and seek
/// completions stay `Pending` until released through its [`GateCtl`], and its reads deliver at
/// most `max_read` bytes each (short reads) and at most the gate's remaining budget.
#[derive(Debug)]
pub struct Hostile {
    data: Vec<u8>,
    pos: u64,
    cfg: HostileConfig,
    rng: Rng,
    read_polls: u64,
    complete_polls: u64,
    delivered: u64,
    read_failed: bool,
    seeks_started: u64,
    seek_failed: bool,
    in_flight: Option<(u64, SeekFrom)>,
    log: Arc<HostileLog>,
    /// The most bytes one read delivers.
    max_read: usize,
    /// The test's hold on reads and seek completions, for a stream made by [`Hostile::gated`].
    gate: Option<Arc<GateCtl>>,
}

impl Hostile {
    /// A stream over `data` at position 0, misbehaving as `cfg` says.
    pub fn new(data: Vec<u8>, cfg: HostileConfig) -> Self {
        Hostile {
            data,
            pos: 0,
            rng: Rng::new(cfg.seed),
            cfg,
            read_polls: 0,
            complete_polls: 0,
            delivered: 0,
            read_failed: false,
            seeks_started: 0,
            seek_failed: false,
            in_flight: None,
            log: Arc::new(HostileLog::default()),
            max_read: usize::MAX,
            gate: None,
        }
    }

    /// A well-behaved stream over `data` whose reads deliver at most `max_read` bytes each and
    /// which the returned [`GateCtl`] holds `Pending` (reads and seeks open at first, unlimited).
    pub fn gated(data: Vec<u8>, max_read: usize) -> (Self, Arc<GateCtl>) {
        let ctl = Arc::new(GateCtl::open());
        let hostile = Hostile {
            max_read: max_read.max(1),
            gate: Some(ctl.clone()),
            ..Hostile::new(data, HostileConfig::default())
        };
        (hostile, ctl)
    }

    /// Handle on what the source did (keep it before moving the source into the input).
    pub fn log(&self) -> Arc<HostileLog> {
        self.log.clone()
    }

    /// Current source position (the "inner cursor").
    pub fn pos(&self) -> u64 {
        self.pos
    }
}

impl AsyncRead for Hostile {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if this.cfg.pending {
            this.read_polls += 1;
            if this.read_polls % 2 == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        if let Some((_, from)) = this.in_flight {
            return Poll::Ready(Err(io::Error::other(format!(
                "Hostile: poll_read while a seek ({from:?}) is in flight; poll_complete must \
                 return Ready first"
            ))));
        }
        let budget = this
            .gate
            .as_ref()
            .map_or(u64::MAX, |gate| gate.read_budget());
        if budget == 0 {
            if let Some(gate) = &this.gate {
                gate.wake_later(cx.waker());
            }
            return Poll::Pending;
        }
        let mut limit = this.max_read.min(budget.min(usize::MAX as u64) as usize);
        if let Some(after) = this.cfg.fail_read_after {
            if !this.read_failed {
                if this.delivered >= after {
                    this.read_failed = true;
                    this.log.read_error_fired.store(true, Ordering::SeqCst);
                    return Poll::Ready(Err(io::Error::new(
                        HOSTILE_READ_ERROR,
                        "Hostile: injected read error (no digits here, so position checks cannot match it)",
                    )));
                }
                limit = limit.min((after - this.delivered) as usize);
            }
        }
        let len = this.data.len() as u64;
        let start = this.pos.min(len) as usize;
        let mut n = buf.remaining().min(this.data.len() - start).min(limit);
        if this.cfg.short_reads {
            n = n.min(1 + this.rng.below(13) as usize);
        }
        buf.put_slice(&this.data[start..start + n]);
        this.pos += n as u64;
        this.delivered += n as u64;
        this.log.delivered.fetch_add(n as u64, Ordering::SeqCst);
        if let Some(gate) = &this.gate {
            gate.spend(n as u64);
            gate.reads.fetch_add(1, Ordering::SeqCst);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for Hostile {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        if let Some((_, prev)) = this.in_flight {
            return Err(io::Error::other(format!(
                "Hostile: start_seek({position:?}) while another seek ({prev:?}) is in flight; \
                 call poll_complete first"
            )));
        }
        let idx = this.seeks_started;
        this.seeks_started += 1;
        this.log.seeks.fetch_add(1, Ordering::SeqCst);
        if let Some(gate) = &this.gate {
            gate.seeks.fetch_add(1, Ordering::SeqCst);
        }
        if this.cfg.fail_seek == Some((idx, SeekFail::InStart)) && !this.seek_failed {
            this.seek_failed = true;
            this.log.seek_error_fired.store(true, Ordering::SeqCst);
            return Err(io::Error::new(
                HOSTILE_SEEK_ERROR,
                "Hostile: injected start_seek failure",
            ));
        }
        this.in_flight = Some((idx, position));
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        if this.cfg.pending {
            this.complete_polls += 1;
            if this.complete_polls % 2 == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        let Some((idx, from)) = this.in_flight else {
            return Poll::Ready(Ok(this.pos));
        };
        if let Some(gate) = this.gate.as_ref().filter(|gate| !gate.seeks_are_open()) {
            gate.wake_later(cx.waker());
            return Poll::Pending;
        }
        this.in_flight = None;
        if this.cfg.fail_seek == Some((idx, SeekFail::InComplete)) && !this.seek_failed {
            this.seek_failed = true;
            this.log.seek_error_fired.store(true, Ordering::SeqCst);
            return Poll::Ready(Err(io::Error::new(
                HOSTILE_SEEK_ERROR,
                "Hostile: injected seek failure in poll_complete",
            )));
        }
        let res = resolve_seek(from, this.pos, this.data.len() as u64);
        if let Ok(p) = res {
            this.pos = p;
        }
        Poll::Ready(res)
    }
}
