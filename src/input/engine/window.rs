//! The window: a run of the source's bytes held in memory, and where it sits in the source.

use bytes::{Bytes, BytesMut};

/// The source's bytes `[start, start + len())`, held in `buf[..filled]`.
///
/// Invariants, kept by every method here (nothing outside this file touches the fields) and
/// checked by `debug_assert_invariants`:
/// - `filled <= buf.len()`;
/// - `start + filled` does not overflow;
/// - `buf[filled..]` is stale: initialized bytes kept so that a refill reads into them in place
///   ([`spare`](Self::spare)), without zeroing spare capacity first.
pub(crate) struct Window {
    buf: BytesMut,
    filled: usize,
    start: u64,
}

impl Window {
    /// An empty window at offset 0; it allocates nothing until the first [`spare`](Self::spare).
    pub(crate) fn new() -> Self {
        Self {
            buf: BytesMut::new(),
            filled: 0,
            start: 0,
        }
    }

    /// The source offset of the window's first byte.
    #[inline]
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    /// The source offset just past the window's last byte.
    #[inline]
    pub(crate) fn end(&self) -> u64 {
        self.start + self.filled as u64
    }

    /// The number of bytes the window holds.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.filled
    }

    /// The window's bytes from source offset `at` on; empty when `at` is outside the window.
    #[inline]
    pub(crate) fn bytes_from(&self, at: u64) -> &[u8] {
        let offset = at.wrapping_sub(self.start);
        if offset <= self.filled as u64 {
            &self.buf[offset as usize..self.filled]
        } else {
            &[]
        }
    }

    /// The window's bytes `[at, at + len)`, or `None` unless it holds them all: the fast path of
    /// `read_bytes`. Each check returns at once, where [`bytes_from`](Self::bytes_from) would
    /// build an empty slice for an `at` outside the window first.
    #[inline(always)]
    pub(crate) fn get(&self, at: u64, len: usize) -> Option<&[u8]> {
        let offset = usize::try_from(at.wrapping_sub(self.start)).ok()?;
        self.held().get(offset..)?.get(..len)
    }

    /// `buf[..filled]`.
    #[inline(always)]
    fn held(&self) -> &[u8] {
        &self.buf[..self.filled]
    }

    /// Makes the window start at `at`: keeps the bytes it holds from `at` on at its front, or
    /// none if `at` is at its end or outside it.
    pub(crate) fn keep(&mut self, at: u64) {
        let have = self.bytes_from(at).len();
        if have > 0 {
            let keep_from = (at - self.start) as usize;
            if keep_from > 0 {
                self.buf.copy_within(keep_from..self.filled, 0);
            }
        }
        self.filled = have;
        self.start = at;
        self.debug_assert_invariants();
    }

    /// The free space after the window's bytes, `capacity - len()` bytes long, for a refill to
    /// read into. Commit what was read with [`commit`](Self::commit).
    ///
    /// `buf` is kept `capacity` initialized bytes long, so the window's length is the plain
    /// field `filled`, which the fast paths compare against without asking the `BytesMut`. It
    /// also spares sources that initialize the unfilled part of a `ReadBuf`
    /// (`ReadBuf::initialize_unfilled`) from zeroing the free space before every refill: zeroed
    /// once, and again only after [`split_to`](Self::split_to) handed out the front of the window.
    pub(crate) fn spare(&mut self, capacity: usize) -> &mut [u8] {
        debug_assert!(
            self.filled <= capacity,
            "window of {} > capacity",
            self.filled
        );
        if self.buf.len() < capacity {
            if self.buf.capacity() < capacity {
                // Growing may move the bytes: let it move only the window's.
                self.buf.truncate(self.filled);
            }
            self.buf.resize(capacity, 0);
        }
        &mut self.buf[self.filled..capacity]
    }

    /// Adds the first `n` bytes of [`spare`](Self::spare) to the window.
    ///
    /// # Panics
    ///
    /// If `n` is more than `spare` held: a `ReadBuf` never reports that much.
    pub(crate) fn commit(&mut self, n: usize) {
        assert!(
            n <= self.buf.len() - self.filled,
            "commit of {n} bytes past the window's free space"
        );
        self.filled += n;
        self.debug_assert_invariants();
    }

    /// Hands out the window's first `n` bytes (`n <= len()`) as `Bytes`, without copying; the
    /// window then starts `n` bytes later.
    pub(crate) fn split_to(&mut self, n: usize) -> Bytes {
        assert!(n <= self.filled, "split of {n} bytes past the window");
        let head = self.buf.split_to(n).freeze();
        self.filled -= n;
        self.start += n as u64;
        self.debug_assert_invariants();
        head
    }

    /// Gives back the buffer; the window then holds nothing, at its current start.
    pub(crate) fn release(&mut self) {
        self.buf = BytesMut::new();
        self.filled = 0;
        self.debug_assert_invariants();
    }

    fn debug_assert_invariants(&self) {
        debug_assert!(
            self.filled <= self.buf.len(),
            "window holds {} of {} bytes",
            self.filled,
            self.buf.len()
        );
        debug_assert!(
            self.start.checked_add(self.filled as u64).is_some(),
            "window end overflows"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The model: the source offset of the first byte and the bytes held.
    fn model_get(start: u64, held: &[u8], at: u64, len: usize) -> Option<Vec<u8>> {
        let offset = usize::try_from(at.checked_sub(start)?).ok()?;
        let end = offset.checked_add(len)?;
        held.get(offset..end).map(<[u8]>::to_vec)
    }

    fn fill(window: &mut Window, capacity: usize, byte_at: impl Fn(u64) -> u8, n: usize) {
        let end = window.end();
        let spare = window.spare(capacity);
        let n = n.min(spare.len());
        for (i, b) in spare[..n].iter_mut().enumerate() {
            *b = byte_at(end + i as u64);
        }
        window.commit(n);
    }

    /// One change to the window, as the input makes them.
    #[derive(Clone, Debug)]
    enum Change {
        /// Keep from `start + offset` (past the end too).
        Keep(u64),
        /// Fill up to `n` bytes.
        Fill(usize),
        /// Hand out the first `n % (len + 1)` bytes.
        Split(usize),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            (0u64..24).prop_map(Change::Keep),
            (0usize..20).prop_map(Change::Fill),
            (0usize..20).prop_map(Change::Fill),
            (0usize..20).prop_map(Change::Split),
        ]
    }

    proptest! {
        /// Every lookup around the window, starts and lengths at, inside and past both ends,
        /// agrees with a model of the bytes held, after every change.
        #[test]
        fn get_and_bytes_from_match_the_model_through_keeps_refills_and_splits(
            changes in prop::collection::vec(change(), 1..200)
        ) {
            let byte_at = |at: u64| (at * 7 % 251) as u8;
            let capacity = 16;
            let mut window = Window::new();
            for change in changes {
                match change {
                    Change::Keep(offset) => window.keep(window.start() + offset),
                    Change::Fill(n) => fill(&mut window, capacity, byte_at, n),
                    Change::Split(n) => {
                        let n = n % (window.len() + 1);
                        let head = window.split_to(n);
                        let start = window.start() - n as u64;
                        prop_assert!(head
                            .iter()
                            .enumerate()
                            .all(|(i, &b)| b == byte_at(start + i as u64)));
                    }
                }
                let start = window.start();
                let held: Vec<u8> = (0..window.len() as u64).map(|i| byte_at(start + i)).collect();
                prop_assert_eq!(window.bytes_from(start), &held[..]);
                prop_assert_eq!(window.end(), start + held.len() as u64);
                prop_assert!(window.len() <= capacity);
                for at in start.saturating_sub(2)..window.end() + 3 {
                    for len in 0..capacity + 2 {
                        let expected = model_get(start, &held, at, len);
                        prop_assert_eq!(
                            window.get(at, len).map(<[u8]>::to_vec),
                            expected,
                            "get({}, {})",
                            at,
                            len
                        );
                    }
                    let from = model_get(start, &held, at, 0)
                        .map(|_| held[(at - start) as usize..].to_vec());
                    prop_assert_eq!(
                        window.bytes_from(at).to_vec(),
                        from.unwrap_or_default(),
                        "bytes_from({})",
                        at
                    );
                }
            }
        }
    }

    #[test]
    fn get_far_outside_the_window_is_none() {
        let mut window = Window::new();
        window.keep(u64::MAX - 4);
        fill(&mut window, 4, |_| 1, 4);
        assert_eq!(window.get(u64::MAX - 4, 4), Some(&[1u8; 4][..]));
        assert_eq!(window.get(u64::MAX - 4, 5), None);
        assert_eq!(window.get(0, 0), None);
        assert_eq!(window.get(u64::MAX - 5, 1), None);
        assert_eq!(window.get(u64::MAX, 0), Some(&[][..])); // the end, empty
        assert_eq!(window.get(u64::MAX - 1, usize::MAX), None);
    }

    #[test]
    #[should_panic(expected = "past the window's free space")]
    fn commit_past_the_free_space_panics_rather_than_break_the_invariant() {
        let mut window = Window::new();
        let spare = window.spare(8).len();
        window.commit(spare + 1);
    }
}
