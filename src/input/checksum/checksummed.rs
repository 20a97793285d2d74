//! Checksummed reading, as Lucene's `ChecksumIndexInput`: the public side of the input's
//! [`Checksum`], which the read engine ([`ReadEngine`](crate::input::engine::read_engine::ReadEngine)) folds as bytes
//! leave the window.

use std::future::poll_fn;
use std::io;

use crate::error::{Amount, Error};
use crate::input::checksum::lazy_crc::Checksum;
use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;

/// Checksummed reading, as Lucene's `ChecksumIndexInput`.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// Starts a CRC32 (IEEE, as `java.util.zip.CRC32`) of every byte consumed from the position
    /// on, so that a file is parsed and verified in one pass: read it, then compare
    /// [`checksum`](Self::checksum) with the one it stores (see
    /// [`codec::check_footer`](crate::lucene::codec::check_footer)). A checksum already started is
    /// dropped.
    ///
    /// Reads that hit the window cost nothing more: bytes are folded into the CRC in large runs
    /// when they leave the window, when they are read straight into a caller's buffer, and when
    /// the checksum is asked for. A seek forward counts the bytes it skips (read when next
    /// folded). A seek back is refused by [`try_seek_to`](Self::try_seek_to) and
    /// [`AsyncSeek`](tokio::io::AsyncSeek), as in Lucene; [`seek_to`](Self::seek_to), which
    /// cannot fail, voids the checksum instead, and the next `checksum` fails.
    pub fn start_checksum(&mut self) {
        let from = self.position();
        self.engine_mut().set_checksum(Some(from));
    }

    /// Stops checksumming.
    pub fn stop_checksum(&mut self) {
        self.engine_mut().set_checksum(None);
    }

    /// Whether the input is checksumming, and from where.
    pub fn checksum_start(&self) -> Option<u64> {
        self.engine().checksum().map(Checksum::start)
    }

    /// The CRC32 of the bytes from where [`start_checksum`](Self::start_checksum) was called to
    /// the position.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the input is not checksumming or a seek went back since it started;
    /// `UnexpectedEof` if the position is past the end (the bytes skipped to get there do not
    /// exist); the source's own error kind if reading skipped bytes fails.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: what was folded before the future was dropped stays folded.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let data = b"0123456789".to_vec();
    /// let mut input = AsyncBufferedInput::with_capacity(4, std::io::Cursor::new(data.clone()));
    /// input.start_checksum();
    /// input.read_bytes(&mut [0u8; 6]).await?;
    /// input.seek_to(8); // skips 6 and 7: still checksummed
    /// assert_eq!(input.checksum().await?, crc32fast::hash(&data[..8]));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn checksum(&mut self) -> io::Result<u32> {
        const OP: &str = "checksum";
        let at = self.position();
        let Some(checksum) = self.engine_mut().checksum_mut() else {
            let e =
                Error::InvalidInput("the input is not checksumming: call start_checksum".into());
            return Err(self.error(e, OP, at, Amount::None));
        };
        if let Some(back) = checksum.backward() {
            let e = Error::InvalidInput(format!(
                "a seek went back to {back} while checksumming from {}: the bytes were not read \
                 in one pass",
                checksum.start()
            ));
            return Err(self.error(e, OP, at, Amount::None));
        }
        checksum.rewind(at);
        poll_fn(|cx| self.engine_mut().poll_fold_until(cx, at))
            .await
            .map_err(|e| self.error(e, OP, at, Amount::None))?;
        let checksum = self.engine().checksum().expect("checked above");
        if checksum.upto() < at {
            let e = Error::eof(checksum.upto() - checksum.start());
            return Err(self.error(
                e,
                OP,
                checksum.start(),
                Amount::Exact(at - checksum.start()),
            ));
        }
        Ok(checksum.value())
    }
}
