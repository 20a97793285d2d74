//! [`MemoryBudget`]: one byte budget shared by what holds bytes ahead of need (the read-ahead
//! of many inputs, a block cache). It sits at the crate root, below both `fetch` and `source`.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A bound on the bytes that the read-ahead of many inputs may hold at once: chunks requested,
/// received and not yet consumed, and the buffers of reads at hand. An input takes at most its
/// read-ahead's [`memory_bound`](crate::ReadAhead::memory_bound) of it (see
/// [Memory](crate::AsyncBufferedInput#memory)).
///
/// Give one budget to the [`PositionalFetch`](crate::PositionalFetch)es of every input of a
/// service ([`with_budget`](crate::PositionalFetch::with_budget); clones and slices share
/// their parent's). A fetcher reserves a chunk's bytes (at most `chunk_size`; the way to a
/// stream asked at once, all of it, alone and within `memory_bound`) before it requests the
/// chunk and gives them back when the chunk is consumed or dropped. One that
/// cannot get budget for its first chunk reads without read-ahead (each read one request for
/// what it asks) rather than wait: so with thousands of inputs open, what their read-ahead
/// holds stays under the budget, and every input still reads. The inputs' windows, and what a
/// caller asks for in one read, are outside it.
///
/// A block cache can draw on the same budget (`BlockCache::with_budget`, feature `cache`):
/// then the read-ahead and the cached blocks together stay under it.
///
/// Cheap to clone: clones are the same budget.
///
/// # Examples
///
/// ```
/// use async_buffered_input::{PositionalFetch, ReadAhead};
/// use async_buffered_input::MemoryBudget;
/// use async_buffered_input::source::MemorySource;
/// use async_buffered_input::AsyncBufferedInput;
///
/// let budget = MemoryBudget::new(64 << 20);
/// let source = std::sync::Arc::new(MemorySource::new(vec![0u8; 1 << 20]));
/// let inputs: Vec<_> = (0..1000)
///     .map(|_| {
///         let fetch = PositionalFetch::from_arc(source.clone())
///             .with_read_ahead(ReadAhead::default())
///             .with_budget(budget.clone());
///         AsyncBufferedInput::new(fetch)
///     })
///     .collect();
/// assert_eq!(budget.used(), 0);
/// # drop(inputs);
/// ```
#[derive(Clone)]
pub struct MemoryBudget {
    inner: Arc<Inner>,
}

struct Inner {
    limit: usize,
    used: AtomicUsize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                limit,
                used: AtomicUsize::new(0),
            }),
        }
    }

    /// The bytes it allows.
    pub fn limit(&self) -> usize {
        self.inner.limit
    }

    /// The bytes reserved now.
    pub fn used(&self) -> usize {
        self.inner.used.load(Ordering::Relaxed)
    }

    /// Reserves `bytes`, if that keeps the budget within its limit.
    pub(crate) fn try_reserve(&self, bytes: usize) -> Option<Reservation> {
        let mut used = self.inner.used.load(Ordering::Relaxed);
        loop {
            let after = used.checked_add(bytes).filter(|&a| a <= self.inner.limit)?;
            match self.inner.used.compare_exchange_weak(
                used,
                after,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Some(Reservation {
                        budget: self.clone(),
                        bytes,
                    })
                }
                Err(now) => used = now,
            }
        }
    }
}

impl fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("used", &self.used())
            .field("limit", &self.limit())
            .finish()
    }
}

/// Bytes taken from a [`MemoryBudget`], given back when dropped.
pub(crate) struct Reservation {
    budget: MemoryBudget,
    bytes: usize,
}

impl Reservation {
    /// The bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget
            .inner
            .used
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("bytes", &self.bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_stay_within_the_limit_and_give_back_on_drop() {
        let budget = MemoryBudget::new(100);
        let a = budget.try_reserve(60).expect("fits");
        assert!(budget.try_reserve(41).is_none());
        let b = budget.try_reserve(40).expect("fits exactly");
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 40);
        assert!(budget.try_reserve(usize::MAX).is_none(), "no overflow");
        drop(b);
        assert_eq!(budget.used(), 0);
    }
}
