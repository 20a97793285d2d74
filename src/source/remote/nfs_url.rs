//! What an `nfs://` URL of [`NfsSource`](super::NfsSource) says: the server, the ports, the
//! path's components, and the options of its query.

use std::io;
use std::time::Duration;

/// The portmapper's port: asked for the NFS port when the URL gives none, and for MOUNT's.
pub(super) const PORTMAPPER_PORT: u16 = 111;

/// Connections (READs in flight) to one server when the URL does not say (`connections=`).
const DEFAULT_CONNECTIONS: usize = 4;

/// At most this many connections per source, whatever the URL says.
const MAX_CONNECTIONS: usize = 64;

/// How long one call may take when the URL does not say (`timeout=`, in seconds).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The smallest READ size a URL may ask for (`rsize=`).
const MIN_READ_SIZE: u32 = 4096;

/// A parsed `nfs://HOST[:PORT]/EXPORT/path?options` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NfsUrl {
    /// A name or an address (IPv6 without its brackets).
    pub(super) host: String,
    /// The NFS port; `None`: ask the portmapper.
    pub(super) port: Option<u16>,
    /// MOUNT's port (`mountport=`); `None`: the NFS port, then the portmapper.
    pub(super) mount_port: Option<u16>,
    /// The path's components, percent-decoded, at least two (an export and a file). Names are
    /// bytes in NFS, so they need not be UTF-8.
    pub(super) components: Vec<Vec<u8>>,
    /// The most READs in flight at once, one per connection (`connections=`).
    pub(super) connections: usize,
    /// The READ size asked for (`rsize=`); `None`: the server's maximum, at most 1 MiB.
    pub(super) read_size: Option<u32>,
    /// The AUTH_UNIX credential (`uid=`, `gid=`; the process's own by default).
    pub(super) uid: u32,
    pub(super) gid: u32,
    /// How long one call may take (`timeout=`, seconds).
    pub(super) timeout: Duration,
}

impl NfsUrl {
    /// Parses `url`; every error is `InvalidInput` and quotes the URL.
    pub(super) fn parse(url: &str) -> io::Result<Self> {
        let invalid = |why: String| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid NFS URL {url:?}: {why} (expected nfs://HOST[:PORT]/EXPORT/path)"),
            )
        };
        let rest = url
            .strip_prefix("nfs://")
            .ok_or_else(|| invalid("the scheme is not nfs://".into()))?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (host, port) = match authority.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed
                    .split_once(']')
                    .ok_or_else(|| invalid("an unclosed '['".into()))?;
                (host, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(invalid("no host".into()));
        }
        let port = port
            .map(|p| {
                p.parse::<u16>()
                    .map_err(|_| invalid(format!("a bad port {p:?}")))
            })
            .transpose()?;
        let components = path
            .split('/')
            .filter(|c| !c.is_empty())
            .map(|c| percent_decode(c).ok_or_else(|| invalid(format!("a bad escape in {c:?}"))))
            .collect::<io::Result<Vec<_>>>()?;
        if components.is_empty() {
            return Err(invalid("no path".into()));
        }
        if components.len() < 2 || path.ends_with('/') {
            return Err(invalid(
                "the path must name an export and a file in it".into(),
            ));
        }
        let (uid, gid) = process_ids();
        let mut parsed = Self {
            host: host.to_owned(),
            port,
            mount_port: None,
            components,
            connections: DEFAULT_CONNECTIONS,
            read_size: None,
            uid,
            gid,
            timeout: DEFAULT_TIMEOUT,
        };
        for pair in query.split('&').filter(|s| !s.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let number = |max: u64| {
                value
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n <= max)
                    .ok_or_else(|| invalid(format!("a bad value {value:?} for {key:?}")))
            };
            match key {
                "mountport" => parsed.mount_port = Some(number(u16::MAX.into())? as u16),
                "connections" => {
                    parsed.connections = (number(u64::MAX)? as usize).clamp(1, MAX_CONNECTIONS)
                }
                "rsize" => {
                    parsed.read_size = Some((number(u32::MAX.into())? as u32).max(MIN_READ_SIZE))
                }
                "uid" => parsed.uid = number(u32::MAX.into())? as u32,
                "gid" => parsed.gid = number(u32::MAX.into())? as u32,
                "timeout" => parsed.timeout = Duration::from_secs(number(u64::MAX)?.max(1)),
                // libnfs's way to ask for v3; this is the only version there is here.
                "version" if value == "3" => {}
                _ => return Err(invalid(format!("an unknown option {pair:?}"))),
            }
        }
        Ok(parsed)
    }
}

/// `%XX` escapes decoded; `None` for a bad escape or an escaped `/` (a component has none).
fn percent_decode(component: &str) -> Option<Vec<u8>> {
    let bytes = component.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            let byte = u8::from_str_radix(hex, 16).ok()?;
            if byte == b'/' {
                return None;
            }
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The process's user and group (nobody's elsewhere than on Linux).
fn process_ids() -> (u32, u32) {
    #[cfg(target_os = "linux")]
    return (
        rustix::process::getuid().as_raw(),
        rustix::process::getgid().as_raw(),
    );
    #[cfg(not(target_os = "linux"))]
    return (65534, 65534);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_path_and_options() {
        let u = NfsUrl::parse(
            "nfs://127.0.0.1:2049/export/dir/f.bin?mountport=635&connections=8&rsize=65536",
        )
        .unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.mount_port),
            ("127.0.0.1", Some(2049), Some(635))
        );
        assert_eq!(u.components, [&b"export"[..], b"dir", b"f.bin"]);
        assert_eq!((u.connections, u.read_size), (8, Some(65536)));
        assert_eq!(u.timeout, DEFAULT_TIMEOUT);

        let u =
            NfsUrl::parse("nfs://[::1]/e/a%20b%ff?uid=1000&gid=100&timeout=5&version=3").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", None));
        assert_eq!(u.components, [&b"e"[..], b"a b\xff"]);
        assert_eq!(
            (u.uid, u.gid, u.timeout),
            (1000, 100, Duration::from_secs(5))
        );

        let u = NfsUrl::parse("nfs://server.example//e//f?connections=0&rsize=1").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.connections),
            ("server.example", None, 1)
        );
        assert_eq!((u.components.len(), u.read_size), (2, Some(MIN_READ_SIZE)));
    }

    #[test]
    fn bad_urls_are_invalid_input_and_quote_the_url() {
        for (url, why) in [
            ("http://h/e/f", "the scheme is not nfs://"),
            ("NFS://h/e/f", "the scheme is not nfs://"),
            ("nfs://h", "no path"),
            ("nfs://h/", "no path"),
            ("nfs:///e/f", "no host"),
            ("nfs://h/onlyexport", "an export and a file"),
            ("nfs://h/e/dir/", "an export and a file"),
            ("nfs://h:x/e/f", "a bad port \"x\""),
            ("nfs://h:70000/e/f", "a bad port"),
            ("nfs://[::1/e/f", "unclosed"),
            ("nfs://h/e/a%2Fb", "a bad escape"),
            ("nfs://h/e/a%4", "a bad escape"),
            ("nfs://h/e/f?x=1", "an unknown option \"x=1\""),
            ("nfs://h/e/f?version=4", "an unknown option"),
            (
                "nfs://h/e/f?mountport=70000",
                "a bad value \"70000\" for \"mountport\"",
            ),
            ("nfs://h/e/f?uid=-1", "a bad value"),
        ] {
            let e = NfsUrl::parse(url).expect_err(url);
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{url}");
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("{url:?}")) && msg.contains(why),
                "{url}: {msg}"
            );
        }
    }
}
