//! The INI layer of fio job files: sections, `key=value` lines, comments, `[global]`
//! inheritance and the key tables. Values are typed in `job.rs`.

use super::keys;
use crate::WorkloadError;
use crate::lines::LineReader;
use std::io::BufRead;
use std::path::Path;

/// Keys that change the simulated I/O, by canonical name, with their accepted aliases.
pub(crate) const SUPPORTED_KEYS: &[(&str, &[&str])] = &[
    ("name", &[]),
    ("rw", &["readwrite"]),
    ("bs", &["blocksize"]),
    ("blockalign", &["ba"]),
    ("iodepth", &[]),
    ("size", &[]),
    ("io_size", &["io_limit"]),
    ("offset", &[]),
    ("loops", &[]),
    ("rwmixread", &[]),
    ("rwmixwrite", &[]),
    ("random_distribution", &[]),
    ("norandommap", &[]),
    ("number_ios", &[]),
    ("numjobs", &[]),
    ("randseed", &[]),
    ("stonewall", &["wait_for_previous"]),
    ("fdp", &[]),
    ("fdp_pli", &[]),
    ("ioengine", &[]),
    ("filename", &[]),
    ("filesize", &[]),
    ("time_based", &[]),
    ("runtime", &["timeout"]),
    ("ramp_time", &[]),
    ("offset_increment", &[]),
    ("bsrange", &["blocksize_range"]),
    ("verify", &[]),
    ("do_verify", &[]),
    ("fill_device", &["fill_fs"]),
    ("wait_for", &[]),
    ("exitall", &[]),
    ("rate", &[]),
    ("rate_iops", &[]),
    ("rate_process", &[]),
    ("startdelay", &[]),
    ("flow", &[]),
    ("bssplit", &[]),
    ("verify_backlog", &[]),
    ("write_mode", &[]),
    ("random_sequence_stride", &[]),
    ("nrfiles", &["nr_files"]),
];

/// Keys accepted and ignored: they affect the host (engine, caching, CPU placement) or the
/// report, not the sequence of block requests the simulated device sees.
pub const IGNORED_KEYS: &[&str] = &[
    "allow_mounted_write",
    "buffered",
    "clat_percentiles",
    "cpumask",
    "cpus_allowed",
    "description",
    "direct",
    "directory",
    "disable_bw_measurement",
    "disable_clat",
    "disable_lat",
    "disable_slat",
    "fadvise_hint",
    "group_reporting",
    "gtod_reduce",
    "invalidate",
    "iodepth_batch",
    "iodepth_batch_complete",
    "iodepth_batch_complete_max",
    "iodepth_batch_complete_min",
    "iodepth_batch_submit",
    "iodepth_low",
    "ioscheduler",
    "lat_percentiles",
    "log_avg_msec",
    "nice",
    "per_job_logs",
    "percentile_list",
    "prio",
    "random_generator",
    "randrepeat",
    "thread",
    "unified_rw_reporting",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
];

/// One `key[=value]` line, key canonicalized.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) key: &'static str,
    pub(crate) value: Option<String>,
    pub(crate) line: u64,
}

/// A job section with the `[global]` entries in force at its start, then its own, in order.
#[derive(Clone, Debug)]
pub(crate) struct RawJob {
    pub(crate) section_name: String,
    pub(crate) line: u64,
    pub(crate) entries: Vec<Entry>,
}

/// Most entries (global plus own) one job may have.
const MAX_ENTRIES_PER_JOB: usize = 1024;
/// Most job sections in one file.
pub(crate) const MAX_JOBS: usize = 4096;

fn canonical_key(key: &str) -> Option<&'static str> {
    SUPPORTED_KEYS
        .iter()
        .find(|(name, aliases)| *name == key || aliases.contains(&key))
        .map(|(name, _)| *name)
        .or_else(|| super::zoned::KEYS.iter().find(|k| **k == key).copied())
        .or_else(|| super::sprandom::KEYS.iter().find(|k| **k == key).copied())
}

/// Removes a `;` or `#` comment: the whole line when it starts with one, or the rest of the
/// line from one preceded by whitespace.
fn strip_comment(line: &str) -> &str {
    let trimmed = line.trim();
    if trimmed.starts_with(';') || trimmed.starts_with('#') {
        return "";
    }
    let bytes = trimmed.as_bytes();
    for i in 1..bytes.len() {
        if (bytes[i] == b';' || bytes[i] == b'#') && bytes[i - 1].is_ascii_whitespace() {
            return trimmed[..i].trim_end();
        }
    }
    trimmed
}

/// Most characters of a key quoted in an error (a garbage line is not echoed whole).
const MAX_KEY_SHOWN: usize = 48;

fn unsupported(path: &Path, line: u64, key: &str) -> WorkloadError {
    let key = match key.char_indices().nth(MAX_KEY_SHOWN) {
        Some((end, _)) => format!("{}...", &key[..end]),
        None => key.to_owned(),
    };
    let key = key.as_str();
    let hint = match keys::refusal_reason(key) {
        Some(reason) => format!("; {reason}"),
        None => "; see docs/workloads.md for the supported fio subset".to_owned(),
    };
    WorkloadError::UnsupportedKey {
        path: path.to_owned(),
        line,
        key: key.to_owned(),
        hint,
    }
}

/// Most bytes a value may grow to by `${VAR}` substitution.
const MAX_VALUE_BYTES: usize = 4096;

/// Substitutes `${VAR}` from the environment, as fio does; an unset variable is an error
/// naming it (fio would pass the text on literally, which no typed key accepts).
fn expand_environment(value: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unterminated ${{ in \"{value}\""));
        };
        let name = &after[..end];
        match std::env::var(name) {
            Ok(v) => out.push_str(&v),
            Err(_) => {
                return Err(format!(
                    "environment variable {name} is not set (fio substitutes ${{{name}}} from the environment)"
                ));
            }
        }
        if out.len() > MAX_VALUE_BYTES {
            return Err(format!(
                "value longer than {MAX_VALUE_BYTES} bytes after substitution"
            ));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

enum Section {
    None,
    Global,
    Job(usize),
    /// A job section left out by fio's `--section`: its lines are skipped unread.
    Skipped,
}

/// Ignored keys whose value is a boolean (`0`/`1`; a bare flag means 1).
const IGNORED_BOOLEANS: &[&str] = &[
    "allow_mounted_write",
    "buffered",
    "clat_percentiles",
    "direct",
    "disable_bw_measurement",
    "disable_clat",
    "disable_lat",
    "disable_slat",
    "group_reporting",
    "gtod_reduce",
    "invalidate",
    "lat_percentiles",
    "per_job_logs",
    "randrepeat",
    "thread",
    "unified_rw_reporting",
];

/// Ignored keys whose value is an integer, with fio's range.
const IGNORED_INTEGERS: &[(&str, i64, i64)] = &[
    ("iodepth_batch", 0, 65_536),
    ("iodepth_batch_complete", 0, 65_536),
    ("iodepth_batch_complete_max", 0, 65_536),
    ("iodepth_batch_complete_min", 0, 65_536),
    ("iodepth_batch_submit", 0, 65_536),
    ("iodepth_low", 0, 65_536),
    ("log_avg_msec", 0, i64::MAX),
    ("nice", -20, 19),
    ("prio", 0, 7),
];

/// An ignored key's value must still be one fio would accept (a typo such as `direct=yes` is
/// an error, not silently ignored); free-text keys (`filename`, `ioengine`, ...) take anything.
fn check_ignored_value(key: &str, value: Option<&str>) -> Result<(), String> {
    if IGNORED_BOOLEANS.contains(&key) {
        return match value {
            None | Some("0" | "1" | "true" | "false") => Ok(()),
            Some(other) => Err(format!("bad {key} \"{other}\": expected 0 or 1")),
        };
    }
    if let Some((_, min, max)) = IGNORED_INTEGERS.iter().find(|(k, _, _)| *k == key) {
        let Some(text) = value else {
            return Err(format!("{key} needs a value ({key}=...)"));
        };
        return match text.parse::<i64>() {
            Ok(v) if (*min..=*max).contains(&v) => Ok(()),
            _ => Err(format!(
                "bad {key} \"{text}\": expected an integer from {min} to {max}"
            )),
        };
    }
    Ok(())
}

/// What [`parse_sections`] found: the jobs, the last line, and the keys accepted with a note
/// (`keys::NOTED_KEYS`), each note once, with the line of its first key.
#[derive(Debug)]
pub(crate) struct Sections {
    pub(crate) jobs: Vec<RawJob>,
    pub(crate) last_line: u64,
    pub(crate) notes: Vec<(u64, &'static str)>,
}

/// Splits a job file into jobs, applying `[global]` inheritance, refusing unknown keys and
/// dropping ignored ones. With `selected` non-empty, only the job sections of those names are
/// read (fio's `--section`; `[global]` always is); a name no section has is an error.
pub(crate) fn parse_sections<R: BufRead>(
    reader: R,
    path: &Path,
    selected: &[String],
) -> Result<Sections, WorkloadError> {
    let mut found = vec![false; selected.len()];
    let mut notes: Vec<(u64, &'static str)> = Vec::new();
    let mut lines = LineReader::new(reader, path);
    let mut global: Vec<Entry> = Vec::new();
    let mut jobs: Vec<RawJob> = Vec::new();
    let mut section = Section::None;
    let mut last_line = 0;
    while let Some((line_number, raw)) = lines.next_line()? {
        last_line = line_number;
        let text = strip_comment(raw);
        if text.is_empty() {
            continue;
        }
        let parse_error = |message: String| WorkloadError::parse(path, line_number, message);
        if let Some(rest) = text.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .ok_or_else(|| {
                    parse_error(format!("bad section header \"{text}\": expected [name]"))
                })?
                .trim();
            if name.is_empty() {
                return Err(parse_error("empty section name".to_owned()));
            }
            if name == "global" {
                section = Section::Global;
            } else if !selected.is_empty() && !selected.iter().any(|s| s == name) {
                section = Section::Skipped;
            } else {
                if let Some(i) = selected.iter().position(|s| s == name) {
                    found[i] = true;
                }
                if jobs.len() == MAX_JOBS {
                    return Err(parse_error(format!("more than {MAX_JOBS} job sections")));
                }
                jobs.push(RawJob {
                    section_name: name.to_owned(),
                    line: line_number,
                    entries: global.clone(),
                });
                section = Section::Job(jobs.len() - 1);
            }
            continue;
        }
        if matches!(section, Section::Skipped) {
            continue;
        }
        let (key, value) = match text.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_owned())),
            None => (text, None),
        };
        // fio takes `threads` for `thread` (fio 3.33; fio's waitfor.fio and steadystate.fio)
        let key = if key == "threads" { "thread" } else { key };
        if IGNORED_KEYS.contains(&key) {
            check_ignored_value(key, value.as_deref()).map_err(parse_error)?;
            continue;
        }
        if keys::HARMLESS_KEYS.contains(&key) {
            continue;
        }
        let zero = value.as_deref().is_some_and(|v| v == "0");
        if zero && keys::ACCEPTED_WHEN_ZERO.contains(&key) {
            continue;
        }
        if let Some(note) = keys::note_of(key) {
            if !notes.iter().any(|(_, n)| *n == note) {
                notes.push((line_number, note));
            }
            continue;
        }
        let key = match canonical_key(key) {
            Some(key) => key,
            None => {
                let key = key.split_whitespace().next().unwrap_or(key);
                return Err(unsupported(path, line_number, key));
            }
        };
        let value = match value {
            Some(v) => {
                Some(expand_environment(&v).map_err(|m| parse_error(format!("{key}: {m}")))?)
            }
            None => None,
        };
        let entry = Entry {
            key,
            value,
            line: line_number,
        };
        let entries = match section {
            Section::None => {
                return Err(parse_error(format!(
                    "option \"{key}\" outside a section: start with [global] or [jobname]"
                )));
            }
            Section::Global => &mut global,
            Section::Job(index) => &mut jobs[index].entries,
            Section::Skipped => unreachable!("skipped above"),
        };
        if entries.len() == MAX_ENTRIES_PER_JOB {
            return Err(parse_error(format!(
                "more than {MAX_ENTRIES_PER_JOB} options for one job"
            )));
        }
        entries.push(entry);
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(WorkloadError::parse(
            path,
            last_line,
            format!(
                "--section {}: the file has no job section of that name",
                selected[i]
            ),
        ));
    }
    Ok(Sections {
        jobs,
        last_line,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_stripped() {
        assert_eq!(strip_comment("; whole line"), "");
        assert_eq!(strip_comment("  # whole line"), "");
        assert_eq!(strip_comment("bs=4k ; block size"), "bs=4k");
        assert_eq!(strip_comment("bs=4k\t# block size"), "bs=4k");
        assert_eq!(strip_comment("name=a#b"), "name=a#b");
    }

    /// Regression (issue 11): values of accepted-and-ignored keys were never checked, so a
    /// typo (`direct=yes`, `prio=99`) passed silently. Typed ones are now checked, naming the
    /// key; every checked key is one of the ignored keys.
    #[test]
    fn ignored_keys_with_typed_values_are_checked() {
        for key in IGNORED_BOOLEANS {
            assert!(IGNORED_KEYS.contains(key), "{key}");
        }
        for (key, _, _) in IGNORED_INTEGERS {
            assert!(IGNORED_KEYS.contains(key), "{key}");
        }
        assert!(check_ignored_value("direct", Some("1")).is_ok());
        assert!(check_ignored_value("direct", None).is_ok());
        assert!(check_ignored_value("filename", Some("/dev/nvme0n1")).is_ok());
        let e = check_ignored_value("direct", Some("yes")).unwrap_err();
        assert_eq!(e, "bad direct \"yes\": expected 0 or 1");
        let e = check_ignored_value("prio", Some("99")).unwrap_err();
        assert!(e.starts_with("bad prio \"99\""), "{e}");
        assert!(check_ignored_value("nice", Some("-5")).is_ok());
        let text = "[global]\ndirect=maybe\n[a]\nrw=read\n";
        let e = parse_sections(std::io::Cursor::new(text), Path::new("j.fio"), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(e, "j.fio:2: bad direct \"maybe\": expected 0 or 1");
    }

    #[test]
    fn aliases_map_to_canonical_keys() {
        assert_eq!(canonical_key("readwrite"), Some("rw"));
        assert_eq!(canonical_key("blocksize"), Some("bs"));
        assert_eq!(canonical_key("bs"), Some("bs"));
        assert_eq!(canonical_key("thinktime"), None);
        for key in IGNORED_KEYS {
            assert_eq!(canonical_key(key), None, "{key} both supported and ignored");
        }
    }
}
