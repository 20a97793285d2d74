use std::collections::HashMap;

use super::record::DiskKey;

/// Which block each slot of the disk tier holds, and which slot holds each block: what the
/// tier knows without touching its files. Guarded by one mutex, held for map and clock steps
/// only, never across I/O.
///
/// Eviction is CLOCK (second chance): a block read since the hand last passed it is skipped
/// once. A slot being written or read is never taken.
#[derive(Debug)]
pub(super) struct Index {
    // Invariants:
    // - `map[key] == s` iff `slots[s]` is `Held` with that key and not `doomed`;
    // - `free` holds exactly the `Free` slots;
    // - `bytes` is the sum of the record lengths of the `Writing` and `Held` slots: a slot's
    //   bytes are counted from the moment it is reserved, before anything is written;
    // - `held` is the number of `Held` slots.
    map: HashMap<DiskKey, u32>,
    slots: Vec<SlotState>,
    free: Vec<u32>,
    hand: usize,
    bytes: u64,
    held: u64,
}

#[derive(Debug)]
enum SlotState {
    Free,
    /// Reserved for a record of this many bytes being written (or a header being wiped).
    Writing(u32),
    Held(Entry),
}

#[derive(Debug)]
struct Entry {
    key: DiskKey,
    record_len: u32,
    // Read since the clock hand last passed.
    referenced: bool,
    // Reads in progress: the slot is not reused while any is.
    readers: u32,
    // Found corrupt while read by others: freed by the last of them.
    doomed: bool,
}

/// What [`Index::reserve`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Reserve {
    /// Write the record to this slot, then [`commit`](Index::commit) or
    /// [`release`](Index::release) it. `evicted` blocks were dropped to make room.
    Slot { slot: u32, evicted: u64 },
    /// The block is on disk already.
    Present,
    /// Every slot is being read or written: nothing to take now.
    Busy,
}

impl Index {
    /// An empty index of `slots` slots.
    pub(super) fn new(slots: u32) -> Self {
        Self {
            map: HashMap::new(),
            slots: (0..slots).map(|_| SlotState::Free).collect(),
            free: (0..slots).rev().collect(),
            hand: 0,
            bytes: 0,
            held: 0,
        }
    }

    /// Records that `slot` holds a valid record of `key` (found on disk when the tier was
    /// opened). A second slot with the same key is left free (both hold the same bytes), and
    /// false returned.
    pub(super) fn recover(&mut self, slot: u32, key: DiskKey, record_len: u32) -> bool {
        if self.map.contains_key(&key) || !matches!(self.slots[slot as usize], SlotState::Free) {
            return false;
        }
        self.free.retain(|&s| s != slot);
        self.occupy(slot, key, record_len);
        true
    }

    /// The slot of `key` and its record's length, pinned against reuse until
    /// [`unpin`](Self::unpin)ned.
    pub(super) fn pin(&mut self, key: &DiskKey) -> Option<(u32, u32)> {
        let slot = *self.map.get(key)?;
        let SlotState::Held(entry) = &mut self.slots[slot as usize] else {
            unreachable!("the map names held slots only");
        };
        entry.referenced = true;
        entry.readers += 1;
        Some((slot, entry.record_len))
    }

    /// Ends a read of `slot`. If `discard`, the block is dropped from the index; the slot is
    /// then returned reserved (its header is to be wiped, then the slot
    /// [`release`](Self::release)d) if this was its last reader, else freed by the last.
    pub(super) fn unpin(&mut self, slot: u32, discard: bool) -> Option<u32> {
        let SlotState::Held(entry) = &mut self.slots[slot as usize] else {
            unreachable!("a pinned slot is held");
        };
        debug_assert!(entry.readers > 0);
        entry.readers -= 1;
        if discard && !entry.doomed {
            entry.doomed = true;
            self.map.remove(&entry.key);
        }
        if !entry.doomed || entry.readers > 0 {
            return None;
        }
        let len = entry.record_len;
        self.slots[slot as usize] = SlotState::Writing(len);
        self.held -= 1;
        Some(slot)
    }

    /// A slot for a record of `record_len` bytes of `key`: a free one, or one taken from the
    /// block the clock hand finds first. Its bytes are counted from now on.
    pub(super) fn reserve(&mut self, key: &DiskKey, record_len: u32) -> Reserve {
        if self.map.contains_key(key) {
            return Reserve::Present;
        }
        let mut evicted = 0;
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let n = self.slots.len();
                let mut found = None;
                // Two turns: the first may only clear reference bits.
                for _ in 0..2 * n {
                    let s = self.hand;
                    self.hand = (self.hand + 1) % n;
                    if let SlotState::Held(entry) = &mut self.slots[s] {
                        if entry.readers > 0 || entry.doomed {
                            continue;
                        }
                        if entry.referenced {
                            entry.referenced = false;
                            continue;
                        }
                        let len = entry.record_len;
                        self.map.remove(&entry.key);
                        self.slots[s] = SlotState::Free;
                        self.bytes -= u64::from(len);
                        self.held -= 1;
                        evicted += 1;
                        found = Some(s as u32);
                        break;
                    }
                }
                match found {
                    Some(slot) => slot,
                    None => return Reserve::Busy,
                }
            }
        };
        self.slots[slot as usize] = SlotState::Writing(record_len);
        self.bytes += u64::from(record_len);
        Reserve::Slot { slot, evicted }
    }

    /// The record of `key` is written to the reserved `slot`: readers find it from now on.
    /// False (and the slot released) if another write of the same block got there first.
    pub(super) fn commit(&mut self, slot: u32, key: DiskKey) -> bool {
        let SlotState::Writing(len) = self.slots[slot as usize] else {
            unreachable!("a committed slot was reserved");
        };
        if self.map.contains_key(&key) {
            self.release(slot);
            return false;
        }
        self.bytes -= u64::from(len);
        self.occupy(slot, key, len);
        true
    }

    /// Frees the reserved `slot` (its write failed, or its header was wiped).
    pub(super) fn release(&mut self, slot: u32) {
        let SlotState::Writing(len) = self.slots[slot as usize] else {
            unreachable!("a released slot was reserved");
        };
        self.bytes -= u64::from(len);
        self.slots[slot as usize] = SlotState::Free;
        self.free.push(slot);
    }

    /// Bytes of the records held or being written.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Blocks held.
    pub(super) fn held(&self) -> u64 {
        self.held
    }

    fn occupy(&mut self, slot: u32, key: DiskKey, record_len: u32) {
        self.map.insert(key.clone(), slot);
        self.slots[slot as usize] = SlotState::Held(Entry {
            key,
            record_len,
            referenced: false,
            readers: 0,
            doomed: false,
        });
        self.bytes += u64::from(record_len);
        self.held += 1;
    }

    /// Checks every invariant (tests).
    #[cfg(test)]
    fn assert_invariants(&self) {
        let mut bytes = 0;
        let mut held = 0;
        for (s, state) in self.slots.iter().enumerate() {
            match state {
                SlotState::Free => assert!(self.free.contains(&(s as u32))),
                SlotState::Writing(len) => bytes += u64::from(*len),
                SlotState::Held(e) => {
                    bytes += u64::from(e.record_len);
                    held += 1;
                    assert_eq!(self.map.get(&e.key) == Some(&(s as u32)), !e.doomed);
                }
            }
        }
        assert_eq!(
            self.free.len(),
            self.slots
                .iter()
                .filter(|s| matches!(s, SlotState::Free))
                .count()
        );
        assert_eq!((bytes, held), (self.bytes, self.held));
        assert_eq!(
            self.map.len() as u64,
            held - self
                .slots
                .iter()
                .filter(|s| matches!(s, SlotState::Held(e) if e.doomed))
                .count() as u64
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> DiskKey {
        DiskKey {
            name: "f".into(),
            source_len: 1000,
            index: i,
        }
    }

    fn put(index: &mut Index, i: u64) -> u32 {
        let Reserve::Slot { slot, .. } = index.reserve(&key(i), 10) else {
            panic!("no slot for {i}");
        };
        assert!(index.commit(slot, key(i)));
        index.assert_invariants();
        slot
    }

    #[test]
    fn the_clock_keeps_blocks_read_again() {
        let mut index = Index::new(3);
        for i in 0..3 {
            put(&mut index, i);
        }
        assert_eq!(index.bytes(), 30);
        let (slot, _) = index.pin(&key(0)).unwrap();
        assert_eq!(index.unpin(slot, false), None);
        put(&mut index, 3); // evicts 1: 0 was read
        assert!(index.pin(&key(1)).is_none());
        assert!(index.pin(&key(0)).is_some());
        index.assert_invariants();
        assert_eq!((index.bytes(), index.held()), (30, 3));
    }

    #[test]
    fn pinned_and_reserved_slots_are_never_taken() {
        let mut index = Index::new(2);
        put(&mut index, 0);
        let _ = index.pin(&key(0)).unwrap();
        let Reserve::Slot { slot: writing, .. } = index.reserve(&key(1), 10) else {
            panic!()
        };
        assert_eq!(index.reserve(&key(2), 10), Reserve::Busy);
        assert_eq!(index.bytes(), 20, "the reservation counts");
        index.release(writing);
        index.assert_invariants();
        assert_eq!(index.bytes(), 10);
    }

    #[test]
    fn a_corrupt_block_is_dropped_by_its_last_reader() {
        let mut index = Index::new(2);
        let slot = put(&mut index, 0);
        index.pin(&key(0)).unwrap();
        index.pin(&key(0)).unwrap();
        assert_eq!(
            index.unpin(slot, true),
            None,
            "another reader still reads it"
        );
        assert!(index.pin(&key(0)).is_none(), "no new reader finds it");
        index.assert_invariants();
        assert_eq!(
            index.unpin(slot, false),
            Some(slot),
            "the last reader gets it to wipe"
        );
        index.release(slot);
        index.assert_invariants();
        assert_eq!((index.bytes(), index.held()), (0, 0));
        assert_eq!(
            index.reserve(&key(0), 10),
            Reserve::Slot {
                slot: 0,
                evicted: 0
            }
        );
    }

    #[test]
    fn recovery_keeps_one_slot_per_block() {
        let mut index = Index::new(3);
        assert!(index.recover(2, key(5), 10));
        assert!(!index.recover(0, key(5), 10));
        index.assert_invariants();
        assert_eq!(index.reserve(&key(5), 10), Reserve::Present);
        assert_eq!(index.held(), 1);
    }
}
