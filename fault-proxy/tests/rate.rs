//! The proxy's rate cap per connection, over a tiny HTTP/1.1 upstream on 127.0.0.1: a capped
//! connection's bytes take at least their time at the rate (a lower bound that holds however
//! loaded the machine is), and each connection has a cap of its own.

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use fault_proxy::{read_head, Delay, FaultProxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// 2 MB/s: a 1 MB body takes 0.5 s.
const RATE: u64 = 2_000_000;
const BODY: usize = 1_000_000;
/// The bucket's depth (4 ms at the rate): what may go at once.
const BUCKET: Duration = Duration::from_millis(4);

fn body_byte(i: usize) -> u8 {
    (i % 251) as u8
}

/// An upstream answering `GET /N` with `200 OK` and a body of N pattern bytes, keep-alive.
async fn upstream() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while let Some(head) = read_head(&mut conn, &mut seen).await {
                    let len: usize = head
                        .split(' ')
                        .nth(1)
                        .and_then(|path| path.trim_start_matches('/').parse().ok())
                        .unwrap_or(0);
                    let body: Vec<u8> = (0..len).map(body_byte).collect();
                    let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
                    if conn.write_all(answer.as_bytes()).await.is_err()
                        || conn.write_all(&body).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Sends `GET /len` on a new connection to `proxy` and reads the whole answer, checking every
/// body byte; returns how long it took from the request.
async fn get(proxy: &FaultProxy, len: usize) -> Duration {
    let mut conn = TcpStream::connect(proxy.addr()).await.unwrap();
    let t0 = Instant::now();
    conn.write_all(format!("GET /{len} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut got = Vec::new();
    read_head(&mut conn, &mut got)
        .await
        .expect("the proxy closed the connection in the head");
    let mut chunk = vec![0u8; 64 << 10];
    while got.len() < len {
        let n = conn.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the proxy closed the connection in the body");
        got.extend_from_slice(&chunk[..n]);
    }
    let took = t0.elapsed();
    assert_eq!(got.len(), len, "bytes past the body");
    for (i, &b) in got.iter().enumerate() {
        assert_eq!(b, body_byte(i), "body byte {i}");
    }
    took
}

fn rate(bytes_per_second: u64) -> Option<NonZeroU64> {
    NonZeroU64::new(bytes_per_second)
}

/// The least time `len` body bytes may take at `RATE`: one bucket may go at once.
fn at_least(len: usize) -> Duration {
    Duration::from_secs_f64(len as f64 / RATE as f64) - BUCKET
}

#[tokio::test]
async fn a_capped_connection_takes_at_least_its_bytes_at_the_rate() {
    let proxy = FaultProxy::start(upstream().await).await.unwrap();
    proxy.set_rate_per_connection(rate(RATE));
    assert_eq!(proxy.rate_per_connection(), rate(RATE));
    let took = get(&proxy, BODY).await;
    assert!(
        took >= at_least(BODY),
        "{took:?} for {BODY} B at {RATE} B/s"
    );
    // Smooth, not one burst at the end: half the bytes take half the time.
    let half = get(&proxy, BODY / 2).await;
    assert!(half >= at_least(BODY / 2), "{half:?}");
    assert_eq!(
        proxy.stats().peak_bodies_in_flight,
        1,
        "{:?}",
        proxy.stats()
    );
}

#[tokio::test]
async fn the_latency_comes_on_top_of_the_rate() {
    let proxy = FaultProxy::start(upstream().await).await.unwrap();
    proxy.set_rate_per_connection(rate(RATE));
    let latency = Duration::from_millis(100);
    proxy.set_delay(Delay::fixed(latency));
    let took = get(&proxy, BODY / 4).await;
    assert!(took >= latency + at_least(BODY / 4), "{took:?}");
    assert_eq!(proxy.stats().delayed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_connection_has_a_cap_of_its_own() {
    let proxy = FaultProxy::start(upstream().await).await.unwrap();
    proxy.set_rate_per_connection(rate(RATE));
    let t0 = Instant::now();
    let (a, b) = tokio::join!(get(&proxy, BODY), get(&proxy, BODY));
    let both = t0.elapsed();
    for took in [a, b] {
        assert!(
            took >= at_least(BODY),
            "{took:?}: a connection beat its cap"
        );
    }
    // Sharing one cap, the two would take at least 2 x 0.5 s - 4 ms; on their own, 0.5 s each,
    // at once.
    let shared = at_least(2 * BODY);
    assert!(
        both < shared * 17 / 20,
        "two connections took {both:?}, as if they shared one cap (>= {shared:?})"
    );
    assert_eq!(
        proxy.stats().peak_bodies_in_flight,
        2,
        "{:?}",
        proxy.stats()
    );
}

#[tokio::test]
async fn a_lifted_cap_forwards_at_full_speed() {
    let proxy = FaultProxy::start(upstream().await).await.unwrap();
    proxy.set_rate_per_connection(rate(RATE));
    proxy.set_rate_per_connection(None);
    assert_eq!(proxy.rate_per_connection(), None);
    let took = get(&proxy, BODY).await;
    // Capped it would take 0.5 s; on loopback 1 MB takes milliseconds.
    assert!(took < at_least(BODY) / 2, "{took:?}: still capped");
}
