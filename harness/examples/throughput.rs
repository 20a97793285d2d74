//! The throughput harness from the command line: time sequential reads of a file at a sweep of
//! request sizes through several readers, and show why a good buffered input matters.
//!
//! ```text
//! cargo run --release --example throughput                      # 64 MiB temp file, default sweep
//! cargo run --release --example throughput -- --path /mnt/nfs/f # an existing file, left as is
//! cargo run --release --example throughput -- --path /mnt/nfs/f --write --file-size 8MiB
//! cargo run --release --example throughput -- --latency 2ms --bandwidth 100MB/s --file-size 4MiB
//! cargo run --release --example throughput -- --read-ahead 1MiBx8
//! cargo run --release --example throughput -- --path file:///mnt/nfs/f
//! cargo run --release --features object-store --example throughput -- --path http://host:8080/f
//! cargo run --release --features object-store --example throughput -- --path s3://bucket/key
//! cargo run --release --example throughput -- --json > report.json
//! cargo run --release --example throughput -- --plot throughput.svg
//! ```
//!
//! Without `--path` it writes a temporary file (timing the write, in the manner of the classic
//! NFS test), times it, and deletes it. `--path` also takes a URL: `file://` always, `http://`,
//! `https://` and `s3://` (credentials, region and endpoint from the usual `AWS_*` variables) in
//! builds with the cargo feature `object-store`. The table's MB/s are 10^6 bytes per second.
//! Exit status: 0 on success, 1 if the run fails or complete cells' checksums differ, 2 on a
//! usage error.
//!
//! The command line lives in the harness library, [`throughput_harness::cli`]; this is its entry
//! point.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    throughput_harness::cli::main().await
}
