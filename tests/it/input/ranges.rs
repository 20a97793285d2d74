//! Several ranges in one call (`read_ranges`): the right bytes in the order asked, near ranges
//! coalesced into one request, the requests run at once, and clear errors.

use std::io::ErrorKind;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use abi_testkit::SlowLink;
use abi_testkit::*;
use async_buffered_input::source::MemorySource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::PositionalFetch;

#[tokio::test]
async fn ranges_come_back_whole_in_the_order_asked() {
    let data = pattern_vec(3 << 20);
    let source = Arc::new(CountingPositional::new(MemorySource::new(data.clone())));
    let mut input = AsyncBufferedInput::new(PositionalFetch::from_arc(source.clone()));
    input.read_byte().await.unwrap();
    let (position, window) = (input.position(), input.window());
    let mut rng = Rng::new(5);
    for round in 0..200 {
        let ranges: Vec<Range<u64>> = (0..rng.below(12))
            .map(|_| {
                let start = rng.below(data.len() as u64);
                let len = rng.below(5000).min(data.len() as u64 - start);
                start..start + len
            })
            .collect();
        let got = input.read_ranges(&ranges).await.unwrap();
        assert_eq!(got.len(), ranges.len());
        for (r, bytes) in ranges.iter().zip(&got) {
            assert_bytes(
                bytes,
                &data[r.start as usize..r.end as usize],
                r.start,
                &format!("round {round}"),
            );
        }
    }
    assert_eq!(
        (input.position(), input.window()),
        (position, window),
        "nothing moved"
    );

    // Near ranges (less than 1 MiB apart): one request; far ones: one each.
    let cases: [(&[Range<u64>], u64, &str); 2] = [
        (&[10..20, 500_000..500_100, 30..40], 1, "coalesced"),
        (
            &[0..10, 1_500_000..1_500_010, 2_900_000..2_900_010],
            3,
            "far apart",
        ),
    ];
    for (ranges, requests, what) in cases {
        let before = source.requests();
        input.read_ranges(ranges).await.unwrap();
        assert_eq!(source.requests() - before, requests, "{what}");
    }
    assert!(input.read_ranges(&[]).await.unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_requests_run_at_once() {
    let link = SlowLink::new(
        MemorySource::new(pattern_vec(8 << 20)),
        Duration::from_millis(2),
        0,
    );
    let mut input = AsyncBufferedInput::new(PositionalFetch::new(link));
    input.length().await.unwrap(); // known from here on, as after `open`
    let started = tokio::time::Instant::now();
    let got = input
        .read_ranges(&[0..100, 3_000_000..3_000_100, 6_000_000..6_000_100])
        .await
        .unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(2),
        "three round trips at once"
    );
}

#[tokio::test]
async fn a_range_past_the_end_or_backwards_is_an_error_naming_it() {
    let input = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(pattern_vec(100))))
        .with_resource("_0.doc");
    let e = input.read_ranges(&[0..10, 95..105]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    assert_eq!(
        e.to_string(),
        "_0.doc: read_ranges of 10 bytes at position 95 went past the end: only 5 bytes available"
    );
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 20..10;
    let e = input
        .read_ranges(std::slice::from_ref(&backwards))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    let payload = input_error(&e);
    assert_eq!(payload.position(), 20);
}
