//! Counting: what an input asked of its source ([`Stats`]), the sum over an input and its clones
//! and slices ([`StatsGroup`]), and the names of the exported metrics ([`metrics`]).
//!
//! - `stats`: [`Stats`], an input's counters, with their arithmetic;
//! - `stats_group`: [`StatsGroup`], counters shared by a family of inputs;
//! - `stats_member`: one input's share in a group;
//! - `metrics`: the metric names (feature `metrics`) and the helpers that record them.

pub mod metrics;
// One type per file, named after it.
#[allow(clippy::module_inception)]
pub(crate) mod stats;
mod stats_group;
pub(crate) mod stats_member;

pub use stats::Stats;
pub use stats_group::StatsGroup;
