//! A share in a [`StatsGroup`]: what one part of an input adds to the group's total.

use crate::stats::Stats;
use crate::stats::StatsGroup;

/// The link from one part of an input (its [cursor](crate::input::cursor::Cursor), its
/// [fetcher](crate::input::fetcher::Fetcher)) to its [`StatsGroup`]: each part publishes the counters
/// it keeps, and the group gets the work done since the last time.
///
/// Invariant: `published` is what this member has added to the group so far; each part passes
/// its own counters only (the others 0), so the parts of one input never count a thing twice.
#[derive(Debug)]
pub(crate) struct StatsMember {
    group: StatsGroup,
    published: Stats,
}

impl StatsMember {
    /// The group.
    pub(crate) fn group(&self) -> &StatsGroup {
        &self.group
    }

    /// Adds to the group the work in `now` (the part's counters now) since the last publish.
    #[inline]
    pub(crate) fn publish(&mut self, now: Stats) {
        if now != self.published {
            self.group.add(now - self.published);
            self.published = now;
        }
    }

    /// Joins `group` (a part's `join`): the work so far stays in the group it was published to
    /// (published first, here), or, for a part in no group yet, counts in `group`.
    pub(crate) fn join(member: &mut Option<Box<StatsMember>>, group: &StatsGroup, now: Stats) {
        let published = match member.take() {
            Some(mut old) => {
                old.publish(now);
                now
            }
            None => Stats::default(),
        };
        *member = Some(Box::new(StatsMember {
            group: group.clone(),
            published,
        }));
    }
}
