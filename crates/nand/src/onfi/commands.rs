//! The ONFI opcodes the die state machine accepts (SPEC N6a), with their names for messages.
//!
//! Opcodes are plain `u8`s on the bus (a host can send any byte); these constants name the ones
//! the model understands. Anything else is refused by the die with a sequence error.

/// 00h: read setup (page read, cache read, copyback read, multiplane read); also returns from
/// status output to data output when followed directly by data output.
pub const READ: u8 = 0x00;
/// 30h: read confirm: sense the addressed page(s) into the data register.
pub const READ_CONFIRM: u8 = 0x30;
/// 31h: cache read: move the data register to the cache register and sense the next page
/// (sequential without an address, random after 00h-address).
pub const CACHE_READ: u8 = 0x31;
/// 32h: queue a plane of a multiplane read (00h-address-32h … 00h-address-30h/31h/35h).
pub const MULTIPLANE_READ_QUEUE: u8 = 0x32;
/// 35h: copyback read confirm: sense the source page(s) for an internal data move.
pub const COPYBACK_READ_CONFIRM: u8 = 0x35;
/// 3Fh: end of a cache read: move the last sensed page to the cache register, sense nothing.
pub const CACHE_READ_END: u8 = 0x3F;
/// 06h: change read column (with E0h): select the plane and column of the next data output.
pub const CHANGE_READ_COLUMN: u8 = 0x06;
/// E0h: change read column confirm.
pub const CHANGE_READ_COLUMN_CONFIRM: u8 = 0xE0;
/// 80h: program setup; the address and data input follow.
pub const PROGRAM: u8 = 0x80;
/// 10h: program confirm (also ends a copyback program).
pub const PROGRAM_CONFIRM: u8 = 0x10;
/// 11h: queue a plane of a multiplane program or copyback program.
pub const MULTIPLANE_PROGRAM_QUEUE: u8 = 0x11;
/// 15h: cache program confirm: the die is ready for the next data input while the array works.
pub const CACHE_PROGRAM_CONFIRM: u8 = 0x15;
/// 85h: copyback program setup (destination address, optional data input).
pub const COPYBACK_PROGRAM: u8 = 0x85;
/// 60h: block erase setup (row address only).
pub const ERASE: u8 = 0x60;
/// D0h: erase confirm.
pub const ERASE_CONFIRM: u8 = 0xD0;
/// D1h: queue a plane of a multiplane erase.
pub const MULTIPLANE_ERASE_QUEUE: u8 = 0xD1;
/// 70h: read status; the status byte follows as data output.
pub const READ_STATUS: u8 = 0x70;
/// 78h: read status enhanced (row address of the plane), then the status byte.
pub const READ_STATUS_ENHANCED: u8 = 0x78;
/// FFh: reset: aborts any sequence and any array operation.
pub const RESET: u8 = 0xFF;
/// EFh: set features: one feature address cycle and four parameter bytes (read-retry levels).
pub const SET_FEATURES: u8 = 0xEF;

/// C0h (vendor, SiM): page-open setup; the page address and C1h or C2h follow.
pub const SIM_PAGE_OPEN: u8 = 0xC0;
/// C1h (vendor, SiM): page-open confirm: sense the page, make it the active search operand
/// (Latch 2); the verification window can then be read out.
pub const SIM_PAGE_OPEN_CONFIRM: u8 = 0xC1;
/// C2h (vendor, SiM): page-open-cache confirm: with a page active, sense into Latch 1 only.
pub const SIM_PAGE_OPEN_CACHE_CONFIRM: u8 = 0xC2;
/// C3h (vendor, SiM): page-close: release the active page; a page in Latch 1 moves up.
pub const SIM_PAGE_CLOSE: u8 = 0xC3;
/// C4h (vendor, SiM): search setup; the page address, 16 bytes (key, mask) per key, C5h.
pub const SIM_SEARCH: u8 = 0xC4;
/// C5h (vendor, SiM): search confirm; one 64-byte bitmap per key is then read out.
pub const SIM_SEARCH_CONFIRM: u8 = 0xC5;
/// C6h (vendor, SiM): gather setup; the page address, the 8-byte chunk bitmap, C7h.
pub const SIM_GATHER: u8 = 0xC6;
/// C7h (vendor, SiM): gather confirm; the selected chunks (each with its ECC) are read out.
pub const SIM_GATHER_CONFIRM: u8 = 0xC7;
/// C8h (vendor, SiM): set block mode; the row address and C9h or CAh follow.
pub const SIM_BLOCK_MODE: u8 = 0xC8;
/// C9h (vendor, SiM): the block goes to match mode (SLC, SiM commands).
pub const SIM_MODE_MATCH_CONFIRM: u8 = 0xC9;
/// CAh (vendor, SiM): the block goes to storage mode.
pub const SIM_MODE_STORAGE_CONFIRM: u8 = 0xCA;

/// Number of parameter bytes after EFh-address.
pub const FEATURE_PARAMETER_BYTES: u32 = 4;

/// Every opcode the model accepts, for messages.
pub const SUPPORTED: [u8; 31] = [
    READ,
    READ_CONFIRM,
    CACHE_READ,
    MULTIPLANE_READ_QUEUE,
    COPYBACK_READ_CONFIRM,
    CACHE_READ_END,
    CHANGE_READ_COLUMN,
    CHANGE_READ_COLUMN_CONFIRM,
    PROGRAM,
    PROGRAM_CONFIRM,
    MULTIPLANE_PROGRAM_QUEUE,
    CACHE_PROGRAM_CONFIRM,
    COPYBACK_PROGRAM,
    ERASE,
    ERASE_CONFIRM,
    MULTIPLANE_ERASE_QUEUE,
    READ_STATUS,
    READ_STATUS_ENHANCED,
    RESET,
    SET_FEATURES,
    SIM_PAGE_OPEN,
    SIM_PAGE_OPEN_CONFIRM,
    SIM_PAGE_OPEN_CACHE_CONFIRM,
    SIM_PAGE_CLOSE,
    SIM_SEARCH,
    SIM_SEARCH_CONFIRM,
    SIM_GATHER,
    SIM_GATHER_CONFIRM,
    SIM_BLOCK_MODE,
    SIM_MODE_MATCH_CONFIRM,
    SIM_MODE_STORAGE_CONFIRM,
];

/// What an opcode does, in a few words (for docs and messages).
pub fn describe(code: u8) -> &'static str {
    match code {
        READ => "read setup",
        READ_CONFIRM => "read confirm",
        CACHE_READ => "cache read",
        MULTIPLANE_READ_QUEUE => "multiplane read queue",
        COPYBACK_READ_CONFIRM => "copyback read confirm",
        CACHE_READ_END => "cache read end",
        CHANGE_READ_COLUMN => "change read column",
        CHANGE_READ_COLUMN_CONFIRM => "change read column confirm",
        PROGRAM => "program setup",
        PROGRAM_CONFIRM => "program confirm",
        MULTIPLANE_PROGRAM_QUEUE => "multiplane program queue",
        CACHE_PROGRAM_CONFIRM => "cache program confirm",
        COPYBACK_PROGRAM => "copyback program setup",
        ERASE => "erase setup",
        ERASE_CONFIRM => "erase confirm",
        MULTIPLANE_ERASE_QUEUE => "multiplane erase queue",
        READ_STATUS => "read status",
        READ_STATUS_ENHANCED => "read status enhanced",
        RESET => "reset",
        SET_FEATURES => "set features",
        SIM_PAGE_OPEN => "SiM page-open setup",
        SIM_PAGE_OPEN_CONFIRM => "SiM page-open confirm",
        SIM_PAGE_OPEN_CACHE_CONFIRM => "SiM page-open-cache confirm",
        SIM_PAGE_CLOSE => "SiM page-close",
        SIM_SEARCH => "SiM search setup",
        SIM_SEARCH_CONFIRM => "SiM search confirm",
        SIM_GATHER => "SiM gather setup",
        SIM_GATHER_CONFIRM => "SiM gather confirm",
        SIM_BLOCK_MODE => "SiM set block mode",
        SIM_MODE_MATCH_CONFIRM => "SiM match mode confirm",
        SIM_MODE_STORAGE_CONFIRM => "SiM storage mode confirm",
        _ => "unsupported",
    }
}
