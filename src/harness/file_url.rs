//! `file://` URLs: the local path they name.

use std::io;
use std::path::PathBuf;

/// The local path of a `file://` URL: `file:///abs/path` or `file://localhost/abs/path`, with
/// `%XX` escapes decoded (the result must be UTF-8).
pub(crate) fn file_url_path(url: &str) -> io::Result<PathBuf> {
    let invalid = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid file URL {url:?}: {why}"),
        )
    };
    let rest = url
        .get(..7)
        .filter(|prefix| prefix.eq_ignore_ascii_case("file://"))
        .map(|_| &url[7..])
        .ok_or_else(|| invalid("expected file:///path/to/file".into()))?;
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(slash) if rest[..slash].eq_ignore_ascii_case("localhost") => &rest[slash..],
        Some(slash) => {
            return Err(invalid(format!(
                "it names the host {:?}; only local files can be read (file:///path or \
                 file://localhost/path)",
                &rest[..slash]
            )))
        }
        None => return Err(invalid("expected file:///path/to/file".into())),
    };
    if let Some(c) = path.chars().find(|c| matches!(c, '?' | '#')) {
        return Err(invalid(format!(
            "a query or fragment ({c:?}) has no meaning for a local file; escape it as %{:02X}",
            c as u32
        )));
    }
    let mut bytes = Vec::with_capacity(path.len());
    let mut rest = path.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = tail
                .get(..2)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| invalid("% must be followed by two hex digits".into()))?;
            bytes.push(hex);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    let path =
        String::from_utf8(bytes).map_err(|_| invalid("the decoded path is not UTF-8".into()))?;
    Ok(PathBuf::from(path))
}

/// The scheme of `s` if it starts like a URL (`scheme:`), lowercased.
pub(crate) fn scheme(s: &str) -> Option<String> {
    let (scheme, _) = s.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| scheme.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_are_decoded() {
        for (url, path) in [
            ("file:///tmp/a.bin", "/tmp/a.bin"),
            ("FILE:///tmp/a.bin", "/tmp/a.bin"),
            ("file://localhost/tmp/a%20b%25.bin", "/tmp/a b%.bin"),
            ("file:///caf%C3%A9", "/café"),
        ] {
            assert_eq!(file_url_path(url).unwrap(), PathBuf::from(path), "{url}");
        }
    }

    #[test]
    fn remote_hosts_queries_and_bad_escapes_are_refused() {
        for (url, needle) in [
            ("file://server/share/f", "names the host \"server\""),
            ("file://relative", "expected file:///path/to/file"),
            ("file:/tmp/x", "expected file:///path/to/file"),
            ("file:///tmp/x?y", "escape it as %3F"),
            ("file:///tmp/%4", "two hex digits"),
            ("file:///tmp/%zz", "two hex digits"),
            ("file:///tmp/%+f", "two hex digits"),
            ("file:///%FF", "not UTF-8"),
        ] {
            let err = file_url_path(url).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{url}");
            assert!(err.to_string().contains(needle), "{url}: {err}");
            assert!(err.to_string().contains(url), "{url}: {err}");
        }
    }

    #[test]
    fn schemes() {
        assert_eq!(scheme("HTTP://h/x").as_deref(), Some("http"));
        assert_eq!(scheme("s3://b/k").as_deref(), Some("s3"));
        assert_eq!(scheme("/tmp/a:b"), None);
        assert_eq!(scheme("data.bin"), None);
        assert_eq!(scheme("1http://x"), None);
    }
}
