//! The stream row of a source: one streaming read of the whole file through the source's own
//! streaming call, beside the limit row's loop of 1 MiB reads. The loop is a floor, not a limit:
//! a backend that streams (an open-ended `GET`, FTP's `RETR`) moves more bytes per second than
//! one read at a time, so the faster of the two is the source's limit.
//!
//! The streaming calls ([`StreamForm`]): tokio's `File` read to its end into one reused buffer
//! (a local file or a mount); the source's stream read the same way (memory, a custom stream);
//! object_store's `get(path)` stream, consumed chunk by chunk (HTTP, S3); OpenDAL's
//! `reader(path)` as a bytes stream (FTP, WebDAV). NFS, a simulated link and other positional
//! sources have no streaming call, and no stream row.
//!
//! A pass is one streaming call, read to its end; `passes` of them make a round, timed in
//! [`Rounds`](crate::timing::Rounds) until the time floor has passed, as the limit row's. The
//! timed passes look at the byte at every [`MARK`] offset and the file's last byte, wherever the
//! chunks fall; the verification pass streams the same bytes again, untimed, and computes the
//! checksum, whether the file holds the harness's pattern, and the same marks.

use std::io::{self, SeekFrom};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncSeek, AsyncSeekExt};

use crate::error::context;
use crate::limit::{in_rounds, LimitTimed, LimitVerified};
use crate::pass_state::PassState;
use crate::sources::{Source, StreamForm};
use crate::timing::Meter;

/// The buffer a file or a stream is read into, and the most a file read asks for.
pub(crate) const STREAM_BUFFER: usize = 8 << 20;

/// The distance between the bytes the timed passes look at.
const MARK: u64 = 1 << 20;

/// The timed rounds of the stream row; `None` for a source without a streaming call.
pub(crate) async fn time_stream(
    source: &Source,
    file_len: u64,
    passes: u32,
    budget: Option<Duration>,
    floor: Option<Duration>,
    seed: u64,
) -> io::Result<Option<LimitTimed>> {
    let Ok(form) = source.stream_form() else {
        return Ok(None);
    };
    let whole = |t: &LimitTimed| t.bytes == file_len * u64::from(passes);
    let timed = in_rounds(floor, budget, whole, |left, round| {
        let state = PassState::timed(left, seed.wrapping_add(round));
        let flow = Flow::new(file_len, passes, u64::MAX, state);
        let form = &form;
        async move {
            let flow = run(source, form, flow).await?;
            Ok(LimitTimed::of_pass(flow.state, flow.requests))
        }
    })
    .await?;
    Ok(Some(timed))
}

/// The verification pass: the first `bytes` bytes of `passes` streaming reads again, untimed.
pub(crate) async fn verify_stream(
    source: &Source,
    file_len: u64,
    passes: u32,
    bytes: u64,
) -> io::Result<LimitVerified> {
    let form = source
        .stream_form()
        .map_err(|why| io::Error::new(io::ErrorKind::Unsupported, why))?;
    let flow = Flow::new(file_len, passes, bytes, PassState::verifying());
    let flow = run(source, &form, flow).await?;
    Ok(LimitVerified::of_pass(flow.state))
}

/// Streaming passes over the source, timed or verifying, whatever the form.
struct Flow {
    file_len: u64,
    passes: u32,
    // Passes begun, and where the current one is.
    requests: u64,
    pos: u64,
    // The most bytes to take (a verifying pass: the timed pass's, when the budget cut it).
    max_bytes: u64,
    state: PassState,
}

impl Flow {
    /// `passes` streaming passes over a file of `file_len` bytes, at most `max_bytes` bytes.
    fn new(file_len: u64, passes: u32, max_bytes: u64, state: PassState) -> Self {
        Self {
            file_len,
            passes,
            requests: 0,
            pos: 0,
            max_bytes,
            state,
        }
    }

    /// Whether to begin another pass (one more streaming call).
    fn next_pass(&mut self) -> bool {
        let more = self.requests < u64::from(self.passes) && self.state.bytes < self.max_bytes;
        if more {
            self.requests += 1;
            self.pos = 0;
        }
        more
    }

    /// Whether to wait for another chunk: the budget allows it and bytes are still wanted.
    #[inline]
    fn before(&mut self) -> bool {
        self.state.bytes < self.max_bytes && self.state.meter.as_mut().is_none_or(Meter::before)
    }

    /// A chunk arrived (`None`: the stream ended); `Ok(false)` once the pass is over.
    fn took(&mut self, chunk: Option<&[u8]>) -> io::Result<bool> {
        if let Some(meter) = &mut self.state.meter {
            meter.after();
        }
        let Some(chunk) = chunk else {
            if self.pos != self.file_len {
                return Err(ended_early(self.pos, self.file_len));
            }
            return Ok(false);
        };
        if chunk.len() as u64 > self.file_len - self.pos {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the stream went on past the source's length, {}: has it changed during \
                     the run?",
                    self.file_len
                ),
            ));
        }
        // A verifying pass takes no more than the timed pass did.
        let take = (chunk.len() as u64).min(self.max_bytes - self.state.bytes) as usize;
        let chunk = &chunk[..take];
        let end = self.pos + chunk.len() as u64;
        let mut mark = self.pos.next_multiple_of(MARK);
        while mark < end {
            let i = (mark - self.pos) as usize;
            self.state.fingerprint.look(&chunk[i..=i]);
            mark += MARK;
        }
        if end == self.file_len && !chunk.is_empty() {
            self.state.fingerprint.look(&chunk[chunk.len() - 1..]);
        }
        if let Some((checksum, pattern)) = &mut self.state.verify {
            checksum.update(chunk);
            pattern.check(self.pos, chunk);
        }
        self.pos = end;
        self.state.bytes += chunk.len() as u64;
        Ok(self.state.bytes < self.max_bytes)
    }
}

/// The passes of `flow` through the source's streaming form.
async fn run(source: &Source, form: &StreamForm, mut flow: Flow) -> io::Result<Flow> {
    let failed = |e: io::Error, pos: u64| {
        context(
            e,
            format!("the stream row of {}: at offset {pos}", source.label()),
        )
    };
    match form {
        StreamForm::File(path) => {
            let mut file = tokio::fs::File::open(path)
                .await
                .map_err(|e| context(e, format!("cannot open {}", path.display())))?;
            // One `read` may fill the whole buffer (tokio's default is 2 MiB).
            file.set_max_buf_size(STREAM_BUFFER);
            read_to_ends(&mut file, &mut flow)
                .await
                .map_err(|e| failed(e, flow.pos))?;
        }
        StreamForm::Stream => {
            let mut stream = source.open().await?;
            read_to_ends(&mut stream, &mut flow)
                .await
                .map_err(|e| failed(e, flow.pos))?;
        }
        #[cfg(feature = "object-store")]
        StreamForm::Object(url) => {
            use object_store::ObjectStoreExt;

            let object = crate::sources::open_object(url).await?;
            let (store, location) = (object.store(), object.location());
            let start = flow.state.start();
            while flow.next_pass() {
                // The `GET` is the pass's one request; its time is the pass's.
                flow.state.reads += 1;
                let body = store
                    .get(location)
                    .await
                    .map_err(|e| failed(io::Error::other(e), 0))?
                    .into_stream();
                if !drain(body, &mut flow)
                    .await
                    .map_err(|e| failed(e, flow.pos))?
                {
                    break;
                }
            }
            flow.state.elapsed = start.elapsed();
        }
        #[cfg(feature = "opendal")]
        StreamForm::Opendal(uri) => {
            let file = crate::opendal::open(uri).await?;
            let opendal_error = |e: opendal::Error| failed(io::Error::other(e), 0);
            let start = flow.state.start();
            while flow.next_pass() {
                // One read of the whole range with OpenDAL's default options: one request.
                flow.state.reads += 1;
                let body = file
                    .operator()
                    .reader(file.path())
                    .await
                    .map_err(opendal_error)?
                    .into_bytes_stream(0..file.length())
                    .await
                    .map_err(opendal_error)?;
                if !drain(body, &mut flow)
                    .await
                    .map_err(|e| failed(e, flow.pos))?
                {
                    break;
                }
            }
            flow.state.elapsed = start.elapsed();
        }
    }
    Ok(flow)
}

/// The passes over a file or a stream: from the start, `read` after `read` into one buffer
/// until a read returns 0, as `read_to_end` does without growing a vector.
async fn read_to_ends<R>(reader: &mut R, flow: &mut Flow) -> io::Result<()>
where
    R: AsyncRead + AsyncSeek + Unpin + ?Sized,
{
    let mut buf = vec![0u8; STREAM_BUFFER];
    let start = flow.state.start();
    'passes: while flow.next_pass() {
        if flow.requests > 1 {
            reader.seek(SeekFrom::Start(0)).await?;
        }
        loop {
            if !flow.before() {
                break 'passes;
            }
            let n = loop {
                match reader.read(&mut buf).await {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other?,
                }
            };
            flow.state.reads += 1;
            if !flow.took((n > 0).then(|| &buf[..n]))? {
                break;
            }
        }
    }
    flow.state.elapsed = start.elapsed();
    Ok(())
}

/// One pass's chunks, consumed one at a time; `Ok(false)` if the budget or the bytes wanted
/// stopped it before the stream ended.
#[cfg(any(feature = "object-store", feature = "opendal"))]
async fn drain<S, E>(body: S, flow: &mut Flow) -> io::Result<bool>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use futures_util::StreamExt;

    let mut body = std::pin::pin!(body);
    loop {
        if !flow.before() {
            return Ok(false);
        }
        let chunk = body.next().await.transpose().map_err(io::Error::other)?;
        if !flow.took(chunk.as_deref())? {
            return Ok(flow.pos == flow.file_len);
        }
    }
}

fn ended_early(at: u64, len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!(
            "the stream ended at {at}, before the source's length, {len}: has it changed during \
             the run?"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Checksum;
    use abi_testkit::word_pattern_vec as pattern;

    #[tokio::test]
    async fn files_and_streams_are_read_to_their_end_and_verified() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let data = pattern((9 << 20) + 7);
        std::fs::write(&path, &data).unwrap();
        let len = data.len() as u64;
        for source in [Source::file(&path), Source::memory(data.clone())] {
            let timed = time_stream(&source, len, 2, None, None, 1)
                .await
                .unwrap()
                .unwrap();
            assert_eq!((timed.bytes, timed.requests), (2 * len, 2), "{source:?}");
            assert!(timed.reads >= 4, "two reads and an end per pass: {timed:?}");
            assert_eq!((timed.rounds, timed.steady), (1, true));
            let verified = verify_stream(&source, len, 2, timed.bytes).await.unwrap();
            let mut sum = Checksum::new();
            sum.update(&data);
            sum.update(&data);
            assert_eq!(verified.checksum.finish(), sum.finish(), "{source:?}");
            assert_eq!(verified.fingerprint, timed.fingerprint);
            assert_eq!(verified.pattern.mismatch(), None);
        }
    }

    #[tokio::test]
    async fn a_floor_times_rounds_and_a_budget_cuts_the_pass() {
        let data = pattern(3 << 20);
        let source = Source::memory(data.clone());
        let len = data.len() as u64;
        let floor = Some(Duration::from_millis(30));
        let timed = time_stream(&source, len, 1, None, floor, 1)
            .await
            .unwrap()
            .unwrap();
        assert!(timed.rounds > 1, "{timed:?}");
        assert_eq!((timed.bytes, timed.requests, timed.steady), (len, 1, true));

        let cut = time_stream(&source, len, 1, Some(Duration::ZERO), floor, 1)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((cut.bytes, cut.rounds), (0, 1));
        // The verification takes what the timed pass took.
        let verified = verify_stream(&source, len, 1, 1000).await.unwrap();
        assert_eq!(verified.checksum.finish(), Checksum::of(&data[..1000]));
    }

    #[tokio::test]
    async fn positional_sources_have_no_stream_row_and_short_streams_are_errors() {
        let link = Source::slow_link("/nonexistent", Duration::ZERO, 0);
        assert!(time_stream(&link, 10, 1, None, None, 1)
            .await
            .unwrap()
            .is_none());
        let source = Source::memory(pattern(1000));
        let err = time_stream(&source, 5000, 1, None, None, 1)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
        assert!(err.to_string().contains("the stream row of"), "{err}");
        let err = time_stream(&source, 500, 1, None, None, 1)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    }
}
