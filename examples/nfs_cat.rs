//! Copies a file on an NFSv3 server to standard output, as `nfs-cat` (libnfs) does: the
//! whole-file read that `scripts/nfs-vs-nfs-cat.sh` times against `nfs-cat` on the same file.
//!
//! ```text
//! cargo run --release --features nfs --example nfs_cat -- nfs://HOST[:PORT]/EXPORT/FILE[?OPTIONS] > FILE
//! ```
//!
//! The file is read through an [`NfsSource`] (the URL's options are its own: `mountport=`,
//! `connections=`, `rsize=`, ...) by an [`AsyncBufferedInput`] with the default
//! [`ReadAhead`], 1 MiB at a time into one buffer, each written to standard output while the
//! read-ahead fetches what follows. A request larger than the window goes past it: the bytes
//! are copied once, from the read-ahead's chunks into the buffer. On stderr it prints one line,
//! the bytes copied and the time from the connect to the last write:
//! `67108864 bytes in 0.061 s (1100 MB/s)`. Errors name the URL and exit with 1.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use async_buffered_input::source::{NfsSource, PositionalSource};
use async_buffered_input::{AsyncBufferedInput, PositionalFetch, ReadAhead};

/// Each request's size (larger than the window, so it bypasses it).
const REQUEST: usize = 1 << 20;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(url), None) = (args.next(), args.next()) else {
        eprintln!("usage: nfs_cat nfs://HOST[:PORT]/EXPORT/FILE[?OPTIONS] > FILE");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cat(&url)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Copies the file at `url` to standard output.
async fn cat(url: &str) -> io::Result<()> {
    let started = Instant::now();
    let source = NfsSource::connect(url).await?;
    let length = source.len().await?;
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::new(fetch);
    let mut buf = vec![0u8; REQUEST];
    let mut stdout = io::stdout().lock();
    let mut at = 0;
    while at < length {
        let n = (length - at).min(REQUEST as u64) as usize;
        input.read_bytes(&mut buf[..n]).await?;
        stdout.write_all(&buf[..n])?;
        at += n as u64;
    }
    stdout.flush()?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{at} bytes in {seconds:.3} s ({:.0} MB/s)",
        at as f64 / seconds / 1e6
    );
    Ok(())
}
