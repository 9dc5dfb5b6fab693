//! Sequence errors: every way the die refuses a cycle that does not fit the command sequence,
//! with the message it gives.

use super::*;
use crate::op::OpKind;
use commands as op;

#[test]
fn a_short_address_names_the_missing_cycle() {
    let mut die = die(&mlc1());
    let mut cycles = page_cycles(&die, at(0, 0, 0));
    cycles.truncate(2);
    let cycles = setup(op::PROGRAM, cycles, Some(op::PROGRAM_CONFIRM));
    assert_eq!(
        message(&mut die, &cycles),
        "die 0: bad command sequence: expected address cycle 3 of 5 after 80h, got command 10h"
    );
}

#[test]
fn a_read_without_confirm_or_with_data_input_is_refused() {
    let mut die = die(&mlc1());
    let mut cycles = setup(op::READ, page_cycles(&die, at(0, 0, 0)), None);
    cycles.push(Cycle::WaitReady); // waiting is always allowed
    cycles.push(Cycle::DataOut { bytes: 2048 });
    assert_eq!(
        message(&mut die, &cycles),
        "die 0: bad command sequence: expected 30h, 31h, 32h or 35h after 00h-address, got data \
         output of 2048 bytes"
    );
    // the refused cycle changed nothing: the read can still be confirmed
    die.run(SimTime::ZERO, &[Cycle::Command(op::READ_CONFIRM)])
        .unwrap();

    let mut die = super::die(&mlc1());
    let mut cycles = setup(op::READ, page_cycles(&die, at(0, 0, 0)), None);
    cycles.push(Cycle::DataIn { bytes: 2048 });
    let text = message(&mut die, &cycles);
    assert!(text.ends_with("got data input of 2048 bytes"), "{text}");
}

#[test]
fn a_program_needs_data_input_within_the_register() {
    let mut die = die(&mlc1());
    let cycles = setup(
        op::PROGRAM,
        page_cycles(&die, at(0, 0, 0)),
        Some(op::PROGRAM_CONFIRM),
    );
    assert!(
        message(&mut die, &cycles)
            .contains("expected data input after 80h-address, got command 10h")
    );
    let mut die = super::die(&mlc1());
    let mut cycles = setup(op::PROGRAM, page_cycles(&die, at(0, 0, 0)), None);
    cycles.push(Cycle::DataIn { bytes: 2000 });
    cycles.push(Cycle::DataIn { bytes: 113 });
    let text = message(&mut die, &cycles);
    assert!(
        text.contains("at most 112 more bytes of data input (a 2112-byte register from column 0, 2000 bytes in)"),
        "{text}"
    );
    assert!(message(&mut die, &[Cycle::DataIn { bytes: 0 }]).contains("at least 1 byte"));
    let text = message(&mut die, &[Cycle::Command(op::CACHE_READ_END)]);
    assert!(
        text.contains("expected data input, 10h, 11h or 15h after 80h-address-data"),
        "{text}"
    );
}

#[test]
fn a_command_while_busy_names_the_ready_time() {
    let mut die = die(&mlc1());
    let mut cycles = program_chain(&die, at(0, 0, 0));
    cycles.truncate(8); // 10h ends at 51.375 us, TIN until 301.375 us
    cycles.push(Cycle::Command(op::READ));
    assert_eq!(
        message(&mut die, &cycles),
        "die 0: bad command sequence: expected R/B# ready (the die is busy until 301.375 us and \
         accepts only 70h, 78h and FFh), got command 00h at 51.375 us"
    );
    // data output of a read before its TON ends is refused the same way
    let mut die = super::die(&mlc1());
    let mut cycles = setup(
        op::READ,
        page_cycles(&die, at(0, 0, 0)),
        Some(op::READ_CONFIRM),
    );
    cycles.push(Cycle::DataOut { bytes: 16 });
    let text = message(&mut die, &cycles);
    assert!(
        text.contains("busy until 50.175 us")
            && text.contains("got data output of 16 bytes at 175.000 ns"),
        "{text}"
    );
}

#[test]
fn data_output_needs_read_data_and_a_selected_plane() {
    let config = mlc1();
    let mut die = die(&config);
    assert!(
        message(&mut die, &[Cycle::DataOut { bytes: 1 }])
            .contains("expected a read (00h-address-30h) before data output")
    );
    let op = FlashOp::multiplane(OpKind::Read, vec![at(0, 0, 0), at(1, 0, 0)]);
    let mut chain = command_chain(&op, &config.geometry, die.timing());
    chain.truncate(chain.iter().position(|c| *c == Cycle::WaitReady).unwrap() + 1);
    chain.push(Cycle::DataOut { bytes: 2048 });
    assert!(
        message(&mut die, &chain)
            .contains("expected 06h-address-E0h to select a plane's data after a multiplane read")
    );
    // 06h must name a page a plane holds
    let cycles = setup(
        op::CHANGE_READ_COLUMN,
        page_cycles(&die, at(1, 0, 1)),
        Some(op::CHANGE_READ_COLUMN_CONFIRM),
    );
    let text = die.run(SimTime::ZERO, &cycles).unwrap_err().to_string();
    assert!(
        text.contains("06h-address of a page held for output")
            && text.contains("got command E0h for ch0/chip0/die0/plane1/block0/page1"),
        "{text}"
    );
    // reading past the register (on a die that refused nothing)
    let mut die = super::die(&config);
    let mut cycles = command_chain(&op, &config.geometry, die.timing());
    cycles.truncate(cycles.iter().position(|c| *c == Cycle::WaitReady).unwrap() + 1);
    die.run(SimTime::ZERO, &cycles).unwrap();
    let cycles = setup(
        op::CHANGE_READ_COLUMN,
        page_cycles(&die, at(1, 0, 0)),
        Some(op::CHANGE_READ_COLUMN_CONFIRM),
    );
    let end = die.run(SimTime::ZERO, &cycles).unwrap();
    let text = die
        .cycle(end, Cycle::DataOut { bytes: 2113 })
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("at most 2112 more bytes of data output from plane 1"),
        "{text}"
    );
}

#[test]
fn cache_reads_need_a_page_read_first() {
    let mut die = die(&mlc1());
    let text = message(&mut die, &[Cycle::Command(op::CACHE_READ)]);
    assert!(
        text.contains("expected 00h-address-30h (a page read) before the cache read 31h"),
        "{text}"
    );
    let cycles = setup(
        op::READ,
        page_cycles(&die, at(0, 0, 0)),
        Some(op::CACHE_READ),
    );
    assert!(message(&mut die, &cycles).contains("before the cache read 31h"));
    let mut die = super::die(&mlc1());
    assert!(message(&mut die, &[Cycle::Command(op::CACHE_READ_END)]).contains("before 3Fh"));
    // a sequential cache read stops at the end of the block
    let mut cycles = setup(
        op::READ,
        page_cycles(&die, at(0, 0, 127)),
        Some(op::READ_CONFIRM),
    );
    cycles.extend([Cycle::WaitReady, Cycle::Command(op::CACHE_READ)]);
    assert!(message(&mut die, &cycles).contains("expected 3Fh (the sequential cache read 31h would read past the last page of ch0/chip0/die0/plane0/block0/page127)"));
}

#[test]
fn a_queued_multiplane_op_takes_only_its_own_next_plane() {
    let mut die = die(&mlc1());
    let mut cycles = setup(
        op::READ,
        page_cycles(&die, at(0, 0, 0)),
        Some(op::MULTIPLANE_READ_QUEUE),
    );
    cycles.push(Cycle::Command(op::PROGRAM));
    assert_eq!(
        message(&mut die, &cycles),
        "die 0: bad command sequence: expected 00h (the next plane of the multiplane read queued \
         with 32h), 70h, 78h or FFh, got command 80h"
    );
    // status reads are fine in between, and the queue survives them
    let rest = [
        vec![Cycle::Command(op::READ_STATUS), Cycle::DataOut { bytes: 1 }],
        setup(
            op::READ,
            page_cycles(&die, at(1, 0, 0)),
            Some(op::READ_CONFIRM),
        ),
    ]
    .concat();
    die.run(SimTime::ZERO, &rest).unwrap();
}

#[test]
fn unknown_commands_and_stray_cycles() {
    let mut die = die(&mlc1());
    assert_eq!(
        message(&mut die, &[Cycle::Command(0x90)]),
        "die 0: bad command sequence: expected a command (00h, 06h, 31h, 3Fh, 60h, 70h, 78h, 80h, \
         85h, EFh or FFh), got command 90h"
    );
    assert!(message(&mut die, &[Cycle::Address(0)]).ends_with("got address cycle"));
    assert!(
        message(&mut die, &[Cycle::DataIn { bytes: 4 }]).ends_with("got data input of 4 bytes")
    );
    let text = message(
        &mut die,
        &[
            Cycle::Command(op::ERASE),
            Cycle::Address(0),
            Cycle::Command(op::ERASE_CONFIRM),
        ],
    );
    assert!(
        text.contains("expected address cycle 2 of 3 after 60h"),
        "{text}"
    );
}

#[test]
fn set_features_needs_exactly_four_bytes() {
    let mut die = die(&mlc1());
    let start = [Cycle::Command(op::SET_FEATURES), Cycle::Address(0x89)];
    let text = message(
        &mut die,
        &[
            &start[..],
            &[Cycle::DataIn { bytes: 3 }, Cycle::Command(op::READ)],
        ]
        .concat(),
    );
    assert!(text.contains("expected data input of the 4 feature bytes after EFh-address (3 received), got command 00h"), "{text}");
    let mut die = super::die(&mlc1());
    let text = message(
        &mut die,
        &[&start[..], &[Cycle::DataIn { bytes: 5 }]].concat(),
    );
    assert!(text.contains("at most 4 more feature bytes"), "{text}");
}

#[test]
fn reset_clears_a_sequence_in_progress() {
    let mut die = die(&mlc1());
    let mut cycles = setup(op::PROGRAM, page_cycles(&die, at(0, 0, 0)), None);
    cycles.push(Cycle::DataIn { bytes: 100 });
    cycles.push(Cycle::Command(op::RESET));
    cycles.extend(setup(
        op::READ,
        page_cycles(&die, at(0, 0, 0)),
        Some(op::READ_CONFIRM),
    ));
    die.run(SimTime::ZERO, &cycles).unwrap();
    assert!(!die.is_programmed(&at(0, 0, 0)).unwrap());
}

#[test]
fn confirms_must_match_their_setup() {
    let cases = [
        (
            op::READ,
            op::PROGRAM_CONFIRM,
            "expected 30h, 31h, 32h or 35h after 00h-address, got command 10h",
        ),
        (
            op::ERASE,
            op::READ_CONFIRM,
            "expected D0h or D1h after 60h-address, got command 30h",
        ),
        (
            op::CHANGE_READ_COLUMN,
            op::READ_CONFIRM,
            "expected E0h after 06h-address, got command 30h",
        ),
        (
            op::CHANGE_READ_COLUMN,
            op::CHANGE_READ_COLUMN_CONFIRM,
            "expected a read before 06h-address-E0h, got command E0h for ch0/chip0/die0/plane0/block0/page0",
        ),
    ];
    for (setup_code, confirm, expected) in cases {
        let mut die = die(&mlc1());
        let address = if setup_code == op::ERASE {
            row_cycles(&die, at(0, 0, 0))
        } else {
            page_cycles(&die, at(0, 0, 0))
        };
        let text = message(&mut die, &setup(setup_code, address, Some(confirm)));
        assert!(text.ends_with(expected), "{text}");
    }
    let mut die = die(&mlc1());
    assert!(
        message(&mut die, &[Cycle::DataOut { bytes: 0 }])
            .contains("expected a data output of at least 1 byte")
    );
}
