//! Sources: local files and the page cache, object stores (and faults on a SeaweedFS cluster of their own), OpenDAL, NFS, read-ahead (against one stream on a capped link too), and the sweep over every source.

mod capped_link;
mod nfs;
mod object_store;
mod opendal;
mod opendal_stream;
mod page_cache;
mod read_ahead;
mod seaweed_faults;
mod sweep;
