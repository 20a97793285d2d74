//! What fault injection found (a fuzzer over the decoders and a fault-injection model compared
//! with Lucene's `DataInput`), one test per finding. Each failed before the fix.

use std::future::Future;
use std::io::{Cursor, ErrorKind, SeekFrom};

use abi_testkit::{input_error, poll_once_then_drop, Faulty, FaultyConfig};
use async_buffered_input::AsyncBufferedInput;
use tokio::io::AsyncSeekExt;

/// A `Cursor` whose seeks each answer `Pending` once in `poll_complete` (like a file whose
/// seeks run on a thread pool), and whose reads fail once, with `ConnectionReset`, when they
/// start at or after `fail_at`. Seeks further than `refuse_past` are refused in
/// `poll_complete` with `InvalidInput`, as an operating system refuses a seek past its largest
/// file; the cursor stays where it was.
fn flaky(data: Vec<u8>, fail_at: Option<u64>, refuse_past: Option<u64>) -> Faulty {
    let cfg = FaultyConfig {
        fail_reads_from: fail_at,
        fail_once: true,
        read_error: (ErrorKind::ConnectionReset, "injected"),
        seeks_pend_once: true,
        refuse_seeks_past: refuse_past,
        ..Default::default()
    };
    Faulty::new(data, cfg)
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// Polls `future` once, expecting `Pending`, and drops it.
#[track_caller]
fn poll_once_and_drop<F: Future>(future: F) {
    assert!(poll_once_then_drop(future).is_none(), "expected Pending");
}

/// Finding 1: a dropped future that had started the seek to the end, then the cursor moved
/// through `get_mut()`: the next operation took the moved cursor for the length.
#[tokio::test]
async fn a_cursor_moved_through_get_mut_is_not_taken_for_the_length() {
    let mut input = AsyncBufferedInput::with_capacity(16, flaky(data(100), None, None));
    poll_once_and_drop(input.length());
    input.get_mut().get_mut().set_position(5);
    assert_eq!(input.length().await.unwrap(), 100);

    // With the cursor moved far, a corrupt string length must be checked against the real
    // length, before anything is allocated.
    let mut bytes = vec![0xff, 0xff, 0xff, 0xff, 0x07]; // 2^31 - 1
    bytes.extend_from_slice(&data(95));
    let mut input = AsyncBufferedInput::with_capacity(16, flaky(bytes, None, None));
    poll_once_and_drop(input.length());
    input.get_mut().get_mut().set_position(1 << 40);
    let e = input.read_string().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    assert_eq!(input_error(&e).available(), Some(100), "{e}");
    assert_eq!(input.length().await.unwrap(), 100);
}

/// Finding 2: a source failing in the middle of a value: the error named where the failing
/// refill started, not where the value started.
#[tokio::test]
async fn errors_in_the_middle_of_a_value_name_where_it_starts() {
    // A vint at 3 whose bytes straddle the window (capacity 4): the refill at 4 fails.
    let vint = [1, 2, 3, 0x80, 0x80, 0x01, 9, 9];
    let mut input = AsyncBufferedInput::with_capacity(4, flaky(vint.to_vec(), Some(4), None));
    input.read_bytes(&mut [0; 3]).await.unwrap();
    let e = input.read_vint().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert_eq!(input_error(&e).position(), 3, "{e}");
    assert_eq!(input.position(), 3);
    assert_eq!(
        input.read_vint().await.unwrap(),
        1 << 14,
        "a retry reads the value"
    );

    // A string's length prefix straddling the window.
    let mut input = AsyncBufferedInput::with_capacity(4, flaky(vint.to_vec(), Some(4), None));
    input.read_bytes(&mut [0; 3]).await.unwrap();
    let e = input.read_string().await.unwrap_err();
    assert_eq!(input_error(&e).position(), 3, "{e}");

    // A string's body after its prefix.
    let mut bytes = vec![1, 2, 3, 10];
    bytes.extend_from_slice(b"abcdefghij");
    let mut input = AsyncBufferedInput::with_capacity(4, flaky(bytes, Some(4), None));
    input.read_bytes(&mut [0; 3]).await.unwrap();
    let e = input.read_string().await.unwrap_err();
    assert_eq!(input_error(&e).position(), 3, "{e}");
    assert_eq!(input.read_string().await.unwrap(), "abcdefghij");

    // A bulk read failing after its first steps.
    let values: Vec<u8> = (0..2000u32).flat_map(u32::to_be_bytes).collect();
    let mut input = AsyncBufferedInput::with_capacity(64, flaky(values, Some(100), None));
    input.seek_to(8);
    let mut dst = [0u32; 1990];
    let e = input.read_u32_into(&mut dst).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert_eq!(input_error(&e).position(), 8, "{e}");
    assert_eq!(input.position(), 8);
    input.read_u32_into(&mut dst).await.unwrap();
    assert_eq!((dst[0], dst[1989]), (2, 1991));
}

/// Finding 3: an `End` seek polled once and dropped was applied by a later seek or not,
/// depending on whether the read in between was a window hit. Now: a read that returns bytes
/// abandons it, hit or miss; with nothing in between, the next seek completes it, as tokio's
/// `File` does.
#[tokio::test]
async fn a_dropped_end_seek_has_one_rule() {
    for (case, read) in [("window hit", 1), ("window miss", 40)] {
        let mut input = AsyncBufferedInput::with_capacity(16, flaky(data(100), None, None));
        input.read_byte().await.unwrap();
        poll_once_and_drop(AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::End(-5)));
        input.read_bytes(&mut vec![0; read]).await.unwrap();
        let expected = 1 + read as u64;
        assert_eq!(
            AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::Current(0))
                .await
                .unwrap(),
            expected,
            "{case}"
        );
        assert_eq!(input.position(), expected, "{case}");
    }

    let mut input = AsyncBufferedInput::with_capacity(16, flaky(data(100), None, None));
    input.read_byte().await.unwrap();
    poll_once_and_drop(AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::End(-5)));
    let at = AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::Current(0))
        .await
        .unwrap();
    assert_eq!(at, 95, "nothing in between: completed by the next seek");
}

/// Finding 4: typed reads that take the slow path were not counted in `stats()`: varint bytes
/// gathered across refills, and a string's prefix when the string does not fit the window.
#[tokio::test]
async fn slow_typed_reads_are_counted() {
    let mut bytes = vec![1, 2, 3, 0x80, 0x80, 0x01]; // a 3-byte vint at 3
    bytes.extend_from_slice(&[0x80, 0x01]); // a 128-byte string's prefix at 6
    bytes.extend_from_slice(&[b'x'; 128]);
    bytes.extend_from_slice(&[0xff, 0x7f]); // a vint in a window of 2 bytes
    let total = bytes.len() as u64;
    for capacity in [2, 4] {
        let mut input = AsyncBufferedInput::with_capacity(capacity, Cursor::new(bytes.clone()));
        input.read_bytes(&mut [0; 3]).await.unwrap();
        assert_eq!(input.read_vint().await.unwrap(), 1 << 14);
        assert_eq!(input.read_string().await.unwrap(), "x".repeat(128));
        assert_eq!(input.read_vint().await.unwrap(), 0x3fff);
        let stats = input.stats();
        assert_eq!(
            stats.bytes_from_window + stats.bytes_direct,
            total,
            "capacity {capacity}: {stats:?}"
        );
        assert_eq!(stats.bytes_from_source, total, "capacity {capacity}");
    }
}

/// Finding 5: far past the end of a `tokio::fs::File`, a read failed with the operating
/// system's `InvalidInput` for the seek, where `UnexpectedEof` is promised; even with the
/// length known.
#[tokio::test]
async fn far_past_the_end_of_a_file_is_the_end() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("small.bin");
    std::fs::write(&path, data(100)).unwrap();
    for know_length in [false, true] {
        let file = tokio::fs::File::open(&path).await.unwrap();
        let mut input = AsyncBufferedInput::new(file);
        if know_length {
            assert_eq!(input.length().await.unwrap(), 100);
        }
        for at in [1 << 50, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX - 1] {
            input.seek_to(at);
            let e = input.read_byte().await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "at {at}: {e}");
            assert_eq!(input_error(&e).position(), at);
            let e = input.read_bytes(&mut [0; 10]).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "at {at}: {e}");
        }
        input.seek_to(98);
        let mut two = [0; 2];
        input.read_bytes(&mut two).await.unwrap();
        assert_eq!(two, data(100)[98..]);
    }
}

/// Finding (fuzzing, `ops`): a read far past the end dropped while its seek was in flight, then
/// `get_mut()`: the next read failed with that abandoned seek's refusal (`InvalidInput`, "past
/// the largest file") instead of reaching the end. An abandoned seek's outcome is not trusted,
/// its failure included: the next fetch seeks anew.
#[tokio::test]
async fn an_abandoned_seek_that_fails_does_not_fail_the_next_read() {
    let stream = flaky(data(100), None, Some(164));
    let mut input = AsyncBufferedInput::with_capacity(8, stream);
    input.seek_to(1 << 33);
    poll_once_and_drop(input.read_byte()); // the seek to 2^33 is in flight
    let _ = input.get_mut(); // the seek is abandoned
    input.seek_to((1 << 33) + 10);
    let e = input.read_bytes(&mut [0; 23]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    assert_eq!(input_error(&e).position(), (1 << 33) + 10, "{e}");
    assert_eq!(input.position(), (1 << 33) + 10);
    input.seek_to(90);
    let mut buf = [0u8; 10];
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(buf[..], data(100)[90..]);
}
