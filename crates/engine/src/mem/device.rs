//! `MemDevice`: a RAM disk with a fixed latency per operation.

use crate::device::{BlockDevice, CoDesignHints, DeviceCounters, Lpa, check_page_access};
use crate::error::EngineError;
use nandlab_core::SimTime;

/// Logical pages held in memory; each read or write advances time by a fixed latency.
///
/// Has no FTL: [`CoDesignHints`] reports no erase candidate, so Insert Address Assist always
/// falls back to appending on it.
#[derive(Clone, Debug)]
pub struct MemDevice {
    page_size_bytes: usize,
    page_count: u64,
    pages: Vec<u8>,
    read_latency: SimTime,
    write_latency: SimTime,
    now: SimTime,
    counters: DeviceCounters,
}

impl MemDevice {
    /// A zero-filled device of `page_count` pages of `page_size_bytes` each.
    pub fn new(
        page_size_bytes: usize,
        page_count: u64,
        read_latency: SimTime,
        write_latency: SimTime,
    ) -> Result<Self, EngineError> {
        if page_size_bytes == 0 {
            return Err(EngineError::config(
                "page_size_bytes",
                page_size_bytes,
                "must be positive",
            ));
        }
        let total_bytes = usize::try_from(page_count)
            .ok()
            .and_then(|n| n.checked_mul(page_size_bytes))
            .ok_or_else(|| {
                EngineError::config("page_count", page_count, "device too large for memory")
            })?;
        Ok(MemDevice {
            page_size_bytes,
            page_count,
            pages: vec![0; total_bytes],
            read_latency,
            write_latency,
            now: SimTime::ZERO,
            counters: DeviceCounters::default(),
        })
    }

    fn byte_range(&self, lpa: Lpa) -> std::ops::Range<usize> {
        let start = lpa.0 as usize * self.page_size_bytes;
        start..start + self.page_size_bytes
    }
}

impl BlockDevice for MemDevice {
    fn page_size_bytes(&self) -> usize {
        self.page_size_bytes
    }
    fn logical_page_count(&self) -> u64 {
        self.page_count
    }
    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError> {
        check_page_access(lpa, buf.len(), self.page_size_bytes, self.page_count)?;
        buf.copy_from_slice(&self.pages[self.byte_range(lpa)]);
        self.now += self.read_latency;
        self.counters.host_reads += 1;
        Ok(())
    }
    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError> {
        check_page_access(lpa, data.len(), self.page_size_bytes, self.page_count)?;
        let range = self.byte_range(lpa);
        self.pages[range].copy_from_slice(data);
        self.now += self.write_latency;
        self.counters.host_writes += 1;
        Ok(())
    }
    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        check_page_access(
            lpa,
            self.page_size_bytes,
            self.page_size_bytes,
            self.page_count,
        )?;
        let range = self.byte_range(lpa);
        self.pages[range].fill(0);
        self.counters.host_trims += 1;
        Ok(())
    }
    fn now(&self) -> SimTime {
        self.now
    }
    fn counters(&self) -> DeviceCounters {
        self.counters
    }
}

impl CoDesignHints for MemDevice {
    fn next_erase_block_valid_lpas(&self, lpas_out: &mut Vec<Lpa>) {
        lpas_out.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_was_written_and_zeros_elsewhere() {
        let mut dev = MemDevice::new(64, 4, SimTime::from_us(1), SimTime::from_us(2)).unwrap();
        let data = [7u8; 64];
        dev.write_page(Lpa(2), &data).unwrap();
        let mut buf = [1u8; 64];
        dev.read_page(Lpa(2), &mut buf).unwrap();
        assert_eq!(buf, data);
        dev.read_page(Lpa(1), &mut buf).unwrap();
        assert_eq!(buf, [0u8; 64]);
        assert_eq!(dev.now(), SimTime::from_us(4));
        dev.trim_page(Lpa(2)).unwrap();
        dev.read_page(Lpa(2), &mut buf).unwrap();
        assert_eq!(buf, [0u8; 64]);
    }

    #[test]
    fn bad_lpa_and_buffer_are_errors() {
        let mut dev = MemDevice::new(64, 4, SimTime::ZERO, SimTime::ZERO).unwrap();
        let mut buf = [0u8; 64];
        assert!(matches!(
            dev.read_page(Lpa(4), &mut buf),
            Err(EngineError::LpaOutOfRange { .. })
        ));
        assert!(matches!(
            dev.write_page(Lpa(0), &buf[..10]),
            Err(EngineError::BufferSize { .. })
        ));
    }
}
