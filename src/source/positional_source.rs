use std::future::Future;
use std::io;

use bytes::Bytes;
use futures_core::stream::BoxStream;

use crate::source::forward::forward;

/// A source that serves byte ranges independently, with no cursor: local files, memory, object
/// stores.
///
/// Because a request names its own offset, one source can be shared (behind an
/// [`Arc`](std::sync::Arc)) by many readers, and several requests can be in flight at once:
/// that is what [`PositionalFetch`](crate::PositionalFetch)'s read-ahead and the clones and
/// slices of an [`AsyncBufferedInput`](crate::AsyncBufferedInput) build on.
///
/// # Implementing
///
/// - [`read_at`](Self::read_at) returns exactly `len` bytes unless the source ends first; a
///   source whose underlying reads come back short continues them itself. At or past the end it
///   returns an empty [`Bytes`], not an error.
/// - Errors should say what was asked (offset, length) and of what (path, URL), and keep the
///   underlying [`io::ErrorKind`].
/// - The futures must be `Send`; they may be dropped before they complete (a seek elsewhere
///   discards read-ahead), so they must not leave shared state inconsistent when dropped.
/// - [`read_stream`](Self::read_stream) is optional: a source whose one open-ended request
///   moves bytes faster than a series of ranged ones (an HTTP GET, an FTP `RETR`) implements
///   it, and [`PositionalFetch`](crate::PositionalFetch) with read-ahead serves long
///   sequential runs from one stream instead of ranged requests. Without it, ranged reads.
/// - [`try_read_at`](Self::try_read_at) is optional: a source that can sometimes answer without
///   waiting (a local file whose bytes are in the page cache) implements it, and
///   [`PositionalFetch`](crate::PositionalFetch) then tries it first and reads straight into
///   its caller's buffer, with no task, no blocking-pool round trip and no second copy.
#[allow(clippy::len_without_is_empty)] // `len` is a future; an `is_empty` would be one more request
pub trait PositionalSource: Send + Sync + 'static {
    /// Reads up to `len` bytes at `offset`.
    ///
    /// Returns fewer than `len` bytes only when the source ends first, and an empty `Bytes` at or
    /// past the end.
    fn read_at(&self, offset: u64, len: usize) -> impl Future<Output = io::Result<Bytes>> + Send;

    /// The source's length in bytes.
    fn len(&self) -> impl Future<Output = io::Result<u64>> + Send;

    /// The source's length if it knows it without a request: from the `HEAD` that opened it,
    /// a listing, or its bytes in memory. `None` (the default) when only [`len`](Self::len)
    /// can tell, or when the length may change (a local file being written). A
    /// [`PositionalFetch`](crate::PositionalFetch) starts with it, so an input's
    /// [`known_length`](crate::AsyncBufferedInput::known_length) answers at once and no
    /// request asks for it again.
    fn known_len(&self) -> Option<u64> {
        None
    }

    /// Copies bytes at `offset` into `buf` now, on the calling thread, if the source has them
    /// without waiting; returns how many (at most `buf.len()`).
    ///
    /// `0` says nothing about the data: the bytes may not be at hand (not in the page cache),
    /// the source may not support this at all (the default), or `offset` may be at the end. The
    /// caller then asks [`read_at`](Self::read_at), which is authoritative. Fewer than
    /// `buf.len()` bytes are fine too (only part of the range is at hand).
    ///
    /// This is called from async code, so it must not block: no I/O waits, no contended locks.
    /// Failures are not reported here either: return 0 and let `read_at` report them with
    /// its context.
    fn try_read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let _ = (offset, buf);
        0
    }

    /// One streaming request for the source's bytes from `offset` to its end, as they arrive;
    /// `None` (the default) if the source has none, and sequential reads stay ranged.
    ///
    /// The request starts when the stream is first polled, not before. Its items are the
    /// bytes in order, in pieces of the transport's choosing, each non-empty; it ends at the
    /// end of the source. An error item ends it (the reader then goes on with ranged reads,
    /// which report the trouble with their own context if it lasts). A reader drops the stream
    /// when it reads elsewhere, so dropping it must end the request.
    ///
    /// A [`PositionalFetch`](crate::PositionalFetch) with read-ahead opens one once a
    /// sequential run has gone on for a while (not for the few reads of a lookup), and keeps
    /// it only while it is at least as fast as ranged requests in parallel, by the rates it
    /// measures: see its docs.
    fn read_stream(&self, offset: u64) -> Option<BoxStream<'static, io::Result<Bytes>>> {
        let _ = offset;
        None
    }

    /// What the source reads, as a name that identifies it: a path, a URL. `None` (the
    /// default) if it has no name. A [`Cached`](crate::cache::Cached) source shares blocks
    /// with every source of the same name, so it must name the bytes, not just their kind.
    fn resource(&self) -> Option<String> {
        None
    }

    /// How errors name the source: its [`resource`](Self::resource) if it has one, otherwise
    /// a description of what it is (the default: "positional source"; a
    /// [`MemorySource`](crate::source::MemorySource) says "memory (N bytes)"). Wrappers pass
    /// on the inner source's.
    fn description(&self) -> String {
        self.resource()
            .unwrap_or_else(|| "positional source".to_owned())
    }

    /// Gives back buffers the source keeps for reuse, if it keeps some (the default keeps
    /// none). Inputs call it when they [release](crate::AsyncBufferedInput::release) their own.
    fn release_buffers(&self) {}
}

/// A shared source is a source: every method forwards to it, with no box and no copy.
impl<S: PositionalSource + ?Sized> PositionalSource for std::sync::Arc<S> {
    forward!(* => read_at, len, known_len, read_stream, try_read_at, resource, description, release_buffers);
}

/// A boxed source is a source: every method forwards to it, with no second box.
impl<S: PositionalSource + ?Sized> PositionalSource for Box<S> {
    forward!(* => read_at, len, known_len, read_stream, try_read_at, resource, description, release_buffers);
}
