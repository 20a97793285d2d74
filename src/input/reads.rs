//! The byte reads: one byte, a run of bytes into the caller's buffer, a run as [`Bytes`].

use std::future::{poll_fn, Future};
use std::io;
use std::task::{ready, Context, Poll};

use bytes::Bytes;

use crate::error::{Amount, Error};
use crate::input::engine::read_exact::ReadExact;
use crate::input::fetch::Fetch;
use crate::input::window_read::{ReadFuture, WindowRead};
use crate::input::AsyncBufferedInput;

/// `read_bytes_owned` shares the window's buffer with results of at least `capacity /
/// SHARE_FRACTION` bytes, and copies smaller ones: a result keeps alive at most this many times
/// its length.
const SHARE_FRACTION: usize = 4;

/// The byte reads.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// Reads one byte.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` at the end of the source; the source's own error kind if it fails. The
    /// position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no byte is consumed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![7u8, 8]));
    /// assert_eq!(input.read_byte().await?, 7);
    /// assert_eq!(input.read_byte().await?, 8);
    /// assert!(input.read_byte().await.is_err());
    /// assert_eq!(input.position(), 2);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn read_byte(&mut self) -> impl Future<Output = io::Result<u8>> + use<'_, F> {
        ReadFuture::new(self, ReadByte)
    }

    /// Fills `dst` with the next `dst.len()` bytes, or fails without consuming anything.
    ///
    /// What the window holds is copied in one step; a remainder of at least the capacity is
    /// fetched straight into `dst`, a smaller one refills the window once.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if fewer than `dst.len()` bytes remain (the error names the position,
    /// the length requested and the length available); the source's own error kind if it fails.
    /// The position is unchanged after an error, and the contents of `dst` are unspecified.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no byte is consumed, and the
    /// next read returns the bytes this one would have.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let data: Vec<u8> = (0..100).collect();
    /// let mut input = AsyncBufferedInput::with_capacity(16, std::io::Cursor::new(data));
    /// let mut buf = [0u8; 40]; // larger than the window: read straight into `buf`
    /// input.read_bytes(&mut buf).await?;
    /// assert_eq!(buf[39], 39);
    ///
    /// let mut rest = [0u8; 61];
    /// let err = input.read_bytes(&mut rest).await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    /// assert_eq!(input.position(), 40);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn read_bytes<'s, 'd>(
        &'s mut self,
        dst: &'d mut [u8],
    ) -> impl Future<Output = io::Result<()>> + use<'s, 'd, F> {
        ReadFuture::new(self, ReadBytes { dst })
    }

    /// Reads the next `len` bytes as [`Bytes`].
    ///
    /// A request of at most the capacity is served from the window (refilled if needed): when
    /// it is at least a quarter of the capacity, as a shared slice of the window, without
    /// copying; a smaller one is copied out, so that a result never keeps alive more than four
    /// times its length of window buffer, however long it is kept. A request larger than the
    /// capacity is read into a new buffer, after checking it against the source's
    /// [`length`](Self::length), so a corrupt length never allocates more than the data holds.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if fewer than `len` bytes remain; the source's own error kind if it
    /// fails. The position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, no byte is consumed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(b"hello world".to_vec()));
    /// let hello = input.read_bytes_owned(5).await?;
    /// assert_eq!(&hello[..], b"hello");
    /// assert_eq!(input.position(), 5);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn read_bytes_owned(&mut self, len: usize) -> io::Result<Bytes> {
        const OP: &str = "read_bytes_owned";
        let at = self.position();
        let amount = Amount::Exact(len as u64);
        if len == 0 {
            return Ok(Bytes::new());
        }
        if len <= self.capacity() {
            poll_fn(|cx| self.engine_mut().poll_fill_at(cx, at, len))
                .await
                .map_err(|e| self.error(e, OP, at, amount))?;
            let available = self.engine().window().bytes_from(at).len();
            if available < len {
                return Err(self.error(Error::eof(available as u64), OP, at, amount));
            }
            if len < self.capacity() / SHARE_FRACTION {
                let copy = Bytes::copy_from_slice(&self.engine().window().bytes_from(at)[..len]);
                self.engine_mut().consume_window(len);
                return Ok(copy);
            }
            // Hand out the window's prefix up to the end of the request; the window keeps the
            // bytes after it (and allocates a new buffer at its next refill). What it hands out
            // leaves the window: checksum it first (the window holds it: no I/O).
            if self.engine().checksum().is_some() {
                poll_fn(|cx| self.engine_mut().poll_fold_until(cx, at + len as u64))
                    .await
                    .map_err(|e| self.error(e, OP, at, amount))?;
            }
            let end = (at - self.engine().window().start()) as usize + len;
            let head = self.engine_mut().split_window(end);
            self.engine_mut().finish_read(at, len, 0);
            return Ok(head.slice(end - len..));
        }
        let length = poll_fn(|cx| self.engine_mut().fetcher_mut().poll_length(cx))
            .await
            .map_err(|e| self.error(e, OP, at, amount))?;
        let available = length.saturating_sub(at);
        if available < len as u64 {
            return Err(self.error(Error::eof(available), OP, at, amount));
        }
        let mut out = vec![0u8; len];
        let mut exact = ReadExact::default();
        poll_fn(|cx| {
            self.engine_mut()
                .poll_read_exact_at(cx, at, &mut out, &mut exact)
        })
        .await
        .map_err(|e| self.error(e, OP, at, amount))?;
        self.engine_mut().finish_read(at, len, exact.direct());
        Ok(Bytes::from(out))
    }
}

/// [`AsyncBufferedInput::read_byte`].
struct ReadByte;

impl<F: Fetch> WindowRead<F> for ReadByte {
    type Output = u8;
    type Slow = ();

    fn op(&self) -> (&'static str, Amount) {
        ("read_byte", Amount::Exact(1))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<u8> {
        let b = *input
            .engine()
            .window()
            .bytes_from(input.position())
            .first()?;
        input.engine_mut().consume_window(1);
        Some(b)
    }

    fn poll_slow(
        &mut self,
        _: &mut (),
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<u8, Error>> {
        let at = input.position();
        ready!(input.engine_mut().poll_fill_at(cx, at, 1))?;
        let Some(&b) = input.engine().window().bytes_from(at).first() else {
            return Poll::Ready(Err(Error::eof(0)));
        };
        input.engine_mut().consume_window(1);
        Poll::Ready(Ok(b))
    }
}

/// [`AsyncBufferedInput::read_bytes`].
struct ReadBytes<'d> {
    dst: &'d mut [u8],
}

impl<F: Fetch> WindowRead<F> for ReadBytes<'_> {
    type Output = ();
    type Slow = ReadExact;

    fn op(&self) -> (&'static str, Amount) {
        ("read_bytes", Amount::Exact(self.dst.len() as u64))
    }

    #[inline(always)]
    fn fast(&mut self, input: &mut AsyncBufferedInput<F>) -> Option<()> {
        self.dst.copy_from_slice(
            input
                .engine()
                .window()
                .get(input.position(), self.dst.len())?,
        );
        input.engine_mut().consume_window(self.dst.len());
        Some(())
    }

    fn poll_slow(
        &mut self,
        exact: &mut ReadExact,
        input: &mut AsyncBufferedInput<F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        let at = input.position();
        ready!(input
            .engine_mut()
            .poll_read_exact_at(cx, at, self.dst, exact))?;
        input
            .engine_mut()
            .finish_read(at, self.dst.len(), exact.direct());
        Poll::Ready(Ok(()))
    }
}
