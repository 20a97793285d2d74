//! Servers of the test's own on 127.0.0.1, stopped when dropped. [`Nginx`], started with
//! `scripts/http-server.sh` (HTTP with Range, WebDAV PROPFIND listings, an access log with each
//! request's connection number), needs `scripts/http-server.sh install` (nginx and
//! libnginx-mod-http-dav-ext); [`S3`], started with `scripts/s3-server.sh`, needs
//! `scripts/s3-server.sh install`. Without them the test fails saying so.
#![allow(dead_code)] // each test uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running nginx serving one folder.
pub struct Nginx {
    /// `http://127.0.0.1:PORT`, with no trailing `/`.
    pub url: String,
    access_log: PathBuf,
    state: PathBuf,
    _state_parent: tempfile::TempDir,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/http-server.sh")
}

/// `bash scripts/NAME` (`s3-server.sh`, `http-server.sh`), to be given its arguments and
/// environment.
pub fn server_script(name: &str) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name),
    );
    cmd
}

/// Runs the server script `name` as `cmd` says (`args`, for the message); its stdout, or a
/// panic with its stderr.
pub fn script_output(name: &str, cmd: &mut Command, args: &dyn std::fmt::Debug) -> String {
    let out = cmd.output().expect("bash runs the server script");
    assert!(
        out.status.success(),
        "scripts/{name} {args:?} failed (run `scripts/{name} install` first): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Nginx {
    /// Serves `dir` at `/` on a free port of 127.0.0.1.
    pub fn serve(dir: &Path) -> Self {
        let parent = tempfile::tempdir().expect("temp dir");
        let state = parent.path().join("nginx");
        let out = Command::new(script())
            .arg("up")
            .arg(dir)
            .env("HTTP_STATE", &state)
            .env_remove("HTTP_PORT")
            .output()
            .expect("bash runs scripts/http-server.sh");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "scripts/http-server.sh up failed (run `scripts/http-server.sh install` first):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let var = |name: &str| abi_testkit::value_of::<String>(&stdout, name);
        Self {
            url: var("HTTP_URL"),
            access_log: PathBuf::from(var("HTTP_ACCESS_LOG")),
            state,
            _state_parent: parent,
        }
    }

    /// The requests so far, one line each: `(method, path, connection number)`.
    pub fn requests(&self) -> Vec<(String, String, u64)> {
        let log = std::fs::read_to_string(&self.access_log).unwrap_or_default();
        log.lines()
            .map(|line| {
                let request = line.split('"').nth(1).expect("\"METHOD PATH PROTO\"");
                let mut parts = request.split(' ');
                let method = parts.next().unwrap_or_default().to_owned();
                let path = parts.next().unwrap_or_default().to_owned();
                let conn = line
                    .rsplit_once(" conn=")
                    .and_then(|(_, n)| n.trim().parse().ok())
                    .unwrap_or_else(|| panic!("no conn=N in {line}"));
                (method, path, conn)
            })
            .collect()
    }

    /// Forgets the requests so far.
    pub fn clear_log(&self) {
        std::fs::write(&self.access_log, "").expect("truncate the access log");
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("down")
            .env("HTTP_STATE", &self.state)
            .output();
    }
}

/// An S3 server (a SeaweedFS cluster) of the test's own, started with `scripts/s3-server.sh`
/// (needs `scripts/s3-server.sh install`) and stopped when dropped.
pub struct S3 {
    /// The variables `scripts/s3-server.sh up` prints (`S3_BUCKET`, `AWS_ENDPOINT`, ...), for
    /// the processes that use the server.
    pub env: Vec<(String, String)>,
    state: PathBuf,
    _state_parent: tempfile::TempDir,
}

impl S3 {
    /// Starts the server and uploads every file of `dir` into its bucket under `prefix/`.
    pub fn serve(dir: &Path, prefix: &str) -> Self {
        let parent = tempfile::tempdir().expect("temp dir");
        let state = parent.path().join("s3");
        let run = |args: &[&std::ffi::OsStr]| {
            let mut cmd = server_script("s3-server.sh");
            cmd.args(args).env("S3_STATE", &state).env_remove("S3_PORT");
            script_output("s3-server.sh", &mut cmd, &args)
        };
        let stdout = run(&["up".as_ref(), parent.path().join("data").as_os_str()]);
        let env = stdout
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let server = Self {
            env,
            state: state.clone(),
            _state_parent: parent,
        };
        for entry in std::fs::read_dir(dir).expect("dir") {
            let entry = entry.expect("entry");
            let key = format!("{prefix}/{}", entry.file_name().to_string_lossy());
            run(&["upload".as_ref(), entry.path().as_os_str(), key.as_ref()]);
        }
        server
    }

    /// The bucket's name.
    pub fn bucket(&self) -> &str {
        &self
            .env
            .iter()
            .find(|(k, _)| k == "S3_BUCKET")
            .expect("S3_BUCKET")
            .1
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = server_script("s3-server.sh")
            .arg("down")
            .env("S3_STATE", &self.state)
            .output();
    }
}
