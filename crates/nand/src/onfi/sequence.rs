//! The bus side of the die state machine: command, address and data cycles, which move the
//! die through its [`Phase`]s (paper 003 Fig. 7). Confirm commands hand over to `array.rs`.
//!
//! Stages: commands count as CLE (70h and 78h with its address as status reads), address
//! cycles as ALE, data input as TIR, data output as TOR (the status byte as a status read).

use super::address::DieAddress;
use super::commands as op;
use super::cycle::{Cycle, CycleOutcome};
use super::die::OnfiDie;
use super::state::{MAX_ADDRESS_CYCLES, Phase, PlaneRegisters, Target};
use crate::error::{NandError, NandResult};
use crate::geometry::PageAddress;
use crate::stage::Stage;
use nandlab_core::SimTime;

impl OnfiDie {
    fn busy_error(&self, start: SimTime, cycle: Cycle) -> NandError {
        self.refuse(
            format!(
                "R/B# ready (the die is busy until {} and accepts only 70h, 78h and FFh)",
                self.ready_at
            ),
            format!("{cycle} at {start}"),
        )
    }

    pub(super) fn command(&mut self, start: SimTime, code: u8) -> NandResult<CycleOutcome> {
        let end = start + self.timing.cle();
        if code == op::RESET {
            return Ok(self.reset(start, end));
        }
        let status = matches!(code, op::READ_STATUS | op::READ_STATUS_ENHANCED);
        if start < self.ready_at && !status {
            return Err(self.busy_error(start, Cycle::Command(code)));
        }
        match self.phase {
            Phase::Idle => self.first_command(start, end, code),
            Phase::Confirm { command, target } => self.confirm(start, end, command, target, code),
            Phase::Data {
                command,
                target,
                bytes_in,
            } => self.data_confirm(start, end, command, target, bytes_in, code),
            Phase::Address { .. } | Phase::Feature { .. } => {
                Err(self.sequence_error(Cycle::Command(code)))
            }
        }
    }

    /// The command that opens a sequence (or a one-cycle command: 70h, 31h, 3Fh).
    fn first_command(
        &mut self,
        start: SimTime,
        end: SimTime,
        code: u8,
    ) -> NandResult<CycleOutcome> {
        let status = matches!(code, op::READ_STATUS | op::READ_STATUS_ENHANCED);
        if let Some(queue) = self.queue
            && code != queue.setup_command()
            && !status
        {
            return Err(self.sequence_error(Cycle::Command(code)));
        }
        let page_cycles = self.layout.page_cycles();
        let row_cycles = self.layout.row_cycles();
        let outcome = match code {
            op::READ_STATUS => {
                self.status_output = true;
                self.outcome(start, end, Some(Stage::Status), None)
            }
            op::READ_STATUS_ENHANCED => {
                self.begin_address(code, row_cycles);
                self.outcome(start, end, Some(Stage::Status), None)
            }
            op::READ | op::CHANGE_READ_COLUMN => self.begin(start, end, code, page_cycles),
            op::PROGRAM => {
                if self.queue.is_none() {
                    // a new program overwrites the registers: earlier read data is gone
                    self.planes.fill(PlaneRegisters::default());
                    self.selection = None;
                }
                self.begin(start, end, code, page_cycles)
            }
            op::COPYBACK_PROGRAM => {
                if !self.planes.iter().any(|p| p.copyback_source.is_some()) {
                    return Err(self.refuse(
                        "00h-address-35h (a copyback read) before 85h",
                        Cycle::Command(code),
                    ));
                }
                self.begin(start, end, code, page_cycles)
            }
            op::ERASE => self.begin(start, end, code, row_cycles),
            op::SET_FEATURES => self.begin(start, end, code, 1),
            op::CACHE_READ => self.sequential_cache_read(start, end)?,
            op::CACHE_READ_END => self.cache_read_end(start, end)?,
            op::SIM_PAGE_OPEN | op::SIM_SEARCH | op::SIM_GATHER => {
                self.check_sim_device(code)?;
                self.begin(start, end, code, page_cycles)
            }
            op::SIM_BLOCK_MODE => {
                self.check_sim_device(code)?;
                self.begin(start, end, code, row_cycles)
            }
            op::SIM_PAGE_CLOSE => {
                self.check_sim_device(code)?;
                self.sim_page_close(start, end)?
            }
            _ => return Err(self.sequence_error(Cycle::Command(code))),
        };
        if !status {
            self.status_output = false;
        }
        Ok(outcome)
    }

    fn begin(&mut self, start: SimTime, end: SimTime, command: u8, cycles: u32) -> CycleOutcome {
        self.begin_address(command, cycles);
        self.outcome(start, end, Some(Stage::Cle), None)
    }

    fn begin_address(&mut self, command: u8, cycles: u32) {
        debug_assert!(cycles as usize <= MAX_ADDRESS_CYCLES);
        self.phase = Phase::Address {
            command,
            received: 0,
            expected: cycles,
            bytes: [0; MAX_ADDRESS_CYCLES],
        };
    }

    pub(super) fn address(&mut self, start: SimTime, byte: u8) -> NandResult<CycleOutcome> {
        let Phase::Address {
            command,
            received,
            expected,
            mut bytes,
        } = self.phase
        else {
            return Err(self.sequence_error(Cycle::Address(byte)));
        };
        let end = start + self.timing.ale(1);
        let stage = if command == op::READ_STATUS_ENHANCED {
            Stage::Status
        } else {
            Stage::Ale
        };
        bytes[received as usize] = byte;
        let received = received + 1;
        if received < expected {
            self.phase = Phase::Address {
                command,
                received,
                expected,
                bytes,
            };
            return Ok(self.outcome(start, end, Some(stage), None));
        }
        let bytes = &bytes[..expected as usize];
        self.phase = match command {
            op::READ | op::CHANGE_READ_COLUMN => Phase::Confirm {
                command,
                target: self.target(self.layout.decode_page(bytes, command)?),
            },
            op::SIM_PAGE_OPEN => Phase::Confirm {
                command,
                target: self.target(self.layout.decode_page(bytes, command)?),
            },
            op::SIM_BLOCK_MODE => Phase::Confirm {
                command,
                target: self.target(self.layout.decode_row(bytes, command, false)?),
            },
            op::PROGRAM | op::COPYBACK_PROGRAM | op::SIM_SEARCH | op::SIM_GATHER => Phase::Data {
                command,
                target: self.target(self.layout.decode_page(bytes, command)?),
                bytes_in: 0,
            },
            op::ERASE => Phase::Confirm {
                command,
                target: self.target(self.layout.decode_row(bytes, command, false)?),
            },
            op::READ_STATUS_ENHANCED => {
                self.layout.decode_row(bytes, command, false)?;
                self.status_output = true;
                Phase::Idle
            }
            _ => {
                debug_assert_eq!(command, op::SET_FEATURES);
                Phase::Feature { bytes_in: 0 }
            }
        };
        Ok(self.outcome(start, end, Some(stage), None))
    }

    fn target(&self, address: DieAddress) -> Target {
        Target {
            address: PageAddress {
                plane: address.plane,
                block: address.block,
                page: address.page,
                ..self.base
            },
            column: address.column,
        }
    }

    pub(super) fn data_in(&mut self, start: SimTime, bytes: u32) -> NandResult<CycleOutcome> {
        let got = Cycle::DataIn { bytes };
        if bytes == 0 {
            return Err(self.refuse("a data input of at least 1 byte", got));
        }
        let end = match self.phase {
            Phase::Data {
                command: op::SIM_SEARCH | op::SIM_GATHER,
                ..
            } => start + self.timing.match_transfer_time(bytes),
            _ => start + self.timing.transfer_time(bytes),
        };
        match self.phase {
            Phase::Data {
                command,
                target,
                bytes_in,
            } => {
                let room = self.layout.register_bytes() - target.column - bytes_in;
                if bytes > room {
                    return Err(self.refuse(
                        format!(
                            "at most {room} more bytes of data input (a {}-byte register from \
                             column {}, {bytes_in} bytes in)",
                            self.layout.register_bytes(),
                            target.column
                        ),
                        got,
                    ));
                }
                self.phase = Phase::Data {
                    command,
                    target,
                    bytes_in: bytes_in + bytes,
                };
            }
            Phase::Feature { bytes_in } => {
                let room = op::FEATURE_PARAMETER_BYTES - bytes_in;
                if bytes > room {
                    return Err(self.refuse(
                        format!("at most {room} more feature bytes after EFh-address"),
                        got,
                    ));
                }
                self.phase = if bytes == room {
                    self.features_set += 1;
                    Phase::Idle
                } else {
                    Phase::Feature {
                        bytes_in: bytes_in + bytes,
                    }
                };
            }
            _ => return Err(self.sequence_error(got)),
        }
        Ok(self.outcome(start, end, Some(Stage::Tir), None))
    }

    pub(super) fn data_out(&mut self, start: SimTime, bytes: u32) -> NandResult<CycleOutcome> {
        let got = Cycle::DataOut { bytes };
        if bytes == 0 {
            return Err(self.refuse("a data output of at least 1 byte", got));
        }
        if self.phase == Phase::Idle && !self.status_output && self.sim_output > 0 {
            return self.sim_data_out(start, bytes);
        }
        let end = start + self.timing.transfer_time(bytes);
        match self.phase {
            Phase::Idle => {
                if self.status_output {
                    return Ok(self.outcome(start, end, Some(Stage::Status), None));
                }
            }
            // 00h directly followed by data output: back from status output to data output
            Phase::Address {
                command: op::READ,
                received: 0,
                ..
            } if self.queue.is_none() => {}
            _ => return Err(self.sequence_error(got)),
        }
        if start < self.ready_at {
            return Err(self.busy_error(start, got));
        }
        let Some((plane, column)) = self.selection else {
            let expected = if self.planes.iter().any(|p| p.output.is_some()) {
                "06h-address-E0h to select a plane's data after a multiplane read"
            } else {
                "a read (00h-address-30h) before data output"
            };
            return Err(self.refuse(expected, got));
        };
        debug_assert!(self.planes[plane as usize].output.is_some());
        let room = self.layout.register_bytes() - column;
        if bytes > room {
            return Err(self.refuse(
                format!(
                    "at most {room} more bytes of data output from plane {plane} (column {column} \
                     of a {}-byte register)",
                    self.layout.register_bytes()
                ),
                got,
            ));
        }
        self.selection = Some((plane, column + bytes));
        self.phase = Phase::Idle;
        Ok(self.outcome(start, end, Some(Stage::Tor), None))
    }

    /// FFh: aborts any sequence, queue and cell stage; the die is ready when the reset cycle
    /// ends (tRST is not modelled). Aborted cell time is taken back out of the breakdown.
    fn reset(&mut self, start: SimTime, end: SimTime) -> CycleOutcome {
        for stage in self.pending_array.drain(..) {
            if stage.end > end {
                let aborted = stage.end - stage.start.max(end);
                self.breakdown.0[stage.stage.index()] -= aborted;
            }
        }
        self.array_busy_until = self.array_busy_until.min(end);
        self.ready_at = self.ready_at.min(end);
        self.phase = Phase::Idle;
        self.queue = None;
        self.queued.clear();
        self.planes.fill(PlaneRegisters::default());
        self.selection = None;
        self.status_output = false;
        self.sim_latches.fill(Default::default());
        self.sim_output = 0;
        self.outcome(start, end, Some(Stage::Cle), None)
    }
}
