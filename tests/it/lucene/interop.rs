//! Interop with Apache Lucene: decode values that Lucene 8's own `DataOutput` wrote.
//!
//! The committed fixture `tests/fixtures/lucene-vectors.{bin,txt}` was written by
//! `tests/lucene/WriteVectors.java` (run it with `tests/lucene/generate.sh SEED DIR`). Set
//! `LUCENE_VECTORS_DIR` to decode a freshly generated pair instead: `.ci/run` does, with a new
//! seed each run, so the fixture and the decoder cannot drift apart.

use std::io::Cursor;
use std::path::PathBuf;

use abi_testkit::value_of;
use async_buffered_input::AsyncBufferedInput;

fn vectors_dir() -> PathBuf {
    match std::env::var_os("LUCENE_VECTORS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
    }
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex byte"))
        .collect()
}

#[tokio::test]
async fn decodes_what_lucene_wrote() {
    let dir = vectors_dir();
    let bin = std::fs::read(dir.join("lucene-vectors.bin"))
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.join("lucene-vectors.bin").display()));
    let txt = std::fs::read_to_string(dir.join("lucene-vectors.txt")).unwrap();
    let mut lines = txt.lines();
    let header = lines.next().expect("header line");
    assert!(header.starts_with("# lucene-vectors"), "{header}");
    let count: usize = value_of(header, "count");
    let entries: Vec<(&str, &str)> = lines
        .map(|l| {
            l.split_once(' ')
                .unwrap_or_else(|| panic!("bad line {l:?}"))
        })
        .collect();
    assert_eq!(entries.len(), count, "{header}");

    for cap in [1, 7, 64, 8192] {
        let mut input = AsyncBufferedInput::with_capacity(cap, Cursor::new(bin.clone()));
        for (i, (kind, value)) in entries.iter().enumerate() {
            let at = input.position();
            let ctx = || format!("{header}, capacity {cap}, value #{i} ({kind} {value}) at {at}");
            // The value read, printed as the generator printed it.
            let got = match *kind {
                "vint" => input.read_vint().await.unwrap().to_string(),
                "vlong" => input.read_vlong().await.unwrap().to_string(),
                "zint" => input.read_zint().await.unwrap().to_string(),
                "zlong" => input.read_zlong().await.unwrap().to_string(),
                "int" => input.read_i32().await.unwrap().to_string(),
                "long" => input.read_i64().await.unwrap().to_string(),
                "short" => input.read_i16().await.unwrap().to_string(),
                "byte" => input.read_byte().await.unwrap().to_string(),
                "string" => {
                    let s = input.read_string().await.unwrap();
                    assert_eq!(s.as_bytes(), unhex(value), "{}", ctx());
                    continue;
                }
                other => panic!("unknown kind {other:?}: {}", ctx()),
            };
            assert_eq!(got, *value, "{}", ctx());
        }
        assert_eq!(
            input.position(),
            bin.len() as u64,
            "capacity {cap}: bytes left over"
        );
    }
}
