//! The address layout of the ONFI interface: how a page address becomes address cycles and back.
//! Encode and decode live here and nowhere else.
//!
//! A page address is `page_address_cycles` bytes: first the column (byte offset in the page,
//! `page_address_cycles - block_address_cycles` bytes), then the row (`block_address_cycles`
//! bytes), each least significant byte first. An erase and a 78h status read send the row only.
//!
//! Row bits, least significant first:
//!
//! ```text
//! row = block_in_die << page_bits | page
//! block_in_die = block * planes_per_die + plane      (plane = block_in_die % planes_per_die)
//! page_bits = ceil(log2(pages_per_block))
//! ```
//!
//! so the plane select is the low bits of the block address, as in ONFI devices. The row carries
//! no LUN bits: a host selects a die by which [`super::OnfiDie`] it drives (one chip enable per
//! die), which keeps every preset's row within its three row cycles.

use super::cycle::Cycle;
use crate::error::{NandError, NandResult, config_error};
use crate::geometry::{Geometry, PageAddress};
use crate::timing::TimingModel;

/// A decoded address within one die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DieAddress {
    pub plane: u32,
    pub block: u32,
    pub page: u32,
    /// Byte offset in the page (0 for row-only addresses).
    pub column: u32,
}

/// The column/row layout of one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressLayout {
    column_cycles: u32,
    row_cycles: u32,
    page_bits: u32,
    block_bits: u32,
    planes_per_die: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    /// Bytes of a page register (data and spare): the column limit.
    register_bytes: u32,
}

/// Bits needed to hold the values `0..count`.
fn bits_for(count: u64) -> u32 {
    if count <= 1 {
        0
    } else {
        64 - (count - 1).leading_zeros()
    }
}

impl AddressLayout {
    /// The layout of `geometry` with the cycle counts of `timing`. Check it with
    /// [`AddressLayout::validate`] before decoding (the die does so when built).
    pub fn new(geometry: &Geometry, timing: &TimingModel) -> Self {
        let blocks_in_die =
            u64::from(geometry.planes_per_die) * u64::from(geometry.blocks_per_plane);
        AddressLayout {
            column_cycles: timing
                .page_address_cycles
                .saturating_sub(timing.block_address_cycles),
            row_cycles: timing.block_address_cycles,
            page_bits: bits_for(u64::from(geometry.pages_per_block)),
            block_bits: bits_for(blocks_in_die),
            planes_per_die: geometry.planes_per_die,
            blocks_per_plane: geometry.blocks_per_plane,
            pages_per_block: geometry.pages_per_block,
            register_bytes: geometry.page_size_bytes + geometry.spare_bytes_per_page,
        }
    }

    /// Checks that the cycle counts can carry every address of the geometry.
    pub fn validate(&self) -> NandResult<()> {
        if self.column_cycles + self.row_cycles > 8 {
            return Err(config_error(
                "timing.page_address_cycles",
                "a page address has at most 8 cycles",
            ));
        }
        let row_bits = self.page_bits + self.block_bits;
        if row_bits > 8 * self.row_cycles {
            return Err(config_error(
                "timing.block_address_cycles",
                format!(
                    "the row address needs {row_bits} bits ({} page + {} block-in-die) but {} \
                     cycles carry {}",
                    self.page_bits,
                    self.block_bits,
                    self.row_cycles,
                    8 * self.row_cycles
                ),
            ));
        }
        let column_bits = bits_for(u64::from(self.register_bytes));
        if column_bits > 8 * self.column_cycles {
            return Err(config_error(
                "timing.page_address_cycles",
                format!(
                    "the column address needs {column_bits} bits for a {}-byte register but the \
                     {} column cycles (page minus block address cycles) carry {}",
                    self.register_bytes,
                    self.column_cycles,
                    8 * self.column_cycles
                ),
            ));
        }
        Ok(())
    }

    /// Address cycles of a page address (column then row).
    pub fn page_cycles(&self) -> u32 {
        self.column_cycles + self.row_cycles
    }

    /// Address cycles of a row address (erase, 78h).
    pub fn row_cycles(&self) -> u32 {
        self.row_cycles
    }

    /// Bytes of a page register (data and spare): where columns end.
    pub fn register_bytes(&self) -> u32 {
        self.register_bytes
    }

    fn row_of(&self, address: &PageAddress) -> u64 {
        let block_in_die =
            u64::from(address.block) * u64::from(self.planes_per_die) + u64::from(address.plane);
        block_in_die << self.page_bits | u64::from(address.page)
    }

    /// Appends the address cycles of `address` at byte `column` (column bytes, then row bytes).
    /// Channel, chip and die of `address` select the die and are not encoded.
    pub fn push_page_address(&self, address: &PageAddress, column: u32, out: &mut Vec<Cycle>) {
        push_bytes(u64::from(column), self.column_cycles, out);
        push_bytes(self.row_of(address), self.row_cycles, out);
    }

    /// Appends the row address cycles of `address` (erase and 78h).
    pub fn push_row_address(&self, address: &PageAddress, out: &mut Vec<Cycle>) {
        push_bytes(self.row_of(address), self.row_cycles, out);
    }

    /// Decodes the bytes of a page address (`page_cycles` of them) received after `command`.
    pub fn decode_page(&self, bytes: &[u8], command: u8) -> NandResult<DieAddress> {
        debug_assert_eq!(bytes.len(), self.page_cycles() as usize);
        let (column_bytes, row_bytes) = bytes.split_at(self.column_cycles as usize);
        let column = little_endian(column_bytes);
        if column >= u64::from(self.register_bytes) {
            return Err(NandError::AddressOutOfRange {
                field: "column",
                value: column,
                limit: u64::from(self.register_bytes),
                address: format!("column address after {command:02X}h"),
            });
        }
        let mut address = self.decode_row(row_bytes, command, true)?;
        address.column = column as u32;
        Ok(address)
    }

    /// Decodes a row address (`row_cycles` bytes). With `check_page` false the page bits are
    /// ignored (an erase addresses a block) and the page is 0.
    pub fn decode_row(
        &self,
        bytes: &[u8],
        command: u8,
        check_page: bool,
    ) -> NandResult<DieAddress> {
        debug_assert_eq!(bytes.len(), self.row_cycles as usize);
        let row = little_endian(bytes);
        let out_of_range = |field, value, limit| NandError::AddressOutOfRange {
            field,
            value,
            limit,
            address: format!("row address 0x{row:X} after {command:02X}h"),
        };
        let page = row & ((1u64 << self.page_bits) - 1);
        if check_page && page >= u64::from(self.pages_per_block) {
            return Err(out_of_range("page", page, u64::from(self.pages_per_block)));
        }
        let block_in_die = row >> self.page_bits;
        let blocks_in_die = u64::from(self.planes_per_die) * u64::from(self.blocks_per_plane);
        if block_in_die >= blocks_in_die {
            return Err(out_of_range("block in die", block_in_die, blocks_in_die));
        }
        Ok(DieAddress {
            plane: (block_in_die % u64::from(self.planes_per_die)) as u32,
            block: (block_in_die / u64::from(self.planes_per_die)) as u32,
            page: if check_page { page as u32 } else { 0 },
            column: 0,
        })
    }
}

fn push_bytes(value: u64, cycles: u32, out: &mut Vec<Cycle>) {
    for i in 0..cycles {
        out.push(Cycle::Address((value >> (8 * i)) as u8));
    }
}

fn little_endian(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |value, byte| value << 8 | u64::from(*byte))
}
