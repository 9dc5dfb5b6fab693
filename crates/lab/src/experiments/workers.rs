//! An experiment on worker processes (`nandlab reproduce ID --jobs N`): a dry run plans the
//! points not cached ([`super::measure::Plan`]), `N` worker processes (the `nandlab` binary's
//! hidden `sweep-worker` command, one JSON [`Task`] per line in, one [`TaskResult`] per line
//! out) measure them into the cache, again until the plan is empty; the experiment then runs
//! from the cache. Every point's output is the same bytes whichever process measured it, so
//! the experiment's outputs are those of a run in one process.

use super::RunOptions;
use super::measure::{Plan, Task, measure_json, write_output};
use crate::control::Control;
use crate::error::{LabError, LabResult};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// A worker's answer to a [`Task`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskResult {
    pub key: String,
    /// The measure's output as JSON text; `None` if cancelled (or failed).
    #[serde(default)]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Measures one task in this process.
pub fn run_task(task: &Task, control: &Control) -> TaskResult {
    match measure_json(&task.measure, &task.point, control) {
        Ok(output) => TaskResult {
            key: task.key.clone(),
            output,
            error: None,
        },
        Err(e) => TaskResult {
            key: task.key.clone(),
            output: None,
            error: Some(e.to_string()),
        },
    }
}

/// The points of experiment `id` at `options` (scale, seed, cache) that are not cached yet:
/// a dry run with a cancelled control (loops outside the point runner stop at once).
pub fn plan(id: &str, options: &RunOptions) -> LabResult<Vec<Task>> {
    let experiment = super::find(id)?;
    let plan = Arc::new(Plan::default());
    let dry = RunOptions {
        control: Control::new(),
        plan: Some(Arc::clone(&plan)),
        ..options.clone()
    };
    dry.control.cancel();
    match (experiment.run)(&dry) {
        Ok(_) | Err(LabError::Interrupted) => Ok(plan.tasks()),
        Err(e) => Err(e),
    }
}

/// Measures the points of experiment `id` not yet in `options.cache_dir` on `jobs` worker
/// processes of `worker_exe`, planning again until none is left or `options.control` is
/// cancelled. Progress counts the points measured. The caller then runs the experiment, which
/// reads them from the cache.
pub fn measure_in_workers(
    id: &str,
    options: &RunOptions,
    jobs: usize,
    worker_exe: &Path,
) -> LabResult<()> {
    let cache_dir = options
        .cache_dir
        .as_deref()
        .ok_or_else(|| LabError::Usage("--jobs needs a result cache".into()))?;
    let mut done = 0;
    // a point measured once and planned again did not read back from the cache (an output
    // with a NaN): the final run measures it itself
    let mut measured = std::collections::BTreeSet::new();
    loop {
        let mut tasks = plan(id, options)?;
        tasks.retain(|t| !measured.contains(&t.key));
        if tasks.is_empty() || options.control.is_cancelled() {
            return Ok(());
        }
        options.control.start(Some((done + tasks.len()) as u64));
        options.control.advance(done as u64);
        let results = run_in_workers(&tasks, jobs, worker_exe, &options.control)?;
        for r in &results {
            if let Some(e) = &r.error {
                return Err(LabError::Failed(format!("{id}: {e}")));
            }
        }
        let finished = results.iter().filter(|r| r.output.is_some()).count();
        for (task, r) in tasks.iter().zip(&results) {
            if let Some(output) = &r.output {
                write_output(cache_dir, task, output)?;
                measured.insert(task.key.clone());
            }
        }
        done += finished;
        if finished == 0 {
            return Ok(()); // cancelled (or nothing a worker could finish): the run decides
        }
    }
}

/// Hands `tasks` to `jobs` worker processes, one at a time each, until they are done or
/// `control` is cancelled; the answers in task order (cancelled or never handed out: no
/// output).
fn run_in_workers(
    tasks: &[Task],
    jobs: usize,
    worker_exe: &Path,
    control: &Control,
) -> LabResult<Vec<TaskResult>> {
    let next = Mutex::new(0..tasks.len());
    let results: Vec<Mutex<Option<TaskResult>>> = tasks.iter().map(|_| Mutex::new(None)).collect();
    let errors = Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, tasks.len().max(1)) {
            scope.spawn(|| {
                if let Err(e) = worker_thread(tasks, &next, &results, worker_exe, control) {
                    errors.lock().expect("no panics").push(e.to_string());
                }
            });
        }
    });
    if let Some(e) = errors.into_inner().expect("no panics").into_iter().next() {
        return Err(LabError::Failed(format!("measure worker: {e}")));
    }
    Ok(tasks
        .iter()
        .zip(results)
        .map(|(task, r)| {
            r.into_inner().expect("no panics").unwrap_or(TaskResult {
                key: task.key.clone(),
                output: None,
                error: None,
            })
        })
        .collect())
}

fn worker_thread(
    tasks: &[Task],
    next: &Mutex<std::ops::Range<usize>>,
    results: &[Mutex<Option<TaskResult>>],
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
    while !control.is_cancelled() {
        let Some(i) = next.lock().expect("no panics").next() else {
            break;
        };
        let line = serde_json::to_string(&tasks[i]).expect("tasks serialize");
        writeln!(stdin, "{line}")?;
        stdin.flush()?;
        let mut answer = String::new();
        if stdout.read_line(&mut answer)? == 0 {
            drop(stdin);
            let status = child.wait()?;
            if control.is_cancelled() || crate::sweep_run::interrupted_by_ctrl_c(&status) {
                return Ok(()); // Ctrl-C reached the worker first
            }
            return Err(std::io::Error::other(format!(
                "measure {}: the worker process {} before answering",
                tasks[i].measure,
                crate::sweep_run::ended_how(&status)
            )));
        }
        let result: TaskResult = serde_json::from_str(&answer)
            .map_err(|e| std::io::Error::other(format!("bad worker answer: {e}")))?;
        if result.output.is_some() {
            control.advance(1);
        }
        *results[i].lock().expect("no panics") = Some(result);
    }
    drop(stdin);
    child.wait()?;
    Ok(())
}
