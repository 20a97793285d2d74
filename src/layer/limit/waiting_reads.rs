use std::io;
use std::sync::Mutex;

use bytes::Bytes;
use tokio::sync::oneshot;

/// The reads of one [`Limited`](crate::layer::Limited) source waiting for a turn, so that the first of
/// them to get one can take the others near it along in one request.
///
/// With the limiter full, every read waits a whole request's latency for its turn; two reads of
/// the same source a few KiB apart can share one request instead, and each then costs the
/// limit half a turn. A read that gets its turn ([`lead`](Self::lead)) takes every waiting
/// read whose range keeps the request within [`SPAN`] bytes (or its own length, if larger),
/// and [`Batch::deliver`] hands each its slice of the answer (no copy), or a copy of it if
/// it is less than half the answer (so that a small part never keeps a large answer alive).
///
/// Only reads that wait are ever taken along: a read that finds a turn free goes alone at
/// once, and reads already in flight are left alone (a read never waits on another's
/// request unless it would have waited for a turn anyway).
pub(crate) struct WaitingReads {
    state: Mutex<State>,
}

struct State {
    next_id: u64,
    // Invariant: ids are unique and increasing (arrival order); an entry is here until its read
    // leads, is taken along, or is dropped.
    waiting: Vec<Waiting>,
}

struct Waiting {
    id: u64,
    offset: u64,
    len: usize,
    // Told at once when a leader takes the read along (so that it leaves the line for a
    // permit it no longer needs), then answered when the leader's request is.
    taken: oneshot::Sender<()>,
    answer: oneshot::Sender<io::Result<Bytes>>,
}

/// Where a waiting read hears from a read that takes it along: `taken` at once, `answer`
/// once the shared request answers. A closed channel means the leader was dropped: the read
/// waits for a turn again.
pub(crate) struct Listen {
    pub(crate) taken: oneshot::Receiver<()>,
    pub(crate) answer: oneshot::Receiver<io::Result<Bytes>>,
}

/// A read's place among the waiting reads: it leaves them when dropped.
pub(crate) struct Ticket<'a> {
    reads: &'a WaitingReads,
    id: u64,
}

/// A request that answers several reads: the leader's and those it took along.
#[derive(Debug)]
pub(crate) struct Batch {
    /// Where the request starts and how many bytes it asks for.
    pub(crate) offset: u64,
    pub(crate) len: usize,
    lead: (u64, usize),
    taken: Vec<(u64, usize, oneshot::Sender<io::Result<Bytes>>)>,
}

/// How far a batch's request may reach: reads whose ranges fit in this many bytes together
/// (with the leader's) share one request. A few round trips' worth of bytes on any link this
/// crate is for (a 2 ms link at 100 MB/s moves 200 KB in a round trip), and one term
/// dictionary block with its neighbours.
pub(crate) const SPAN: usize = 128 << 10;

/// How many waiting reads a leader looks at, in arrival order: bounds the time the list is
/// locked when thousands of reads wait.
const LOOK: usize = 64;

impl WaitingReads {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State {
                next_id: 0,
                waiting: Vec::new(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the list is still consistent (every
        // change is one push or one removal).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts the read of `len` bytes at `offset` among the waiting ones; it hears on the
    /// [`Listen`] if another read takes it along.
    pub(crate) fn join(&self, offset: u64, len: usize) -> (Ticket<'_>, Listen) {
        let (answer, answer_rx) = oneshot::channel();
        let (taken, taken_rx) = oneshot::channel();
        let mut state = self.state();
        let id = state.next_id;
        state.next_id += 1;
        debug_assert!(state.waiting.last().is_none_or(|w| w.id < id));
        state.waiting.push(Waiting {
            id,
            offset,
            len,
            taken,
            answer,
        });
        let listen = Listen {
            taken: taken_rx,
            answer: answer_rx,
        };
        (Ticket { reads: self, id }, listen)
    }

    /// The read of `ticket` got a turn: it leaves the waiting reads with those it takes along
    /// (each told so at once), as one [`Batch`]. `None` if another read took it along first
    /// (its answer comes on its [`Listen`]).
    pub(crate) fn lead(&self, ticket: &Ticket<'_>) -> Option<Batch> {
        let mut state = self.state();
        let at = state.position(ticket.id)?;
        let lead = state.waiting.remove(at);
        let span = SPAN.max(lead.len) as u64;
        let (mut start, mut end) = (lead.offset, lead.offset.saturating_add(lead.len as u64));
        let mut taken = Vec::new();
        let mut i = 0;
        let mut looked = 0;
        while i < state.waiting.len() && looked < LOOK {
            looked += 1;
            let w = &state.waiting[i];
            let (s, e) = (
                start.min(w.offset),
                end.max(w.offset.saturating_add(w.len as u64)),
            );
            if e - s <= span {
                (start, end) = (s, e);
                let w = state.waiting.remove(i);
                let _ = w.taken.send(()); // a dropped read no longer listens
                taken.push((w.offset, w.len, w.answer));
            } else {
                i += 1;
            }
        }
        debug_assert!(end - start <= span);
        Some(Batch {
            offset: start,
            len: (end - start) as usize,
            lead: (lead.offset, lead.len),
            taken,
        })
    }
}

impl State {
    /// Where the read `id` waits, if it still does (`waiting` is in id order).
    fn position(&self, id: u64) -> Option<usize> {
        self.waiting.binary_search_by_key(&id, |w| w.id).ok()
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut state = self.reads.state();
        if let Some(at) = state.position(self.id) {
            state.waiting.remove(at);
        }
    }
}

impl Batch {
    /// Reads taken along (not counting the leader).
    pub(crate) fn taken(&self) -> usize {
        self.taken.len()
    }

    /// Hands each read taken along its part of `result` (the answer to the batch's request),
    /// and returns the leader's; `what` names the source in errors. A read whose part lies
    /// past a short answer (the source's end) gets what there is, as its own request would
    /// have; a failure reaches every read, each error naming its own range.
    pub(crate) fn deliver(
        self,
        result: io::Result<Bytes>,
        what: impl Fn() -> String,
    ) -> io::Result<Bytes> {
        let (batch_offset, batch_len) = (self.offset, self.len);
        let part = |offset: u64, len: usize| match &result {
            Ok(bytes) => {
                let from = ((offset - batch_offset) as usize).min(bytes.len());
                let to = from.saturating_add(len).min(bytes.len());
                // A part of less than half the answer is copied: a slice would keep the whole
                // answer alive (up to `SPAN` bytes for a 100-byte read, unseen by a cache's
                // or budget's count). So a part keeps at most twice its bytes alive.
                if (to - from) * 2 < bytes.len() {
                    Ok(Bytes::copy_from_slice(&bytes[from..to]))
                } else {
                    Ok(bytes.slice(from..to))
                }
            }
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!(
                    "read of {len} bytes at offset {offset} from {}, asked as part of \
                     {batch_len} bytes at offset {batch_offset}: {e}",
                    what()
                ),
            )),
        };
        for (offset, len, answer) in self.taken {
            // A read dropped meanwhile no longer listens: nothing to do.
            let _ = answer.send(part(offset, len));
        }
        let (offset, len) = self.lead;
        if result.is_ok() {
            return part(offset, len);
        }
        result // the leader's error as it came
    }
}
