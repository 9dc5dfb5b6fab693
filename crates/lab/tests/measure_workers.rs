//! An experiment's points measured elsewhere: a dry run plans the points not cached, each is
//! measured from its measure's name and JSON text alone (as a worker process, a Python
//! executor or a Dask worker does), the outputs go into the cache, and the experiment then
//! runs from the cache to the same bytes as a run that measured everything itself.

use nandlab_lab::control::Control;
use nandlab_lab::experiments::measure::{measure_json, write_output};
use nandlab_lab::experiments::{self, RunOptions, Scale, workers};

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nandlab-measure-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

fn files(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn points_measured_by_name_give_the_same_outputs() {
    for id in [
        "sim-table1",
        "sim-batch",
        "ftl-gc-policies",
        "pcm-dedup",
        "miyaji-table1",
        "miyaji-gc-latency",
        "miyaji-validmap",
        "ctrl-suspend",
        "pcm-hashjoin",
        "pcm-join-users",
    ] {
        let here = temp(&format!("{id}-here"));
        let there = temp(&format!("{id}-there"));
        let options = RunOptions {
            scale: Scale::Quick,
            ..RunOptions::default()
        };
        experiments::reproduce(id, &options, &here).unwrap();
        let cached = RunOptions {
            cache_dir: Some(there.join("cache")),
            ..options.clone()
        };
        // a sweep that follows another shows up once the first is cached: plan again until
        // nothing is left (each round measures something)
        let mut rounds = 0;
        loop {
            let tasks = workers::plan(id, &cached).unwrap();
            if tasks.is_empty() {
                break;
            }
            rounds += 1;
            assert!(rounds <= 5, "{id}: planning does not converge");
            for task in &tasks {
                let output = measure_json(&task.measure, &task.point, &Control::new())
                    .unwrap()
                    .expect("not cancelled");
                write_output(&there.join("cache"), task, &output).unwrap();
            }
        }
        assert!(rounds > 0, "{id}: nothing planned");
        // every point comes from the cache: a cancelled run still finishes
        let from_cache = RunOptions {
            control: Control::new(),
            ..cached
        };
        from_cache.control.cancel();
        let result = experiments::reproduce(id, &from_cache, &there).unwrap();
        assert!(!result.interrupted, "{id}");
        assert_eq!(files(&here), files(&there), "{id}");
        std::fs::remove_dir_all(&here).ok();
        std::fs::remove_dir_all(&there).ok();
    }
}
