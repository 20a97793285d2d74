//! The view: the part of the source a fetcher reads (all of it, or a slice's range), and its
//! length, learned once and shared with the clones.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use super::fetcher::PositionalFetch;
use super::stream::Pace;
use crate::source::PositionalSource;

/// The view and its length.
impl<S: PositionalSource> PositionalFetch<S> {
    pub(super) fn view(
        source: Arc<S>,
        base: u64,
        slice_len: Option<u64>,
        length: Arc<OnceLock<u64>>,
    ) -> Self {
        // A slice's length is its own; a whole view's is the source's, if it knows it.
        if let Some(len) = slice_len.or_else(|| Some(source.known_len()?.saturating_sub(base))) {
            let _ = length.set(len);
        }
        Self {
            source,
            base,
            slice_len,
            length,
            read_ahead: None,
            shape: (0, 0),
            waits: (0, 0),
            budget: None,
            ready_budget: None,
            spare_budget: None,
            next_sequential: None,
            ready: Bytes::new(),
            ready_at: 0,
            spare: Bytes::new(),
            read_now_end: None,
            read_now_streak: 0,
            requests: VecDeque::new(),
            ahead_at: None,
            want_end: 0,
            length_request: None,
            reads: 0,
            errors: 0,
            ranges_kept: Mutex::default(),
            stream: None,
            pace: Pace::default(),
            prefetches: Default::default(),
        }
    }

    /// A fetcher of the view's `[offset, offset + len)`, with the same read-ahead. The caller
    /// has checked the range against the view's length.
    pub(crate) fn slice_unchecked(&self, offset: u64, len: u64) -> Self {
        let mut fetch = Self::view(
            Arc::clone(&self.source),
            self.base.saturating_add(offset),
            Some(len),
            Arc::default(),
        );
        fetch.set_read_ahead(self.read_ahead);
        fetch.budget = self.budget.clone();
        fetch
    }

    /// The view's length: known, or asked of the source and then kept, for this fetcher and
    /// its clones (`&self` suffices: the length is shared).
    pub(crate) async fn view_length(&self) -> io::Result<u64> {
        match self.length() {
            Some(length) => Ok(length),
            None => {
                let length = self.source.len().await?.saturating_sub(self.base);
                Ok(*self.length.get_or_init(|| length))
            }
        }
    }

    /// Sets the view's length, known from elsewhere (a file's, asked when it was opened).
    pub(crate) fn set_length(&mut self, length: u64) {
        if self.slice_len.is_none() {
            let _ = self.length.set(length.saturating_sub(self.base));
        }
    }

    /// The view's length, if known.
    #[inline]
    pub(super) fn length(&self) -> Option<u64> {
        self.length.get().copied()
    }
}
