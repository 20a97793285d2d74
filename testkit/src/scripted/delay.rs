//! How long a scripted request waits before it answers.

use std::time::Duration;

/// How long a [`Scripted`](crate::Scripted) request waits before it answers (with its bytes or
/// its error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delay {
    /// Answers at its first poll.
    #[default]
    Ready,
    /// `Pending` for this many yields to the runtime (no clock involved).
    Yields(u32),
    /// Sleeps this long on tokio's clock (paused or not).
    Sleep(Duration),
    /// Never answers: the request stays in flight until it is dropped.
    Forever,
}

impl From<Duration> for Delay {
    fn from(d: Duration) -> Self {
        Delay::Sleep(d)
    }
}

impl Delay {
    /// Waits as said.
    pub(crate) async fn wait(self) {
        match self {
            Delay::Ready => {}
            Delay::Yields(n) => {
                for _ in 0..n {
                    tokio::task::yield_now().await;
                }
            }
            Delay::Sleep(d) => tokio::time::sleep(d).await,
            Delay::Forever => std::future::pending().await,
        }
    }
}
