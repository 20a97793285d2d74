//! [`Checked`]: an input driven next to a model, checked after every call.

use std::fmt::Write as _;
use std::io::{self, ErrorKind, SeekFrom};
use std::sync::Arc;

use abi_testkit::model::{self, Fail, ReadKind, Val};
use abi_testkit::*;
use async_buffered_input::Fetch;
use async_buffered_input::{AsyncBufferedInput, InputError};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt};

use super::*;

/// Result of one checked operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Succeeded and matched the model.
    Ok,
    /// Failed with `UnexpectedEof`, as the model required.
    Eof,
    /// Failed with one of the tolerated (injected) error kinds; the model was not advanced.
    Injected,
    /// A seek to a negative position was rejected with `InvalidInput`, as required.
    Rejected,
    /// Failed with `InvalidData` (a malformed varint, invalid UTF-8), as the model required.
    Invalid,
}

/// An `AsyncBufferedInput` driven next to a model (`data` + `pos`). Every method performs the
/// operation, checks its result against the model (bytes, EOF-exactly-when-expected, error
/// messages), advances the model, and then checks `position()`, `buffer()` and `window()`.
pub struct Checked<F> {
    pub input: AsyncBufferedInput<F>,
    pub data: Vec<u8>,
    /// The model position.
    pub pos: u64,
    /// Error kinds an injecting source may produce; such errors leave the model unchanged.
    pub tolerated: Vec<ErrorKind>,
    /// How many tolerated errors were seen.
    pub injected_seen: u64,
    /// Free-form context prepended to assertion messages (e.g. capacity and step).
    pub label: String,
    /// Log of the operations so far (printed on failure).
    pub history: String,
    /// Bytes successfully handed to the caller so far (by reads that succeeded and by
    /// `consume`); must equal `stats().bytes_from_window + stats().bytes_direct`.
    pub handed: u64,
    /// When the source is wrapped in [`Counting`]: its counters, compared with `stats()`.
    pub counts: Option<Arc<Counts>>,
    /// A `SeekFrom::End(offset)` whose future was dropped before it completed, started at
    /// position `from`: the next `AsyncSeekExt::seek` completes it first if the position is
    /// still `from`, and abandons it otherwise.
    pub pending_end: Option<(i64, u64)>,
}

impl<F: Fetch> Checked<F> {
    pub fn new(input: AsyncBufferedInput<F>, data: Vec<u8>) -> Self {
        let c = Checked {
            input,
            data,
            pos: 0,
            tolerated: Vec::new(),
            injected_seen: 0,
            label: String::new(),
            history: String::new(),
            handed: 0,
            counts: None,
            pending_end: None,
        };
        c.check("construction");
        c
    }

    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// Goes on with another input (a clone, a slice) over `data`, at `pos`; its stats start
    /// afresh.
    pub fn replace(&mut self, input: AsyncBufferedInput<F>, data: Vec<u8>, pos: u64) {
        self.input = input;
        self.data = data;
        self.pos = pos;
        self.handed = 0;
        self.counts = None;
        self.pending_end = None;
        self.check("replaced by a clone or a slice");
    }

    /// The model's side of an operation whose future completed outside (polled once, then
    /// dropped): `Ok(n)` handed out the `n` bytes at the position in `got`.
    pub fn completed(&mut self, result: io::Result<usize>, got: &[u8], eof: bool, ctx: &str) {
        match result {
            Ok(n) => {
                if n > 0 {
                    let p = self.pos as usize;
                    assert_bytes(&got[..n], &self.data[p..p + n], self.pos, &self.ctx(ctx));
                }
                self.pos += n as u64;
                self.handed += n as u64;
                self.check(ctx);
            }
            Err(e) => {
                self.on_error(e, eof, ctx);
            }
        }
    }

    /// Moves the model past `n` bytes handed to the caller by a read that succeeded, and checks.
    fn consumed(&mut self, n: u64, ctx: &str) -> Outcome {
        self.pos += n;
        self.handed += n;
        self.check(ctx);
        Outcome::Ok
    }

    /// Bytes between the model position and the end of the file.
    pub fn avail(&self) -> u64 {
        self.len().saturating_sub(self.pos)
    }

    fn begin(&mut self, op: std::fmt::Arguments<'_>) -> String {
        // Keep the history bounded.
        if self.history.len() > 4000 {
            let cut = self.history.len() - 2000;
            let cut = (cut..self.history.len())
                .find(|&i| self.history.is_char_boundary(i))
                .unwrap_or(0);
            self.history.drain(..cut);
        }
        let _ = write!(self.history, "\n  @{} {}", self.pos, op);
        format!("{} {} at model position {}", self.label, op, self.pos)
    }

    fn ctx(&self, what: &str) -> String {
        format!("{what}\n  recent ops:{}", self.history)
    }

    /// A read `op` that succeeded must not have been one the model says ends past the end
    /// (`eof`).
    #[track_caller]
    fn assert_not_past_end(&self, eof: bool, op: &str, ctx: &str) {
        assert!(!eof, "{op} succeeded past the end: {}", self.ctx(ctx));
    }

    /// Checks `position()`, `window()` and `buffer()` against the model.
    #[track_caller]
    pub fn check(&self, after: &str) {
        let ctx = self.ctx(&format!("{} after {after}", self.label));
        check_window(&self.input, &self.data, self.pos, &ctx);
        if let Err(wrong) = model::check_handed(&self.input, self.handed) {
            panic!("{wrong}: {ctx}");
        }
        let s = self.input.stats();
        if let Some(counts) = &self.counts {
            let c = counts.snapshot();
            assert_eq!(
                (s.underlying_reads, s.underlying_seeks, s.bytes_from_source),
                (c.reads, c.seeks, c.bytes),
                "stats {s:?} disagree with what the source saw {c:?} \
                 (reads, seeks, bytes): {ctx}"
            );
        }
    }

    /// Common error handling. Returns the outcome for an error result; panics if the error is
    /// neither tolerated nor the expected EOF.
    #[track_caller]
    fn on_error(&mut self, e: io::Error, eof_expected: bool, ctx: &str) -> Outcome {
        let expected = eof_expected.then_some(ErrorKind::UnexpectedEof);
        self.on_error_of(e, expected, ctx)
    }

    /// The payload every error of the input carries, asserting that it names `pos` (where the
    /// failed operation started).
    #[track_caller]
    fn assert_names_position(&self, e: &io::Error, pos: u64, ctx: &str) {
        let payload = e
            .get_ref()
            .and_then(|i| i.downcast_ref::<InputError>())
            .unwrap_or_else(|| {
                panic!(
                    "the error {e:?} ({e}) carries no InputError: {}",
                    self.ctx(ctx)
                )
            });
        assert_eq!(
            payload.position(),
            pos,
            "the error {e} names another position than the operation's: {}",
            self.ctx(ctx)
        );
        assert_msg_mentions(e, pos, "position", &self.ctx(ctx));
    }

    /// Error handling for an operation that, by the model, fails with `expected` (`None`: must
    /// not fail, unless the error is injected). Every error names the position the operation
    /// started at, which is still the position.
    #[track_caller]
    fn on_error_of(&mut self, e: io::Error, expected: Option<ErrorKind>, ctx: &str) -> Outcome {
        self.assert_names_position(&e, self.pos, ctx);
        if self.tolerated.contains(&e.kind()) {
            self.injected_seen += 1;
            assert_eq!(
                self.input.position(),
                self.pos,
                "position() changed by a failed op: {}",
                self.ctx(ctx)
            );
            self.check(ctx);
            return Outcome::Injected;
        }
        let Some(kind) = expected else {
            panic!("unexpected error {e:?} ({e}): {}", self.ctx(ctx));
        };
        assert_eq!(
            e.kind(),
            kind,
            "the error must be {kind:?}, got {e:?}: {}",
            self.ctx(ctx)
        );
        self.check(ctx);
        match kind {
            ErrorKind::UnexpectedEof => Outcome::Eof,
            _ => Outcome::Invalid,
        }
    }

    /// A typed read's result against what the model decodes at its position: the value and
    /// its length, or the error kind.
    fn decoded(&mut self, kind: ReadKind, got: io::Result<Val>, ctx: &str) -> Outcome {
        match (got, model::read(kind, &self.data, self.pos)) {
            (Ok(value), Ok((want, len))) => {
                assert_eq!(value, want, "{kind:?} value: {}", self.ctx(ctx));
                self.consumed(len, ctx)
            }
            (Ok(value), Err(fail)) => panic!(
                "{kind:?} gave {value:?}, the model {:?}: {}",
                fail.kind(),
                self.ctx(ctx)
            ),
            (Err(e), want) => self.on_error_of(e, want.err().map(Fail::kind), ctx),
        }
    }

    /// `read_vint()`, against the model.
    pub async fn read_vint(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("read_vint()"));
        let got = self.input.read_vint().await.map(Val::U32);
        self.decoded(ReadKind::VInt, got, &ctx)
    }

    /// `read_string()`, against the model.
    pub async fn read_string(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("read_string()"));
        let got = self.input.read_string().await.map(Val::Str);
        self.decoded(ReadKind::String, got, &ctx)
    }

    /// `read_u32_into` of `count` values: all or nothing.
    pub async fn read_u32_into(&mut self, count: usize) -> Outcome {
        let ctx = self.begin(format_args!("read_u32_into({count} values)"));
        let mut values = vec![0xA5A5_A5A5u32; count];
        let res = self.input.read_u32_into(&mut values).await;
        let eof = count > 0 && self.pos + 4 * count as u64 > self.len();
        match res {
            Ok(()) => {
                self.assert_not_past_end(eof, "read_u32_into", &ctx);
                let p = self.pos as usize;
                for (i, (&v, b)) in values
                    .iter()
                    .zip(self.data[p.min(self.data.len())..].chunks_exact(4))
                    .enumerate()
                {
                    let expected = u32::from_be_bytes(b.try_into().unwrap());
                    assert_eq!(v, expected, "value {i}: {}", self.ctx(&ctx));
                }
                self.consumed(4 * count as u64, &ctx)
            }
            Err(e) => self.on_error(e, eof, &ctx),
        }
    }

    /// `length()` polled once with a waker that does nothing, then dropped.
    pub fn length_polled_once(&mut self) {
        let ctx = self.begin(format_args!("length() polled once"));
        match poll_once_then_drop(self.input.length()) {
            Some(Ok(l)) => {
                assert_eq!(l, self.len(), "length(): {}", self.ctx(&ctx));
                self.check(&ctx);
            }
            Some(Err(e)) => {
                self.on_error(e, false, &ctx);
            }
            None => self.check(&format!("{ctx}, then dropped")),
        }
    }

    /// `read_bytes_owned(n)` polled once with a waker that does nothing, then dropped.
    pub fn read_bytes_owned_polled_once(&mut self, n: usize) {
        let ctx = self.begin(format_args!("read_bytes_owned({n}) polled once"));
        match poll_once_then_drop(self.input.read_bytes_owned(n)) {
            Some(res) => {
                self.owned_outcome(n, res, &ctx);
            }
            None => self.check(&format!("{ctx}, then dropped")),
        }
    }

    /// `AsyncSeekExt::seek(End(offset))` polled once with a waker that does nothing, then
    /// dropped; if it did not complete, it is pending (see [`pending_end`](Self::pending_end)).
    /// With a seek already pending, an ordinary `seek` instead (which completes that one).
    pub async fn seek_end_polled_once(&mut self, offset: i64) {
        if self.pending_end.is_some() {
            self.seek(SeekFrom::End(offset)).await;
            return;
        }
        let ctx = self.begin(format_args!("seek(End({offset})) polled once"));
        let from = self.pos;
        match poll_once_then_drop(AsyncSeekExt::seek(
            &mut self.input.tokio_io(),
            SeekFrom::End(offset),
        )) {
            Some(res) => {
                self.seek_outcome(SeekFrom::End(offset), res, &ctx);
            }
            None => {
                self.pending_end = Some((offset, from));
                self.check(&format!("{ctx}, then dropped"));
            }
        }
    }

    /// `read_bytes(n)`: all or nothing.
    pub async fn read_bytes(&mut self, n: usize) -> Outcome {
        let ctx = self.begin(format_args!("read_bytes({n})"));
        let mut buf = vec![0xA5u8; n];
        let res = self.input.read_bytes(&mut buf).await;
        // A zero-length read past the end is not specified: accept both Ok and EOF.
        let lenient = n == 0 && self.pos > self.len();
        let eof = n > 0 && self.pos + n as u64 > self.len();
        match res {
            Ok(()) => {
                self.assert_not_past_end(eof, "read_bytes", &ctx);
                if n > 0 {
                    let p = self.pos as usize;
                    assert_bytes(&buf, &self.data[p..p + n], self.pos, &self.ctx(&ctx));
                }
                self.pos += n as u64;
                self.handed += n as u64;
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, eof || lenient, &ctx),
        }
    }

    /// `read_byte()`.
    pub async fn read_byte(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("read_byte()"));
        let res = self.input.read_byte().await;
        let eof = self.pos >= self.len();
        match res {
            Ok(b) => {
                self.assert_not_past_end(eof, "read_byte", &ctx);
                assert_eq!(
                    b,
                    self.data[self.pos as usize],
                    "read_byte value: {}",
                    self.ctx(&ctx)
                );
                self.pos += 1;
                self.handed += 1;
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, eof, &ctx),
        }
    }

    /// `read_bytes_owned(n)`.
    pub async fn read_bytes_owned(&mut self, n: usize) -> Outcome {
        let ctx = self.begin(format_args!("read_bytes_owned({n})"));
        let res = self.input.read_bytes_owned(n).await;
        self.owned_outcome(n, res, &ctx)
    }

    /// The model's side of `read_bytes_owned(n)`, which returned `res`.
    #[track_caller]
    fn owned_outcome(&mut self, n: usize, res: io::Result<bytes::Bytes>, ctx: &str) -> Outcome {
        let lenient = n == 0 && self.pos > self.len();
        let eof = n > 0 && self.pos + n as u64 > self.len();
        match res {
            Ok(bytes) => {
                self.assert_not_past_end(eof, "read_bytes_owned", ctx);
                assert_eq!(bytes.len(), n, "read_bytes_owned length: {}", self.ctx(ctx));
                if n > 0 {
                    let p = self.pos as usize;
                    assert_bytes(&bytes, &self.data[p..p + n], self.pos, &self.ctx(ctx));
                }
                self.consumed(n as u64, ctx)
            }
            Err(e) => self.on_error(e, eof || lenient, ctx),
        }
    }

    /// `seek_to(p)`: lazy, never fails.
    pub fn seek_to(&mut self, p: u64) {
        let ctx = self.begin(format_args!("seek_to({p})"));
        self.input.seek_to(p);
        self.pos = p;
        self.pending_end = None;
        self.check(&ctx);
    }

    /// `skip_bytes(n)` (no overflow expected).
    pub fn skip_bytes(&mut self, n: u64) {
        let ctx = self.begin(format_args!("skip_bytes({n})"));
        let res = self.input.skip_bytes(n);
        assert!(
            res.is_ok(),
            "skip_bytes failed: {res:?}: {}",
            self.ctx(&ctx)
        );
        self.pos += n;
        self.pending_end = None;
        self.check(&ctx);
    }

    /// `length()`.
    pub async fn length(&mut self) -> Outcome {
        let ctx = self.begin(format_args!("length()"));
        match self.input.length().await {
            Ok(l) => {
                assert_eq!(l, self.len(), "length(): {}", self.ctx(&ctx));
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, false, &ctx),
        }
    }

    /// Tokio's `AsyncSeekExt::seek`. Seeking to a negative position must fail with
    /// `InvalidInput` and leave the position unchanged; seeking past the end is allowed.
    pub async fn seek(&mut self, from: SeekFrom) -> Outcome {
        let ctx = self.begin(format_args!("AsyncSeekExt::seek({from:?})"));
        let res = AsyncSeekExt::seek(&mut self.input.tokio_io(), from).await;
        self.seek_outcome(from, res, &ctx)
    }

    /// The model's side of a seek to `from` that returned `res`: a pending `End` seek (see
    /// [`pending_end`](Self::pending_end)) is completed first if the position has not moved
    /// since it started; if that one fails, the new seek is not started.
    #[track_caller]
    fn seek_outcome(&mut self, from: SeekFrom, res: io::Result<u64>, ctx: &str) -> Outcome {
        let mut start = self.pos as i128;
        let mut pending_fails = false;
        if let Some((offset, started)) = self.pending_end.take() {
            if started == self.pos {
                let target = self.len() as i128 + offset as i128;
                if target < 0 {
                    pending_fails = true;
                } else {
                    start = target;
                }
            }
        }
        let target: i128 = match from {
            _ if pending_fails => -1,
            SeekFrom::Start(x) => x as i128,
            SeekFrom::Current(d) => start + d as i128,
            SeekFrom::End(d) => self.len() as i128 + d as i128,
        };
        match res {
            Ok(p) => {
                assert!(
                    target >= 0,
                    "seek to a negative position succeeded: {}",
                    self.ctx(ctx)
                );
                assert_eq!(p as i128, target, "seek result: {}", self.ctx(ctx));
                self.pos = p;
                self.check(ctx);
                Outcome::Ok
            }
            Err(e) => {
                if self.tolerated.contains(&e.kind()) {
                    return self.on_error(e, false, ctx);
                }
                assert!(
                    target < 0,
                    "seek failed unexpectedly: {e:?}: {}",
                    self.ctx(ctx)
                );
                assert_eq!(
                    e.kind(),
                    ErrorKind::InvalidInput,
                    "negative seek error kind: {}",
                    self.ctx(ctx)
                );
                // The pending seek, if it succeeded, moved the position before the new one
                // failed.
                self.pos = start as u64;
                self.assert_names_position(&e, self.pos, ctx);
                self.check(ctx);
                Outcome::Rejected
            }
        }
    }

    /// Tokio's `AsyncReadExt::read` into a buffer of `n` bytes: must return between 1 and
    /// `min(n, available)` bytes when both are non-zero, and `Ok(0)` at or past the end.
    pub async fn read_partial(&mut self, n: usize) -> Outcome {
        let ctx = self.begin(format_args!("AsyncReadExt::read(buf of {n})"));
        let mut buf = vec![0xA5u8; n];
        match AsyncReadExt::read(&mut self.input.tokio_io(), &mut buf).await {
            Ok(k) => {
                let avail = self.avail();
                assert!(k <= n, "read returned {k} > {n}: {}", self.ctx(&ctx));
                assert!(
                    k as u64 <= avail,
                    "read returned {k} bytes but only {avail} remain: {}",
                    self.ctx(&ctx)
                );
                if n > 0 && avail > 0 {
                    assert!(k > 0, "read returned 0 before the end: {}", self.ctx(&ctx));
                }
                let p = self.pos as usize;
                if k > 0 {
                    assert_bytes(&buf[..k], &self.data[p..p + k], self.pos, &self.ctx(&ctx));
                }
                self.pos += k as u64;
                self.handed += k as u64;
                self.check(&ctx);
                Outcome::Ok
            }
            Err(e) => self.on_error(e, false, &ctx),
        }
    }

    /// Tokio's `AsyncBufReadExt::fill_buf` followed by `consume(amount)` where
    /// `amount = returned_len * permille / 1000`. `fill_buf` must return a non-empty prefix of the
    /// remaining file (equal to `buffer()` afterwards), or an empty slice at/past the end.
    pub async fn fill_buf_consume(&mut self, permille: u64) -> Outcome {
        let ctx = self.begin(format_args!("fill_buf()+consume({permille}‰)"));
        let got = match self.input.tokio_io().fill_buf().await {
            Ok(b) => b.to_vec(),
            Err(e) => return self.on_error(e, false, &ctx),
        };
        let avail = self.avail();
        if avail == 0 {
            assert!(
                got.is_empty(),
                "fill_buf returned {} bytes at/past the end: {}",
                got.len(),
                self.ctx(&ctx)
            );
        } else {
            assert!(
                !got.is_empty(),
                "fill_buf returned nothing before the end: {}",
                self.ctx(&ctx)
            );
            assert!(
                got.len() as u64 <= avail,
                "fill_buf too long: {}",
                self.ctx(&ctx)
            );
            assert!(
                got.len() <= self.input.capacity(),
                "fill_buf returned more than capacity: {}",
                self.ctx(&ctx)
            );
            let p = self.pos as usize;
            assert_bytes(
                &got,
                &self.data[p..p + got.len()],
                self.pos,
                &self.ctx(&ctx),
            );
            assert_bytes(
                self.input.buffer(),
                &got,
                self.pos,
                &self.ctx(&format!("buffer() right after {ctx}")),
            );
        }
        self.check(&ctx);
        let amount = (got.len() as u64 * permille.min(1000) / 1000) as usize;
        self.input.tokio_io().consume(amount);
        self.pos += amount as u64;
        self.handed += amount as u64;
        self.check(&format!("{ctx}: consume({amount})"));
        Outcome::Ok
    }
}
