use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The disk tier's files in its folder: a fixed number of region files cut into equal slots,
/// the `layout` that says how, and a `lock` held while the tier is open. Blocking calls: run
/// them on tokio's blocking pool.
///
/// Slot `s` is bytes `[(s / n) * slot_size, (s / n + 1) * slot_size)` of region file `s % n`
/// (`n` files), so no file ever grows past its slots and all of them together past
/// `slots * slot_size`.
#[derive(Debug)]
pub(super) struct Files {
    dir: PathBuf,
    regions: Vec<File>,
    slot_size: u64,
    slots: u32,
    // Held open (and locked, on Linux) while the tier is open.
    _lock: File,
    // Set once the file system refused a `RWF_NOWAIT` read: reads go to the blocking pool.
    nowait_unsupported: AtomicBool,
}

/// The most region files a disk tier keeps open.
pub(super) const MAX_REGION_FILES: u32 = 16;

impl Files {
    /// Opens (creating it if needed) the tier in `dir` with `slots` slots of `slot_size`
    /// bytes. Region files of another layout are removed; a region file longer than its slots
    /// is cut to them.
    pub(super) fn open(
        dir: &Path,
        slot_size: u64,
        slots: u32,
        block_size: usize,
    ) -> io::Result<Self> {
        let context = |what: &str, e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("disk tier {}: {what}: {e}", dir.display()),
            )
        };
        fs::create_dir_all(dir).map_err(|e| context("cannot create the folder", e))?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("lock"))
            .map_err(|e| context("cannot open its lock file", e))?;
        #[cfg(target_os = "linux")]
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(
            |e| {
                context(
                    "cannot lock it (is another process using it?)",
                    io::Error::from(e),
                )
            },
        )?;
        let n = slots.min(MAX_REGION_FILES);
        let layout = format!(
            "async-buffered-input disk tier\nformat 1\nblock_size {block_size}\nslot_size {slot_size}\nslots {slots}\nregion_files {n}\n"
        );
        let layout_path = dir.join("layout");
        if fs::read_to_string(&layout_path).ok().as_deref() != Some(layout.as_str()) {
            // Another layout (or none, or a crash while writing one): start empty.
            for entry in fs::read_dir(dir).map_err(|e| context("cannot list the folder", e))? {
                let entry = entry.map_err(|e| context("cannot list the folder", e))?;
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("region-") && name.ends_with(".bin") {
                    fs::remove_file(entry.path())
                        .map_err(|e| context("cannot remove an old region file", e))?;
                }
            }
            let tmp = dir.join("layout.tmp");
            fs::write(&tmp, &layout).map_err(|e| context("cannot write its layout", e))?;
            fs::rename(&tmp, &layout_path).map_err(|e| context("cannot write its layout", e))?;
        }
        let mut regions = Vec::with_capacity(n as usize);
        for f in 0..n {
            let path = dir.join(format!("region-{f:02}.bin"));
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| context("cannot open a region file", e))?;
            let max = u64::from((slots - f).div_ceil(n)) * slot_size;
            if file
                .metadata()
                .map_err(|e| context("cannot stat a region file", e))?
                .len()
                > max
            {
                file.set_len(max)
                    .map_err(|e| context("cannot cut a region file", e))?;
            }
            regions.push(file);
        }
        Ok(Self {
            dir: dir.to_owned(),
            regions,
            slot_size,
            slots,
            _lock: lock,
            nowait_unsupported: AtomicBool::new(false),
        })
    }

    /// The folder.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many slots.
    pub(super) fn slots(&self) -> u32 {
        self.slots
    }

    /// How many region files are open.
    #[cfg_attr(not(feature = "test-util"), allow(dead_code))] // a test hook's
    pub(super) fn region_files(&self) -> usize {
        self.regions.len()
    }

    /// Reads into `buf` from the start of `slot`; returns how many bytes it read (fewer than
    /// `buf.len()` where the file ends).
    pub(super) fn read_slot(&self, slot: u32, buf: &mut [u8]) -> io::Result<usize> {
        debug_assert!(buf.len() as u64 <= self.slot_size);
        let (file, at) = self.place(slot);
        let mut filled = 0;
        while filled < buf.len() {
            match file.read_at(&mut buf[filled..], at + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }

    /// Fills `buf` from the start of `slot` now, on the calling thread, if the page cache holds
    /// all of it (Linux: one `preadv2(RWF_NOWAIT)`, which never waits for the disk); false if it
    /// does not, or on other systems. Never blocks.
    pub(super) fn read_slot_now(&self, slot: u32, buf: &mut [u8]) -> bool {
        #[cfg(target_os = "linux")]
        {
            use rustix::io::{Errno, ReadWriteFlags};
            if self.nowait_unsupported.load(Ordering::Relaxed) {
                return false;
            }
            let (file, at) = self.place(slot);
            let mut iov = [std::io::IoSliceMut::new(buf)];
            match rustix::io::preadv2(file, &mut iov, at, ReadWriteFlags::NOWAIT) {
                Ok(n) => n == iov[0].len(),
                Err(Errno::OPNOTSUPP | Errno::NOSYS) => {
                    self.nowait_unsupported.store(true, Ordering::Relaxed);
                    false
                }
                Err(_) => false,
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (slot, buf, &self.nowait_unsupported, Ordering::Relaxed);
            false
        }
    }

    /// Writes `record` at the start of `slot`, in one positional write (continued if the
    /// system writes less).
    pub(super) fn write_slot(&self, slot: u32, record: &[u8]) -> io::Result<()> {
        assert!(
            record.len() as u64 <= self.slot_size,
            "a record fits its slot"
        );
        let (file, at) = self.place(slot);
        file.write_all_at(record, at)
    }

    fn place(&self, slot: u32) -> (&File, u64) {
        debug_assert!(slot < self.slots);
        let n = self.regions.len() as u32;
        (
            &self.regions[(slot % n) as usize],
            u64::from(slot / n) * self.slot_size,
        )
    }
}
