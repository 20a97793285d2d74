//! A stream whose reads and seeks wait until the test lets them through.

use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};

use crate::seek::resolve_seek;
use crate::GateCtl;

/// An in-memory source whose reads and seek completions stay `Pending` until released through
/// its [`GateCtl`]. Reads deliver at most `max_read` bytes each (short reads) and at most the
/// remaining budget. Like [`Hostile`](crate::Hostile) (and `tokio::fs::File`), `start_seek`
/// while a seek is in flight fails with `ErrorKind::Other`, and so does `poll_read`.
#[derive(Debug)]
pub struct Gated {
    data: Vec<u8>,
    pos: u64,
    max_read: usize,
    in_flight: Option<SeekFrom>,
    ctl: Arc<GateCtl>,
}

impl Gated {
    /// A source with reads and seeks open (unlimited).
    pub fn new(data: Vec<u8>, max_read: usize) -> (Self, Arc<GateCtl>) {
        let ctl = Arc::new(GateCtl::open());
        (
            Gated {
                data,
                pos: 0,
                max_read: max_read.max(1),
                in_flight: None,
                ctl: ctl.clone(),
            },
            ctl,
        )
    }
}

impl AsyncRead for Gated {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(from) = this.in_flight {
            return Poll::Ready(Err(io::Error::other(format!(
                "Gated: poll_read while a seek ({from:?}) is in flight"
            ))));
        }
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let budget = this.ctl.read_budget();
        if budget == 0 {
            this.ctl.wake_later(cx.waker());
            return Poll::Pending;
        }
        let start = this.pos.min(this.data.len() as u64) as usize;
        let n = buf
            .remaining()
            .min(this.data.len() - start)
            .min(this.max_read)
            .min(budget.min(usize::MAX as u64) as usize);
        this.ctl.spend(n as u64);
        buf.put_slice(&this.data[start..start + n]);
        this.pos += n as u64;
        this.ctl.reads.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for Gated {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        if let Some(prev) = this.in_flight {
            return Err(io::Error::other(format!(
                "Gated: start_seek({position:?}) while another seek ({prev:?}) is in flight; \
                 call poll_complete first"
            )));
        }
        this.ctl.seeks.fetch_add(1, Ordering::SeqCst);
        this.in_flight = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        let Some(from) = this.in_flight else {
            return Poll::Ready(Ok(this.pos));
        };
        if !this.ctl.seeks_are_open() {
            this.ctl.wake_later(cx.waker());
            return Poll::Pending;
        }
        this.in_flight = None;
        let res = resolve_seek(from, this.pos, this.data.len() as u64);
        if let Ok(p) = res {
            this.pos = p;
        }
        Poll::Ready(res)
    }
}
