//! Checksummed reading and Lucene's codec framing.
//!
//! The model: after any mix of reads of every kind, forward skips, injected source errors and
//! dropped futures, `checksum()` is the CRC32 of the data from where checksumming started to
//! the position, on streams and positional sources with and without read-ahead, at every
//! window size.

use std::io::{Cursor, ErrorKind, SeekFrom};

use abi_testkit::poll_once_then_drop as poll_once;
use abi_testkit::*;
use async_buffered_input::lucene::codec;
use async_buffered_input::source::MemorySource;
use async_buffered_input::{AsyncBufferedInput, InputError};
use async_buffered_input::{Fetch, PositionalFetch, ReadAhead};
use bytes::Buf;
use proptest::prelude::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt};

#[derive(Clone, Debug)]
enum Op {
    Bytes(usize),
    Byte,
    Owned(usize),
    Skip(u64),
    Read(usize),
    FillConsume(usize),
    View(usize),
    /// Polls a read of this many bytes once, then drops it.
    Dropped(usize),
    Check,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..300).prop_map(Op::Bytes),
        Just(Op::Byte),
        (0usize..300).prop_map(Op::Owned),
        (0u64..200).prop_map(Op::Skip),
        (1usize..300).prop_map(Op::Read),
        (0usize..100).prop_map(Op::FillConsume),
        (0usize..50).prop_map(Op::View),
        (1usize..300).prop_map(Op::Dropped),
        Just(Op::Check),
        Just(Op::Check),
    ]
}

/// Runs `ops` on `input` (over `data`, checksumming from `start`), checking the checksum after
/// each `Check` and at the end. Reads may fail with an injected error; the model then stays.
async fn run<F: Fetch>(mut input: AsyncBufferedInput<F>, data: &[u8], start: u64, ops: &[Op]) {
    input.seek_to(start);
    input.start_checksum();
    let len = data.len() as u64;
    let ctx = |op: &Op, pos: u64| format!("{op:?} at {pos} of {len}");
    for op in ops {
        let pos = input.position();
        let result = match op {
            Op::Bytes(n) => input.read_bytes(&mut vec![0; *n]).await.map(|()| *n),
            Op::Byte => input.read_byte().await.map(|_| 1),
            Op::Owned(n) => input.read_bytes_owned(*n).await.map(|b| b.len()),
            Op::Skip(n) => {
                input.seek_to((pos + n).min(len));
                continue;
            }
            Op::Read(n) => input.tokio_io().read(&mut vec![0; *n]).await,
            Op::FillConsume(n) => match input.tokio_io().fill_buf().await {
                Ok(held) => {
                    let k = (*n).min(held.len());
                    input.tokio_io().consume(k);
                    Ok(k)
                }
                Err(e) => Err(e),
            },
            Op::View(n) => {
                let mut view = input.view();
                let k = (*n).min(view.remaining());
                view.advance(k);
                Ok(k)
            }
            Op::Dropped(n) => match poll_once(input.read_bytes(&mut vec![0; *n])) {
                Some(done) => done.map(|()| *n),
                None => {
                    assert_eq!(input.position(), pos, "{}", ctx(op, pos));
                    continue;
                }
            },
            Op::Check => {
                let crc = input.checksum().await;
                match crc {
                    Ok(crc) => assert_eq!(
                        crc,
                        crc32fast::hash(&data[start as usize..pos as usize]),
                        "{}",
                        ctx(op, pos)
                    ),
                    Err(e) => assert_eq!(e.kind(), HOSTILE_READ_ERROR, "{}: {e}", ctx(op, pos)),
                }
                continue;
            }
        };
        match result {
            Ok(n) => assert_eq!(input.position(), pos + n as u64, "{}", ctx(op, pos)),
            Err(e) => {
                assert!(
                    matches!(e.kind(), ErrorKind::UnexpectedEof) || e.kind() == HOSTILE_READ_ERROR,
                    "{}: {e}",
                    ctx(op, pos)
                );
                assert_eq!(input.position(), pos, "{}", ctx(op, pos));
            }
        }
    }
    let pos = input.position();
    // One more try if an injected error hit the last check.
    let crc = match input.checksum().await {
        Ok(crc) => crc,
        Err(_) => input.checksum().await.expect("checksum"),
    };
    assert_eq!(crc, crc32fast::hash(&data[start as usize..pos as usize]));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn checksum_is_the_crc_of_the_bytes_consumed(
        ops in prop::collection::vec(op(), 1..40),
        capacity in prop::sample::select(vec![1usize, 7, 64, 1024]),
        start in 0u64..100,
        family in 0u8..4,
        fail_after in prop::option::of(0u64..3000),
        seed in any::<u64>(),
    ) {
        let data = pattern_vec(2500);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            match family {
                0 => run(AsyncBufferedInput::with_capacity(capacity, Cursor::new(data.clone())), &data, start, &ops).await,
                1 => {
                    let hostile = Hostile::new(data.clone(), HostileConfig {
                        short_reads: true,
                        pending: true,
                        seed,
                        fail_read_after: fail_after,
                        ..Default::default()
                    });
                    run(AsyncBufferedInput::with_capacity(capacity, hostile), &data, start, &ops).await
                }
                2 => {
                    let fetch = PositionalFetch::new(MemorySource::new(data.clone()))
                        .with_read_ahead(ReadAhead::new(100, 3));
                    run(AsyncBufferedInput::with_capacity(capacity, fetch), &data, start, &ops).await
                }
                _ => {
                    let fetch = PositionalFetch::new(PartlyAtHand::new(data.clone(), seed));
                    run(AsyncBufferedInput::with_capacity(capacity, fetch), &data, start, &ops).await
                }
            }
        });
    }
}

/// Checksumming costs no second read: bytes read straight into the caller's buffer, through
/// the window, handed out by `read_bytes_owned`, skipped by a seek or visited by a view are
/// each fetched once.
#[tokio::test]
async fn checksumming_reads_each_byte_once() {
    let data = pattern_vec(200_000);
    for capacity in [64, 8192] {
        let mut input = AsyncBufferedInput::with_capacity(
            capacity,
            PositionalFetch::new(MemorySource::new(data.clone())),
        );
        input.start_checksum();
        input.read_bytes(&mut vec![0; 50_000]).await.unwrap(); // straight into the buffer
        input.read_bytes(&mut [0; 10]).await.unwrap(); // through the window
        input.read_bytes_owned(capacity / 2).await.unwrap(); // handed out of the window
        let skip_to = input.position() + 30_000;
        input.seek_to(skip_to); // skipped
        input.fill(10).await.unwrap();
        input.view().advance(5); // consumed through a view
        input.read_bytes(&mut vec![0; 100_000]).await.unwrap();
        let end = input.position();
        assert_eq!(
            input.checksum().await.unwrap(),
            crc32fast::hash(&data[..end as usize])
        );
        let fetched = input.stats().bytes_from_source;
        assert!(
            fetched <= end + capacity as u64,
            "capacity {capacity}: {fetched} bytes fetched for {end} consumed"
        );
    }
}

#[tokio::test]
async fn a_seek_back_voids_the_checksum_and_reading_on_is_still_right() {
    let data = pattern_vec(100);
    let mut input = AsyncBufferedInput::with_capacity(16, Cursor::new(data.clone()));
    input.start_checksum();
    input.read_bytes(&mut [0; 10]).await.unwrap();
    input.seek_to(4);
    let e = input.checksum().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("went back to 4"), "{e}");
    assert_eq!(input.read_byte().await.unwrap(), data[4]);
    // Starting again starts a new pass.
    input.start_checksum();
    input.read_bytes(&mut [0; 20]).await.unwrap();
    assert_eq!(
        input.checksum().await.unwrap(),
        crc32fast::hash(&data[5..25])
    );
}

/// A seek back while checksumming is refused by `AsyncSeek` and `try_seek_to`, as Lucene's
/// `BufferedChecksumIndexInput.seek` refuses it: the error names the resource, the position
/// and the target, nothing moves, and the checksum goes on.
#[tokio::test]
async fn a_fallible_seek_back_while_checksumming_is_an_error() {
    let data = pattern_vec(100);
    let mut input =
        AsyncBufferedInput::with_capacity(16, Cursor::new(data.clone())).with_resource("_0.si");
    input.start_checksum();
    input.read_bytes(&mut [0; 10]).await.unwrap();
    for (case, seek) in [
        ("Current", SeekFrom::Current(-1)),
        ("Start", SeekFrom::Start(4)),
        ("End, length unknown", SeekFrom::End(-95)),
        ("End, length known", SeekFrom::End(-95)),
    ] {
        let e = AsyncSeekExt::seek(&mut input.tokio_io(), seek)
            .await
            .unwrap_err();
        assert_refused(
            &e,
            "_0.si: seek at position 10: a seek back to ",
            "while checksumming from 0",
            case,
        );
        assert_eq!(input.position(), 10, "{case}");
    }
    let e = input.try_seek_to(9).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("a seek back to 9"), "{e}");
    // Forward, and to the position itself, are fine; the checksum went on.
    AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::Current(0))
        .await
        .unwrap();
    input.try_seek_to(12).unwrap();
    AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::Start(20))
        .await
        .unwrap();
    assert_eq!(
        input.checksum().await.unwrap(),
        crc32fast::hash(&data[..20])
    );
    // Not checksumming: back is fine.
    input.stop_checksum();
    input.try_seek_to(3).unwrap();
    AsyncSeekExt::seek(&mut input.tokio_io(), SeekFrom::Current(-1))
        .await
        .unwrap();
    assert_eq!(input.read_byte().await.unwrap(), data[2]);
}

#[tokio::test]
async fn checksum_past_the_end_and_without_start_are_errors() {
    let data = pattern_vec(100);
    let mut input = AsyncBufferedInput::with_capacity(16, Cursor::new(data.clone()));
    assert_eq!(
        input.checksum().await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    input.start_checksum();
    input.seek_to(150);
    let e = input.checksum().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    input.stop_checksum();
    assert_eq!(input.checksum_start(), None);
}

/// Found by fuzzing: a read straight into the caller's buffer, after the checksum was voided by
/// a seek back or went past the end, folded bytes past a gap (a debug assertion fired).
#[tokio::test]
async fn direct_reads_after_a_void_checksum_or_past_the_end_are_right() {
    let data = pattern_vec(100);
    let mut input = AsyncBufferedInput::with_capacity(4, Cursor::new(data.clone()));
    input.read_byte().await.unwrap(); // window [0, 4), position 1
    input.start_checksum();
    input.seek_to(0); // back: the checksum is void
    let mut buf = [0u8; 8]; // 4 from the window, 4 straight into `buf`
    input.read_bytes(&mut buf).await.unwrap();
    assert_eq!(&buf[..], &data[..8]);
    assert_eq!(
        input.checksum().await.unwrap_err().kind(),
        ErrorKind::InvalidInput
    );

    for direct in [false, true] {
        let mut input = AsyncBufferedInput::with_capacity(4, Cursor::new(vec![7u8; 8]));
        input.start_checksum();
        input.seek_to(20); // forward, past the end
        let mut buf = [0u8; 5]; // at least the capacity: straight into `buf`
        if direct {
            assert_eq!(input.tokio_io().read(&mut buf).await.unwrap(), 0);
        } else {
            let e = input.read_bytes(&mut buf).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
        }
        assert_eq!(input.position(), 20);
        let e = input.checksum().await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    }
}

/// Found by fuzzing: checksumming, a read past the end fetched again at the data's end on every
/// poll (to fold the skipped bytes), undoing the stream seek the read itself needed; over a
/// source that is `Pending` every other call, it never finished.
#[tokio::test]
async fn a_read_past_the_end_while_checksumming_finishes() {
    // Reads and seeks are `Pending` (woken at once) every other call.
    let cfg = FaultyConfig {
        pending_every_other: true,
        ..Default::default()
    };
    let source = Faulty::new(vec![1u8; 8], cfg);
    let mut input = AsyncBufferedInput::with_capacity(16, source);
    input.start_checksum();
    input.seek_to(20); // the checksum can fold only up to 8
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), input.read_byte()).await;
    let e = read.expect("read_byte past the end hung").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    assert_eq!(input.position(), 20);
    input.seek_to(3); // still usable
    assert_eq!(input.read_byte().await.unwrap(), 1);
}

#[tokio::test]
async fn crc32_of_and_chunks_do_not_move_the_input() {
    let data = pattern_vec(700_000);
    let mut input = AsyncBufferedInput::with_capacity(
        64,
        PositionalFetch::new(MemorySource::new(data.clone())),
    );
    input.read_bytes(&mut [0; 10]).await.unwrap();
    let window = input.window();
    assert_eq!(
        input.crc32_of(5..600_000).await.unwrap(),
        crc32fast::hash(&data[5..600_000])
    );
    assert_eq!((input.position(), input.window()), (10, window));
    let mut seen = Vec::new();
    let e = input
        .for_each_chunk(699_990..700_010, |at, bytes| seen.push((at, bytes.len())))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    assert_eq!(seen, [(699_990, 10)]);
    assert_eq!(
        e.to_string(),
        "memory (700000 bytes): for_each_chunk of 20 bytes at position 699990 went past the end: \
         only 10 bytes available"
    );
}

// ----- codec framing -----

/// A Lucene file: index header for `codec`/`version`/`id`/`suffix`, `body`, footer with the CRC.
fn lucene_file(
    codec_name: &str,
    version: u32,
    id: &[u8; 16],
    suffix: &str,
    body: &[u8],
) -> Vec<u8> {
    let mut out = codec::CODEC_MAGIC.to_be_bytes().to_vec();
    out.push(codec_name.len() as u8);
    out.extend_from_slice(codec_name.as_bytes());
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(id);
    out.push(suffix.len() as u8);
    out.extend_from_slice(suffix.as_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&codec::FOOTER_MAGIC.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&u64::from(crc).to_be_bytes());
    out
}

const ID: [u8; 16] = *b"0123456789abcdef";

fn si_input(bytes: Vec<u8>) -> AsyncBufferedInput<PositionalFetch<MemorySource>> {
    AsyncBufferedInput::with_capacity(16, PositionalFetch::new(MemorySource::new(bytes)))
        .with_resource("_0.si")
}

/// The corruption an `InvalidData` error carries: what was expected there, and found.
struct Corrupt<'a> {
    error: &'a InputError,
}

impl Corrupt<'_> {
    fn resource(&self) -> Option<&str> {
        self.error.resource()
    }
    fn position(&self) -> u64 {
        self.error.position()
    }
    fn expected(&self) -> &str {
        self.error
            .expected()
            .expect("a corruption error says what was expected")
    }
    fn found(&self) -> &str {
        self.error
            .found()
            .expect("a corruption error says what was found")
    }
}

fn corrupt(e: &std::io::Error) -> Corrupt<'_> {
    assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}");
    let error = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<InputError>())
        .unwrap_or_else(|| panic!("no InputError in {e:?}"));
    assert_eq!(error.operation(), "corrupt", "{e}");
    Corrupt { error }
}

/// Strings, a set and a map as Lucene's `DataOutput` writes them (vint counts and lengths).
fn body() -> Vec<u8> {
    let mut body = vec![0xfe]; // read_i8: -2
    for group in [&["a", "bé"][..], &["k1", "v1", "k2", "ü"][..]] {
        body.push(group.len() as u8 / if group.len() == 4 { 2 } else { 1 });
        for s in group {
            body.push(s.len() as u8);
            body.extend_from_slice(s.as_bytes());
        }
    }
    body
}

#[tokio::test]
async fn a_file_is_parsed_and_verified_in_one_pass() {
    let file = lucene_file("Lucene86SegmentInfo", 1, &ID, "x", &body());
    let mut input = si_input(file.clone());
    input.start_checksum();
    let version = codec::check_index_header(&mut input, "Lucene86SegmentInfo", 0, 1, &ID, "x")
        .await
        .unwrap();
    assert_eq!(version, 1);
    assert_eq!(input.read_i8().await.unwrap(), -2);
    let set = codec::read_set_of_strings(&mut input).await.unwrap();
    assert_eq!(set.into_iter().collect::<Vec<_>>(), ["a", "bé"]);
    let map = codec::read_map_of_strings(&mut input).await.unwrap();
    assert_eq!(map.get("k2").map(String::as_str), Some("ü"));
    let crc = codec::check_footer(&mut input).await.unwrap();
    assert_eq!(crc, crc32fast::hash(&file[..file.len() - 8]));
    let stats = input.stats();
    assert_eq!(
        stats.bytes_from_source,
        file.len() as u64,
        "each byte read once: {stats:?}"
    );

    // The same by the whole-file check, and the stored CRC alone.
    let mut input = si_input(file.clone());
    assert_eq!(codec::checksum_entire_file(&mut input).await.unwrap(), crc);
    assert_eq!(input.position(), 0);
    assert_eq!(codec::retrieve_checksum(&mut input).await.unwrap(), crc);
}

/// `checksum_entire_file` reads each byte of the file from the source once, small files and
/// large, and none the window already holds.
#[tokio::test]
async fn checksum_entire_file_fetches_each_byte_once() {
    for (body_len, capacity, read_ahead) in [
        (10, 16, None),
        (100, 8192, None),
        (5000, 8192, Some(ReadAhead::new(4096, 2))),
        (700_000, 8192, None),
        (700_000, 8192, Some(ReadAhead::default())),
    ] {
        let body = pattern_vec(body_len);
        let file = lucene_file("Lucene90PostingsWriterDoc", 1, &ID, "", &body);
        let length = file.len() as u64;
        let ctx = format!("{length} bytes, capacity {capacity}, read-ahead {read_ahead:?}");
        let source = std::sync::Arc::new(CountingPositional::new(MemorySource::new(file.clone())));
        let mut fetch = PositionalFetch::from_arc(source.clone());
        if let Some(read_ahead) = read_ahead {
            fetch = fetch.with_read_ahead(read_ahead);
        }
        let mut input = AsyncBufferedInput::with_capacity(capacity, fetch);
        let crc = codec::checksum_entire_file(&mut input).await.unwrap();
        assert_eq!(crc, crc32fast::hash(&file[..file.len() - 8]), "{ctx}");
        assert_eq!(input.stats().bytes_from_source, length, "{ctx}");
        assert_eq!(source.bytes(), length, "{ctx}: bytes asked of the source");

        // After a header read through the window: the window's bytes are not fetched again.
        let mut input = AsyncBufferedInput::with_capacity(
            capacity,
            PositionalFetch::new(MemorySource::new(file.clone())),
        );
        codec::check_index_header(&mut input, "Lucene90PostingsWriterDoc", 1, 1, &ID, "")
            .await
            .unwrap();
        // The bytes before the window left it: those only are fetched again.
        let before_window = input.window().start;
        assert_eq!(codec::checksum_entire_file(&mut input).await.unwrap(), crc);
        assert_eq!(
            input.stats().bytes_from_source,
            length + before_window,
            "{ctx}, after a header"
        );
    }
    // A stream too.
    let file = lucene_file("c", 0, &ID, "", &pattern_vec(3000));
    let mut input = AsyncBufferedInput::new(Cursor::new(file.clone()));
    codec::checksum_entire_file(&mut input).await.unwrap();
    assert_eq!(input.stats().bytes_from_source, file.len() as u64);
}

/// Verifying the whole file in the middle of a checksummed pass over it leaves that pass
/// intact: the position does not move, so the checksum is not voided.
#[tokio::test]
async fn checksum_entire_file_keeps_a_checksum_in_progress() {
    let file = lucene_file("Lucene86SegmentInfo", 1, &ID, "x", &body());
    let mut input = si_input(file.clone());
    input.start_checksum();
    codec::check_index_header(&mut input, "Lucene86SegmentInfo", 0, 1, &ID, "x")
        .await
        .unwrap();
    let at = input.position();
    let crc = codec::checksum_entire_file(&mut input).await.unwrap();
    assert_eq!(input.position(), at);
    assert_eq!(input.checksum_start(), Some(0));
    assert_eq!(
        input.checksum().await.unwrap(),
        crc32fast::hash(&file[..at as usize])
    );
    let length = input.length().await.unwrap();
    input.seek_to(length - codec::FOOTER_LENGTH); // forward: skipped bytes are checksummed
    assert_eq!(codec::check_footer(&mut input).await.unwrap(), crc);
}

/// `e` is an `InvalidInput` refusal whose message starts with `starts` and mentions `mentions`.
#[track_caller]
fn assert_refused(e: &std::io::Error, starts: &str, mentions: &str, ctx: &str) {
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{ctx}: {e}");
    let message = e.to_string();
    assert!(message.starts_with(starts), "{ctx}: {e}");
    assert!(message.contains(mentions), "{ctx}: {e}");
}

/// `check_footer` compares the footer with the CRC of the whole file: it refuses an input that
/// is not checksumming from 0, rather than report a corruption that is not there.
#[tokio::test]
async fn check_footer_needs_a_checksum_from_0() {
    let file = lucene_file("Lucene86SegmentInfo", 1, &ID, "x", &body());
    let footer_at = file.len() as u64 - codec::FOOTER_LENGTH;
    for start in [None, Some(3), Some(footer_at)] {
        let mut input = si_input(file.clone());
        if let Some(start) = start {
            input.seek_to(start);
            input.start_checksum();
        }
        input.seek_to(footer_at);
        let e = codec::check_footer(&mut input).await.unwrap_err();
        assert_refused(
            &e,
            "_0.si: check_footer at position",
            "start_checksum",
            &format!("{start:?}"),
        );
        assert_eq!(input.position(), footer_at, "nothing consumed");
    }
}

#[tokio::test]
async fn every_kind_of_corruption_names_the_resource_what_and_where() {
    let good = lucene_file("Lucene86SegmentInfo", 1, &ID, "x", &body());
    let header_len = 4 + 1 + "Lucene86SegmentInfo".len() + 4 + 16 + 2;

    // A flipped body byte: the footer check finds it.
    let mut bad = good.clone();
    bad[header_len + 3] ^= 1;
    let mut input = si_input(bad);
    input.start_checksum();
    codec::check_index_header(&mut input, "Lucene86SegmentInfo", 0, 1, &ID, "x")
        .await
        .unwrap();
    let length = input.length().await.unwrap();
    input.seek_to(length - codec::FOOTER_LENGTH);
    let e = codec::check_footer(&mut input).await.unwrap_err();
    let c = corrupt(&e);
    assert_eq!(c.resource(), Some("_0.si"));
    assert_eq!(c.position(), length - 8);
    assert!(c.expected().contains("checksum"), "{e}");
    assert!(
        e.to_string().starts_with("_0.si: corrupt at position"),
        "{e}"
    );

    // Wrong magic, codec, version, id, suffix.
    for (case, file, codec_name, max, id, suffix) in [
        (
            "magic",
            {
                let mut f = good.clone();
                f[0] = 0;
                f
            },
            "Lucene86SegmentInfo",
            1,
            ID,
            "x",
        ),
        ("codec", good.clone(), "Lucene70SegmentInfo", 1, ID, "x"),
        ("version", good.clone(), "Lucene86SegmentInfo", 0, ID, "x"),
        (
            "id",
            good.clone(),
            "Lucene86SegmentInfo",
            1,
            *b"fedcba9876543210",
            "x",
        ),
        ("suffix", good.clone(), "Lucene86SegmentInfo", 1, ID, "y"),
    ] {
        let mut input = si_input(file);
        let e = codec::check_index_header(&mut input, codec_name, 0, max, &id, suffix)
            .await
            .unwrap_err();
        let c = corrupt(&e);
        assert!(
            c.expected().contains(case) || e.to_string().contains(case),
            "{case}: {e}"
        );
    }

    // Truncated and extended files: the footer is misplaced.
    for (case, file) in [
        ("truncated", good[..good.len() - 3].to_vec()),
        ("extended", [good.clone(), vec![0; 3]].concat()),
    ] {
        let mut input = si_input(file);
        let e = codec::checksum_entire_file(&mut input).await.unwrap_err();
        assert!(
            e.to_string().contains(case) || e.to_string().contains("footer"),
            "{case}: {e}"
        );
        assert_eq!(e.kind(), ErrorKind::InvalidData, "{case}: {e}");
    }

    // A CRC with its upper bits set, a wrong algorithm, a wrong footer magic.
    for (case, at, byte) in [
        ("CRC32", 8, 1u8),
        ("algorithm", 7, 1),
        ("footer magic", 0, 0),
    ] {
        let mut file = good.clone();
        let footer = file.len() - 16;
        file[footer + at] = byte;
        let mut input = si_input(file);
        let e = codec::retrieve_checksum(&mut input).await.unwrap_err();
        assert!(corrupt(&e).expected().contains(case), "{case}: {e}");
    }

    // A set whose count is larger than the file could hold.
    let mut input = si_input(vec![0xff, 0xff, 0x03, b'a']);
    let e = codec::read_set_of_strings(&mut input).await.unwrap_err();
    assert!(corrupt(&e).found().contains("65535"), "{e}");
}
