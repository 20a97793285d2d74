//! Sources: local files and the page cache, object stores (and faults on a SeaweedFS cluster of their own), OpenDAL, NFS, read-ahead, and the sweep over every source.

mod nfs;
mod object_store;
mod opendal;
mod opendal_stream;
mod page_cache;
mod read_ahead;
mod seaweed_faults;
mod sweep;
