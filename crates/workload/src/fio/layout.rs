//! Where each job's file lies on the simulated device.
//!
//! Jobs without `filename`, and jobs whose `filename` is a device (`/dev/...`), address the
//! device itself from byte 0. Every other file name is a file: distinct files get separate,
//! consecutive ranges of the device in the order they first appear, each as long as the
//! largest `filesize` (else `offset + size`, plus `offset_increment` for the clones) of the
//! jobs naming it; jobs naming the same file share its range. Files that need more room than
//! the device are laid out all the same and their requests fold into it.

use super::job::FioJob;

/// The range of the device (or beyond it, before folding) that one job's file occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FilePlace {
    /// First byte of the file on the device.
    pub(crate) start_bytes: u64,
    /// The file's length: what `N%` sizes and offsets of its jobs refer to.
    pub(crate) size_bytes: u64,
}

/// Whether `filename` names the device under test rather than a file.
pub(crate) fn is_device(filename: Option<&str>) -> bool {
    filename.is_none_or(|name| name.starts_with("/dev/"))
}

/// The place of every job's file, in job order.
pub(crate) fn place_files(jobs: &[FioJob], device_size_bytes: u64) -> Vec<FilePlace> {
    let device = FilePlace {
        start_bytes: 0,
        size_bytes: device_size_bytes,
    };
    // distinct files in order of first use, with their lengths
    let mut files: Vec<(&str, u64)> = Vec::new();
    for job in jobs {
        let Some(name) = job.filename.as_deref().filter(|n| !is_device(Some(n))) else {
            continue;
        };
        let extent = job_extent_bytes(job, device_size_bytes);
        match files.iter_mut().find(|(n, _)| *n == name) {
            Some((_, length)) => *length = (*length).max(extent),
            None => files.push((name, extent)),
        }
    }
    let mut starts = Vec::with_capacity(files.len());
    let mut next = 0u64;
    for (_, length) in &files {
        starts.push(next);
        next = next.saturating_add(*length);
    }
    jobs.iter()
        .map(|job| {
            let Some(name) = job.filename.as_deref().filter(|n| !is_device(Some(n))) else {
                return device;
            };
            let index = files
                .iter()
                .position(|(n, _)| *n == name)
                .expect("every file was listed");
            FilePlace {
                start_bytes: starts[index],
                size_bytes: files[index].1,
            }
        })
        .collect()
}

/// The bytes of its file that a job needs: `filesize`, else `offset + size` (plus the clones'
/// `offset_increment`), else the device's size. Percentages refer to the device.
fn job_extent_bytes(job: &FioJob, device_size_bytes: u64) -> u64 {
    if let Some(filesize) = job.filesize {
        return filesize.resolve(device_size_bytes).max(1);
    }
    let Some(size) = job.size else {
        return device_size_bytes;
    };
    let increment = job
        .offset_increment
        .map_or(0, |i| i.resolve(device_size_bytes));
    job.offset
        .resolve(device_size_bytes)
        .saturating_add(size.resolve(device_size_bytes))
        .saturating_add(increment.saturating_mul(u64::from(job.numjobs.saturating_sub(1))))
        .max(1)
}
