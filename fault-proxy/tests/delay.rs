//! The proxy's latency and stragglers, over a tiny HTTP/1.1 upstream on 127.0.0.1.

use std::time::{Duration, Instant};

use fault_proxy::{Delay, FaultProxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An upstream answering every request head with `200 OK` and a 5-byte body, keep-alive.
async fn upstream() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (mut conn, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                loop {
                    let Ok(n) = conn.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..at + 4);
                        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
                        if conn.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// Sends one GET on `conn` and reads its 5-byte answer; returns how long it took.
async fn get(conn: &mut TcpStream) -> Duration {
    let t0 = Instant::now();
    conn.write_all(b"GET /f HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 1024];
    while !got.ends_with(b"hello") {
        let n = conn.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the proxy closed the connection");
        got.extend_from_slice(&chunk[..n]);
    }
    t0.elapsed()
}

#[tokio::test]
async fn every_response_waits_the_latency_and_stragglers_more() {
    let proxy = FaultProxy::start(upstream().await).await.unwrap();
    let delay =
        Delay::with_stragglers(Duration::from_millis(3), 0.25, Duration::from_millis(40), 7);
    proxy.set_delay(delay);
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let mut slow = 0;
    for _ in 0..40 {
        let took = get(&mut conn).await;
        assert!(took >= Duration::from_millis(3), "{took:?}");
        if took >= Duration::from_millis(43) {
            slow += 1;
        }
    }
    let stats = proxy.stats();
    assert_eq!(stats.delayed, 40);
    // Every straggler took its 43 ms (others may be slow on a loaded machine too).
    assert!(slow >= stats.stragglers, "{slow} slow, {stats:?}");
    assert!(
        (3..=20).contains(&stats.stragglers),
        "a share of 0.25 of 40: {stats:?}"
    );

    // The same seed picks the same stragglers.
    let again = FaultProxy::start(upstream().await).await.unwrap();
    again.set_delay(delay);
    let mut conn = TcpStream::connect(again.addr()).await.unwrap();
    for _ in 0..40 {
        get(&mut conn).await;
    }
    assert_eq!(again.stats().stragglers, stats.stragglers);

    // Off again.
    proxy.no_delay();
    get(&mut TcpStream::connect(proxy.addr()).await.unwrap()).await;
    assert_eq!(proxy.stats().delayed, 40);
}
