//! Opening a file in one call, errors that name what they read, and slices that know their
//! length.

use std::io::{Cursor, ErrorKind};
use std::sync::Arc;

use abi_testkit::*;
use async_buffered_input::source::MemorySource;
use async_buffered_input::AsyncBufferedInput;
use async_buffered_input::PositionalFetch;

#[tokio::test]
async fn open_reads_positionally_knows_the_length_and_names_the_path() {
    let data = pattern_vec(300_000);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("_0.cfs");
    std::fs::write(&path, &data).unwrap();

    let mut input = AsyncBufferedInput::open(&path).await.unwrap();
    assert_eq!(input.known_length(), Some(300_000));
    assert_eq!(input.resource(), path.display().to_string());
    assert!(
        input.fetch().read_ahead().is_some(),
        "read-ahead on sequential reads"
    );
    let mut all = vec![0; data.len()];
    input.read_bytes(&mut all).await.unwrap();
    assert_bytes(&all, &data, 0, "open + read_bytes");

    // Errors name the file.
    let e = input.read_u32().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: read_u32 of 4 bytes at position 300000 went past the end: only 0 bytes available",
            path.display()
        )
    );
    assert_eq!(
        input_error(&e).resource(),
        Some(path.display().to_string().as_str())
    );

    // Slices and clones, named after it; a slice of a slice names both.
    let fdt = input.slice_named("_0.fdt", 1000, 5000).await.unwrap();
    let mut inner = fdt.slice(10, 20).await.unwrap();
    inner.seek_to(19);
    let e = inner.read_u16().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "slice [10..30) of slice _0.fdt [1000..6000) of {}: read_u16 of 2 bytes at position \
             19 went past the end: only 1 byte available",
            path.display()
        )
    );
    let mut clone = inner.clone();
    clone.seek_to(0);
    assert_eq!(clone.read_byte().await.unwrap(), data[1010]);
    assert_eq!(clone.resource(), inner.resource());

    // A missing file names its path.
    let missing = dir.path().join("_1.si");
    let e = AsyncBufferedInput::open(&missing).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.to_string().contains("_1.si"), "{e}");
}

#[tokio::test]
async fn a_slice_never_asks_the_length_once_it_is_known() {
    let source = Arc::new(CountingPositional::new(MemorySource::new(pattern_vec(
        1000,
    ))));
    let input = AsyncBufferedInput::new(PositionalFetch::from_arc(source.clone()));
    // The counting wrapper does not pass on `known_len`: the length is unknown until asked.
    assert_eq!(input.known_length(), None);
    let plain = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(pattern_vec(7))));
    assert_eq!(
        plain.known_length(),
        Some(7),
        "a memory source knows its length"
    );
    // A parent shared behind an `Arc`, whose length was never asked: the first slice asks it,
    // and the parent keeps it (`&self` is enough). Its clones, its slices and their slices never
    // ask again.
    let shared = Arc::new(input);
    for i in 0..100 {
        let slice = shared.slice(i, 10).await.unwrap();
        assert_eq!(slice.known_length(), Some(10));
        slice.slice(1, 5).await.unwrap();
        shared.clone().slice(i, 5).await.unwrap();
    }
    assert_eq!(source.length_requests(), 1, "one length request in all");
    assert_eq!(shared.known_length(), Some(1000));
    let mut clone = (*shared).clone();
    assert_eq!(clone.length().await.unwrap(), 1000);
    assert_eq!(source.length_requests(), 1);
    let e = shared.slice(995, 10).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        (input_error(&e).position(), input_error(&e).requested()),
        (995, 10),
        "{e}"
    );
}

#[tokio::test]
async fn streams_and_sources_name_themselves_when_asked() {
    let mut stream = AsyncBufferedInput::new(Cursor::new(vec![1u8])).with_resource("segments_3");
    stream.read_byte().await.unwrap();
    let e = stream.read_byte().await.unwrap_err();
    assert!(
        e.to_string().starts_with("segments_3: read_byte of 1 byte"),
        "{e}"
    );
    let memory = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(vec![0u8; 4])))
        .with_resource("_0.tip");
    assert_eq!(memory.resource(), "_0.tip");
    assert_eq!(
        memory.slice(1, 2).await.unwrap().resource(),
        "slice [1..3) of _0.tip"
    );
}

/// Every input has a description, named or not, and every error names it: "stream" for a
/// stream, "memory (N bytes)" for bytes in memory, "positional source" for a source without
/// a name; their slices and clones name them too.
#[tokio::test]
async fn unnamed_inputs_are_described() {
    let mut stream = AsyncBufferedInput::new(Cursor::new(vec![1u8]));
    assert_eq!(stream.resource(), "stream");
    stream.seek_to(1);
    let e = stream.read_byte().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "stream: read_byte of 1 byte at position 1 went past the end: only 0 bytes available"
    );
    assert_eq!(input_error(&e).resource(), Some("stream"));

    let memory = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(vec![0u8; 4])));
    assert_eq!(memory.resource(), "memory (4 bytes)");
    assert_eq!(
        memory
            .corrupt_at(memory.position(), "magic 0x3fd76c17", "0x00000000")
            .to_string(),
        "memory (4 bytes): corrupt at position 0: expected magic 0x3fd76c17, found 0x00000000"
    );
    let one = AsyncBufferedInput::new(PositionalFetch::new(MemorySource::new(vec![0u8])));
    assert_eq!(one.resource(), "memory (1 byte)");
    let mut slice = memory.slice_named("_0.fdt", 1, 2).await.unwrap();
    assert_eq!(slice.resource(), "slice _0.fdt [1..3) of memory (4 bytes)");
    assert_eq!(slice.clone().resource(), slice.resource());
    let e = slice.read_u32().await.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("slice _0.fdt [1..3) of memory (4 bytes): read_u32"),
        "{e}"
    );

    // A source without a name, wrapped or not.
    let counting = CountingPositional::new(MemorySource::new(vec![0u8; 4]));
    let input = AsyncBufferedInput::new(PositionalFetch::new(counting));
    assert_eq!(input.resource(), "positional source");
    let retrying = async_buffered_input::layer::Retrying::new(MemorySource::new(vec![0u8; 9]))
        .with_attempts(3);
    let input = AsyncBufferedInput::new(PositionalFetch::new(retrying));
    assert_eq!(input.resource(), "memory (9 bytes)");
}
