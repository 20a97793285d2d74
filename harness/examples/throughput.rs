//! The throughput harness from the command line: time reads of files, mounts and objects at a
//! sweep of request sizes through several readers, next to each source's limit (1 MiB reads
//! straight from it, like `dd bs=1M`), several sources side by side in one table.
//!
//! ```text
//! cargo run --release --example throughput                      # 64 MiB temp file, default sweep
//! cargo run --release --example throughput -- --path /mnt/nfs/f # an existing file, left as is
//! cargo run --release --example throughput -- --path /mnt/nfs/f --write --file-size 8MiB
//! cargo run --release --example throughput -- --path local=/tmp/f --path nfs=/mnt/nfs/f --write
//! cargo run --release --example throughput -- --pattern seq,random --tasks 1,4 --sizes 4KiB
//! cargo run --release --example throughput -- --latency 2ms --bandwidth 100MB/s --file-size 4MiB
//! cargo run --release --example throughput -- --read-ahead 1MiBx8 --repeat 3
//! cargo run --release --example throughput -- --path file:///mnt/nfs/f --readers none
//! cargo run --release --features object-store --example throughput -- --path http://host:8080/f
//! cargo run --release --features object-store --example throughput -- --path s3=s3://bucket/key
//! cargo run --release --example throughput -- --wide            # every column, wider than 120
//! cargo run --release --example throughput -- --json > report.json
//! cargo run --release --example throughput -- --plot throughput.svg
//! ```
//!
//! Without `--path` it writes a temporary file (timing the write, in the manner of the classic
//! NFS test), times it, and deletes it. `--path` is repeatable, and also takes a URL: `file://`
//! always, `http://`, `https://` and `s3://` (credentials, region and endpoint from the usual
//! `AWS_*` variables) in builds with the cargo feature `object-store`. The timed passes only look
//! at each request; every row is then read again, untimed, and every byte compared with the file.
//! The table fits 120 columns (`--wide` for every column), explains every reader and column
//! below it, and ends with a verdict per source: the best `AsyncBufferedInput` row at the
//! smallest and largest request size against the limit and tokio's `BufReader`.
//! The table's MB/s are 10^6 bytes per second. Exit status: 0 on success, 1 if the run fails, a
//! cell fails or a row read other bytes than the file holds, 2 on a usage error.
//!
//! The command line lives in the harness library, [`throughput_harness::cli`]; this is its entry
//! point.

use std::process::ExitCode;

fn main() -> ExitCode {
    throughput_harness::cli::main()
}
