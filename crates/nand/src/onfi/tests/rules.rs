//! Rule errors: reliability constraints, the plane rule, copyback planes, addresses beyond the
//! geometry and configs whose cycles cannot address the device.

use super::*;
use crate::error::NandError;
use crate::op::{FlashOp, OpKind};
use commands as op;

#[test]
fn reliability_violations_come_back_as_their_own_errors() {
    // in-order programming: page 3 below the last programmed page 5
    let mut die = die(&mlc1());
    let end = die
        .run(SimTime::ZERO, &program_chain(&die, at(0, 7, 5)))
        .unwrap();
    let error = die.run(end, &program_chain(&die, at(0, 7, 3))).unwrap_err();
    assert_eq!(
        error,
        NandError::OutOfOrderProgram {
            address: at(0, 7, 3),
            page: 3,
            last_page: 5
        }
    );
    // the refused 10h left the sequence open; reset it
    let end = die.cycle(end, Cycle::Command(op::RESET)).unwrap().end;
    // NOP: MLC pages take one program
    let error = die.run(end, &program_chain(&die, at(0, 7, 5))).unwrap_err();
    assert!(
        matches!(
            error,
            NandError::NopExceeded {
                count: 2,
                limit: 1,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn block_table_errors_name_the_global_address_of_the_die() {
    // qdp-slc: four dies per chip, NOP 4; drive die 2
    let config = preset("qdp-slc").unwrap();
    let mut die = OnfiDie::new(&config, DieId(2)).unwrap();
    let address = PageAddress {
        die: 2,
        ..at(1, 3, 0)
    };
    let chain = command_chain(&FlashOp::program(address), &config.geometry, die.timing());
    let mut now = SimTime::ZERO;
    for _ in 0..4 {
        now = die.run(now, &chain).unwrap();
    }
    let error = die.run(now, &chain).unwrap_err();
    assert_eq!(
        error,
        NandError::NopExceeded {
            address,
            count: 5,
            limit: 4
        }
    );
    assert!(die.is_programmed(&address).unwrap());
    assert!(
        die.is_programmed(&at(1, 3, 0)).is_err(),
        "die 0 is not this die"
    );
}

#[test]
fn erase_past_endurance_is_refused() {
    let mut config = mlc1();
    config.reliability.endurance_cycles = 2;
    let mut die = die(&config);
    let chain = command_chain(&FlashOp::erase(at(1, 5, 0)), &config.geometry, die.timing());
    let now = die.run(SimTime::ZERO, &chain).unwrap();
    let now = die.run(now, &chain).unwrap();
    let error = die.run(now, &chain).unwrap_err();
    assert_eq!(
        error,
        NandError::EnduranceExceeded {
            address: at(1, 5, 0),
            count: 3,
            limit: 2
        }
    );
    assert_eq!(die.erase_count(&at(1, 5, 0)).unwrap(), 2);
}

#[test]
fn plane_rule_violations_of_queued_planes() {
    let config = mlc1();
    // different page offsets (the chain does not check; the die does)
    let mut die = die(&config);
    let op = FlashOp::multiplane(OpKind::Program, vec![at(0, 0, 0), at(1, 0, 1)]);
    let error = failure(&mut die, &chain_of(&op, &config));
    assert!(
        matches!(&error, NandError::PlaneRule { message } if message.contains("page offset 1")),
        "{error}"
    );
    // the same plane twice
    let mut die = super::die(&config);
    let op = FlashOp::multiplane(OpKind::Read, vec![at(0, 0, 0), at(0, 1, 0)]);
    let error = failure(&mut die, &chain_of(&op, &config));
    assert!(
        error
            .to_string()
            .contains("plane 0 addressed twice in one multiplane read"),
        "{error}"
    );
    // erase ignores page offsets but not planes
    let mut die = super::die(&config);
    let op = FlashOp::multiplane(OpKind::Erase, vec![at(1, 0, 0), at(1, 3, 0)]);
    let error = failure(&mut die, &chain_of(&op, &config));
    assert!(
        error.to_string().contains("plane 1 addressed twice"),
        "{error}"
    );
}

#[test]
fn copyback_destination_must_be_in_the_source_plane() {
    let config = mlc1();
    let mut die = die(&config);
    let op = FlashOp::copyback(at(0, 0, 0), at(1, 1, 0));
    let error = failure(&mut die, &chain_of(&op, &config));
    assert!(
        matches!(&error, NandError::PlaneRule { message }
            if message.contains("copyback destination ch0/chip0/die0/plane1/block1/page0 is not in the plane of a source")
                && message.contains("in plane 0")),
        "{error}"
    );
    let mut die = super::die(&config);
    let cycles = setup(op::COPYBACK_PROGRAM, page_cycles(&die, at(0, 1, 0)), None);
    assert!(
        message(&mut die, &cycles)
            .contains("expected 00h-address-35h (a copyback read) before 85h")
    );
    // 85h sequences end with 10h or 11h
    let mut die = super::die(&config);
    let mut cycles = setup(
        op::READ,
        page_cycles(&die, at(0, 0, 0)),
        Some(op::COPYBACK_READ_CONFIRM),
    );
    cycles.push(Cycle::WaitReady);
    cycles.extend(setup(
        op::COPYBACK_PROGRAM,
        page_cycles(&die, at(0, 1, 0)),
        Some(op::CACHE_PROGRAM_CONFIRM),
    ));
    assert!(
        message(&mut die, &cycles).contains("expected data input, 10h or 11h after 85h-address")
    );
}

#[test]
fn addresses_beyond_the_geometry_are_refused() {
    let mut die = die(&mlc1());
    // column 2112 of a 2048 + 64-byte register
    let cycles = [
        Cycle::Command(op::READ),
        Cycle::Address(0x40),
        Cycle::Address(0x08),
        Cycle::Address(0),
        Cycle::Address(0),
        Cycle::Address(0),
    ];
    assert!(matches!(
        failure(&mut die, &cycles),
        NandError::AddressOutOfRange {
            field: "column",
            value: 2112,
            limit: 2112,
            ..
        }
    ));
    // block in die 9000 of 8192 (row = 9000 << 7)
    let row = 9000u32 << 7;
    let mut die = super::die(&mlc1());
    let cycles = [
        Cycle::Command(op::ERASE),
        Cycle::Address(row as u8),
        Cycle::Address((row >> 8) as u8),
        Cycle::Address((row >> 16) as u8),
    ];
    let error = failure(&mut die, &cycles);
    assert!(
        matches!(
            error,
            NandError::AddressOutOfRange {
                field: "block in die",
                value: 9000,
                limit: 8192,
                ..
            }
        ),
        "{error}"
    );
    // tlc-b17a: 2,304 pages per block in 12 page bits; page 3000 does not exist
    let config = preset("tlc-b17a").unwrap();
    let mut die = super::die(&config);
    let row = 3000u32;
    let cycles = [
        Cycle::Command(op::READ),
        Cycle::Address(0),
        Cycle::Address(0),
        Cycle::Address(row as u8),
        Cycle::Address((row >> 8) as u8),
        Cycle::Address(0),
    ];
    let error = failure(&mut die, &cycles);
    assert!(
        error
            .to_string()
            .contains("page = 3000 but the device has 2304 (row address 0xBB8 after 00h)"),
        "{error}"
    );
}

#[test]
fn a_die_the_cycles_cannot_address_is_a_config_error() {
    let mut config = mlc1();
    config.timing.block_address_cycles = 2; // 20 row bits do not fit 16
    let error = OnfiDie::new(&config, DieId(0)).unwrap_err().to_string();
    assert!(
        error.contains("timing.block_address_cycles") && error.contains("needs 20 bits"),
        "{error}"
    );
    let mut config = mlc1();
    config.timing.page_address_cycles = 3; // no column cycles
    let error = OnfiDie::new(&config, DieId(0)).unwrap_err().to_string();
    assert!(error.contains("timing.page_address_cycles"), "{error}");
    assert!(OnfiDie::new(&mlc1(), DieId(1)).is_err(), "mlc1 has one die");
}
