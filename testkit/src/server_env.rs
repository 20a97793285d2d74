//! What the server tests read from the environment that `.ci/run` (or a person, by hand) sets
//! up: the servers' addresses and the local copy of the object they serve.

use std::path::PathBuf;

/// The variable `name`, which a server test needs; panics naming it and `test_file` (whose
/// top says how to set the servers up) when it is not set.
#[track_caller]
pub fn server_var(name: &str, test_file: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: this test needs the servers; see the top of {test_file}")
    })
}

/// The local copy of the object the servers serve (`ABI_OBJECT_FILE`): its path, its file
/// name (the object's name on the servers) and its bytes, which must be over 1 MiB so that
/// read-ahead has chunks to pipeline. Panics otherwise, naming `test_file`.
#[track_caller]
pub fn object_file(test_file: &str) -> (PathBuf, String, Vec<u8>) {
    let path = PathBuf::from(server_var("ABI_OBJECT_FILE", test_file));
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(
        data.len() > 1 << 20,
        "{} should hold over 1 MiB so that read-ahead has chunks to pipeline",
        path.display()
    );
    (path, name, data)
}
