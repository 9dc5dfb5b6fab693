//! SQLite's five file lock levels, kept per file in host memory (one process: the locks only
//! order the connections of this process to the same simulated disk).

/// A lock level, in SQLite's order (`SQLITE_LOCK_NONE` … `SQLITE_LOCK_EXCLUSIVE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum LockLevel {
    #[default]
    None,
    Shared,
    Reserved,
    Pending,
    Exclusive,
}

impl LockLevel {
    /// The level of SQLite's code `code`, or `None` for a code that is not one.
    pub fn from_code(code: i32) -> Option<LockLevel> {
        Some(match code {
            0 => LockLevel::None,
            1 => LockLevel::Shared,
            2 => LockLevel::Reserved,
            3 => LockLevel::Pending,
            4 => LockLevel::Exclusive,
            _ => return None,
        })
    }
}

/// The locks held on one file by its open handles (each handle is a `holder` id).
#[derive(Clone, Debug, Default)]
pub struct FileLocks {
    /// Handles at SHARED or above.
    shared_holders: u32,
    /// The handle at RESERVED, PENDING or EXCLUSIVE.
    writer: Option<u64>,
    pending: bool,
    exclusive: bool,
}

impl FileLocks {
    /// Raises `holder` from `held` to `want`. `Ok(level)` on success; `Err(level)` when another
    /// handle is in the way (SQLITE_BUSY), with the level the holder has reached (an EXCLUSIVE
    /// request that waits for readers keeps PENDING, so no new reader comes in).
    pub fn lock(
        &mut self,
        holder: u64,
        held: LockLevel,
        want: LockLevel,
    ) -> Result<LockLevel, LockLevel> {
        if want <= held {
            return Ok(held);
        }
        if held == LockLevel::None {
            if self.pending || self.exclusive {
                return Err(held);
            }
            self.shared_holders += 1;
            if want == LockLevel::Shared {
                return Ok(LockLevel::Shared);
            }
        }
        if self.writer.is_some_and(|w| w != holder) {
            return Err(held.max(LockLevel::Shared));
        }
        self.writer = Some(holder);
        if want == LockLevel::Reserved {
            return Ok(LockLevel::Reserved);
        }
        self.pending = true;
        if self.shared_holders > 1 {
            return Err(LockLevel::Pending);
        }
        self.pending = false;
        self.exclusive = true;
        Ok(LockLevel::Exclusive)
    }

    /// Lowers `holder` from `held` to `want` (SHARED or NONE).
    pub fn unlock(&mut self, holder: u64, held: LockLevel, want: LockLevel) -> LockLevel {
        if want >= held {
            return held;
        }
        if held >= LockLevel::Reserved && self.writer == Some(holder) {
            self.writer = None;
            self.pending = false;
            self.exclusive = false;
        }
        if want == LockLevel::None && held >= LockLevel::Shared {
            self.shared_holders = self.shared_holders.saturating_sub(1);
        }
        want
    }

    /// Some handle holds RESERVED or above.
    pub fn reserved(&self) -> bool {
        self.writer.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::LockLevel::*;
    use super::*;

    #[test]
    fn one_writer_and_readers_block_exclusive() {
        let mut l = FileLocks::default();
        assert_eq!(l.lock(1, None, Shared), Ok(Shared));
        assert_eq!(l.lock(2, None, Shared), Ok(Shared));
        assert_eq!(l.lock(1, Shared, Reserved), Ok(Reserved));
        assert_eq!(
            l.lock(2, Shared, Reserved),
            Err(Shared),
            "one writer at a time"
        );
        assert_eq!(
            l.lock(1, Reserved, Exclusive),
            Err(Pending),
            "reader 2 is in"
        );
        assert_eq!(
            l.lock(3, None, Shared),
            Err(None),
            "pending keeps new readers out"
        );
        assert_eq!(l.unlock(2, Shared, None), None);
        assert_eq!(l.lock(1, Pending, Exclusive), Ok(Exclusive));
        assert!(l.reserved());
        assert_eq!(l.unlock(1, Exclusive, None), None);
        assert!(!l.reserved());
        assert_eq!(l.lock(3, None, Exclusive), Ok(Exclusive));
    }
}
