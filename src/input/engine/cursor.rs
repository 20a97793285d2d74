//! The input's position, and the counts of the bytes it handed out.

use crate::stats::stats_member::StatsMember;
use crate::stats::Stats;
use crate::stats::StatsGroup;

/// The input's only position, and how many bytes it handed out from the window and straight
/// from the source ([`Stats::bytes_from_window`], [`Stats::bytes_direct`]), published to the
/// input's [`StatsGroup`], if any, as reads go past the window and when dropped.
///
/// Window hits only [`advance`](Self::advance) the position: the bytes handed out since the
/// position was last *set* ([`move_to`](Self::move_to)) are `pos - window_mark`, added when
/// counted. Invariant (`debug_assert_invariants`): `window_mark <= pos`, and between two
/// `move_to`s `pos` only moves forward by bytes handed out of the window.
#[derive(Debug, Default)]
pub(super) struct Cursor {
    pos: u64,
    window_mark: u64,
    // Bytes handed out of the window up to `window_mark`, and straight from the source.
    from_window: u64,
    direct: u64,
    // The input's share in its stats group (boxed: most inputs have none).
    member: Option<Box<StatsMember>>,
}

impl Cursor {
    /// The position.
    #[inline(always)]
    pub(super) fn pos(&self) -> u64 {
        self.pos
    }

    /// Moves the position forward past `n` bytes handed out of the window.
    #[inline(always)]
    pub(super) fn advance(&mut self, n: usize) {
        self.pos += n as u64;
    }

    /// The position, to move forward past bytes handed out of the window (a
    /// [`WindowView`](crate::input::WindowView) does).
    #[inline]
    pub(super) fn pos_mut(&mut self) -> &mut u64 {
        &mut self.pos
    }

    /// Sets the position, for anything but a window read: books the window reads since the
    /// last move first.
    #[inline]
    pub(super) fn move_to(&mut self, pos: u64) {
        self.debug_assert_invariants();
        self.from_window += self.pos - self.window_mark;
        self.pos = pos;
        self.window_mark = pos;
    }

    /// A read of `total` bytes at the position that went past the window completed, `direct`
    /// of them read straight into the caller's buffer (or kept from a failed attempt) and the
    /// rest copied out of the window: moves the position past them, counts them, and publishes
    /// the counts to the group.
    pub(super) fn finish_read(&mut self, total: usize, direct: usize) {
        debug_assert!(direct <= total);
        self.move_to(self.pos + total as u64);
        self.from_window += (total - direct) as u64;
        self.direct += direct as u64;
        self.publish();
    }

    /// The counts of the bytes handed out (the other counters 0).
    #[inline]
    pub(super) fn counts(&self) -> Stats {
        self.debug_assert_invariants();
        Stats {
            bytes_from_window: self.from_window + (self.pos - self.window_mark),
            bytes_direct: self.direct,
            ..Stats::default()
        }
    }

    /// The stats group, if the input is in one.
    pub(super) fn group(&self) -> Option<&StatsGroup> {
        self.member.as_deref().map(StatsMember::group)
    }

    /// Joins `group` (see [`StatsMember::join`]).
    pub(super) fn join(&mut self, group: &StatsGroup) {
        let now = self.counts();
        StatsMember::join(&mut self.member, group, now);
    }

    /// Adds the counts since the last publish to the group, if any.
    #[inline]
    pub(super) fn publish(&mut self) {
        if self.member.is_some() {
            let now = self.counts();
            if let Some(member) = self.member.as_deref_mut() {
                member.publish(now);
            }
        }
    }

    fn debug_assert_invariants(&self) {
        debug_assert!(
            self.window_mark <= self.pos,
            "window_mark past the position"
        );
    }
}

/// A dropped input's last window reads count in its group.
impl Drop for Cursor {
    fn drop(&mut self) {
        self.publish();
    }
}
