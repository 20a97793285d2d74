//! The memory budget's bound: what an input's read-ahead takes of its
//! [`MemoryBudget`](async_buffered_input::MemoryBudget) stays within the read-ahead's
//! `memory_bound()` (`chunk_size * depth`).

use abi_testkit::*;
use async_buffered_input::source::MemorySource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::{MemoryBudget, PositionalFetch, ReadAhead};

/// Issue 32's first case: chunks of 7 bytes, 1 at a time, under a 33-byte window, the same
/// reads. The fill at 157 refills the window from 165, gets 7 bytes from the chunk read ahead
/// there, and the request after it asks for all the window still has room for (the 18 bytes
/// up to 190: chunks under 4 KiB cover what a read lacks). That request reserved all 18 bytes
/// of the budget, where a chunk's share is 7: 18 bytes held after the read (26 in the issue's
/// run), the bound being 7.
#[tokio::test(flavor = "current_thread")]
async fn a_refill_from_chunks_smaller_than_the_window_stays_within_the_bound() {
    let data = pattern_vec(400);
    let read_ahead = ReadAhead::new(7, 1);
    let budget = MemoryBudget::new(1 << 20);
    let fetch = PositionalFetch::new(MemorySource::new(data.clone()))
        .with_read_ahead(read_ahead)
        .with_budget(budget.clone());
    let mut input = AsyncBufferedInput::with_capacity(33, fetch);
    let bound = read_ahead.memory_bound();
    let check = |input: &AsyncBufferedInput<_>, after: &str| {
        assert!(
            budget.used() <= bound,
            "after {after}: {} bytes of budget held, the bound is {bound}: {:?}",
            budget.used(),
            input.fetch()
        );
    };

    input.seek_to(121);
    let four = input.read_u32().await.unwrap();
    assert_eq!(four.to_be_bytes(), data[121..125]);
    check(&input, "a 4-byte read at 121");
    let two = input.read_u16().await.unwrap();
    assert_eq!(two.to_be_bytes(), data[125..127]);
    check(&input, "a 2-byte read at 125");
    input.seek_to(153);
    input.read_vint().await.unwrap();
    check(&input, "a varint at 153");
    // The varint at 153 (of this data) is 4 bytes long; the window holds [132, 165).
    let at = input.position();
    assert_eq!(at, 157);
    assert!(input.fill(9).await.unwrap() >= 9);
    let mut view = input.view();
    let mut nine = [0u8; 9];
    bytes::Buf::copy_to_slice(&mut view, &mut nine);
    drop(view);
    assert_eq!(nine, data[157..166]);
    check(&input, "a fill and consume of 9 bytes at 157");

    drop(input);
    assert_eq!(budget.used(), 0, "all of it back once the input is dropped");
}
