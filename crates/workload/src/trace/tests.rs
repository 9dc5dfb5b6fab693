//! Hand-checked samples of every trace format.

use super::*;
use crate::IoOp;

fn read_all(
    text: &str,
    format: TraceFormat,
    options: &TraceOptions,
) -> Result<Vec<BlockRequest>, String> {
    read_trace(
        std::io::Cursor::new(text.to_owned()),
        "t.trace",
        format,
        options,
    )
    .map_err(|e| e.to_string())?
    .collect::<Result<Vec<_>, _>>()
    .map_err(|e| e.to_string())
}

fn ok(text: &str, format: TraceFormat) -> Vec<BlockRequest> {
    read_all(text, format, &TraceOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn err(text: &str, format: TraceFormat) -> String {
    match read_all(text, format, &TraceOptions::default()) {
        Ok(requests) => panic!("expected an error, got {requests:?}"),
        Err(e) => e,
    }
}

fn request(arrival_ns: Option<u64>, op: IoOp, offset_bytes: u64, size_bytes: u64) -> BlockRequest {
    BlockRequest {
        arrival: arrival_ns.map(SimTime::from_ns),
        op,
        offset_bytes,
        size_bytes,
        placement_id: 0,
    }
}

const MSR: &str = "\
128166372003061629,hm,1,Read,3154152448,4096,1279
128166372003074000,hm,0,write,0,512,10
128166372003073974,hm,1,WRITE,8192,65536,31
";

#[test]
fn msr_filetime_ticks_become_nanoseconds_from_the_first_record() {
    let first_two: String = MSR.lines().take(2).map(|l| format!("{l}\n")).collect();
    let requests = ok(&first_two, TraceFormat::Msr);
    // 128166372003074000 - 128166372003061629 = 12371 ticks of 100 ns = 1,237,100 ns.
    assert_eq!(
        requests,
        [
            request(Some(0), IoOp::Read, 3_154_152_448, 4096),
            request(Some(1_237_100), IoOp::Write, 0, 512),
        ]
    );
    // Disk 1 only: the third line is 12345 ticks after the first = 1,234,500 ns.
    let disk1 = TraceOptions {
        device: Some("1".into()),
        ..TraceOptions::default()
    };
    let requests = read_all(MSR, TraceFormat::Msr, &disk1).expect("valid");
    assert_eq!(
        requests,
        [
            request(Some(0), IoOp::Read, 3_154_152_448, 4096),
            request(Some(1_234_500), IoOp::Write, 8192, 65536),
        ]
    );
}

#[test]
fn msr_out_of_order_timestamps_are_an_error_unless_closed_loop() {
    let e = err(MSR, TraceFormat::Msr);
    assert!(
        e.starts_with("t.trace:3: arrival ") && e.contains("is earlier than"),
        "{e}"
    );
    let closed = TraceOptions {
        arrival: ArrivalMode::ClosedLoop,
        ..TraceOptions::default()
    };
    let requests = read_all(MSR, TraceFormat::Msr, &closed).expect("valid");
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.arrival.is_none()));
}

#[test]
fn msr_tolerates_a_header_and_reports_bad_lines() {
    let with_header = format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{MSR}");
    let closed = TraceOptions {
        arrival: ArrivalMode::ClosedLoop,
        ..TraceOptions::default()
    };
    assert_eq!(
        read_all(&with_header, TraceFormat::Msr, &closed).map(|r| r.len()),
        Ok(3)
    );
    let bad = "128166372003061629,hm,1,Read,x1f,4096,1279\n";
    assert_eq!(
        err(bad, TraceFormat::Msr),
        "t.trace:1: bad offset \"x1f\": expected an integer"
    );
    let bad = "1,hm,1,Read,0,4096,1\n2,hm,1,Flush,0,4096,1\n";
    assert_eq!(
        err(bad, TraceFormat::Msr),
        "t.trace:2: bad type \"Flush\": expected Read or Write"
    );
    let e = err("1,hm,1,Read,0,4096\n", TraceFormat::Msr);
    assert!(
        e.starts_with("t.trace:1: expected 7 comma-separated fields"),
        "{e}"
    );
    let e = err("1,hm,1,Read,0,0,1\n", TraceFormat::Msr);
    assert_eq!(e, "t.trace:1: request size is 0");
    let e = read_all(
        MSR,
        TraceFormat::Msr,
        &TraceOptions {
            device: Some("one".into()),
            ..TraceOptions::default()
        },
    );
    assert_eq!(
        e,
        Err("device: bad device \"one\": expected an integer (msr devices are numbers)".into())
    );
}

const BLKPARSE: &str = "\
  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001000   697  G   W 223490 + 8 [kjournald]
  8,0    3        0     0.000002000     0  m   N cfq697 alloced
  8,0    3        3     0.000004000   697  D   W 223490 + 8 [kjournald]
  8,0    0        4     1.000000001   700  Q  RA 1000 + 16 [cat]
  8,0    0        5     1.000000002   700  Q  FWS [kworker/0:1]
  8,16   1        6     2.5           701  Q   D 2048 + 2048 [fstrim]
  8,0    0        7     3.000000000     0  C   W 223490 + 8 [0]
CPU0 (8,0):
 Reads Queued:           1,        8KiB  Writes Queued:           1,        4KiB
Total (8,0):
Throughput (R/W): 0KiB/s / 0KiB/s
";

#[test]
fn blkparse_reads_the_selected_action_with_exact_times() {
    let queue = TraceOptions {
        blkparse_action: BlkparseAction::Queue,
        ..TraceOptions::default()
    };
    let requests = read_all(BLKPARSE, TraceFormat::Blkparse, &queue).expect("valid");
    assert_eq!(
        requests,
        [
            request(Some(0), IoOp::Write, 223_490 * 512, 4096),
            request(Some(1_000_000_001), IoOp::Read, 1000 * 512, 16 * 512),
            request(Some(2_500_000_000), IoOp::Trim, 2048 * 512, 2048 * 512),
        ]
    );
    let dispatched = ok(BLKPARSE, TraceFormat::Blkparse);
    assert_eq!(
        dispatched,
        [request(Some(4_000), IoOp::Write, 114_426_880, 4096)]
    );
    let only_sdb = TraceOptions {
        blkparse_action: BlkparseAction::Queue,
        device: Some("8,16".into()),
        ..TraceOptions::default()
    };
    let requests = read_all(BLKPARSE, TraceFormat::Blkparse, &only_sdb).expect("valid");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].op, IoOp::Trim);
}

#[test]
fn blkparse_malformed_io_lines_are_errors_with_their_line_number() {
    let text =
        "  8,0 3 1 0.000000000 697 D W 223490 + 8 [a]\n  8,0 3 2 0.1 697 D W 22x490 + 8 [a]\n";
    assert_eq!(
        err(text, TraceFormat::Blkparse),
        "t.trace:2: bad sector \"22x490\": expected an integer"
    );
    let text = "  8,0 3 1 0.0x 697 D W 1 + 8 [a]\n";
    let e = err(text, TraceFormat::Blkparse);
    assert!(e.starts_with("t.trace:1: bad time \"0.0x\""), "{e}");
    let text = "  8,0 3 1 0.0 697 D W 1 + eight [a]\n";
    assert_eq!(
        err(text, TraceFormat::Blkparse),
        "t.trace:1: bad sector count \"eight\": expected an integer"
    );
    let text = "  8,0 3 1\n";
    assert_eq!(
        err(text, TraceFormat::Blkparse),
        "t.trace:1: truncated event line: no time field"
    );
}

#[test]
fn disksim_times_are_milliseconds_and_flags_are_hex() {
    let text = "\
# time devno blkno bcount flags
0.000 0 2048 16 1
12.5 0 0 8 0
12.500001 1 7 1 a
13 0 9 1 0x11
";
    let requests = ok(text, TraceFormat::Disksim);
    assert_eq!(
        requests,
        [
            request(Some(0), IoOp::Read, 1_048_576, 8192),
            request(Some(12_500_000), IoOp::Write, 0, 4096),
            request(Some(12_500_001), IoOp::Write, 3584, 512),
            request(Some(13_000_000), IoOp::Read, 4608, 512),
        ]
    );
    let dev1 = TraceOptions {
        device: Some("1".into()),
        ..TraceOptions::default()
    };
    assert_eq!(
        read_all(text, TraceFormat::Disksim, &dev1).map(|r| r.len()),
        Ok(1)
    );
    let e = err("0.0 0 1 1 1\n1.0 0 1 1\n", TraceFormat::Disksim);
    assert_eq!(
        e,
        "t.trace:2: missing flags: expected 5 fields (time devno blkno bcount flags)"
    );
    let e = err("0.0 0 1 1 z\n", TraceFormat::Disksim);
    assert_eq!(
        e,
        "t.trace:1: bad flags \"z\": expected a hexadecimal integer"
    );
}

#[test]
fn native_round_trips_through_the_writer() {
    let requests = [
        BlockRequest {
            arrival: Some(SimTime::from_ps(1_500_250)),
            op: IoOp::Write,
            offset_bytes: 0,
            size_bytes: 4096,
            placement_id: 0,
        },
        request(Some(2_000), IoOp::Read, 8192, 16384),
        request(Some(2_000), IoOp::Trim, u64::MAX - 1, 1),
    ];
    let mut writer = NativeCsvWriter::new(Vec::new(), "capture.csv").expect("in memory");
    assert_eq!(writer.write_all(&requests).expect("in memory"), 3);
    let bytes = writer.finish().expect("in memory");
    let text = String::from_utf8(bytes).expect("utf-8");
    assert_eq!(
        text,
        "arrival_ns,op,offset_bytes,size_bytes\n1500.250,write,0,4096\n2000,read,8192,16384\n\
         2000,trim,18446744073709551614,1\n"
    );
    assert_eq!(ok(&text, TraceFormat::Native), requests);
}

#[test]
fn native_closed_loop_captures_have_empty_arrivals() {
    let requests = [
        request(None, IoOp::Write, 0, 512),
        request(None, IoOp::Read, 512, 512),
    ];
    let mut writer = NativeCsvWriter::new(Vec::new(), "c.csv").expect("in memory");
    writer.write_all(&requests).expect("in memory");
    let text = String::from_utf8(writer.finish().expect("in memory")).expect("utf-8");
    assert_eq!(
        text,
        "arrival_ns,op,offset_bytes,size_bytes\n,write,0,512\n,read,512,512\n"
    );
    assert_eq!(ok(&text, TraceFormat::Native), requests);
    let mut writer = NativeCsvWriter::new(Vec::new(), "c.csv").expect("in memory");
    let e = writer.write(&request(None, IoOp::Read, 0, 0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "request: c.csv: request 1 not written: request size is 0"
    );
}

#[test]
fn native_errors_name_the_line() {
    assert_eq!(
        err("offset,size\n", TraceFormat::Native),
        "t.trace:1: expected the header \"arrival_ns,op,offset_bytes,size_bytes\""
    );
    let text = "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,1\n\n5,erase,0,1\n";
    assert_eq!(
        err(text, TraceFormat::Native),
        "t.trace:4: bad op \"erase\": expected read, write or trim"
    );
    let text = "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,1\n,read,0,1\n";
    assert_eq!(
        err(text, TraceFormat::Native),
        "t.trace:3: arrival_ns is empty on some lines and set on others"
    );
    let e = read_all(
        "",
        TraceFormat::Native,
        &TraceOptions {
            device: Some("0".into()),
            ..TraceOptions::default()
        },
    );
    assert!(matches!(e, Err(m) if m.starts_with("device: ")));
}

#[test]
fn formats_parse_by_name_with_a_helpful_error() {
    for format in TraceFormat::ALL {
        assert_eq!(format.name().parse::<TraceFormat>().ok(), Some(format));
    }
    assert_eq!("SNIA".parse::<TraceFormat>().ok(), Some(TraceFormat::Msr));
    let e = "spc".parse::<TraceFormat>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "format: unknown trace format \"spc\": expected one of msr, blkparse, disksim, native \
         (disksim-us, disksim-ns: DiskSim traces with times in microseconds or nanoseconds)"
    );
    assert_eq!(
        "mqsim".parse::<TraceFormat>().ok(),
        Some(TraceFormat::DisksimNs)
    );
}

/// Regression (issue 11): an empty, header-only or fully filtered trace replayed "fine" with 0
/// requests (exit 0). Now a trace that yields no request is an error naming the file, with the
/// counts of lines read and skipped.
#[test]
fn a_trace_without_requests_is_an_error_naming_the_file() {
    assert_eq!(
        err("", TraceFormat::Msr),
        "t.trace: no requests: the trace is empty"
    );
    let e = err(&format!("{NATIVE_CSV_HEADER}\n"), TraceFormat::Native);
    assert!(e.starts_with("t.trace: no requests: all 1 lines"), "{e}");
    let e = err("\n# only a comment\n", TraceFormat::Disksim);
    assert!(e.starts_with("t.trace: no requests: all 2 lines"), "{e}");
    // every line filtered out by the device filter
    let disk9 = TraceOptions {
        device: Some("9".into()),
        ..TraceOptions::default()
    };
    let e = read_all("0.0 0 1 1 1\n1.0 0 2 1 0\n", TraceFormat::Disksim, &disk9).unwrap_err();
    assert!(
        e.contains("no requests") && e.contains("device filter"),
        "{e}"
    );
    // the reader counts what it read
    let mut reader = TraceReader::new(
        std::io::Cursor::new("# c\n0.0 0 1 1 1\n"),
        "t.trace",
        DisksimFormat::new(&TraceOptions::default()).unwrap(),
        ArrivalMode::AsRecorded,
    );
    assert!(reader.next().unwrap().is_ok());
    assert!(reader.next().is_none());
    assert_eq!(
        reader.counts(),
        TraceCounts {
            lines: 2,
            skipped: 1,
            requests: 1
        }
    );
}

/// Regression (issue 11): a trace read with the wrong format skipped every line and exited 0.
/// Now the error says so and names the format that does read the lines.
#[test]
fn a_trace_read_with_the_wrong_format_suggests_the_right_one() {
    let e = err(MSR, TraceFormat::Blkparse);
    assert!(
        e.contains("all 3 lines were skipped") && e.contains("is the format msr?"),
        "{e}"
    );
    let e = err("0.5 0 2048 16 1\n", TraceFormat::Blkparse);
    assert!(e.contains("is the format disksim?"), "{e}");
    let blk = "  8,0    3        1     0.000000000   697  D   W 223490 + 8 [kjournald]\n";
    let e = err(blk, TraceFormat::Disksim);
    // disksim reports the bad field of a blkparse line as an error with its line
    assert!(e.starts_with("t.trace:1:"), "{e}");
}

/// Regression (issue 11): a request of 2^64 - 1 bytes was accepted and later folded into one
/// whole-device write. A request beyond 1 GiB is now an error naming the line.
#[test]
fn huge_requests_are_errors_naming_the_line() {
    let e = err(
        &format!(
            "{NATIVE_CSV_HEADER}\n0,write,0,4096\n5,write,0,{}\n",
            u64::MAX
        ),
        TraceFormat::Native,
    );
    assert!(
        e.starts_with("t.trace:3: request of 18446744073709551615 bytes"),
        "{e}"
    );
    let e = err(
        &format!("{NATIVE_CSV_HEADER}\n5,write,{},4096\n", u64::MAX - 1),
        TraceFormat::Native,
    );
    assert!(
        e.starts_with("t.trace:2:") && e.contains("overflows"),
        "{e}"
    );
}

/// Regression (issue 11): DiskSim-format traces from MQSim carry nanoseconds; read as
/// milliseconds one failed with "bad time ... too large" and others gave arrivals a million
/// times too late. `disksim-us` / `disksim-ns` read the finer units, and an implausible time in
/// ms suggests them.
#[test]
fn disksim_time_units_and_implausible_times() {
    let line = "1500000 0 8 8 1\n";
    let ns = ok(line, TraceFormat::DisksimNs);
    assert_eq!(ns[0].arrival, Some(SimTime::from_us(1_500)));
    let us = ok(line, TraceFormat::DisksimUs);
    assert_eq!(us[0].arrival, Some(SimTime::from_ms(1_500)));
    let ms = ok(line, TraceFormat::Disksim);
    assert_eq!(ms[0].arrival, Some(SimTime::from_ms(1_500_000)));
    // 3e9 ms is 34 days: implausible, and the message names the unit to use
    let e = err("3000000000 0 8 8 1\n", TraceFormat::Disksim);
    assert!(
        e.starts_with("t.trace:1: time 3000000000 ms is 34 days"),
        "{e}"
    );
    assert!(e.contains("disksim-ns"), "{e}");
    // too large for picoseconds at all
    let e = err("30000000000000000 0 8 8 1\n", TraceFormat::Disksim);
    assert!(e.contains("too large") && e.contains("disksim-ns"), "{e}");
    // digits finer than a picosecond are dropped (documented rounding down)
    let fine = ok("0.0000000019 0 8 8 1\n", TraceFormat::Disksim);
    assert_eq!(fine[0].arrival, Some(SimTime::from_ps(1)));
}

#[test]
fn open_trace_names_a_missing_file() {
    let e = open_trace(
        "/nonexistent/x.csv",
        TraceFormat::Native,
        &TraceOptions::default(),
    )
    .err()
    .map(|e| e.to_string());
    assert!(e.is_some_and(|m| m.starts_with("/nonexistent/x.csv: ")));
}

#[test]
fn a_reader_stops_after_its_first_error() {
    let text = "1,hm,1,Read,0,1,1\nbad\n2,hm,1,Read,0,1,1\n";
    let source = read_trace(
        std::io::Cursor::new(text),
        "t",
        TraceFormat::Msr,
        &TraceOptions::default(),
    );
    let items: Vec<bool> = source.expect("valid options").map(|r| r.is_ok()).collect();
    assert_eq!(items, [true, false]);
}
