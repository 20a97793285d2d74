//! Buffers a source collects large responses into, kept for reuse once the bytes handed out of
//! them are dropped.
//!
//! Why: a response that arrives in several frames is copied into one contiguous buffer. A fresh
//! allocation of a large buffer (above the allocator's `mmap` threshold, 128 KiB to 32 MiB in
//! glibc) comes from the kernel untouched, so the copy into it takes a page fault every 4 KiB:
//! with 4 MiB read-ahead chunks over nginx on loopback, most pages of every chunk faulted
//! (24,000 faults for 160 MiB), and the read-ahead reader spent 1.7x the CPU per byte of 1 MiB
//! requests one at a time. A buffer whose bytes were all dropped is reused instead, its pages
//! already mapped.

use std::sync::Mutex;

use bytes::{Bytes, BytesMut};

/// A few large buffers kept for reuse: [`take`](Self::take) hands out one whose previous bytes
/// are all dropped (or a new one), [`keep`](Self::keep) takes it back once its bytes are split
/// off and handed out as [`Bytes`], which share its allocation.
///
/// Holds at most [`MAX_SPARE`](Self::MAX_SPARE) buffers, each of at least
/// [`MIN_LEN`](Self::MIN_LEN) bytes; smaller requests get plain allocations, not kept. A kept
/// buffer whose bytes are still in use costs nothing more than those bytes (it is their
/// allocation); once they are dropped it holds its capacity until it is reused,
/// [`clear`](Self::clear)ed, or pushed out by a newer one.
#[derive(Debug, Default)]
pub(crate) struct SpareBuffers {
    // Every buffer is empty (its bytes split off), was allocated with at least `MIN_LEN`
    // bytes, and there are at most `MAX_SPARE`, oldest first.
    spare: Mutex<Vec<BytesMut>>,
}

impl SpareBuffers {
    /// No buffers kept yet (`const`, for a `static`).
    pub(crate) const fn new() -> Self {
        Self {
            spare: Mutex::new(Vec::new()),
        }
    }

    /// The most buffers kept: as many as a default read-ahead has chunks in flight.
    pub(crate) const MAX_SPARE: usize = 4;
    /// The smallest buffer kept: smaller allocations come from the allocator's reused memory.
    pub(crate) const MIN_LEN: usize = 128 << 10;

    /// An empty buffer with room for `len` bytes: a kept one whose bytes are all dropped and
    /// whose allocation holds `len`, or a new one.
    pub(crate) fn take(&self, len: usize) -> BytesMut {
        if len >= Self::MIN_LEN {
            let mut spare = self.lock();
            if let Some(i) = spare.iter_mut().position(|b| b.try_reclaim(len)) {
                return spare.remove(i);
            }
        }
        BytesMut::with_capacity(len)
    }

    /// Hands out what `buf` (from [`take`](Self::take)) holds, keeping `buf` for reuse once
    /// the bytes are dropped if it is large enough; the oldest kept buffer makes room.
    pub(crate) fn keep(&self, mut buf: BytesMut) -> Bytes {
        let large = buf.capacity() >= Self::MIN_LEN;
        let bytes = buf.split().freeze();
        if large {
            let mut spare = self.lock();
            if spare.len() >= Self::MAX_SPARE {
                spare.remove(0);
            }
            spare.push(buf);
            debug_assert!(spare.len() <= Self::MAX_SPARE);
        }
        bytes
    }

    /// Drops every kept buffer (bytes handed out of them stay valid).
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// How many buffers are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<BytesMut>> {
        // A panic while holding the lock leaves a valid list: go on with it.
        self.spare
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: usize = SpareBuffers::MIN_LEN;

    fn filled(spare: &SpareBuffers, len: usize, byte: u8) -> Bytes {
        let mut buf = spare.take(len);
        buf.extend_from_slice(&vec![byte; len]);
        spare.keep(buf)
    }

    #[test]
    fn a_buffer_is_reused_once_its_bytes_are_dropped_and_not_before() {
        let spare = SpareBuffers::default();
        let first = filled(&spare, LEN, 1);
        let first_ptr = first.as_ptr();
        // Still in use: a second buffer, and the first bytes are intact.
        let second = filled(&spare, LEN, 2);
        assert_ne!(second.as_ptr(), first_ptr);
        assert!(first.iter().all(|&b| b == 1));
        assert!(second.iter().all(|&b| b == 2));
        assert_eq!(spare.len(), 2);
        drop(first);
        let third = filled(&spare, LEN, 3);
        assert_eq!(
            third.as_ptr(),
            first_ptr,
            "the first buffer's allocation again"
        );
        assert!(third.iter().all(|&b| b == 3) && second.iter().all(|&b| b == 2));
    }

    #[test]
    fn small_buffers_are_not_kept_and_at_most_max_spare_are() {
        let spare = SpareBuffers::default();
        let small = filled(&spare, LEN - 1, 7);
        assert_eq!((small.len(), spare.len()), (LEN - 1, 0));
        let held: Vec<Bytes> = (0..SpareBuffers::MAX_SPARE + 2)
            .map(|i| filled(&spare, LEN, i as u8))
            .collect();
        assert_eq!(spare.len(), SpareBuffers::MAX_SPARE);
        for (i, bytes) in held.iter().enumerate() {
            assert!(bytes.iter().all(|&b| b == i as u8));
        }
        spare.clear();
        assert_eq!(spare.len(), 0);
    }

    #[test]
    fn a_kept_buffer_too_small_for_a_request_is_not_used_for_it() {
        let spare = SpareBuffers::default();
        drop(filled(&spare, LEN, 1));
        let big = filled(&spare, 2 * LEN, 2);
        assert_eq!(big.len(), 2 * LEN);
        assert!(big.iter().all(|&b| b == 2));
        assert_eq!(spare.len(), 2);
    }
}
