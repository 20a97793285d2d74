//! The stats of an input and its clones and slices together: joining a [`StatsGroup`].

use crate::input::fetch::Fetch;
use crate::input::AsyncBufferedInput;
use crate::stats::StatsGroup;

/// Stats groups.
impl<F: Fetch> AsyncBufferedInput<F> {
    /// Makes the input count its work in `group` (builder style): its
    /// [`stats`](Self::stats), and those of its clones and [slices](Self::slice) (and theirs),
    /// which join it too, add up there, while the inputs are open and after they are dropped
    /// (see [`StatsGroup`] for when an open input's work shows).
    ///
    /// Work the input did before counts in `group` too, unless it was in another group: that
    /// keeps it, and only the work that follows counts in `group`.
    ///
    /// # Examples
    ///
    /// ```
    /// use async_buffered_input::PositionalFetch;
    /// use async_buffered_input::source::MemorySource;
    /// use async_buffered_input::{AsyncBufferedInput, StatsGroup};
    ///
    /// # #[tokio::main]
    /// # async fn main() -> std::io::Result<()> {
    /// let file = StatsGroup::new();
    /// let fetch = PositionalFetch::new(MemorySource::new(vec![1u8; 64 << 10]));
    /// let input = AsyncBufferedInput::new(fetch).with_stats_group(&file);
    /// // A clone per query, each in its own task.
    /// let queries: Vec<_> = (0..4u64)
    ///     .map(|k| {
    ///         let mut query = input.clone();
    ///         tokio::spawn(async move {
    ///             query.seek_to(k * 10_000);
    ///             query.read_bytes_owned(5_000).await.map(|_| ())
    ///         })
    ///     })
    ///     .collect();
    /// for query in queries {
    ///     query.await??;
    /// }
    /// assert!(input.stats_group().is_some_and(|group| group.same_group(&file)));
    /// assert_eq!(file.stats().bytes_from_window, 4 * 5_000);
    /// println!("{file}"); // reads 4, seeks 0, 32.0 KiB from source, 19.5 KiB from window, ...
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_stats_group(mut self, group: &StatsGroup) -> Self {
        self.join_stats_group(group);
        self
    }

    /// The stats group the input counts its work in, if any.
    pub fn stats_group(&self) -> Option<&StatsGroup> {
        self.engine().stats_group()
    }

    /// Joins `group`: the input's cursor (bytes handed out) and fetcher (fetches) publish there.
    pub(super) fn join_stats_group(&mut self, group: &StatsGroup) {
        self.engine_mut().join_stats_group(group);
    }
}
