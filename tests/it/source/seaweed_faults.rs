//! Faults on a real distributed store (issue 30, item 4): a SeaweedFS cluster of the test's own
//! (`scripts/s3-server.sh`: one master, three volume servers, a filer, the S3 gateway, on
//! 127.0.0.1; replication 001, so every 4 MiB chunk has a copy on two volume servers) loses
//! parts of itself while an `ObjectStoreSource` reads from it:
//!
//! - a volume server killed (SIGKILL, a crash) part-way through a long sequential read with
//!   read-ahead, and started again later;
//! - a volume server killed and started again during many small random reads (term lookups)
//!   from a few tasks at once;
//! - the whole cluster stopped while a reader cached on a disk tier serves what it holds, then
//!   started again on the same data and the same port.
//!
//! Every read completes with exactly the pattern's bytes, or fails with an error that names the
//! object's URL, leaving the position where it was (then the test reads the same range again,
//! and it must complete once the store is whole). Never wrong bytes, never a hang (every read
//! runs under [`HANG`]). Each test prints one line with what happened and its times (see them
//! with `--nocapture`).
//!
//! Each test starts its own cluster (a temp dir for its data and its `S3_STATE`) and stops it
//! when dropped ([`Cluster`]); the tests take turns ([`CLUSTERS`]), so at most one of these
//! clusters runs at a time. The store is built with the printed endpoint and keys rather than
//! from the environment (`from_url` reads `AWS_*`, which belong to the shared server of the
//! other S3 tests in the same process), with `from_url`'s own client options and retries.
//!
//! `#[ignore]`d in a plain `cargo test`; they need only `scripts/s3-server.sh install`:
//!
//! ```text
//! cargo test --all-features --test it -- --include-ignored source::seaweed_faults:: --nocapture
//! ```
#![cfg(feature = "object-store")]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use abi_testkit::{assert_bytes, chain, pattern_vec, Rng};
use async_buffered_input::layer::Retrying;
use async_buffered_input::object_store::aws::AmazonS3Builder;
use async_buffered_input::object_store::path::Path as ObjectPath;
use async_buffered_input::source::ObjectStoreSource;
use async_buffered_input::{AsyncBufferedInput, PositionalFetch, ReadAhead};

use crate::servers::{script_output, server_script};

/// A read still pending after this is a hang: the test fails instead of waiting forever.
const HANG: Duration = Duration::from_secs(40);
/// How long a test goes on reading the same range again after errors before it fails: the
/// store must serve again well within this once it is whole.
const RESUME_WITHIN: Duration = Duration::from_secs(30);
/// The pause before reading a range again after an error.
const PAUSE: Duration = Duration::from_millis(300);

/// The clusters of these tests, one at a time: six processes each, on a machine of 2 cores.
static CLUSTERS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

// ---------------------------------------------------------------------------------------------
// The cluster
// ---------------------------------------------------------------------------------------------

/// Runs `scripts/s3-server.sh` for one cluster: its state folder, its data folder and the
/// gateway's port (pinned, so that an `up` after a `down` serves the same endpoint).
#[derive(Clone, Debug)]
struct Ctl {
    state: PathBuf,
    data: PathBuf,
    port: u16,
}

impl Ctl {
    /// Runs the script with `args`; its stdout, or a panic with its stderr.
    fn run(&self, args: &[&str]) -> String {
        script_output("s3-server.sh", &mut self.command(args), &args)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = server_script("s3-server.sh");
        cmd.args(args)
            .env("S3_STATE", &self.state)
            .env("S3_PORT", self.port.to_string())
            .env("S3_BUCKET", BUCKET);
        cmd
    }

    /// `up` on the data folder (again after a `down`: the same objects, the same endpoint).
    fn up(&self) -> String {
        self.run(&["up", self.data.to_str().expect("a UTF-8 temp path")])
    }

    #[cfg_attr(not(feature = "disk-cache"), allow(dead_code))] // the disk tier test's
    fn down(&self) {
        self.run(&["down"]);
    }

    fn start_volume(&self, n: u32) {
        self.run(&["start-volume", &n.to_string()]);
    }

    /// The script command `args` on a blocking thread, so that the reads go on meanwhile.
    async fn in_background(&self, args: &'static [&'static str]) {
        let ctl = self.clone();
        tokio::task::spawn_blocking(move || ctl.run(args))
            .await
            .expect("the script's thread");
    }
}

const BUCKET: &str = "abi-faults";

/// A SeaweedFS cluster of the test's own, stopped (`down`) when dropped, with the temp dir that
/// holds its data and state.
struct Cluster {
    ctl: Ctl,
    endpoint: String,
    key_id: String,
    secret: String,
    region: String,
    dir: tempfile::TempDir,
}

impl Cluster {
    /// Starts a cluster on a free port.
    fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let ctl = Ctl {
            state: dir.path().join("state"),
            data: dir.path().join("data"),
            port,
        };
        let stdout = ctl.up();
        let var = |name: &str| abi_testkit::value_of::<String>(&stdout, name);
        let endpoint = var("S3_ENDPOINT");
        assert_eq!(endpoint, format!("http://127.0.0.1:{port}"));
        assert_eq!(var("S3_BUCKET"), BUCKET);
        Self {
            endpoint,
            key_id: var("AWS_ACCESS_KEY_ID"),
            secret: var("AWS_SECRET_ACCESS_KEY"),
            region: var("AWS_REGION"),
            ctl,
            dir,
        }
    }

    /// Uploads `data` as `key`; the URL that names it.
    fn upload(&self, key: &str, data: &[u8]) -> String {
        let file = self.dir.path().join("upload.bin");
        std::fs::write(&file, data).expect("write the upload");
        self.ctl.run(&["upload", file.to_str().unwrap(), key]);
        std::fs::remove_file(&file).expect("remove the upload");
        format!("s3://{BUCKET}/{key}")
    }

    /// Opens `key` as `ObjectStoreSource::from_url("s3://BUCKET/key")` would with this
    /// cluster's `AWS_*` variables: the same client options and retries, path-style requests,
    /// static keys (no credential chain: nothing but 127.0.0.1 is asked).
    async fn open(&self, key: &str) -> ObjectStoreSource {
        let url = format!("s3://{BUCKET}/{key}");
        let store = AmazonS3Builder::new()
            .with_bucket_name(BUCKET)
            .with_endpoint(&self.endpoint)
            .with_access_key_id(&self.key_id)
            .with_secret_access_key(&self.secret)
            .with_region(&self.region)
            .with_virtual_hosted_style_request(false)
            .with_client_options(ObjectStoreSource::client_options())
            .with_retry(ObjectStoreSource::retry_config())
            .build()
            .unwrap_or_else(|e| panic!("S3 store for {url} at {}: {e}", self.endpoint));
        ObjectStoreSource::open(Arc::new(store), ObjectPath::from(key), url.clone())
            .await
            .unwrap_or_else(|e| panic!("open {url}: {}", chain(&e)))
    }
}

impl Cluster {
    /// The lines of the S3 gateway's and the filer's logs that report an error or a failure
    /// (`E…` glog lines, or lines that say "error" or "fail"): what the store saw of a fault.
    fn logged_errors(&self) -> Vec<String> {
        ["s3", "filer"]
            .iter()
            .flat_map(|name| {
                let log = std::fs::read_to_string(self.ctl.state.join(format!("{name}.log")));
                log.unwrap_or_default()
                    .lines()
                    .filter(|l| {
                        let lower = l.to_ascii_lowercase();
                        l.starts_with('E') || lower.contains("error") || lower.contains("fail")
                    })
                    .map(|l| format!("{name}: {l}"))
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.ctl.command(&["down"]).output();
    }
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

/// What the reads of a test saw: the errors (time, position, message), the first and last.
#[derive(Default)]
struct Errors {
    seen: Mutex<Vec<(Duration, u64, String)>>,
}

impl Errors {
    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// `first..last` seconds since the start, or `-` for none.
    fn span(&self) -> String {
        let seen = self.seen.lock().unwrap();
        match (seen.first(), seen.last()) {
            (Some(a), Some(b)) => format!("{:.1}..{:.1} s", a.0.as_secs_f64(), b.0.as_secs_f64()),
            _ => "-".to_owned(),
        }
    }

    fn first(&self) -> String {
        let seen = self.seen.lock().unwrap();
        seen.first()
            .map(|(_, at, e)| format!("at {at}: {e}"))
            .unwrap_or_else(|| "none".to_owned())
    }
}

/// Reads `n` bytes at the input's position and checks them against `data`; on an error, checks
/// that it names `url` and left the position alone, notes it in `errors`, waits [`PAUSE`] and
/// reads the same range again, for at most [`RESUME_WITHIN`] after the first error.
async fn read_checked<F: async_buffered_input::Fetch>(
    input: &mut AsyncBufferedInput<F>,
    n: usize,
    data: &[u8],
    url: &str,
    errors: &Errors,
    t0: Instant,
    ctx: &str,
) {
    let pos = input.position();
    let mut first_error: Option<Instant> = None;
    loop {
        let result = tokio::time::timeout(HANG, input.read_bytes_owned(n))
            .await
            .unwrap_or_else(|_| panic!("{ctx}: a read of {n} bytes at {pos} hung for {HANG:?}"));
        match result {
            Ok(got) => {
                assert_bytes(&got, &data[pos as usize..pos as usize + n], pos, ctx);
                return;
            }
            Err(e) => {
                let text = chain(&e);
                assert!(
                    text.contains(url),
                    "{ctx}: the error of a read at {pos} does not name {url}: {text}"
                );
                assert_eq!(input.position(), pos, "{ctx}: a failed read moved: {text}");
                errors
                    .seen
                    .lock()
                    .unwrap()
                    .push((t0.elapsed(), pos, text.clone()));
                let since = *first_error.get_or_insert_with(Instant::now);
                assert!(
                    since.elapsed() < RESUME_WITHIN,
                    "{ctx}: reads at {pos} still fail {RESUME_WITHIN:?} after the first error: {text}"
                );
                tokio::time::sleep(PAUSE).await;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

/// The long object: twelve 4 MiB chunks, each on two of the three volume servers.
const LONG: usize = 48 << 20;
/// Volume server 1 is killed once this much has been read (read-ahead chunks in flight) ...
const KILL_AT: u64 = 8 << 20;
/// ... and started again once this much has been read (the read goes on meanwhile).
const RESTART_AT: u64 = 32 << 20;
/// The reader consumes at most this many bytes a second (8 MiB/s: about 6 s for the object),
/// so that the kill strikes with read-ahead requests in flight and the volume server stays down
/// for seconds of the read (over loopback, unpaced, the 48 MiB take under half a second).
const PACE: f64 = (8 << 20) as f64;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a SeaweedFS cluster of its own (needs `scripts/s3-server.sh install`): .ci/run runs it"]
async fn volume_server_killed_during_a_long_sequential_read() {
    let _turn = CLUSTERS.lock().await;
    let cluster = Cluster::start();
    let data = pattern_vec(LONG);
    let url = cluster.upload("long.bin", &data);
    let source = Retrying::new(cluster.open("long.bin").await);
    let fetch = PositionalFetch::new(source).with_read_ahead(ReadAhead::default());
    let mut input = AsyncBufferedInput::new(fetch);
    assert_eq!(input.length().await.unwrap(), LONG as u64);

    let errors = Errors::default();
    let sizes = [8_191usize, 300_000, 1, 65_536, 777_777, 1 << 20];
    let t0 = Instant::now();
    let (mut killed, mut restart) = (None, None);
    let mut i = 0;
    while (input.position() as usize) < LONG {
        let pos = input.position();
        if killed.is_none() && pos >= KILL_AT {
            cluster
                .ctl
                .in_background(&["kill-volume", "1", "KILL"])
                .await;
            killed = Some(t0.elapsed());
        }
        if killed.is_some() && restart.is_none() && pos >= RESTART_AT {
            let ctl = cluster.ctl.clone();
            restart = Some((
                t0.elapsed(),
                tokio::task::spawn_blocking(move || ctl.start_volume(1)),
            ));
        }
        let n = sizes[i % sizes.len()].min(LONG - pos as usize);
        read_checked(&mut input, n, &data, &url, &errors, t0, "sequential read").await;
        i += 1;
        let due = t0 + Duration::from_secs_f64(input.position() as f64 / PACE);
        tokio::time::sleep_until(due.into()).await;
    }
    let read_all = t0.elapsed();
    let (restart_began, restarting) = restart.expect("the read went past RESTART_AT");
    restarting.await.expect("start-volume 1");
    let restarted = t0.elapsed();
    assert_eq!(
        input.read_byte().await.unwrap_err().kind(),
        std::io::ErrorKind::UnexpectedEof
    );
    // With volume server 1 back, a last pass over a few chunks from the start.
    input.seek_to(0);
    for _ in 0..12 {
        read_checked(
            &mut input,
            1 << 20,
            &data,
            &url,
            &errors,
            t0,
            "read after the restart",
        )
        .await;
    }
    println!(
        "seaweed_faults sequential: {} MiB in {read_all:.1?} ({} reads), volume 1 killed at \
         {:.1?} (after {} MiB), restart begun at {restart_began:.1?} and done at {restarted:.1?}; \
         {} errors ({}); first: {}; the gateway and filer logged {}",
        LONG >> 20,
        i,
        killed.unwrap(),
        KILL_AT >> 20,
        errors.count(),
        errors.span(),
        errors.first(),
        logged(&cluster),
    );
}

/// What [`Cluster::logged_errors`] found, for a test's line: how many, and the first.
fn logged(cluster: &Cluster) -> String {
    let lines = cluster.logged_errors();
    match lines.first() {
        None => "no error".to_owned(),
        Some(first) => format!("{} error lines, first: {first}", lines.len()),
    }
}

/// The term-lookup object.
const LOOKUP_FILE: usize = 16 << 20;
/// Lookups in all (more if the restart is slow: the lookups go on until it is done and
/// [`AFTER_RESTART`] more have been made).
const LOOKUPS: usize = 2_000;
const LOOKUP_LEN: usize = 100;
const TASKS: usize = 4;
/// Volume server 2 is killed after this many lookups, started again after [`RESTART_AFTER`].
const KILL_AFTER: usize = 300;
const RESTART_AFTER: usize = 1_000;
const AFTER_RESTART: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a SeaweedFS cluster of its own (needs `scripts/s3-server.sh install`): .ci/run runs it"]
async fn volume_server_killed_during_term_lookups() {
    let _turn = CLUSTERS.lock().await;
    let cluster = Cluster::start();
    let data = Arc::new(pattern_vec(LOOKUP_FILE));
    let url = Arc::new(cluster.upload("terms.bin", &data));
    let source = Arc::new(Retrying::new(cluster.open("terms.bin").await));
    let done = Arc::new(AtomicUsize::new(0));
    let target = Arc::new(AtomicUsize::new(usize::MAX));
    let errors = Arc::new(Errors::default());
    let restarted = Arc::new(AtomicBool::new(false));
    let after_restart = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let (source, data, url) = (source.clone(), data.clone(), url.clone());
            let (done, target, errors) = (done.clone(), target.clone(), errors.clone());
            let (restarted, after_restart) = (restarted.clone(), after_restart.clone());
            tokio::spawn(async move {
                let mut input = AsyncBufferedInput::new(PositionalFetch::from_arc(source));
                let mut rng = Rng::new(0x7e57 + t as u64);
                while done.fetch_add(1, Ordering::SeqCst) < target.load(Ordering::SeqCst) {
                    let at = rng.below((LOOKUP_FILE - LOOKUP_LEN) as u64);
                    input.seek_to(at);
                    read_checked(&mut input, LOOKUP_LEN, &data, &url, &errors, t0, "lookup").await;
                    if restarted.load(Ordering::SeqCst) {
                        after_restart.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    let wait_for = |n: usize| {
        let done = done.clone();
        async move {
            while done.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    wait_for(KILL_AFTER).await;
    cluster
        .ctl
        .in_background(&["kill-volume", "2", "KILL"])
        .await;
    let killed = (t0.elapsed(), done.load(Ordering::SeqCst));
    wait_for(RESTART_AFTER).await;
    let restart_began = (t0.elapsed(), done.load(Ordering::SeqCst));
    cluster.ctl.in_background(&["start-volume", "2"]).await;
    let restart_done = (t0.elapsed(), done.load(Ordering::SeqCst));
    restarted.store(true, Ordering::SeqCst);
    target.store(
        LOOKUPS.max(restart_done.1 + AFTER_RESTART),
        Ordering::SeqCst,
    );
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the lookups end")
            .expect("a lookup task panicked");
    }
    let lookups = target.load(Ordering::SeqCst);
    let elapsed = t0.elapsed();
    assert!(
        after_restart.load(Ordering::SeqCst) > 0,
        "no lookup after the restart"
    );
    println!(
        "seaweed_faults lookups: {lookups} lookups of {LOOKUP_LEN} B by {TASKS} tasks in \
         {elapsed:.1?}; volume 2 killed at {:.1?} (after {} lookups), restart from {:.1?} \
         ({}) to {:.1?} ({}), {} lookups after it; {} errors ({}); first: {}; the gateway \
         and filer logged {}",
        killed.0,
        killed.1,
        restart_began.0,
        restart_began.1,
        restart_done.0,
        restart_done.1,
        after_restart.load(Ordering::SeqCst),
        errors.count(),
        errors.span(),
        errors.first(),
        logged(&cluster),
    );
}

#[cfg(feature = "disk-cache")]
mod disk_tier {
    use super::*;
    use async_buffered_input::cache::{BlockCache, Cached, DiskTier};

    const FILE: usize = 8 << 20;
    const BLOCK: usize = 64 << 10;
    /// Memory holds 4 blocks: the warmed range is served again from the disk tier.
    const MEMORY: u64 = 4 * BLOCK as u64;
    const DISK: u64 = 16 << 20;
    /// Read before the cluster stops ...
    const WARM: std::ops::Range<u64> = 0..(4 << 20);
    /// ... and not: it fails while the cluster is down, and is served once it is up again.
    const COLD: std::ops::Range<u64> = (6 << 20)..((6 << 20) + COLD_LEN as u64);
    const COLD_LEN: usize = 100_000;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "starts a SeaweedFS cluster of its own (needs `scripts/s3-server.sh install`): .ci/run runs it"]
    async fn whole_cluster_stopped_under_a_disk_cached_reader() {
        let _turn = CLUSTERS.lock().await;
        let cluster = Cluster::start();
        let data = pattern_vec(FILE);
        let url = cluster.upload("cached.bin", &data);
        let disk = DiskTier::open(cluster.dir.path().join("disk-tier"), DISK, BLOCK).unwrap();
        let cache = BlockCache::with_disk_tier(MEMORY, disk);
        let source = Arc::new(Cached::new(
            Retrying::new(cluster.open("cached.bin").await),
            cache.clone(),
        ));
        let input = || AsyncBufferedInput::new(PositionalFetch::from_arc(source.clone()));
        let errors = Errors::default();
        let t0 = Instant::now();

        // Warm: every block of WARM is read from the store and written to the disk tier.
        let mut warm = input();
        read_checked(
            &mut warm,
            WARM.end as usize,
            &data,
            &url,
            &errors,
            t0,
            "warm-up",
        )
        .await;
        let warmed = cache.stats();
        assert_eq!(warmed.misses, WARM.end / BLOCK as u64, "{warmed}");
        assert_eq!(
            errors.count(),
            0,
            "the cluster is whole: {}",
            errors.first()
        );

        // The whole cluster stops.
        let down_began = t0.elapsed();
        cluster.ctl.down();
        let down = t0.elapsed();

        // The warmed range: served from the tiers, with no request.
        let t = Instant::now();
        let mut again = input();
        read_checked(
            &mut again,
            WARM.end as usize,
            &data,
            &url,
            &errors,
            t0,
            "warm, cluster down",
        )
        .await;
        let served = t.elapsed();
        let after = cache.stats();
        assert_eq!(
            after.misses, warmed.misses,
            "a request for a held block: {after}"
        );
        assert!(
            after.disk_hits - warmed.disk_hits >= WARM.end / BLOCK as u64 - 4,
            "the disk tier served the warmed range: {after}"
        );
        assert_eq!(errors.count(), 0, "{}", errors.first());

        // A range not held: an error naming the URL, the position unchanged.
        let mut cold = input();
        cold.seek_to(COLD.start);
        let t = Instant::now();
        let e = tokio::time::timeout(HANG, cold.read_bytes_owned(COLD_LEN))
            .await
            .expect("a read from a stopped cluster hung")
            .expect_err("a block nobody holds was read from a stopped cluster");
        let failed_in = t.elapsed();
        let text = chain(&e);
        assert!(text.contains(&url), "the error names {url}: {text}");
        assert_eq!(cold.position(), COLD.start, "{text}");

        // The cluster starts again on the same data and port: the same input, over the same
        // source (built for the same endpoint), reads the range.
        let up_began = t0.elapsed();
        cluster.ctl.up();
        let up = t0.elapsed();
        let t = Instant::now();
        read_checked(
            &mut cold,
            COLD_LEN,
            &data,
            &url,
            &errors,
            t0,
            "cold, cluster up again",
        )
        .await;
        let resumed_in = t.elapsed();
        println!(
            "seaweed_faults disk tier: warmed {} MiB ({} blocks) by {down_began:.1?}; down took \
             {:.1?}; the warmed range served in {served:.1?} with the cluster down ({} disk \
             hits, {} memory hits, no request); an unheld range failed in {failed_in:.1?}: \
             {text}; up again took {:.1?}, then the range read in {resumed_in:.1?} ({} errors \
             after the restart; first: {})",
            WARM.end >> 20,
            warmed.misses,
            down - down_began,
            after.disk_hits - warmed.disk_hits,
            after.hits - warmed.hits,
            up - up_began,
            errors.count(),
            errors.first(),
        );
    }
}
