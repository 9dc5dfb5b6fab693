//! Running a [`Sweep`]: cached points are read back, the others go to `jobs` worker processes
//! (the `nandlab` binary's hidden `sweep-worker` command: one JSON job per line in, one JSON
//! result per line out), results are written in point order as `sweep.csv` and
//! `sweep.jsonl`. A cancelled sweep stops giving out points, keeps the finished ones (cached,
//! so a rerun resumes) and drops the points cut short.

use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::output::write_file;
use crate::stack::Stack;
use crate::sweep::{PointResult, Sweep, cache_key, csv, settings_json};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One job for a worker: a base config and the settings of one point.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    pub point: usize,
    pub origin: String,
    pub text: String,
    pub base_dir: PathBuf,
    /// `{"key.path": value}`.
    pub overrides: serde_json::Map<String, serde_json::Value>,
}

/// A worker's answer to a job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub point: usize,
    #[serde(default)]
    pub metrics: Vec<(String, f64)>,
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs one job in this process.
pub fn run_job(job: &Job, control: &Control) -> JobResult {
    let overrides = serde_json::Value::Object(job.overrides.clone()).to_string();
    let outcome = crate::sweep::parse_overrides(&overrides)
        .and_then(|o| Stack::from_toml(&job.origin, &job.text, &job.base_dir, &o))
        .and_then(|stack| stack.run(None, control));
    match outcome {
        Ok(run) => JobResult {
            point: job.point,
            interrupted: run.interrupted(),
            metrics: run
                .metrics
                .iter()
                .map(|(k, v)| ((*k).to_string(), *v))
                .collect(),
            error: None,
        },
        Err(e) => JobResult {
            point: job.point,
            metrics: Vec::new(),
            interrupted: false,
            error: Some(e.to_string()),
        },
    }
}

/// What a worker is given: a sweep point, or one point of an experiment's registered measure
/// (`nandlab reproduce --jobs`, [`crate::experiments::workers`]).
#[derive(Deserialize)]
#[serde(untagged)]
enum WorkerJob {
    Sweep(Job),
    Measure(crate::experiments::measure::Task),
}

/// The worker loop: one [`Job`] (or measure task) per input line, one [`JobResult`] (or
/// [`crate::experiments::workers::TaskResult`]) per output line, until the input ends or
/// `control` is cancelled.
pub fn serve_worker(
    input: impl BufRead,
    mut output: impl Write,
    control: &Control,
) -> LabResult<()> {
    for line in input.lines() {
        let line = line.map_err(|e| LabError::Usage(format!("sweep worker: {e}")))?;
        let job: WorkerJob = serde_json::from_str(&line)
            .map_err(|e| LabError::Usage(format!("sweep worker: bad job: {e}")))?;
        let text = match job {
            WorkerJob::Sweep(job) => serde_json::to_string(&run_job(&job, control)),
            WorkerJob::Measure(task) => {
                serde_json::to_string(&crate::experiments::workers::run_task(&task, control))
            }
        }
        .expect("results serialize");
        if writeln!(output, "{text}")
            .and_then(|()| output.flush())
            .is_err()
        {
            return Ok(()); // the parent went away
        }
        if control.is_cancelled() {
            return Ok(());
        }
    }
    Ok(())
}

/// What a sweep run gives.
#[derive(Clone, Debug)]
pub struct SweepOutcome {
    /// Finished points in point order.
    pub rows: Vec<PointResult>,
    /// Points read from the cache instead of run.
    pub cached: usize,
    /// Whether a cancel stopped the sweep before every point finished.
    pub interrupted: bool,
    pub csv: String,
}

/// Runs `sweep` with `jobs` worker processes of `worker_exe` (the `nandlab` binary), caching
/// finished points under `out/cache/`, and writes `out/sweep.csv` and `out/sweep.jsonl`.
pub fn run_sweep(
    sweep: &Sweep,
    jobs: usize,
    worker_exe: &Path,
    out: &Path,
    control: &Control,
) -> LabResult<SweepOutcome> {
    let cache_dir = out.join("cache");
    std::fs::create_dir_all(&cache_dir).map_err(|source| LabError::Write {
        path: cache_dir.display().to_string(),
        source,
    })?;
    let mut rows: Vec<Option<PointResult>> = vec![None; sweep.points.len()];
    let mut todo = Vec::new();
    let mut keys = Vec::new();
    for (i, point) in sweep.points.iter().enumerate() {
        let key = cache_key(&sweep.stack(i)?);
        let cached = std::fs::read_to_string(cache_dir.join(format!("{key}.json")))
            .ok()
            .and_then(|text| serde_json::from_str::<Vec<(String, f64)>>(&text).ok());
        match cached {
            Some(metrics) => {
                rows[i] = Some(PointResult {
                    point: i,
                    settings: settings_json(point),
                    metrics,
                });
            }
            None => todo.push(i),
        }
        keys.push(key);
    }
    let cached = sweep.points.len() - todo.len();
    control.start(Some(sweep.points.len() as u64));
    control.advance(cached as u64);
    let results = run_in_workers(sweep, &todo, jobs, worker_exe, control)?;
    let mut failure = None;
    for r in results {
        if let Some(e) = r.error {
            failure.get_or_insert(format!("sweep point {}: {e}", r.point));
            continue;
        }
        if r.interrupted {
            continue;
        }
        let text = serde_json::to_string(&r.metrics).expect("metrics serialize");
        write_file(&cache_dir.join(format!("{}.json", keys[r.point])), &text)?;
        rows[r.point] = Some(PointResult {
            point: r.point,
            settings: settings_json(&sweep.points[r.point]),
            metrics: r.metrics,
        });
    }
    control.finish();
    let rows: Vec<PointResult> = rows.into_iter().flatten().collect();
    let interrupted = rows.len() < sweep.points.len();
    let csv = csv(&sweep.keys, &rows);
    write_file(&out.join("sweep.csv"), &csv)?;
    let mut jsonl = String::new();
    for row in &rows {
        jsonl += &serde_json::to_string(row).expect("rows serialize");
        jsonl.push('\n');
    }
    write_file(&out.join("sweep.jsonl"), &jsonl)?;
    if let Some(message) = failure {
        return Err(LabError::Usage(message));
    }
    Ok(SweepOutcome {
        rows,
        cached,
        interrupted,
        csv,
    })
}

/// Hands `todo`'s points to `jobs` workers, one at a time each; stops handing out when
/// `control` is cancelled. Results in completion order.
fn run_in_workers(
    sweep: &Sweep,
    todo: &[usize],
    jobs: usize,
    worker_exe: &Path,
    control: &Control,
) -> LabResult<Vec<JobResult>> {
    let next = Mutex::new(todo.iter().copied());
    let results = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::<String>::new());
    let workers = jobs.clamp(1, todo.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                if let Err(e) = worker_thread(sweep, &next, &results, worker_exe, control) {
                    errors.lock().expect("no panics").push(e.to_string());
                }
            });
        }
    });
    if let Some(e) = errors.into_inner().expect("no panics").into_iter().next() {
        return Err(LabError::Failed(format!("sweep worker: {e}")));
    }
    Ok(results.into_inner().expect("no panics"))
}

fn worker_thread(
    sweep: &Sweep,
    next: &Mutex<impl Iterator<Item = usize>>,
    results: &Mutex<Vec<JobResult>>,
    worker_exe: &Path,
    control: &Control,
) -> std::io::Result<()> {
    let mut child = Command::new(worker_exe)
        .arg("sweep-worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    loop {
        if control.is_cancelled() {
            break;
        }
        let Some(point) = next.lock().expect("no panics").next() else {
            break;
        };
        let job = Job {
            point,
            origin: sweep.base_origin.clone(),
            text: sweep.base_text.clone(),
            base_dir: sweep.base_dir.clone(),
            overrides: sweep.points[point]
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        serde_json::to_value(v).expect("TOML values are JSON"),
                    )
                })
                .collect(),
        };
        writeln!(
            stdin,
            "{}",
            serde_json::to_string(&job).expect("jobs serialize")
        )?;
        stdin.flush()?;
        let mut line = String::new();
        if stdout.read_line(&mut line)? == 0 {
            // the worker ended before answering: Ctrl-C reached it first (the point is not
            // finished), or it died (the OOM killer): a failure naming the point
            drop(stdin);
            let status = child.wait()?;
            if control.is_cancelled() || interrupted_by_ctrl_c(&status) {
                return Ok(());
            }
            return Err(std::io::Error::other(format!(
                "point {point}: the worker process {} before answering",
                ended_how(&status)
            )));
        }
        let result: JobResult = serde_json::from_str(&line)
            .map_err(|e| std::io::Error::other(format!("bad worker answer: {e}")))?;
        results.lock().expect("no panics").push(result);
        control.advance(1);
    }
    drop(stdin);
    child.wait()?;
    Ok(())
}

/// Whether a worker's `status` is that of a Ctrl-C (SIGINT, or exit status 130 after a second
/// Ctrl-C).
pub(crate) fn interrupted_by_ctrl_c(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if status.signal() == Some(2) {
            return true;
        }
    }
    status.code() == Some(130)
}

/// How a worker ended, for an error message: "was killed by signal 9 (SIGKILL: the OOM
/// killer?)" or "exited with status N".
pub(crate) fn ended_how(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                9 => " (SIGKILL: the OOM killer?)",
                11 => " (SIGSEGV)",
                6 => " (SIGABRT)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("was killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "ended".into(),
    }
}
