//! `[pcm]`: a PCM front end for the SSD (thesis 001 chapter 3; SPEC P1–P4). One device (a
//! preset, optionally resized), the redundant write finder (`[pcm.dedup]`) and/or a log buffer
//! (`[pcm.log]`, kind `region` | `dpram` | `ipl`), turned into an `nandlab_ftl::PcmStage` after
//! the DRAM write buffer.
//!
//! ```toml
//! [pcm]
//! preset = "cidr11"            # thesis-table2.2 | thesis-table2.1 | cidr11 | samsung-isscc2012
//! capacity_bytes = 16777216    # optional: resize the preset's device
//! [pcm.dedup]                  # optional; enabled = false turns it off
//! store_size_bytes = 4194304
//! segments = 16
//! [pcm.log]                    # optional
//! kind = "region"              # the thesis's log region; "dpram"; "ipl"
//! region_size_bytes = 8388608
//! ```

use nandlab_ftl::{LogBufferConfig, PcmStageConfig};
use nandlab_pcm::DedupConfig;
use nandlab_pcm::dedup::BucketSearch;
use serde::{Deserialize, Serialize};

/// `[pcm]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmSection {
    /// The device preset.
    #[serde(default = "default_preset")]
    pub preset: String,
    /// Overrides the preset's capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_bytes: Option<u64>,
    /// Overrides the preset's Flip-N-Write switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flip_n_write: Option<bool>,
    /// The redundant write finder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup: Option<PcmDedupSection>,
    /// The log buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogBufferConfig>,
}

fn default_preset() -> String {
    "cidr11".into()
}

/// `[pcm.dedup]`: the keys of `nandlab_pcm::DedupConfig` plus `enabled`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmDedupSection {
    #[serde(default = "yes")]
    pub enabled: bool,
    pub store_size_bytes: u64,
    #[serde(default = "default_segments")]
    pub segments: u32,
    #[serde(default = "default_bucket")]
    pub bucket_size_bytes: u64,
    #[serde(default)]
    pub search: BucketSearch,
    #[serde(default)]
    pub hash_latency_ns: f64,
    #[serde(default)]
    pub hash_energy_nj: f64,
}

fn yes() -> bool {
    true
}
fn default_segments() -> u32 {
    16
}
fn default_bucket() -> u64 {
    4096
}

impl PcmSection {
    /// `[pcm]` with `preset` and nothing else.
    pub fn of_preset(preset: &str) -> PcmSection {
        PcmSection {
            preset: preset.into(),
            capacity_bytes: None,
            flip_n_write: None,
            dedup: None,
            log: None,
        }
    }

    /// The PCM device: the preset with the capacity and Flip-N-Write set here;
    /// `Err((key, message))` for an unknown preset.
    pub fn device(&self) -> Result<nandlab_pcm::PcmConfig, (String, String)> {
        let mut device =
            nandlab_pcm::preset(&self.preset).map_err(|e| ("pcm.preset".into(), e.to_string()))?;
        if let Some(c) = self.capacity_bytes {
            device.geometry.capacity_bytes = c;
        }
        if let Some(f) = self.flip_n_write {
            device.write.flip_n_write = f;
        }
        Ok(device)
    }

    /// The stage config; `Err((key, message))` for an unknown preset.
    pub fn to_stage(&self) -> Result<PcmStageConfig, (String, String)> {
        let device = self.device()?;
        let dedup = self
            .dedup
            .as_ref()
            .filter(|d| d.enabled)
            .map(|d| DedupConfig {
                segments: d.segments,
                store_size_bytes: d.store_size_bytes,
                bucket_size_bytes: d.bucket_size_bytes,
                search: d.search,
                hash_latency_ns: d.hash_latency_ns,
                hash_energy_nj: d.hash_energy_nj,
            });
        Ok(PcmStageConfig {
            device,
            dedup,
            log: self.log.clone(),
        })
    }
}

impl super::Stack {
    /// The PCM stage config of `[pcm]`, if any.
    pub fn pcm_stage(&self) -> crate::error::LabResult<Option<nandlab_ftl::PcmStageConfig>> {
        let Some(pcm) = &self.config.pcm else {
            return Ok(None);
        };
        pcm.to_stage()
            .map(Some)
            .map_err(|(key, message)| crate::error::LabError::Usage(format!("{key}: {message}")))
    }

    /// Builds the SSD of this stack (`config`: the stack's SSD config, possibly adjusted), with
    /// the `[pcm]` stage when configured.
    pub fn new_ssd(
        &self,
        config: nandlab_ftl::SsdConfig,
        seed: u64,
    ) -> crate::error::LabResult<nandlab_ftl::Ssd> {
        new_ssd_with_pcm(config, self.pcm_stage()?, seed)
    }

    pub(super) fn check_pcm(&self, source: super::Source<'_>) -> crate::error::LabResult<()> {
        checked_stage(self.config.pcm.as_ref(), &self.nand, &self.ftl, source).map(|_| ())
    }

    /// `[content]` needs a block workload and full payloads; `[pcm]` needs page content (a
    /// block workload without `[content]` would write zeros only, which dedup would all share).
    pub(super) fn check_content(&self, source: super::Source<'_>) -> crate::error::LabResult<()> {
        let engine = self.config.workload.needs_engine();
        if let Some(content) = &self.config.content {
            if engine {
                return Err(source.error(
                    "content",
                    "gives bytes to block workloads; the engine writes its own pages",
                ));
            }
            if self.ftl.payload != nandlab_ftl::PayloadMode::Full {
                return Err(source.error(
                    "ssd.payload",
                    "[content] writes page bytes: it needs `payload = \"full\"`",
                ));
            }
            content.validate().map_err(|e| match e {
                nandlab_workload::WorkloadError::Invalid { key, message } => {
                    source.error(&format!("content.{key}"), message)
                }
                other => other.into(),
            })?;
        }
        // the engine writes its own row pages, bytes and all (`SsdDevice::write_page`)
        if self.config.pcm.is_some() && self.config.content.is_none() && !engine {
            return Err(source.error(
                "pcm",
                "a block workload has no page bytes of its own (every write would be zeros, \
                 which dedup shares): add a [content] section (duplicate_fraction, \
                 common_contents)",
            ));
        }
        Ok(())
    }
}

/// The stage config of `pcm` checked against the SSD it fronts (errors name the key).
pub(super) fn checked_stage(
    pcm: Option<&PcmSection>,
    nand: &nandlab_nand::NandConfig,
    ftl: &nandlab_ftl::FtlConfig,
    source: super::Source<'_>,
) -> crate::error::LabResult<Option<PcmStageConfig>> {
    let Some(pcm) = pcm else {
        return Ok(None);
    };
    let stage = pcm.to_stage().map_err(|(k, m)| source.error(&k, m))?;
    if ftl.payload != nandlab_ftl::PayloadMode::Full {
        return Err(source.error(
            "ssd.payload",
            "[pcm] fingerprints and diffs page bytes: it needs `payload = \"full\"`",
        ));
    }
    if stage.dedup.is_some() && ftl.mapping.kind != nandlab_ftl::MappingKind::Page {
        return Err(source.error(
            "ssd.mapping.kind",
            "[pcm.dedup] shares physical pages: it needs the page mapping",
        ));
    }
    let g = &nand.geometry;
    let shape = nandlab_pcm::FlashShape {
        page_size_bytes: g.page_size_bytes,
        pages_per_block: g.pages_per_block,
        pages: nandlab_ftl::logical_pages(g, ftl.op_fraction) as u32,
    };
    stage.validate(&shape).map_err(|e| match e {
        nandlab_ftl::FtlError::Config { key, message } => source.error(&key, message),
        other => other.into(),
    })?;
    Ok(Some(stage))
}

/// An SSD of `config`, with a PCM stage of `pcm` in front when given (the stage sized to the
/// SSD's logical pages, page size and pages per block).
pub fn new_ssd_with_pcm(
    config: nandlab_ftl::SsdConfig,
    pcm: Option<nandlab_ftl::PcmStageConfig>,
    seed: u64,
) -> crate::error::LabResult<nandlab_ftl::Ssd> {
    let Some(stage) = pcm else {
        return Ok(nandlab_ftl::Ssd::new(config, seed)?);
    };
    // the geometry of `config` (a trace may have grown the device)
    let nand = config.nand_config()?;
    let g = &nand.geometry;
    let logical = match config.ftl.mapping.kind {
        nandlab_ftl::MappingKind::Page => {
            nandlab_ftl::logical_pages(g, config.ftl.op_fraction) as u32
        }
        // the block and hybrid mappings keep their own logical capacity
        _ => nandlab_ftl::Ssd::new(config.clone(), seed)?.logical_pages() as u32,
    };
    let stage =
        nandlab_ftl::PcmStage::new(stage, logical, g.page_size_bytes, g.pages_per_block, seed)?;
    Ok(nandlab_ftl::Ssd::with_front_ends(
        config,
        seed,
        vec![Box::new(stage)],
    )?)
}

#[cfg(test)]
mod tests {
    use crate::control::Control;
    use crate::stack::Stack;
    use std::path::Path;

    const BASE: &str = r#"
[run]
seed = 3
[nand]
preset = "slc"
[nand.geometry]
blocks_per_plane = 32
pages_per_block = 64
page_size_bytes = 4096
[ssd]
op_fraction = 0.25
payload = "full"
[workload]
kind = "synthetic"
pattern = "random"
read_fraction = 0.0
request_size_bytes = 4096
span_bytes = 0
request_count = 300
"#;

    fn with(pcm: &str) -> Result<Stack, String> {
        let text = format!("{BASE}\n{pcm}");
        Stack::from_toml("t.toml", &text, Path::new("."), &[]).map_err(|e| e.to_string())
    }

    #[test]
    fn a_pcm_section_builds_the_stage_and_runs() {
        let s = with(
            "[pcm]\npreset = \"cidr11\"\ncapacity_bytes = 1048576\n[pcm.dedup]\nstore_size_bytes = 65536\n\
             [pcm.log]\nkind = \"region\"\nregion_size_bytes = 524288\n[content]\n",
        )
        .unwrap();
        let run = s.run(None, &Control::default()).unwrap();
        assert!(run.metric("requests").unwrap() > 0.0);
        let ssd = s.new_ssd(s.ssd_config(), 1).unwrap();
        assert!(ssd.front_end::<nandlab_ftl::PcmStage>().is_some());
    }

    /// `[content]` gives block-workload writes their bytes: with half the pages recurring, SHA-1
    /// dedup in front leaves fewer flash programs than host writes, without it every write is
    /// programmed; the runs repeat exactly.
    #[test]
    fn content_feeds_dedup_with_real_bytes() {
        let dedup = "[pcm]\npreset = \"cidr11\"\ncapacity_bytes = 1048576\n\
                     [pcm.dedup]\nstore_size_bytes = 65536\n";
        let content = "[content]\nduplicate_fraction = 0.5\ncommon_contents = 16\n";
        let waf = |text: &str| {
            let run = with(text).unwrap().run(None, &Control::default()).unwrap();
            run.metric("waf").unwrap()
        };
        let with_dedup = waf(&format!("{dedup}{content}"));
        assert_eq!(with_dedup, waf(&format!("{dedup}{content}")));
        let without = waf(content);
        assert!(
            with_dedup < 0.7 * without,
            "WAF {with_dedup} with dedup, {without} without"
        );
    }

    /// `[pcm]` without page bytes is refused (every write would be zeros); so is `[content]`
    /// with the engine or without full payloads, and a bad `[content]` key is named.
    #[test]
    fn pcm_needs_content_and_content_needs_a_block_workload() {
        let pcm = "[pcm]\npreset = \"cidr11\"\ncapacity_bytes = 1048576\n\
                   [pcm.dedup]\nstore_size_bytes = 65536\n";
        let e = with(pcm).unwrap_err();
        assert!(e.contains("key `pcm`") && e.contains("[content]"), "{e}");
        // the engine brings its own bytes: accepted
        let engine = BASE.replace("kind = \"synthetic\"", "kind = \"constant-free-space\"");
        let engine = &engine[..engine.find("pattern").unwrap()];
        let text = format!(
            "{engine}free_space_fraction = 0.5\nupdate_fraction = 0.4\nquery_count = 10\n[engine]\n{pcm}"
        );
        Stack::from_toml("t.toml", &text, Path::new("."), &[]).unwrap();
        let e = with("[content]\nduplicate_fraction = 2.0\n").unwrap_err();
        assert!(e.contains("content.duplicate_fraction"), "{e}");
        let e = with("[content]\nduplicates = 0.5\n").unwrap_err();
        assert!(e.contains("content"), "{e}");
        let timing = BASE.replace("payload = \"full\"", "payload = \"timing-only\"");
        let text = format!("{timing}\n[content]\n");
        let e = Stack::from_toml("t.toml", &text, Path::new("."), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("ssd.payload"), "{e}");
    }

    /// Paper 000's engine on the small bench SSD, with `pcm` appended.
    fn engine_run(pcm: &str) -> crate::stack::StackRun {
        let text = format!(
            "[run]\nseed = 5\n[ssd]\npreset = \"bench-ssd\"\npayload = \"full\"\n\
             [nand.geometry]\nchannels = 1\nchips_per_channel = 1\nblocks_per_plane = 32\n\
             pages_per_block = 32\n[engine]\niaa = true\nu2di = false\n\
             [workload]\nkind = \"constant-free-space\"\nfree_space_fraction = 0.3\n\
             update_fraction = 0.6\nquery_count = 3000\n{pcm}"
        );
        let s = Stack::from_toml("t.toml", &text, Path::new("."), &[]).unwrap();
        s.run(None, &Control::default()).unwrap()
    }

    fn engine_outcome(
        run: &crate::stack::StackRun,
    ) -> (
        &nandlab_ftl::SsdReport,
        Option<&nandlab_ftl::PcmStageReport>,
    ) {
        match &run.outcome {
            crate::stack::StackOutcome::Engine { device, pcm, .. } => (device, pcm.as_deref()),
            _ => panic!("an engine run"),
        }
    }

    /// The engine's page writes reach the stage with their bytes: the engine verifies every
    /// live row of every page it reads back (through the log merge and shared pages), the
    /// stage's own checks pass, small in-place row updates become deltas of less than a log
    /// sector, and fewer pages reach flash than without `[pcm]`; PCM energy is in the
    /// engine's energy.
    #[test]
    fn the_engine_writes_its_page_bytes_through_the_pcm_stage() {
        let plain = engine_run("");
        let (plain_ssd, none) = engine_outcome(&plain);
        assert!(none.is_none());
        for log in ["region", "dpram"] {
            let pcm = format!(
                "[pcm]\npreset = \"cidr11\"\ncapacity_bytes = 1048576\n\
                 [pcm.dedup]\nstore_size_bytes = 131072\nsearch = \"binary\"\n\
                 [pcm.log]\nkind = \"{log}\"\nregion_size_bytes = 524288\n"
            );
            let run = engine_run(&pcm);
            assert_eq!(run.metric("queries"), Some(3000.0), "{log}");
            let (ssd, report) = engine_outcome(&run);
            let report = report.expect("the stage's report");
            assert_eq!(report.check_failures, 0, "{log}: {:?}", report.first_error);
            let l = report.log.as_ref().unwrap();
            let logged = l.new_log_block + l.existing_sector + l.new_sector;
            assert!(logged > 1000, "{log}: {l:?}");
            if log == "region" {
                // (dPRAM re-logs a page's whole combined delta, up to a page, on each update)
                let per_update = l.log_bytes_written as f64 / logged as f64;
                assert!(per_update < 512.0, "{per_update} log bytes per update");
            }
            assert!(l.reads_merged > 0, "{log}: {l:?}");
            assert!(report.dedup.as_ref().unwrap().pages_checked > 0, "{log}");
            assert!(
                ssd.counters.flash_pages_programmed < plain_ssd.counters.flash_pages_programmed,
                "{log}: {} programs with PCM, {} without",
                ssd.counters.flash_pages_programmed,
                plain_ssd.counters.flash_pages_programmed
            );
            let pcm_mj = (report.device.read_energy_pj + report.device.write_energy_pj) / 1e9;
            assert!(pcm_mj > 0.0, "{log}");
            // the same config and seed give the same run
            assert_eq!(run.metrics, engine_run(&pcm).metrics, "{log}");
        }
    }

    /// The example of docs/pcm.md loads and has the stage.
    #[test]
    fn the_engine_pcm_example_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/engine-pcm.toml");
        let s = Stack::load(&path).unwrap();
        assert!(s.pcm_stage().unwrap().is_some_and(|p| p.dedup.is_some()));
    }

    /// `[precondition]` writes zeros around the stage (a pre-aged flash), and the stage is told:
    /// small updates of preconditioned pages are logged as deltas against the flash copy, not
    /// sent to flash as new pages; reads merge them correctly.
    #[test]
    fn preconditioned_pages_are_updates_for_the_log_buffer() {
        let run = |precondition: &str| {
            let text = BASE
                .replace("request_size_bytes = 4096", "request_size_bytes = 256")
                .replace("read_fraction = 0.0", "read_fraction = 0.3")
                + "[pcm]\npreset = \"cidr11\"\ncapacity_bytes = 2097152\n\
                   [pcm.log]\nkind = \"region\"\nregion_size_bytes = 1048576\n[content]\n"
                + precondition;
            let s = Stack::from_toml("t.toml", &text, Path::new("."), &[]).unwrap();
            match s.run(None, &Control::default()).unwrap().outcome {
                crate::stack::StackOutcome::Ssd { pcm, .. } => *pcm.expect("a PCM stage"),
                _ => panic!("a block run"),
            }
        };
        let fresh = run("");
        let aged = run("[precondition]\nfill_fraction = 1.0\nrandom_overwrites = 500\n");
        for r in [&fresh, &aged] {
            assert_eq!(r.check_failures, 0, "{:?}", r.first_error);
        }
        let (f, a) = (fresh.log.unwrap(), aged.log.unwrap());
        assert!(f.direct_new_page > 50, "{f:?}");
        assert_eq!(a.direct_new_page, 0, "{a:?}");
        assert!(
            a.new_sector + a.existing_sector + a.new_log_block > f.new_sector,
            "{a:?}"
        );
        assert!(a.reads_merged > 0, "{a:?}");
    }

    #[test]
    fn bad_pcm_sections_name_the_key() {
        let cases = [
            (
                "[pcm]\npreset = \"nope\"\n[pcm.log]\nkind = \"dpram\"\nregion_size_bytes = 4096\n",
                "pcm.preset",
            ),
            (
                "[pcm]\ncapacity_bytes = 65536\n[pcm.dedup]\nstore_size_bytes = 1048576\n",
                "pcm.dedup.store_size_bytes",
            ),
            (
                "[pcm]\n[pcm.log]\nkind = \"region\"\nregion_size_bytes = 1048576\nsector_size_bytes = 8192\n",
                "pcm.log.sector_size_bytes",
            ),
            (
                "[pcm]\ncapacity_bytes = 65536\n[pcm.log]\nkind = \"region\"\nregion_size_bytes = 1048576\n",
                "pcm.log.region_size_bytes",
            ),
            (
                "[pcm]\n[pcm.log]\nkind = \"region\"\nregion_bytes = 1\n",
                "pcm.log",
            ),
            ("[pcm]\n", "pcm"),
        ];
        for (pcm, key) in cases {
            let e = with(pcm).unwrap_err();
            assert!(
                e.contains(&format!("`{key}")) || e.contains(&format!("{key}:")) || e.contains(key),
                "{pcm}: {e}"
            );
        }
        let timing = BASE.replace("payload = \"full\"", "payload = \"timing-only\"");
        let e = Stack::from_toml(
            "t.toml",
            &format!("{timing}\n[pcm]\n[pcm.log]\nkind = \"dpram\"\nregion_size_bytes = 65536\n"),
            Path::new("."),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("ssd.payload"), "{e}");
    }
}
