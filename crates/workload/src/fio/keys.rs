//! Which of fio's keys a simulated block device honours, accepts as harmless, or refuses —
//! and why. Keys that change what reaches the device are honoured (typed in `job.rs`) or
//! refused here with the reason; keys that only change the host (engine, threads, CPUs,
//! memory), the payload bytes or the report are accepted.

/// I/O engines that read and write a file or block device (or an object, block or file
/// service): the job's requests are replayed on the simulated device, which models the device,
/// not the engine (its submission path, copies and CPU cost).
pub(crate) const STORAGE_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "libaio",
    "posixaio",
    "solarisaio",
    "windowsaio",
    "io_uring",
    "io_uring_cmd",
    "mmap",
    "splice",
    "sg",
    "null",
    "cpp_null",
    "libblkio",
    "xnvme",
    "spdk",
    "nbd",
    "rbd",
    "rados",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "libiscsi",
    "nfs",
    "dfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "dev-dax",
    "libpmem",
    "pmemblk",
    "libcufile",
    "libhipfile",
    "http",
    "libzbc",
    // raw NAND through Linux MTD: its erases are trims, its programs writes of the same
    // ranges, which the simulated SSD takes through its FTL (fio's mtd.fio)
    "mtd",
];

/// Engines that issue no reads and writes of a byte range, with what they do instead.
pub(crate) const NON_STORAGE_ENGINES: &[(&str, &str)] = &[
    ("cpuio", "burns CPU and issues no I/O"),
    ("exec", "runs a program and issues no I/O"),
    ("net", "moves data over a network socket, not to storage"),
    (
        "netsplice",
        "moves data over a network socket, not to storage",
    ),
    ("rdma", "moves data over RDMA, not to storage"),
    (
        "dircreate",
        "creates directories (file-system metadata), not block I/O",
    ),
    (
        "dirdelete",
        "deletes directories (file-system metadata), not block I/O",
    ),
    (
        "dirstat",
        "stats directories (file-system metadata), not block I/O",
    ),
    (
        "filecreate",
        "creates files (file-system metadata), not block I/O",
    ),
    (
        "filedelete",
        "deletes files (file-system metadata), not block I/O",
    ),
    (
        "filestat",
        "stats files (file-system metadata), not block I/O",
    ),
    (
        "e4defrag",
        "moves file extents with an ext4 ioctl; its traffic is the file system's",
    ),
    (
        "falloc",
        "allocates and punches file ranges (fallocate), not reads and writes",
    ),
    ("ftruncate", "truncates files, not reads and writes"),
    ("page_fault", "touches anonymous memory, not storage"),
];

/// Accepted keys without effect on the requests: the host side (threads, CPUs, memory, the
/// engine's own knobs and connection settings), the payload bytes (the simulated device does
/// not look at data) and the report. Values are not typed unless listed in
/// `IGNORED_BOOLEANS`/`IGNORED_INTEGERS` of `parse.rs`.
pub(crate) const HARMLESS_KEYS: &[&str] = &[
    // host: engine knobs, threads, CPUs, NUMA, memory
    "sqthread_poll",
    "sqthread_poll_cpu",
    "registerfiles",
    "nonvectored",
    "fixedbufs",
    "hipri",
    "cmd_type",
    "io_submit_mode",
    "cpus_allowed_policy",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "mem",
    "iomem",
    "gpu_dev_id",
    "gpu_dev_ids",
    "cuda_io",
    "rocm_io",
    "libblkio_driver",
    "libblkio_path",
    "busy_poll",
    "new_group",
    "allow_file_create",
    "create_on_open",
    "create_serialize",
    "openfiles",
    "fallocate",
    "unlink",
    // names of the files of jobs without filename (they run on the device itself)
    "filename_format",
    // engine connection settings (the simulated device is the target)
    "clientname",
    "pool",
    "cont",
    "conf",
    "rbdname",
    "volume",
    "brick",
    "uri",
    "nfs_url",
    "http_verbose",
    "http_mode",
    "http_host",
    "https",
    "http_s3_key",
    "http_s3_keyid",
    "http_s3_region",
    "http_s3_storage_class",
    "http_s3_sse_customer_key",
    "http_s3_sse_customer_algorithm",
    "http_swift_auth_token",
    // payload bytes: the simulated device does not look at data
    "buffer_pattern",
    "scramble_buffers",
    "buffer_compress_percentage",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_global",
    "dedupe_working_set_percentage",
    "verify_pattern",
    "verify_interval",
    "verify_fatal",
    "verify_dump",
    "verify_async",
    "verify_write_sequence",
    // errors: the simulated device returns none
    "continue_on_error",
    "ignore_error",
    "error_dump",
    // report and logs
    "write_hist_log",
    "log_offset",
    "log_prio",
    "block_error_percentiles",
    "latency_percentile_list",
    // I/O priorities: the simulated device has one priority class
    "prioclass",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
];

/// Refused keys with the reason; every other unknown key gets the generic hint.
pub(crate) const REFUSED_WITH_REASON: &[(&str, &str)] = &[
    (
        "thinktime",
        "think time between requests is not supported; use a SyntheticSpec with an open-loop arrival process",
    ),
    (
        "bsrange",
        "block sizes drawn from a range are not supported; only bsrange=N-N (one size)",
    ),
    (
        "bssplit",
        "block sizes drawn from a split are not supported: one bs per job (split the job)",
    ),
    ("kb_base", "only the default kb_base=1024 is supported"),
    (
        "include",
        "include files are not supported; inline the options",
    ),
    (
        "exit_what",
        "only exitall's default (end the stonewall group) is supported",
    ),
    (
        "inplace",
        "belongs to the e4defrag engine, which is not supported",
    ),
    (
        "donorname",
        "belongs to the e4defrag engine, which is not supported",
    ),
    (
        "cpuload",
        "belongs to the cpuio engine, which issues no I/O",
    ),
    (
        "cpumode",
        "belongs to the cpuio engine, which issues no I/O",
    ),
    ("program", "belongs to the exec engine, which issues no I/O"),
    (
        "arguments",
        "belongs to the exec engine, which issues no I/O",
    ),
    (
        "grace_time",
        "belongs to the exec engine, which issues no I/O",
    ),
    (
        "std_redirect",
        "belongs to the exec engine, which issues no I/O",
    ),
    (
        "hostname",
        "network engines are not supported (no storage I/O)",
    ),
    ("port", "network engines are not supported (no storage I/O)"),
    (
        "protocol",
        "network engines are not supported (no storage I/O)",
    ),
    (
        "listen",
        "network engines are not supported (no storage I/O)",
    ),
    ("verb", "network engines are not supported (no storage I/O)"),
    (
        "pingpong",
        "network engines are not supported (no storage I/O)",
    ),
    ("ttl", "network engines are not supported (no storage I/O)"),
];

/// Keys accepted with a `note:` on stderr: they change what fio's host does (a check, a wait,
/// a flag on the command, a metadata payload) in a way the simulation does not reproduce, but
/// the reads, writes and trims the device sees are the job's own. One note per key.
pub(crate) const NOTED_KEYS: &[(&str, &str)] = &[
    (
        "skip_bad",
        "skip_bad: the mtd engine's bad-block skipping has nothing to skip: the simulated SSD's FTL hides its bad blocks",
    ),
    (
        "ratemin",
        "ratemin: minimum-rate checks are not applied (fio ends a job whose measured rate falls below them)",
    ),
    (
        "rate_iops_min",
        "rate_iops_min: minimum-rate checks are not applied (fio ends a job whose measured rate falls below them)",
    ),
    (
        "ratecycle",
        "ratecycle: minimum-rate checks are not applied (fio ends a job whose measured rate falls below them)",
    ),
    (
        "steadystate",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "ss",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "steadystate_duration",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "ss_dur",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "steadystate_ramp_time",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "ss_ramp",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "steadystate_check_interval",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "ss_interval",
        "steadystate: steady state is not detected; the job runs to its runtime or size (fio may stop it earlier)",
    ),
    (
        "latency_target",
        "latency_target: the queue depth stays at iodepth (fio lowers it to meet the target from measured latency)",
    ),
    (
        "latency_window",
        "latency_target: the queue depth stays at iodepth (fio lowers it to meet the target from measured latency)",
    ),
    (
        "latency_percentile",
        "latency_target: the queue depth stays at iodepth (fio lowers it to meet the target from measured latency)",
    ),
    (
        "latency_run",
        "latency_target: the queue depth stays at iodepth (fio lowers it to meet the target from measured latency)",
    ),
    (
        "sync",
        "sync/fsync/fdatasync/FUA: the simulated host interface has no flush or FUA command; writes complete when the simulated SSD acknowledges them and the flushes fio would add are not issued",
    ),
    (
        "fsync",
        "sync/fsync/fdatasync/FUA: the simulated host interface has no flush or FUA command; writes complete when the simulated SSD acknowledges them and the flushes fio would add are not issued",
    ),
    (
        "fdatasync",
        "sync/fsync/fdatasync/FUA: the simulated host interface has no flush or FUA command; writes complete when the simulated SSD acknowledges them and the flushes fio would add are not issued",
    ),
    (
        "end_fsync",
        "sync/fsync/fdatasync/FUA: the simulated host interface has no flush or FUA command; writes complete when the simulated SSD acknowledges them and the flushes fio would add are not issued",
    ),
    (
        "fsync_on_close",
        "sync/fsync/fdatasync/FUA: the simulated host interface has no flush or FUA command; writes complete when the simulated SSD acknowledges them and the flushes fio would add are not issued",
    ),
    (
        "writefua",
        "sync/fsync/fdatasync/FUA: the simulated host interface has no flush or FUA command; writes complete when the simulated SSD acknowledges them and the flushes fio would add are not issued",
    ),
    (
        "readfua",
        "sync/fsync/fdatasync/FUA: the simulated host interface has no flush or FUA command; writes complete when the simulated SSD acknowledges them and the flushes fio would add are not issued",
    ),
    (
        "num_range",
        "num_range: each range of a multi-range trim is issued as its own trim request (same ranges and bytes; fio sends num_range of them per command)",
    ),
    (
        "pi_act",
        "protection information (pi_act, pi_chk, apptag, md_per_io_size): the data transfers are simulated; the per-block metadata and its checks are not",
    ),
    (
        "pi_chk",
        "protection information (pi_act, pi_chk, apptag, md_per_io_size): the data transfers are simulated; the per-block metadata and its checks are not",
    ),
    (
        "apptag",
        "protection information (pi_act, pi_chk, apptag, md_per_io_size): the data transfers are simulated; the per-block metadata and its checks are not",
    ),
    (
        "apptag_mask",
        "protection information (pi_act, pi_chk, apptag, md_per_io_size): the data transfers are simulated; the per-block metadata and its checks are not",
    ),
    (
        "md_per_io_size",
        "protection information (pi_act, pi_chk, apptag, md_per_io_size): the data transfers are simulated; the per-block metadata and its checks are not",
    ),
    (
        "atomic",
        "atomic: writes are issued as ordinary writes (an untorn-write guarantee matters only at a power cut, which nandlab fio does not simulate)",
    ),
    (
        "sg_write_mode",
        "sg_write_mode: WRITE AND VERIFY and WRITE SAME are issued as writes of the same range (the device's internal compare and WRITE SAME's one-block payload are not modelled)",
    ),
    (
        "flow_sleep",
        "flow: jobs of a flow interleave in the ratio of their flow weights; flow_sleep (how long fio's host waits) has no effect",
    ),
];

/// Refused keys that are accepted with a zero value (their default: nothing to honour).
pub(crate) const ACCEPTED_WHEN_ZERO: &[&str] = &[
    "sync",
    "fsync",
    "fdatasync",
    "end_fsync",
    "writefua",
    "readfua",
    "atomic",
    "thinktime",
    "flow",
    "steadystate",
];

/// The reason `key` is refused, if it has a specific one.
pub(crate) fn refusal_reason(key: &str) -> Option<&'static str> {
    REFUSED_WITH_REASON
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, reason)| *reason)
}

/// The note of a key accepted with one.
pub(crate) fn note_of(key: &str) -> Option<&'static str> {
    NOTED_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, note)| *note)
}

/// The reason an engine is refused, or `None` for a storage engine.
pub(crate) fn engine_refusal(engine: &str) -> Option<String> {
    if STORAGE_ENGINES.contains(&engine) {
        return None;
    }
    Some(
        match NON_STORAGE_ENGINES.iter().find(|(name, _)| *name == engine) {
            Some((_, what)) => format!("ioengine={engine} {what}: nothing to simulate on an SSD"),
            // a few names, not all: the whole list made a 400-character error line
            None => format!(
                "unknown ioengine \"{engine}\": storage engines ({}, … {} in all; docs/workloads.md) are accepted",
                STORAGE_ENGINES[..6].join(", "),
                STORAGE_ENGINES.len()
            ),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_one_treatment() {
        for key in HARMLESS_KEYS {
            assert!(
                !REFUSED_WITH_REASON.iter().any(|(k, _)| k == key),
                "{key} both harmless and refused"
            );
            assert!(!super::super::parse::IGNORED_KEYS.contains(key), "{key}");
        }
        for (key, _) in NOTED_KEYS {
            assert!(
                !HARMLESS_KEYS.contains(key),
                "{key} both harmless and noted"
            );
            assert!(
                !REFUSED_WITH_REASON.iter().any(|(k, _)| k == key),
                "{key} both noted and refused"
            );
            assert!(!super::super::parse::IGNORED_KEYS.contains(key), "{key}");
        }
        for (engine, _) in NON_STORAGE_ENGINES {
            assert!(!STORAGE_ENGINES.contains(engine), "{engine}");
        }
    }

    #[test]
    fn engines_are_accepted_or_refused_with_the_reason() {
        assert_eq!(engine_refusal("libaio"), None);
        assert_eq!(engine_refusal("io_uring"), None);
        let e = engine_refusal("cpuio").unwrap();
        assert!(e.starts_with("ioengine=cpuio burns CPU"), "{e}");
        let e = engine_refusal("bogus").unwrap();
        assert!(e.starts_with("unknown ioengine \"bogus\""), "{e}");
        assert!(e.len() < 160, "{e}");
    }
}
