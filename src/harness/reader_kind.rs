use std::fmt;
use std::io;
use std::str::FromStr;

/// The readers the harness compares, each reading the file sequentially in requests of a fixed
/// size.
///
/// All but one read a stream source (`AsyncRead + AsyncSeek`) through the same
/// [`CountingSource`](super::CountingSource). [`BufferedReadAhead`](Self::BufferedReadAhead)
/// reads the source's positional form instead, through a
/// [`CountingPositionalSource`](super::CountingPositionalSource), since read-ahead needs
/// requests that name their own offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ReaderKind {
    /// [`AsyncBufferedInput`](crate::AsyncBufferedInput) with the cell's window capacity, one
    /// [`read_bytes`](crate::AsyncBufferedInput::read_bytes) per request.
    Buffered,
    /// [`AsyncBufferedInput`](crate::AsyncBufferedInput) with the cell's window capacity over a
    /// [`PositionalReader`](crate::source::PositionalReader) with the plan's
    /// [`ReadAhead`](crate::source::ReadAhead), over the source's
    /// [positional form](super::Source::open_positional): the window plus read-ahead, one
    /// [`read_bytes`](crate::AsyncBufferedInput::read_bytes) per request. Its source reads are
    /// the requests that reach the positional source (chunks, mostly).
    BufferedReadAhead,
    /// tokio's [`BufReader`](tokio::io::BufReader) with the cell's capacity, one
    /// [`read_exact`](tokio::io::AsyncReadExt::read_exact) per request.
    BufReader,
    /// The source itself, one [`read_exact`](tokio::io::AsyncReadExt::read_exact) per request:
    /// every request is at least one source read. Has no window.
    Unbuffered,
    /// tokio's `BufReader` with the cell's capacity, but each request read as one
    /// [`read_u8`](tokio::io::AsyncReadExt::read_u8) per byte: what Lucene's
    /// `BufferedIndexInput.readBytes` did before LUCENE-695.
    ByteLoop,
}

impl ReaderKind {
    /// Every reader, in the order the harness reports them.
    pub const ALL: [ReaderKind; 5] = [
        ReaderKind::Buffered,
        ReaderKind::BufferedReadAhead,
        ReaderKind::BufReader,
        ReaderKind::Unbuffered,
        ReaderKind::ByteLoop,
    ];

    /// A short, stable identifier: `buffered`, `readahead`, `bufreader`, `unbuffered` or
    /// `byteloop`. This is what [`FromStr`] parses and what the example's JSON prints.
    pub fn id(self) -> &'static str {
        match self {
            ReaderKind::Buffered => "buffered",
            ReaderKind::BufferedReadAhead => "readahead",
            ReaderKind::BufReader => "bufreader",
            ReaderKind::Unbuffered => "unbuffered",
            ReaderKind::ByteLoop => "byteloop",
        }
    }

    /// The name shown in tables: `AsyncBufferedInput`, `AsyncBufferedInput+RA`,
    /// `tokio BufReader`, `unbuffered`, `byte loop`.
    pub fn name(self) -> &'static str {
        match self {
            ReaderKind::Buffered => "AsyncBufferedInput",
            ReaderKind::BufferedReadAhead => "AsyncBufferedInput+RA",
            ReaderKind::BufReader => "tokio BufReader",
            ReaderKind::Unbuffered => "unbuffered",
            ReaderKind::ByteLoop => "byte loop",
        }
    }

    /// Whether the reader has a window, so that the run times it once per capacity. Readers
    /// without one are timed once per request size.
    pub fn uses_capacity(self) -> bool {
        !matches!(self, ReaderKind::Unbuffered)
    }

    /// Whether the reader reads the source's [positional form](super::Source::open_positional)
    /// with read-ahead (only [`BufferedReadAhead`](Self::BufferedReadAhead)), rather than its
    /// stream.
    pub fn uses_read_ahead(self) -> bool {
        matches!(self, ReaderKind::BufferedReadAhead)
    }
}

impl fmt::Display for ReaderKind {
    /// Writes the [`name`](Self::name).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReaderKind {
    type Err = io::Error;

    /// Parses an [`id`](Self::id) or a [`name`](Self::name), ignoring case, spaces, `-` and `_`
    /// (so `byte-loop`, `read-ahead`, `BufReader`, `AsyncBufferedInput` and
    /// `AsyncBufferedInput+RA` all work).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key: String = s
            .chars()
            .filter(|c| !matches!(c, ' ' | '-' | '_'))
            .flat_map(char::to_lowercase)
            .collect();
        let found = ReaderKind::ALL.into_iter().find(|kind| {
            let name: String = kind
                .name()
                .chars()
                .filter(|c| *c != ' ')
                .flat_map(char::to_lowercase)
                .collect();
            key == kind.id() || key == name
        });
        found.ok_or_else(|| {
            let ids: Vec<_> = ReaderKind::ALL.iter().map(|k| k.id()).collect();
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unknown reader {s:?}: expected one of {}", ids.join(", ")),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids_and_names() {
        for kind in ReaderKind::ALL {
            assert_eq!(kind.id().parse::<ReaderKind>().unwrap(), kind);
            assert_eq!(kind.name().parse::<ReaderKind>().unwrap(), kind);
            assert_eq!(
                kind.name().to_uppercase().parse::<ReaderKind>().unwrap(),
                kind
            );
        }
        assert_eq!(
            "byte-loop".parse::<ReaderKind>().unwrap(),
            ReaderKind::ByteLoop
        );
        assert_eq!(
            "BufReader".parse::<ReaderKind>().unwrap(),
            ReaderKind::BufReader
        );
        for s in ["read-ahead", "ReadAhead", "asyncbufferedinput+ra"] {
            assert_eq!(
                s.parse::<ReaderKind>().unwrap(),
                ReaderKind::BufferedReadAhead,
                "{s}"
            );
        }
        assert!(ReaderKind::ALL
            .iter()
            .all(|k| k.uses_read_ahead() == (*k == ReaderKind::BufferedReadAhead)));
        let err = "fast".parse::<ReaderKind>().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("\"fast\""), "{err}");
        assert!(
            err.to_string()
                .contains("buffered, readahead, bufreader, unbuffered, byteloop"),
            "{err}"
        );
    }
}
