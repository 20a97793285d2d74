//! tokio's I/O traits on the input: `AsyncRead`, `AsyncBufRead`, `AsyncSeek`.

use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncBufRead, AsyncRead, AsyncSeek, ReadBuf};

use crate::error::{Amount, Error};
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

impl<F: Fetch> AsyncRead for AsyncBufferedInput<F> {
    /// Reads what the window holds at the position; if it holds nothing there, either fetches
    /// straight into `buf` (when `buf` has room for at least the capacity) or refills the window
    /// once. May return fewer bytes than `buf` has room for; 0 only at the end of the source.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let at = me.position();
        let amount = Amount::UpTo(buf.remaining() as u64);
        if me.engine().window().bytes_from(at).is_empty() {
            if buf.remaining() >= me.capacity() {
                let n = ready!(me.engine_mut().poll_fetch_into(cx, at, buf))
                    .map_err(|e| me.error(e, "poll_read", at, amount))?;
                me.engine_mut().finish_read(at, n, n);
                return Poll::Ready(Ok(()));
            }
            ready!(me.engine_mut().poll_fill_at(cx, at, 1))
                .map_err(|e| me.error(e, "poll_read", at, amount))?;
        }
        let held = me.engine().window().bytes_from(at);
        let n = held.len().min(buf.remaining());
        buf.put_slice(&held[..n]);
        me.engine_mut().consume_window(n);
        Poll::Ready(Ok(()))
    }
}

impl<F: Fetch> AsyncBufRead for AsyncBufferedInput<F> {
    /// Returns the window's bytes at the position, refilling it first if it holds none there.
    /// Empty only at the end of the source.
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.get_mut();
        let at = me.position();
        if me.engine().window().bytes_from(at).is_empty() {
            ready!(me.engine_mut().poll_fill_at(cx, at, 1))
                .map_err(|e| me.error(e, "poll_fill_buf", at, Amount::None))?;
        }
        Poll::Ready(Ok(me.engine().window().bytes_from(at)))
    }

    /// Consumes `amt` bytes of what `poll_fill_buf` returned.
    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.get_mut().engine_mut().consume_window(amt);
    }
}

impl<F: Fetch> AsyncSeek for AsyncBufferedInput<F> {
    /// Moves the position. `Start` and `Current` (including `Current(0)`) take effect at once,
    /// without I/O, and keep the window: a target inside it is served from it. `End` needs the
    /// source's length; if it is not known yet, `poll_complete` asks for it.
    ///
    /// A target before 0 or past `u64::MAX` is an `InvalidInput` error and changes nothing.
    /// So is a target before the position while [checksumming](AsyncBufferedInput::start_checksum),
    /// as in Lucene's `BufferedChecksumIndexInput.seek`
    /// ([`try_seek_to`](AsyncBufferedInput::try_seek_to)); the checksum goes on.
    ///
    /// An `End` seek whose future was dropped before it completed is completed by the next
    /// `poll_complete` (the next seek through `AsyncSeekExt`), as with tokio's `File`, unless
    /// the position changed in between (a read that returned bytes,
    /// [`seek_to`](AsyncBufferedInput::seek_to), [`skip_bytes`](AsyncBufferedInput::skip_bytes)):
    /// then it is abandoned. One that failed is forgotten.
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        me.clear_end_seek();
        let (base, offset) = match position {
            SeekFrom::Start(target) => {
                me.check_seek(target)?;
                me.seek_to(target);
                return Ok(());
            }
            SeekFrom::Current(offset) => (me.position(), offset),
            SeekFrom::End(offset) => match me.known_length() {
                Some(length) => (length, offset),
                None => {
                    me.pend_end_seek(offset);
                    return Ok(());
                }
            },
        };
        let target = seek_target(me, base, offset)?;
        me.check_seek(target)?;
        me.seek_to(target);
        Ok(())
    }

    /// Returns the position once the last `start_seek` took effect.
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let me = self.get_mut();
        if let Some(offset) = me.pending_end_seek() {
            // Whatever the outcome, this seek is done: a failed one is not applied later.
            let length = ready!(me.engine_mut().fetcher_mut().poll_length(cx));
            me.clear_end_seek();
            let at = me.position();
            let length = length.map_err(|e| me.error(e, "seek", at, Amount::None))?;
            let target = seek_target(me, length, offset)?;
            me.check_seek(target)?;
            me.seek_to(target);
        }
        Poll::Ready(Ok(me.position()))
    }
}

/// `base + offset`, or `InvalidInput` (naming the position the seek started from) if that is
/// before 0 or past `u64::MAX`.
fn seek_target<F: Fetch>(input: &AsyncBufferedInput<F>, base: u64, offset: i64) -> io::Result<u64> {
    base.checked_add_signed(offset).ok_or_else(|| {
        let e = Error::InvalidInput(format!(
            "offset {offset} from {base} is outside 0..=u64::MAX"
        ));
        input.error(e, "seek", input.position(), Amount::None)
    })
}
