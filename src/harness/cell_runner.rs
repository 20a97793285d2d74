//! Times one cell: builds the cell's reader over a counted source and reads the file through it.

use std::future::Future;
use std::io::{self, SeekFrom};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncSeekExt, BufReader};

use super::box_positional_source::BoxPositionalSource;
use super::box_source::BoxSource;
use super::budget::Budget;
use super::cell::Cell;
use super::cell_report::CellReport;
use super::checksum::Checksum;
use super::counting_positional_source::CountingPositionalSource;
use super::counting_source::CountingSource;
use super::reader_kind::ReaderKind;
use crate::source::{PositionalReader, ReadAhead};
use crate::AsyncBufferedInput;

type Counted = CountingSource<BoxSource>;
type CountedPositional = PositionalReader<CountingPositionalSource<BoxPositionalSource>>;

/// What a cell reads: the source's stream, or its positional form for the read-ahead reader.
pub(crate) enum CellSource {
    Stream(BoxSource),
    Positional(BoxPositionalSource),
}

/// Reads the `len` bytes of `source` `repetitions` times with the cell's reader, in requests of
/// the cell's size, until done or out of `budget`. `read_ahead` configures the read-ahead
/// reader.
pub(crate) async fn run_cell(
    cell: Cell,
    source: CellSource,
    len: u64,
    repetitions: u32,
    budget: Option<Duration>,
    read_ahead: ReadAhead,
) -> io::Result<CellReport> {
    let capacity = || {
        cell.capacity.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{cell}: no window capacity"),
            )
        })
    };
    let counted = match source {
        CellSource::Stream(source) if !cell.reader.uses_read_ahead() => CountingSource::new(source),
        CellSource::Positional(source) if cell.reader.uses_read_ahead() => {
            let mut reader = PositionalReader::new(CountingPositionalSource::new(source))
                .with_read_ahead(read_ahead);
            // Learn the length before the clock starts (one `len`, not a read), as the stream
            // readers' sources are opened and sought to 0 before it: read-ahead then stops at
            // the end instead of asking past it.
            let length = async {
                reader.seek(SeekFrom::End(0)).await?;
                reader.seek(SeekFrom::Start(0)).await
            };
            length.await.map_err(|e| {
                io::Error::new(e.kind(), format!("{cell}: cannot find the length: {e}"))
            })?;
            let input = AsyncBufferedInput::try_with_capacity(capacity()?, reader)?;
            let timed = drive(
                BufferedReadAhead(input),
                cell.read_size,
                len,
                repetitions,
                budget,
            )
            .await;
            return report(cell, timed, len, repetitions, budget, Some(read_ahead));
        }
        _ => {
            return Err(io::Error::other(format!(
                "{cell}: the harness opened the wrong form of the source for this reader"
            )))
        }
    };
    let timed = match cell.reader {
        ReaderKind::Buffered => {
            let input = AsyncBufferedInput::try_with_capacity(capacity()?, counted)?;
            drive(Buffered(input), cell.read_size, len, repetitions, budget).await
        }
        ReaderKind::BufReader => {
            let reader = BufReader::with_capacity(capacity()?, counted);
            drive(
                TokioBufReader(reader),
                cell.read_size,
                len,
                repetitions,
                budget,
            )
            .await
        }
        ReaderKind::Unbuffered => {
            drive(
                Unbuffered(counted),
                cell.read_size,
                len,
                repetitions,
                budget,
            )
            .await
        }
        ReaderKind::ByteLoop => {
            let reader = BufReader::with_capacity(capacity()?, counted);
            drive(ByteLoop(reader), cell.read_size, len, repetitions, budget).await
        }
        ReaderKind::BufferedReadAhead => unreachable!("handled with the positional source"),
    };
    report(cell, timed, len, repetitions, budget, None)
}

/// The cell's report from what [`drive`] measured.
fn report(
    cell: Cell,
    timed: io::Result<Timed>,
    len: u64,
    repetitions: u32,
    budget: Option<Duration>,
    read_ahead: Option<ReadAhead>,
) -> io::Result<CellReport> {
    let timed = timed.map_err(|e| io::Error::new(e.kind(), format!("{cell}: {e}")))?;
    let counts = &timed.counts;
    Ok(CellReport {
        cell,
        bytes: timed.bytes,
        requests: timed.requests,
        elapsed: timed.elapsed,
        underlying_reads: counts.reads,
        underlying_seeks: counts.seeks,
        underlying_bytes: counts.bytes,
        checksum: timed.checksum.finish(),
        budget,
        complete: timed.bytes == len * u64::from(repetitions),
        read_ahead,
    })
}

/// What [`drive`] measured.
struct Timed {
    bytes: u64,
    requests: u64,
    elapsed: Duration,
    checksum: Checksum,
    counts: Counts,
}

/// What the source under a reader saw (see [`CellReport`]'s `underlying_*` fields).
struct Counts {
    reads: u64,
    seeks: u64,
    bytes: u64,
}

impl Counts {
    fn of_stream(counted: &Counted) -> Self {
        Self {
            reads: counted.reads(),
            seeks: counted.seeks(),
            bytes: counted.bytes(),
        }
    }
}

/// A reader as the harness drives it: one request at a time, and back to offset 0 between
/// passes.
trait RequestReader {
    /// Fills `buf` with the next `buf.len()` bytes.
    fn read_request(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<()>> + Send;
    /// Goes back to offset 0.
    fn rewind(&mut self) -> impl Future<Output = io::Result<()>> + Send;
    /// What the counted source under the reader saw.
    fn counts(&self) -> Counts;
}

/// The request loop, the same for every reader: the clock and the budget around it, the
/// checksum after each request.
async fn drive<R: RequestReader>(
    mut reader: R,
    size: usize,
    len: u64,
    repetitions: u32,
    budget: Option<Duration>,
) -> io::Result<Timed> {
    let mut buf = vec![0u8; size];
    let mut checksum = Checksum::new();
    let (mut bytes, mut requests) = (0u64, 0u64);
    let start = Instant::now();
    let mut budget = Budget::starting_now(budget);
    'passes: for pass in 0..repetitions {
        if pass > 0 {
            reader.rewind().await?;
        }
        let mut pos = 0u64;
        while pos < len {
            if budget.exhausted() {
                break 'passes;
            }
            let n = (len - pos).min(size as u64) as usize;
            let request = &mut buf[..n];
            reader.read_request(request).await.map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("request at offset {pos} (pass {}): {e}", pass + 1),
                )
            })?;
            checksum.update(request);
            pos += n as u64;
            bytes += n as u64;
            requests += 1;
        }
    }
    let elapsed = start.elapsed();
    Ok(Timed {
        bytes,
        requests,
        elapsed,
        checksum,
        counts: reader.counts(),
    })
}

struct Buffered(AsyncBufferedInput<Counted>);

impl RequestReader for Buffered {
    fn read_request(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<()>> + Send {
        self.0.read_bytes(buf)
    }

    fn rewind(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.0.seek_to(0);
        std::future::ready(Ok(()))
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.0.get_ref())
    }
}

struct BufferedReadAhead(AsyncBufferedInput<CountedPositional>);

impl RequestReader for BufferedReadAhead {
    fn read_request(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<()>> + Send {
        self.0.read_bytes(buf)
    }

    fn rewind(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.0.seek_to(0);
        std::future::ready(Ok(()))
    }

    /// Requests to the positional source, the requests that did not continue the previous one
    /// (a positional source has no seeks), and the bytes it returned.
    fn counts(&self) -> Counts {
        let counted = self.0.get_ref().get_ref();
        Counts {
            reads: counted.requests(),
            seeks: counted.jumps(),
            bytes: counted.bytes(),
        }
    }
}

struct TokioBufReader(BufReader<Counted>);

impl RequestReader for TokioBufReader {
    async fn read_request(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_exact(buf).await.map(drop)
    }

    async fn rewind(&mut self) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(0)).await.map(drop)
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.0.get_ref())
    }
}

struct Unbuffered(Counted);

impl RequestReader for Unbuffered {
    async fn read_request(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_exact(buf).await.map(drop)
    }

    async fn rewind(&mut self) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(0)).await.map(drop)
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(&self.0)
    }
}

struct ByteLoop(BufReader<Counted>);

impl RequestReader for ByteLoop {
    async fn read_request(&mut self, buf: &mut [u8]) -> io::Result<()> {
        for b in buf.iter_mut() {
            *b = self.0.read_u8().await?;
        }
        Ok(())
    }

    async fn rewind(&mut self) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(0)).await.map(drop)
    }

    fn counts(&self) -> Counts {
        Counts::of_stream(self.0.get_ref())
    }
}
