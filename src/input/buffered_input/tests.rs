//! Unit tests of `AsyncBufferedInput`'s window and `Debug`.

use super::*;
use std::io::Cursor;

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

#[tokio::test]
async fn refill_keeps_no_bytes_before_the_request() {
    let mut input = AsyncBufferedInput::with_capacity(8, Cursor::new(data(100)));
    let mut buf = [0u8; 5];
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(input.window(), 0..8);
    input.read_bytes(&mut buf).await.unwrap();
    // 3 bytes came from the old window, then the window was refilled from 8.
    assert_eq!(input.window(), 8..16);
    assert_eq!(buf, data(100)[5..10]);
}

#[tokio::test]
async fn seek_outside_then_back_keeps_window() {
    let mut input = AsyncBufferedInput::with_capacity(16, Cursor::new(data(100)));
    input.read_byte().await.unwrap();
    let reads = input.stats().underlying_reads;
    input.seek_to(90);
    input.seek_to(3);
    assert_eq!(input.read_byte().await.unwrap(), data(100)[3]);
    assert_eq!(input.stats().underlying_reads, reads);
}

#[test]
fn zero_capacity_is_rejected() {
    let err = AsyncBufferedInput::try_with_capacity(0, Cursor::new(Vec::new())).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("at least 1 byte"));
}

#[test]
fn debug_shows_state_not_bytes() {
    let input = AsyncBufferedInput::with_capacity(16, Cursor::new(vec![0xAB; 4]));
    let shown = format!("{input:?}");
    assert!(shown.contains("position: 0"), "{shown}");
    assert!(shown.contains("0/16"), "{shown}");
}
