//! An nginx instance of the test's own, started with `scripts/http-server.sh` (HTTP with Range,
//! WebDAV PROPFIND listings, an access log with each request's connection number) and stopped
//! when dropped. Needs `scripts/http-server.sh install` (nginx and libnginx-mod-http-dav-ext);
//! without them the test fails saying so.
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
        let var = |name: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("no {name} in {stdout}"))
                .to_owned()
        };
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
