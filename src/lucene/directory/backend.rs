use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

#[cfg(feature = "object-store")]
use object_store::{path::Path as StorePath, GetOptions, ObjectStore};

use super::compound_file::{CompoundFile, Input};
use crate::error::source_error::SourceError;
use crate::source::FileSource;
#[cfg(feature = "object-store")]
use crate::source::ObjectStoreSource;

/// Where a [`Directory`](crate::lucene::Directory)'s files are, and how to list and open them.
#[derive(Clone)]
pub(super) enum Backend {
    /// A local folder.
    Local(PathBuf),
    /// A prefix in an object store, shared by every file opened.
    #[cfg(feature = "object-store")]
    Store {
        store: Arc<dyn ObjectStore>,
        /// The folder in the store (empty: the store's root).
        prefix: StorePath,
        /// The folder as a URL ending in `/`, for messages: a file is `{base}{name}`.
        base: String,
    },
    /// A segment's compound file, its sub-files as files.
    Compound(Arc<CompoundFile>),
}

/// A file a backend opened: its source and its length, or (a compound file's sub-file) its
/// input.
pub(super) enum Opened {
    Local(FileSource, u64),
    #[cfg(feature = "object-store")]
    Store(ObjectStoreSource),
    Sub(Box<Input>),
}

impl Backend {
    /// The folder, as messages name it: a path or a URL.
    pub(super) fn location(&self) -> String {
        match self {
            Backend::Local(path) => path.display().to_string(),
            #[cfg(feature = "object-store")]
            Backend::Store { base, .. } => base.clone(),
            Backend::Compound(cfs) => cfs.resource().to_owned(),
        }
    }

    /// Every file of the folder (not its sub-folders) with its length, in no particular order.
    pub(super) async fn list(&self) -> io::Result<Vec<(String, u64)>> {
        let context = || format!("list {}", self.location());
        match self {
            Backend::Local(path) => {
                let path = path.clone();
                let listed = tokio::task::spawn_blocking(move || {
                    let mut files = Vec::new();
                    for entry in std::fs::read_dir(&path)? {
                        let entry = entry?;
                        let meta = entry.metadata()?;
                        if meta.is_file() {
                            files.push((
                                entry.file_name().to_string_lossy().into_owned(),
                                meta.len(),
                            ));
                        }
                    }
                    Ok(files)
                })
                .await
                .map_err(io::Error::other)
                .and_then(|r| r);
                listed.map_err(|e| SourceError::wrap(context(), e))
            }
            #[cfg(feature = "object-store")]
            Backend::Store { store, prefix, .. } => {
                let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
                let listed = store
                    .list_with_delimiter(prefix)
                    .await
                    .map_err(|e| SourceError::wrap(context(), e.into()))?;
                Ok(listed
                    .objects
                    .into_iter()
                    .filter_map(|meta| Some((meta.location.filename()?.to_owned(), meta.size)))
                    .collect())
            }
            Backend::Compound(cfs) => Ok(cfs.entries().collect()),
        }
    }

    /// The length of file `name`, asked of the backend (a `stat`, a `HEAD`).
    pub(super) async fn length(&self, name: &str) -> io::Result<u64> {
        let context = || format!("length of {name} in {}", self.location());
        match self {
            Backend::Local(path) => {
                let path = path.join(name);
                tokio::fs::metadata(&path)
                    .await
                    .map(|m| m.len())
                    .map_err(|e| SourceError::wrap(context(), e))
            }
            #[cfg(feature = "object-store")]
            Backend::Store { store, prefix, .. } => {
                let head = store
                    .get_opts(
                        &prefix.clone().join(name),
                        GetOptions::new().with_head(true),
                    )
                    .await
                    .map_err(|e| SourceError::wrap(context(), e.into()))?;
                Ok(head.meta.size)
            }
            Backend::Compound(cfs) => cfs.length(name),
        }
    }

    /// Opens file `name`; with `length`, asks no length of the backend.
    pub(super) async fn open(&self, name: &str, length: Option<u64>) -> io::Result<Opened> {
        let context = || format!("open {name} in {}", self.location());
        match self {
            Backend::Local(path) => {
                let path = path.join(name);
                let opened = {
                    let path = path.clone();
                    tokio::task::spawn_blocking(move || {
                        let file = std::fs::File::open(&path)?;
                        let length = match length {
                            Some(length) => length,
                            None => file.metadata()?.len(),
                        };
                        Ok::<_, io::Error>((file, length))
                    })
                    .await
                    .map_err(io::Error::other)
                    .and_then(|r| r)
                };
                let (file, length) = opened.map_err(|e| SourceError::wrap(context(), e))?;
                Ok(Opened::Local(FileSource::from_std(file, path), length))
            }
            #[cfg(feature = "object-store")]
            Backend::Store {
                store,
                prefix,
                base,
            } => {
                let location = prefix.clone().join(name);
                let url = format!("{base}{name}");
                let length = match length {
                    Some(length) => length,
                    None => {
                        let head = store
                            .get_opts(&location, GetOptions::new().with_head(true))
                            .await
                            .map_err(|e| SourceError::wrap(context(), e.into()))?;
                        head.meta.size
                    }
                };
                Ok(Opened::Store(ObjectStoreSource::with_length(
                    Arc::clone(store),
                    location,
                    url,
                    length,
                )))
            }
            Backend::Compound(cfs) => Ok(Opened::Sub(Box::new(cfs.open(name).await?))),
        }
    }
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Local(path) => f.debug_tuple("Local").field(path).finish(),
            #[cfg(feature = "object-store")]
            Backend::Store { base, .. } => f.debug_tuple("Store").field(base).finish(),
            Backend::Compound(cfs) => f.debug_tuple("Compound").field(cfs).finish(),
        }
    }
}
