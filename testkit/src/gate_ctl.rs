//! The control handle of a gated [`Hostile`](crate::Hostile) stream.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::Waker;

#[cfg(doc)]
use crate::Hostile;

/// Control handle of a [`Hostile`] source made by [`Hostile::gated`].
#[derive(Debug)]
pub struct GateCtl {
    /// Bytes the source may still deliver; `u64::MAX` means unlimited. At 0 reads are Pending.
    budget: AtomicU64,
    /// While false, `poll_complete` of an in-flight seek is Pending.
    seeks_open: AtomicBool,
    waker: Mutex<Option<Waker>>,
    /// `start_seek` calls.
    pub seeks: AtomicU64,
    /// Ready `poll_read` calls.
    pub reads: AtomicU64,
}

impl GateCtl {
    /// A handle with reads and seeks open.
    pub(crate) fn open() -> Self {
        Self {
            budget: AtomicU64::new(u64::MAX),
            seeks_open: AtomicBool::new(true),
            waker: Mutex::new(None),
            seeks: AtomicU64::new(0),
            reads: AtomicU64::new(0),
        }
    }

    /// Bytes the source may still deliver (`u64::MAX`: unlimited).
    pub(crate) fn read_budget(&self) -> u64 {
        self.budget.load(Ordering::SeqCst)
    }

    /// Books `n` bytes delivered against a limited budget.
    pub(crate) fn spend(&self, n: u64) {
        if self.read_budget() != u64::MAX {
            self.budget.fetch_sub(n, Ordering::SeqCst);
        }
    }

    /// Whether a seek in flight may complete.
    pub(crate) fn seeks_are_open(&self) -> bool {
        self.seeks_open.load(Ordering::SeqCst)
    }

    /// Keeps `waker` to wake when the gate opens.
    pub(crate) fn wake_later(&self, waker: &Waker) {
        *self.waker.lock().unwrap() = Some(waker.clone());
    }

    fn wake(&self) {
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }

    /// Lets the source deliver `n` more bytes, then reads are Pending again.
    pub fn set_read_budget(&self, n: u64) {
        self.budget.store(n, Ordering::SeqCst);
        self.wake();
    }

    /// Lets reads through with no limit on the bytes.
    pub fn open_reads(&self) {
        self.set_read_budget(u64::MAX);
    }

    /// Holds the next reads `Pending`.
    pub fn close_reads(&self) {
        self.set_read_budget(0);
    }

    /// Lets the seek in flight, and the next ones, complete.
    pub fn open_seeks(&self) {
        self.seeks_open.store(true, Ordering::SeqCst);
        self.wake();
    }

    /// Holds the completion of the next seeks `Pending`.
    pub fn close_seeks(&self) {
        self.seeks_open.store(false, Ordering::SeqCst);
    }

    /// Opens seeks and reads.
    pub fn open_all(&self) {
        self.open_seeks();
        self.open_reads();
    }
}
