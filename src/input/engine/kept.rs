//! The bytes a failed read had fetched, kept for its retry.
//!
//! A read is all-or-nothing: when it fails, the position stays at its start, and its retry
//! starts there again. Without what the failed attempt fetched, every attempt of a long read
//! over a source that fails now and then would start over, and one long enough would never
//! complete. [`Kept`] holds those bytes, in parts, so that a retry fetches only the rest.
//!
//! The progress guarantee rests on this: every read that fails part-way keeps all it had
//! gathered from the position on (`ReadEngine::keep_for_retry`), wherever those bytes came
//! from: the window (which a refill for the rest moved past them), the caller's buffer, the
//! bytes of a varint or a string's prefix. The window keeps what its refills fetched past
//! them, and the fetcher the read-ahead chunks that arrived. So its retry, which starts at the
//! same position, gathers them again without a fetch (the window first, then what is kept:
//! `poll_read_exact_at`, `poll_peek_varint`), and fetches only what is missing, where the
//! failed attempt stopped: it never goes back to refill the window before them, which would
//! drop what the window holds past them. Checked by [`Kept::at_hand_until`].

use crate::input::engine::window::Window;

/// The most bytes a failed read keeps for its retry, counted from the position.
pub(crate) const MAX_KEPT_FOR_RETRY: usize = 16 << 20;

/// The source's bytes `[at, at + len)`, fetched by reads at the input's position that failed
/// with an error a retry can get past.
///
/// Kept in parts, one per failure: a failure adds only the bytes past those already kept, so a
/// read that fails many times never copies its prefix again. Bytes that do not continue the
/// kept ones replace them.
///
/// Invariants (`debug_assert_invariants`): `len` is the parts' total length and no part is
/// empty; `at` means nothing while `len` is 0.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    at: u64,
    len: usize,
    parts: Vec<Box<[u8]>>,
}

impl Kept {
    /// How many bytes are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// Drops the kept bytes, giving back their memory.
    #[inline]
    pub(crate) fn clear(&mut self) {
        if !self.parts.is_empty() {
            *self = Self::default();
        }
    }

    /// Copies the kept bytes from offset `from` on into the start of `dst`, as many as fit;
    /// returns how many (0 if none are kept at `from`).
    pub(crate) fn copy_from(&self, from: u64, dst: &mut [u8]) -> usize {
        let Some(mut skip) = from
            .checked_sub(self.at)
            .and_then(|skip| usize::try_from(skip).ok())
            .filter(|&skip| skip < self.len)
        else {
            return 0;
        };
        let mut n = 0;
        for part in &self.parts {
            if n == dst.len() {
                break;
            }
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            let take = (part.len() - skip).min(dst.len() - n);
            dst[n..n + take].copy_from_slice(&part[skip..skip + take]);
            n += take;
            skip = 0;
        }
        n
    }

    /// Where the kept bytes that hold offset `from` end; `None` if none hold it.
    pub(crate) fn end_from(&self, from: u64) -> Option<u64> {
        (self.at <= from && from < self.end()).then(|| self.end())
    }

    /// Keeps the bytes `[at, at + len)`, at most `limit` bytes counted from where the kept
    /// bytes start. `fill(offset, out)` writes the bytes `[at + offset, at + offset +
    /// out.len())`; it is asked only for the bytes not kept yet, in one call (or none).
    pub(crate) fn keep(
        &mut self,
        at: u64,
        len: usize,
        limit: usize,
        fill: impl FnOnce(usize, &mut [u8]),
    ) {
        let continues = self.len > 0 && self.at <= at && at <= self.end();
        if !continues {
            self.clear();
            self.at = at;
        }
        let end = self.end();
        let wanted = at
            .saturating_add(len as u64)
            .min(self.at.saturating_add(limit as u64));
        if wanted > end {
            let mut part = vec![0u8; (wanted - end) as usize].into_boxed_slice();
            fill((end - at) as usize, &mut part);
            self.len += part.len();
            self.parts.push(part);
        }
        self.debug_assert_invariants(limit);
    }

    /// Where the run of bytes from `from` on that a read gets without a fetch ends: those
    /// `window` holds, and those kept, in either order.
    pub(crate) fn at_hand_until(&self, window: &Window, from: u64) -> u64 {
        let mut to = from;
        loop {
            let held = window.bytes_from(to).len() as u64;
            let next = match self.end_from(to) {
                Some(end) => end.max(to + held),
                None => to + held,
            };
            if next == to {
                return to;
            }
            to = next;
        }
    }

    /// Where the kept bytes end.
    fn end(&self) -> u64 {
        self.at + self.len as u64
    }

    fn debug_assert_invariants(&self, limit: usize) {
        debug_assert_eq!(
            self.len,
            self.parts.iter().map(|p| p.len()).sum::<usize>(),
            "kept length"
        );
        debug_assert!(self.parts.iter().all(|p| !p.is_empty()), "an empty part");
        debug_assert!(self.len <= limit, "{} bytes kept, limit {limit}", self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte(offset: u64) -> u8 {
        (offset * 7 % 251) as u8
    }

    fn fill_from(at: u64) -> impl FnOnce(usize, &mut [u8]) {
        move |offset, out| {
            for (i, b) in out.iter_mut().enumerate() {
                *b = byte(at + (offset + i) as u64);
            }
        }
    }

    #[test]
    fn a_failure_adds_only_what_is_not_kept_and_the_limit_holds() {
        let mut kept = Kept::default();
        kept.keep(100, 10, 64, fill_from(100));
        assert_eq!(kept.len(), 10);
        // The retry got further: only the 20 new bytes are asked for.
        let mut asked = None;
        kept.keep(100, 30, 64, |offset, out| {
            asked = Some((offset, out.len()));
            fill_from(100)(offset, out);
        });
        assert_eq!(asked, Some((10, 20)));
        // A step of a longer read, continuing the kept bytes, past the limit.
        kept.keep(120, 100, 64, fill_from(120));
        assert_eq!(kept.len(), 64);
        assert_eq!(kept.parts.len(), 3);
        let mut dst = [0u8; 80];
        assert_eq!(kept.copy_from(105, &mut dst), 59);
        assert!((0..59).all(|i| dst[i] == byte(105 + i as u64)));
        assert_eq!(kept.copy_from(99, &mut dst), 0);
        assert_eq!(kept.copy_from(164, &mut dst), 0);
        // Bytes elsewhere replace them.
        kept.keep(500, 5, 64, fill_from(500));
        assert_eq!((kept.len(), kept.copy_from(100, &mut dst)), (5, 0));
        kept.clear();
        assert_eq!(kept.len(), 0);
    }
}
