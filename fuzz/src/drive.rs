//! Running futures so that a hang is a loud failure, never a stuck fuzzer.
//!
//! A case runs on a current-thread tokio runtime whose clock is paused: when nothing is left to
//! run (every task waits for a wake-up that will never come), tokio moves the clock to the next
//! timer at once, and that timer is [`block_on`]'s deadline, so a lost wake-up panics at once.
//! A future that keeps waking itself without finishing is caught by [`drive`]'s poll budget.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use tokio::runtime::Runtime;

/// The most polls one operation may take: far more than a correct one needs (a read of all of
/// a case's data, one byte per source read, `Pending` before every read), far fewer than a
/// livelock reaches in a second.
pub const POLL_LIMIT: u64 = 4 << 20;

thread_local! {
    /// The operation running, for the message of a hang (set by the harness).
    pub static STEP: RefCell<String> = const { RefCell::new(String::new()) };
    static RUNTIME: Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
}

/// Runs `future` to completion on this thread's runtime (spawned requests run on it too);
/// panics if it stops being woken.
pub fn block_on<F: Future>(future: F) -> F::Output {
    RUNTIME.with(|runtime| {
        runtime.block_on(async {
            match tokio::time::timeout(Duration::from_secs(1 << 30), future).await {
                Ok(output) => output,
                Err(_) => panic!(
                    "hang: the case stopped making progress (a future returned Pending and \
                     nothing will wake it) in {}",
                    STEP.with_borrow(Clone::clone)
                ),
            }
        })
    })
}

/// Polls `future` to completion (`cancel` is `None`) or at most `cancel` times, letting the
/// runtime run spawned requests between polls; `None` if it did not complete, and was dropped.
/// Panics past [`POLL_LIMIT`] polls.
pub async fn drive<T>(future: impl Future<Output = T>, cancel: Option<u8>) -> Option<T> {
    let mut future = pin!(future);
    match cancel {
        None => {
            let mut polls = 0u64;
            let output = poll_fn(|cx| {
                polls += 1;
                if polls > POLL_LIMIT {
                    panic!(
                        "hang: polled {POLL_LIMIT} times without completing: {}",
                        STEP.with_borrow(Clone::clone)
                    );
                }
                future.as_mut().poll(cx)
            })
            .await;
            Some(output)
        }
        Some(polls) => {
            for _ in 0..polls {
                if let Poll::Ready(output) =
                    poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
                {
                    return Some(output);
                }
                tokio::task::yield_now().await;
            }
            None
        }
    }
}
