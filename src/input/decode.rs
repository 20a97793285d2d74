//! Typed reads on [`AsyncBufferedInput`], compatible with Apache Lucene's `DataInput`:
//! fixed-width integers in both byte orders, varints, zig-zag varints and strings.
//!
//! Every read has a fast path that decodes straight from the window, synchronously, when the
//! window holds the whole value, and a separate slow path for values that straddle the window's
//! edge or the end of the data. Like the core reads, a typed read either completes or consumes
//! nothing: after an error or a cancellation the position is where the value starts.

use std::io;
use std::mem::size_of;

use tokio::io::{AsyncRead, AsyncSeek};

use super::AsyncBufferedInput;
use crate::error::InputError;

/// The most bytes a Lucene vint takes; its 5th byte carries the top 4 bits.
const VINT_MAX_LEN: usize = 5;
const VINT_LAST_BITS: u32 = 4;
/// The most bytes a vlong takes here: 10, so that every `u64` (and every zig-zag `i64`)
/// fits; its 10th byte carries the top bit. Lucene's own vlongs (at most 9 bytes) decode too.
const VLONG_MAX_LEN: usize = 10;
const VLONG_LAST_BITS: u32 = 1;
/// How many bytes bulk reads decode per step when the values are not all in the window.
const BULK_STEP: usize = 4096;

/// What a slice holds at the start of a varint.
#[derive(Debug, PartialEq, Eq)]
enum Varint {
    /// A whole varint of `len` bytes.
    Done { value: u64, len: usize },
    /// The slice ends before the varint does.
    Short,
    /// The bytes are not a valid varint of this width.
    Malformed(String),
}

/// Decodes a Lucene varint (7 bits per byte, low groups first, high bit set on every byte but
/// the last) of at most `max_len` bytes, whose last possible byte may carry only `last_bits`
/// bits.
#[inline]
fn decode_varint(bytes: &[u8], max_len: usize, last_bits: u32) -> Varint {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(max_len).enumerate() {
        let shift = 7 * i as u32;
        if i == max_len - 1 {
            if u32::from(b) >> last_bits != 0 {
                return Varint::Malformed(format!(
                    "byte {} of {max_len} is {b:#04x}: too many bits for a {}-bit value, \
                     or longer than {max_len} bytes",
                    i + 1,
                    7 * (max_len as u32 - 1) + last_bits
                ));
            }
            return Varint::Done {
                value: value | u64::from(b) << shift,
                len: max_len,
            };
        }
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Varint::Done { value, len: i + 1 };
        }
    }
    Varint::Short
}

#[inline]
fn zigzag_decode(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// Generates a fixed-width integer read with a window fast path.
macro_rules! fixed_width_read {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $from:ident) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// `UnexpectedEof` if fewer bytes than the width remain; the source's own error if it
        /// fails. The position is unchanged after an error.
        ///
        /// # Cancel safety
        ///
        /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
        #[inline]
        pub async fn $name(&mut self) -> io::Result<$ty> {
            const N: usize = size_of::<$ty>();
            if let Some(bytes) = self.window_at(self.position()).first_chunk::<N>() {
                let value = <$ty>::$from(*bytes);
                self.consume_window(N);
                return Ok(value);
            }
            let at = self.position();
            let mut bytes = [0u8; N];
            self.read_exact_at(stringify!($name), at, &mut bytes).await?;
            self.seek_to(at + N as u64);
            Ok(<$ty>::$from(bytes))
        }
    };
}

/// Generates a bulk fixed-width read into a slice.
macro_rules! bulk_read {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $from:ident) => {
        $(#[$doc])*
        ///
        /// Decodes straight from the window when it holds all the values, otherwise in steps of
        /// a few KiB, with no await per element.
        ///
        /// # Errors
        ///
        /// `UnexpectedEof` if fewer than `dst.len()` values remain; the source's own error if it
        /// fails. The position is unchanged after an error, and `dst` holds unspecified values.
        ///
        /// # Cancel safety
        ///
        /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
        pub async fn $name(&mut self, dst: &mut [$ty]) -> io::Result<()> {
            const N: usize = size_of::<$ty>();
            let at = self.position();
            let total = dst.len() * N;
            if let Some(window) = self.window_at(at).get(..total) {
                for (value, bytes) in dst.iter_mut().zip(window.chunks_exact(N)) {
                    let mut b = [0u8; N];
                    b.copy_from_slice(bytes);
                    *value = <$ty>::$from(b);
                }
                self.consume_window(total);
                return Ok(());
            }
            let mut step = [0u8; BULK_STEP];
            let mut done = 0;
            for values in dst.chunks_mut(BULK_STEP / N) {
                let bytes = &mut step[..values.len() * N];
                self.read_exact_at(stringify!($name), at + done as u64, bytes)
                    .await
                    .map_err(|e| widen_eof(e, stringify!($name), at, total, done))?;
                for (value, chunk) in values.iter_mut().zip(bytes.chunks_exact(N)) {
                    let mut b = [0u8; N];
                    b.copy_from_slice(chunk);
                    *value = <$ty>::$from(b);
                }
                done += bytes.len();
            }
            self.seek_to(at + total as u64);
            Ok(())
        }
    };
}

/// Rewrites a past-the-end error from one step of a multi-step read so that it names the whole
/// request: its start, its length, and what was there.
fn widen_eof(e: io::Error, op: &'static str, at: u64, total: usize, done: usize) -> io::Error {
    let available = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<InputError>())
        .and_then(InputError::available);
    match available {
        Some(available) if e.kind() == io::ErrorKind::UnexpectedEof => {
            InputError::eof(op, at, total as u64, done as u64 + available)
        }
        _ => e,
    }
}

/// Typed reads: fixed-width integers, varints and strings, as Lucene's `DataInput` writes them.
impl<R: AsyncRead + AsyncSeek + Unpin> AsyncBufferedInput<R> {
    fixed_width_read!(
        /// Reads a big-endian `u16` (Lucene 8 `readShort`, unsigned).
        read_u16, u16, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `u32` (Lucene 8 `readInt`, unsigned).
        read_u32, u32, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `u64` (Lucene 8 `readLong`, unsigned).
        read_u64, u64, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `i16` (Lucene 8 `readShort`).
        read_i16, i16, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `i32` (Lucene 8 `readInt`).
        ///
        /// # Examples
        ///
        /// ```
        /// # use async_buffered_input::AsyncBufferedInput;
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> std::io::Result<()> {
        /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![0xff, 0xff, 0xff, 0xfe]));
        /// assert_eq!(input.read_i32().await?, -2);
        /// # Ok(())
        /// # }
        /// ```
        read_i32, i32, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a big-endian `i64` (Lucene 8 `readLong`).
        read_i64, i64, from_be_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `u16` (Lucene 9+ `readShort`, unsigned).
        read_u16_le, u16, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `u32` (Lucene 9+ `readInt`, unsigned).
        read_u32_le, u32, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `u64` (Lucene 9+ `readLong`, unsigned).
        read_u64_le, u64, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `i16` (Lucene 9+ `readShort`).
        read_i16_le, i16, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `i32` (Lucene 9+ `readInt`).
        read_i32_le, i32, from_le_bytes
    );
    fixed_width_read!(
        /// Reads a little-endian `i64` (Lucene 9+ `readLong`).
        read_i64_le, i64, from_le_bytes
    );

    bulk_read!(
        /// Fills `dst` with big-endian `u16`s.
        read_u16_into, u16, from_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `u32`s (Lucene 8 `readInts`).
        ///
        /// # Examples
        ///
        /// ```
        /// # use async_buffered_input::AsyncBufferedInput;
        /// # #[tokio::main(flavor = "current_thread")]
        /// # async fn main() -> std::io::Result<()> {
        /// let bytes = vec![0, 0, 0, 1, 0, 0, 1, 0];
        /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(bytes));
        /// let mut values = [0u32; 2];
        /// input.read_u32_into(&mut values).await?;
        /// assert_eq!(values, [1, 256]);
        /// # Ok(())
        /// # }
        /// ```
        read_u32_into, u32, from_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `u64`s (Lucene 8 `readLongs`).
        read_u64_into, u64, from_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `i32`s.
        read_i32_into, i32, from_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with big-endian `i64`s.
        read_i64_into, i64, from_be_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `u16`s.
        read_u16_le_into, u16, from_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `u32`s (Lucene 9+ `readInts`).
        read_u32_le_into, u32, from_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `u64`s (Lucene 9+ `readLongs`).
        read_u64_le_into, u64, from_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `i32`s.
        read_i32_le_into, i32, from_le_bytes
    );
    bulk_read!(
        /// Fills `dst` with little-endian `i64`s.
        read_i64_le_into, i64, from_le_bytes
    );

    /// Reads a Lucene vint: 1 to 5 bytes, 7 bits per byte, low groups first.
    ///
    /// Negative Java ints, which Lucene writes as 5-byte vints, read as their `u32` bit pattern.
    ///
    /// # Errors
    ///
    /// `InvalidData` (naming the position) if the 5th byte has bits beyond the 32nd or a
    /// continuation bit; `UnexpectedEof` if the data ends inside the vint; the source's own
    /// error if it fails. The position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(vec![0x80, 0x01, 0x7f]));
    /// assert_eq!(input.read_vint().await?, 128);
    /// assert_eq!(input.read_vint().await?, 127);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub async fn read_vint(&mut self) -> io::Result<u32> {
        let value = self
            .read_varint("read_vint", VINT_MAX_LEN, VINT_LAST_BITS)
            .await?;
        Ok(value as u32)
    }

    /// Reads a vlong: 1 to 10 bytes, 7 bits per byte, low groups first. Lucene's own vlongs
    /// (non-negative, at most 9 bytes) decode, and so does every `u64` in 10 bytes.
    ///
    /// # Errors
    ///
    /// `InvalidData` (naming the position) if the 10th byte has bits beyond the 64th or a
    /// continuation bit; `UnexpectedEof` if the data ends inside the vlong; the source's own
    /// error if it fails. The position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    #[inline]
    pub async fn read_vlong(&mut self) -> io::Result<u64> {
        self.read_varint("read_vlong", VLONG_MAX_LEN, VLONG_LAST_BITS)
            .await
    }

    /// Reads a zig-zag encoded vint (Lucene `readZInt`): small magnitudes, either sign, take few
    /// bytes.
    ///
    /// # Errors
    ///
    /// As [`read_vint`](Self::read_vint).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    #[inline]
    pub async fn read_zint(&mut self) -> io::Result<i32> {
        let value = self
            .read_varint("read_zint", VINT_MAX_LEN, VINT_LAST_BITS)
            .await?;
        Ok(zigzag_decode(value) as i32)
    }

    /// Reads a zig-zag encoded vlong (Lucene `readZLong`).
    ///
    /// # Errors
    ///
    /// As [`read_vlong`](Self::read_vlong).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    #[inline]
    pub async fn read_zlong(&mut self) -> io::Result<i64> {
        let value = self
            .read_varint("read_zlong", VLONG_MAX_LEN, VLONG_LAST_BITS)
            .await?;
        Ok(zigzag_decode(value))
    }

    /// Reads a string as Lucene's `writeString` wrote it: a vint byte length, then UTF-8.
    ///
    /// A length prefix larger than the window is checked against the source's
    /// [`length`](Self::length) before anything is allocated, so a corrupt prefix never
    /// allocates more than the data holds.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` if the length prefix or the bytes run past the end; `InvalidData` for a
    /// malformed prefix or invalid UTF-8 (naming the position of the string); the source's own
    /// error if it fails. The position is unchanged after an error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if the future is dropped before it completes, nothing is consumed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use async_buffered_input::AsyncBufferedInput;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut bytes = vec![6];
    /// bytes.extend_from_slice("€uro".as_bytes());
    /// let mut input = AsyncBufferedInput::new(std::io::Cursor::new(bytes));
    /// assert_eq!(input.read_string().await?, "€uro");
    ///
    /// let mut bad = AsyncBufferedInput::new(std::io::Cursor::new(vec![2, 0xc3, 0x28]));
    /// let err = bad.read_string().await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    /// assert_eq!(bad.position(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn read_string(&mut self) -> io::Result<String> {
        const OP: &str = "read_string";
        let at = self.position();
        let (len, prefix) = self
            .peek_varint(OP, at, VINT_MAX_LEN, VINT_LAST_BITS)
            .await?;
        let len = len as usize;
        let total = prefix + len;
        let invalid_utf8 = |e: std::str::Utf8Error| {
            InputError::invalid(
                OP,
                at,
                total as u64,
                format!(
                    "the {len}-byte string is not UTF-8 (valid up to byte {})",
                    e.valid_up_to()
                ),
            )
        };

        if let Some(bytes) = self.window_at(at).get(prefix..total) {
            let s = std::str::from_utf8(bytes).map_err(invalid_utf8)?.to_owned();
            self.consume_window(total);
            return Ok(s);
        }
        let data_at = at + prefix as u64;
        if len > self.capacity() {
            let available = self.length().await?.saturating_sub(data_at);
            if (len as u64) > available {
                return Err(InputError::eof(
                    OP,
                    at,
                    total as u64,
                    prefix as u64 + available,
                ));
            }
        }
        let mut bytes = vec![0u8; len];
        self.read_exact_at(OP, data_at, &mut bytes)
            .await
            .map_err(|e| widen_eof(e, OP, at, total, prefix))?;
        let s = String::from_utf8(bytes).map_err(|e| invalid_utf8(e.utf8_error()))?;
        self.seek_to(data_at + len as u64);
        Ok(s)
    }

    // ----- private helpers -----

    /// Reads a varint at the position: decoded straight from the window when it holds it.
    #[inline]
    async fn read_varint(
        &mut self,
        op: &'static str,
        max_len: usize,
        last_bits: u32,
    ) -> io::Result<u64> {
        let at = self.position();
        let window = self.window_at(at);
        if let Some(&b) = window.first() {
            if b < 0x80 {
                self.consume_window(1);
                return Ok(u64::from(b));
            }
        }
        if let Varint::Done { value, len } = decode_varint(window, max_len, last_bits) {
            self.consume_window(len);
            return Ok(value);
        }
        let (value, len) = self.peek_varint(op, at, max_len, last_bits).await?;
        self.seek_to(at + len as u64);
        Ok(value)
    }

    /// Decodes the varint at `at` without consuming it: returns its value and length. Gathers
    /// its bytes across window refills when it straddles the window's edge.
    async fn peek_varint(
        &mut self,
        op: &'static str,
        at: u64,
        max_len: usize,
        last_bits: u32,
    ) -> io::Result<(u64, usize)> {
        let mut gathered = [0u8; VLONG_MAX_LEN];
        let mut n = 0;
        loop {
            match decode_varint(&gathered[..n], max_len, last_bits) {
                Varint::Done { value, len } => return Ok((value, len)),
                Varint::Malformed(detail) => {
                    return Err(InputError::invalid(op, at, max_len as u64, detail))
                }
                Varint::Short => {}
            }
            let next = at + n as u64;
            if self.window_at(next).is_empty() {
                self.fill_at(op, next, max_len - n).await?;
            }
            let held = self.window_at(next);
            if held.is_empty() {
                return Err(InputError::eof(op, at, max_len as u64, n as u64));
            }
            let take = held.len().min(max_len - n);
            gathered[n..n + take].copy_from_slice(&held[..take]);
            n += take;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_edges() {
        assert_eq!(decode_varint(&[0], 5, 4), Varint::Done { value: 0, len: 1 });
        assert_eq!(decode_varint(&[0x80], 5, 4), Varint::Short);
        assert_eq!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x0f], 5, 4),
            Varint::Done {
                value: u64::from(u32::MAX),
                len: 5
            }
        );
        assert!(matches!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x1f], 5, 4),
            Varint::Malformed(_)
        ));
        assert!(matches!(
            decode_varint(&[0x80, 0x80, 0x80, 0x80, 0x80], 5, 4),
            Varint::Malformed(_)
        ));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(
            decode_varint(&max, 10, 1),
            Varint::Done {
                value: u64::MAX,
                len: 10
            }
        );
    }

    #[test]
    fn zigzag() {
        assert_eq!(zigzag_decode(0), 0);
        assert_eq!(zigzag_decode(1), -1);
        assert_eq!(zigzag_decode(2), 1);
        assert_eq!(zigzag_decode(u64::MAX), i64::MIN);
        assert_eq!(zigzag_decode(u64::MAX - 1), i64::MAX);
    }
}
