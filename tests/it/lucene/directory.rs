//! `Directory` over local folders and over `object_store`'s in-memory store: listing, lengths
//! (from the listing, no second request), opening by name, errors that name the file and the
//! folder, and the settings its inputs share.

use std::io::ErrorKind;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use abi_testkit::pattern_vec;
use async_buffered_input::lucene::Directory;
use async_buffered_input::source::DynSource;
use async_buffered_input::{MemoryBudget, ReadAhead};

/// A folder with three files of different lengths and a sub-folder.
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, len) in [("b.bin", 100_000usize), ("a.bin", 10), ("empty", 0)] {
        std::fs::write(dir.path().join(name), pattern_vec(len)).expect("write");
    }
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    dir
}

#[tokio::test]
async fn a_local_folder_lists_its_files_sorted_and_opens_them_by_name() {
    let tmp = folder();
    let dir = Directory::local(tmp.path());
    assert_eq!(dir.list().await.unwrap(), ["a.bin", "b.bin", "empty"]);
    assert_eq!(dir.length("b.bin").await.unwrap(), 100_000);
    let mut input = dir.open("b.bin").await.unwrap();
    assert_eq!(input.known_length(), Some(100_000));
    input.seek_to(99_990);
    assert_eq!(
        &input.read_bytes_owned(10).await.unwrap()[..],
        &pattern_vec(100_000)[99_990..]
    );
    assert!(input.resource().ends_with("b.bin"), "{}", input.resource());
    let mut empty = dir.open("empty").await.unwrap();
    assert_eq!(empty.length().await.unwrap(), 0);
    assert_eq!(
        empty.read_byte().await.unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
    // Without a listing, the length comes from the file itself.
    let fresh = Directory::local(tmp.path());
    assert_eq!(fresh.length("a.bin").await.unwrap(), 10);
    assert_eq!(fresh.open("a.bin").await.unwrap().known_length(), Some(10));
}

#[tokio::test]
async fn errors_name_the_file_and_the_folder() {
    let tmp = folder();
    let dir = Directory::local(tmp.path());
    let folder = tmp.path().display().to_string();
    for e in [
        dir.open("missing.bin").await.unwrap_err(),
        dir.length("missing.bin").await.unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(
            e.to_string().contains("missing.bin") && e.to_string().contains(&folder),
            "{e}"
        );
    }
    for bad in ["", ".", "..", "sub/a.bin", "..\\a.bin"] {
        let e = dir.open(bad).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{bad:?}: {e}");
        assert!(e.to_string().contains(&folder), "{e}");
    }
    let gone = Directory::local(tmp.path().join("nope"));
    let e = gone.list().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains("nope"), "{e}");
}

#[tokio::test]
async fn open_location_opens_a_path_in_one_call() {
    let tmp = folder();
    let path = tmp.path().join("a.bin");
    let mut input = Directory::open_location(path.to_str().unwrap())
        .await
        .unwrap();
    assert_eq!(
        &input.read_bytes_owned(10).await.unwrap()[..],
        &pattern_vec(10)[..]
    );
    let e = Directory::open_location(tmp.path().join("zz").to_str().unwrap())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
}

#[tokio::test]
async fn its_inputs_share_the_settings_and_the_layer() {
    let tmp = folder();
    let budget = MemoryBudget::new(1 << 20);
    let layered = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&layered);
    let dir = Directory::local(tmp.path())
        .with_capacity(512)
        .with_read_ahead(Some(ReadAhead::new(4096, 2)))
        .with_budget(budget.clone())
        .with_source_layer(move |source: DynSource| {
            count.fetch_add(1, Ordering::Relaxed);
            source
        });
    let input = dir.open("b.bin").await.unwrap();
    assert_eq!(input.capacity(), 512);
    assert_eq!(input.fetch().read_ahead(), Some(ReadAhead::new(4096, 2)));
    assert!(input.fetch().budget().is_some());
    let _other = dir.clone().open("a.bin").await.unwrap();
    assert_eq!(layered.load(Ordering::Relaxed), 2);
    let plain = Directory::local(tmp.path())
        .with_read_ahead(None)
        .open("a.bin")
        .await
        .unwrap();
    assert_eq!(plain.fetch().read_ahead(), None);
}

#[cfg(feature = "cache")]
#[tokio::test]
async fn a_cache_is_shared_by_the_files_it_opens() {
    use async_buffered_input::cache::BlockCache;
    let tmp = folder();
    let cache = BlockCache::with_block_size(1 << 20, 4096);
    let dir = Directory::local(tmp.path())
        .with_cache(cache.clone())
        .with_read_ahead(None);
    for _ in 0..2 {
        let mut input = dir.open("b.bin").await.unwrap();
        let bytes = input.read_bytes_owned(100_000).await.unwrap();
        assert_eq!(&bytes[..], &pattern_vec(100_000)[..]);
    }
    let stats = cache.stats();
    assert!(stats.hits > 0 && stats.misses > 0, "{stats:?}");
}

#[cfg(feature = "object-store")]
mod object_store_backend {
    use super::*;
    use async_buffered_input::object_store::memory::InMemory;
    use async_buffered_input::object_store::path::Path;
    use async_buffered_input::object_store::{ObjectStoreExt, PutPayload};

    async fn store() -> Arc<InMemory> {
        let store = Arc::new(InMemory::new());
        for (name, len) in [
            ("idx/b.bin", 70_000usize),
            ("idx/a.bin", 10),
            ("other/c.bin", 5),
        ] {
            store
                .put(&Path::from(name), PutPayload::from(pattern_vec(len)))
                .await
                .unwrap();
        }
        store
    }

    #[tokio::test]
    async fn a_prefix_lists_and_opens_its_objects() {
        let store = store().await;
        let dir = Directory::with_store(store.clone(), Path::from("idx"), "memory:///idx");
        assert_eq!(dir.location(), "memory:///idx/");
        assert_eq!(dir.list().await.unwrap(), ["a.bin", "b.bin"]);
        let mut input = dir.open("b.bin").await.unwrap();
        assert_eq!(input.known_length(), Some(70_000));
        assert_eq!(
            &input.read_bytes_owned(70_000).await.unwrap()[..],
            &pattern_vec(70_000)[..]
        );
        assert_eq!(input.resource(), "memory:///idx/b.bin");
        let e = dir.open("c.bin").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(
            e.to_string().contains("c.bin") && e.to_string().contains("memory:///idx/"),
            "{e}"
        );
    }

    /// A source opened with a `HEAD` (or given its length) tells its input the length at
    /// once: `known_length` answers before any read, for the input, its clones and slices.
    #[tokio::test]
    async fn an_opened_object_s_length_is_known_at_once() {
        use async_buffered_input::source::ObjectStoreSource;
        use async_buffered_input::AsyncBufferedInput;
        use async_buffered_input::PositionalFetch;
        let store = store().await;
        let source = ObjectStoreSource::open(store.clone(), Path::from("idx/b.bin"), "mem:b.bin")
            .await
            .unwrap();
        let input = AsyncBufferedInput::new(PositionalFetch::new(source));
        assert_eq!(input.known_length(), Some(70_000));
        assert_eq!(input.clone().known_length(), Some(70_000));
        let given = ObjectStoreSource::with_length(store, Path::from("idx/a.bin"), "mem:a", 10);
        let mut input = AsyncBufferedInput::new(PositionalFetch::new(given));
        assert_eq!(input.known_length(), Some(10));
        assert_eq!(input.read_bytes_owned(10).await.unwrap(), pattern_vec(10));
    }

    #[tokio::test]
    async fn a_listed_length_is_not_asked_again() {
        let store = store().await;
        let dir = Directory::with_store(store.clone(), Path::from("idx"), "memory:///idx");
        dir.list().await.unwrap();
        // Gone from the store after the listing: a HEAD would now fail, so a length and an
        // open that succeed asked none.
        store.delete(&Path::from("idx/a.bin")).await.unwrap();
        assert_eq!(dir.length("a.bin").await.unwrap(), 10);
        let mut input = dir.open("a.bin").await.unwrap();
        assert_eq!(input.known_length(), Some(10));
        // The read itself does reach the store, and fails naming the object.
        let e = input.read_byte().await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        // A directory that did not list asks, and finds nothing.
        let fresh = Directory::with_store(store, Path::from("idx"), "memory:///idx");
        assert_eq!(
            fresh.length("a.bin").await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }

    #[tokio::test]
    async fn urls_with_unknown_schemes_are_invalid_input() {
        let e = Directory::at("ftp://host/index/").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().contains("ftp"), "{e}");
    }
}
