//! OpenDAL locations (cargo feature `opendal`); OpenDAL's own reader is in `readers`.
//!
//! `ftp://`, `ftps://`, `webdav://` and `webdavs://` URLs name a file behind an OpenDAL
//! `Operator` (see [`OpendalSource::from_uri`]): its stream reads it with one ranged request
//! per read (streaming off), its positional form is the [`OpendalSource`] itself (sequential
//! reads from one stream, as the library's default). A query sets the tuned OpenDAL
//! reader's options and is not part of the file's URI: `?concurrent=4&chunk=4MiB` (both
//! optional; see [`Tuning`]).
//!
//! The OpenDAL readers ([`ReaderKind::OpendalReader`](crate::ReaderKind::OpendalReader) and
//! [`ReaderKind::OpendalReaderTuned`](crate::ReaderKind::OpendalReaderTuned)) read such a
//! source the way OpenDAL's documentation suggests for `AsyncRead` users:
//! `operator.reader_with(path)` (default options, or the tuned `concurrent`/`chunk`), then
//! `into_futures_async_read(0..length)`, a seek where a request does not continue the last, and
//! `read_exact`. They see no counted source: their source reads are reported as 0.

use std::io;
use std::sync::Arc;

use async_buffered_input::source::OpendalSource;

use crate::error::context;
use crate::units::parse_size;

/// The tuned OpenDAL reader's options: how many chunks it fetches at once, and how large.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tuning {
    /// OpenDAL's `concurrent` (at least 1).
    pub(crate) concurrent: usize,
    /// OpenDAL's `chunk`, in bytes.
    pub(crate) chunk: usize,
}

impl Default for Tuning {
    /// 4 chunks of 4 MiB at once, a middle setting (on loopback FTP and WebDAV, OpenDAL's
    /// default options read a sequential file faster than any tuning tried: see BENCHMARKS.md,
    /// "OpenDAL backends").
    fn default() -> Self {
        Self {
            concurrent: 4,
            chunk: 4 << 20,
        }
    }
}

/// What an OpenDAL source keeps for the OpenDAL readers.
#[derive(Clone, Debug)]
pub(crate) struct Location {
    /// The file's URI, without the query.
    pub(crate) uri: Arc<str>,
    /// The tuned reader's options, from the query.
    pub(crate) tuning: Tuning,
}

/// The location an OpenDAL URL names (see the [module](self)), and its label (the URL
/// without password or query).
///
/// # Errors
///
/// `InvalidInput` for a query other than `concurrent=N` and `chunk=SIZE`.
pub(crate) fn parse(url: &str) -> io::Result<(Location, String)> {
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    let (uri, query) = match url.split_once('?') {
        Some((uri, query)) => (uri, Some(query)),
        None => (url, None),
    };
    let mut tuning = Tuning::default();
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| invalid(format!("{url:?}: expected key=value, got {pair:?}")))?;
        match key {
            "concurrent" => {
                tuning.concurrent = value
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| invalid(format!("{url:?}: concurrent must be 1 or more")))?
            }
            "chunk" => {
                tuning.chunk = parse_size(value)
                    .ok()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| invalid(format!("{url:?}: chunk must be a size like 4MiB")))?
            }
            other => {
                return Err(invalid(format!(
                    "{url:?}: unknown option {other:?} (concurrent, chunk)"
                )))
            }
        }
    }
    // The label shows no password.
    let label = match url::Url::parse(uri) {
        Ok(mut parsed) => {
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(e) => return Err(invalid(format!("invalid URL {url:?}: {e}"))),
    };
    Ok((
        Location {
            uri: Arc::from(uri),
            tuning,
        },
        label,
    ))
}

/// Opens the file at `uri`, with errors that name it.
pub(crate) async fn open(uri: &str) -> io::Result<OpendalSource> {
    OpendalSource::from_uri(uri)
        .await
        .map_err(|e| context(e, "cannot open the OpenDAL location".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_tune_the_reader_and_stay_out_of_the_label() {
        let (location, label) =
            parse("ftp://u:pw@127.0.0.1:2121/d/f.bin?concurrent=8&chunk=1MiB").unwrap();
        assert_eq!(
            location.tuning,
            Tuning {
                concurrent: 8,
                chunk: 1 << 20
            }
        );
        assert_eq!(&*location.uri, "ftp://u:pw@127.0.0.1:2121/d/f.bin");
        assert_eq!(label, "ftp://u@127.0.0.1:2121/d/f.bin");
        for bad in [
            "ftp://h/f?concurrent=0",
            "ftp://h/f?chunk=lots",
            "ftp://h/f?gap=1",
            "ftp://h/f?x",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}: {e}");
        }
    }
}
