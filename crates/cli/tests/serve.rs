//! `nandlab serve` with real clients: fio's nbd engine with verification, and ext4 built through
//! nbdfuse + mkfs.ext4 + fuse2fs with SQLite's shell on it. The tools come from the
//! distribution (scripts/install-test-deps, run by `make test`).

mod serve_support;

use serve_support::{Served, scratch, sh, tool};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// fio's JSON output (after any text lines before it).
fn fio_json(stdout: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stdout);
    let start = text.find('{').expect("fio printed JSON");
    serde_json::from_str(&text[start..]).expect("fio's JSON")
}

fn total_ios(fio: &serde_json::Value, dir: &str) -> u64 {
    fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j[dir]["total_ios"].as_u64().unwrap())
        .sum()
}

#[test]
fn fio_nbd_engine_verifies_and_the_report_counts_its_requests() {
    let fio = tool("fio");
    let dir = scratch("fio");
    let served = Served::start("bench-ssd", &dir, "real-time");
    let job = dir.join("jobs.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=nbd\nuri={}\nsize=256m\nverify=crc32c\nstonewall\n\
             [randwrite-qd32]\nrw=randwrite\nbs=4k\niodepth=32\nio_size=4m\n\
             [seqwrite-qd1]\nrw=write\nbs=128k\niodepth=1\nio_size=4m\noffset=512m\n\
             [randrw-qd8-2conn]\nrw=randrw\nbs=16k\niodepth=8\nio_size=2m\nverify=0\nnumjobs=2\n\
             [seqread-qd4]\nrw=read\nbs=64k\niodepth=4\nio_size=4m\nverify=0\n\
             [trim-qd1]\nrw=randtrim\nbs=64k\niodepth=1\nio_size=1m\nverify=0\n",
            served.uri()
        ),
    )
    .unwrap();
    // fio saves its verify state in the working directory: the scratch folder
    let run = Command::new(&fio)
        .current_dir(&dir)
        .arg(&job)
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let fio = fio_json(&run.stdout);
    for j in fio["jobs"].as_array().unwrap() {
        assert_eq!(j["error"], 0, "fio job {} reported an error", j["jobname"]);
    }
    let (stderr, report, serve) = served.stop();
    let reads = total_ios(&fio, "read");
    let writes = total_ios(&fio, "write");
    let trims = total_ios(&fio, "trim");
    assert!(
        reads > 1000 && writes > 1000 && trims > 0,
        "{reads} {writes} {trims}"
    );
    assert_eq!(report["read"]["requests"], reads, "{stderr}");
    assert_eq!(report["write"]["requests"], writes, "{stderr}");
    assert_eq!(report["trim"]["requests"], trims, "{stderr}");
    assert_eq!(serve["pace"], "real-time");
    assert_eq!(serve["commands"]["refused"], 0);
    // the simulated 4 KiB random writes at QD 32 take time: the run spans simulated time
    assert!(serve["sim_s"].as_f64().unwrap() > 0.01, "{serve}");
    assert!(stderr.contains("nandlab serve: wrote"), "{stderr}");
}

/// A device file of `blocks_per_plane` × 2 planes × 2 dies × 2 channels of mlc1 (128 pages of
/// 2 KiB per block): 1024 blocks is 1.7 GB raw.
fn mlc1_device(dir: &Path, blocks_per_plane: u32) -> PathBuf {
    let device = dir.join("device.toml");
    std::fs::write(
        &device,
        format!(
            "[nand]\npreset = \"mlc1\"\n[nand.geometry]\nchannels = 2\ndies_per_chip = 2\n\
             blocks_per_plane = {blocks_per_plane}\n"
        ),
    )
    .unwrap();
    device
}

/// The export as a file (nbdfuse), formatted as ext4, mounted with fuse2fs; unmounted in
/// order by [`Ext4::unmount`].
struct Ext4 {
    export: PathBuf,
    image: PathBuf,
    mnt: PathBuf,
    nbdfuse: Child,
    fuse2fs: Option<Child>,
    /// fuse2fs's mount options.
    options: &'static str,
}

impl Ext4 {
    fn make(served: &Served, dir: &Path, options: &'static str) -> Ext4 {
        for t in ["nbdfuse", "mkfs.ext4", "fuse2fs"] {
            tool(t);
        }
        let export = dir.join("export");
        let mnt = dir.join("mnt");
        std::fs::create_dir_all(&export).unwrap();
        std::fs::create_dir_all(&mnt).unwrap();
        let nbdfuse = Command::new("nbdfuse")
            .arg(&export)
            .arg(served.uri())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let image = export.join("nbd");
        let start = Instant::now();
        while !image.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "nbdfuse did not expose the export"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        sh(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image));
        let mut fs = Ext4 {
            export,
            image,
            mnt,
            nbdfuse,
            fuse2fs: None,
            options,
        };
        fs.mount();
        fs
    }

    /// fuse2fs in the foreground: it must have let go of the image before nbdfuse can unmount.
    fn mount(&mut self) {
        let child = Command::new("fuse2fs")
            .arg(&self.image)
            .arg(&self.mnt)
            .args(["-f", "-o", self.options])
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !self.mnt.join("lost+found").exists() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "fuse2fs did not mount"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.fuse2fs = Some(child);
    }

    fn umount(path: &Path, mut child: Child) {
        let start = Instant::now();
        while !Command::new("umount").arg(path).status().unwrap().success() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "cannot unmount {path:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        child.wait().unwrap();
    }

    fn unmount_fs(&mut self) {
        let child = self.fuse2fs.take().expect("mounted");
        Ext4::umount(&self.mnt, child);
    }

    /// Unmounts the filesystem and the export.
    fn unmount(mut self) {
        if self.fuse2fs.is_some() {
            self.unmount_fs();
        }
        Ext4::umount(&self.export, self.nbdfuse);
    }
}

#[test]
fn ext4_through_nbdfuse_and_fuse2fs_holds_a_sqlite_database() {
    tool("sqlite3");
    let dir = scratch("ext4");
    // a small device: 1 GiB raw mlc1 keeps mkfs and the run short
    let device = mlc1_device(&dir, 1024);
    let served = Served::start(device.to_str().unwrap(), &dir, "none");
    let mut fs = Ext4::make(&served, &dir, "fakeroot");
    let db = fs.mnt.join("bank.db");
    let script = "PRAGMA journal_mode=WAL;\n\
        CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER);\n\
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)\n\
        INSERT INTO accounts SELECT i, 100 FROM n;\n\
        UPDATE accounts SET balance = balance - 10 WHERE id % 2 = 0;\n\
        UPDATE accounts SET balance = balance + 10 WHERE id % 2 = 1;\n\
        PRAGMA wal_checkpoint(TRUNCATE);\n\
        SELECT count(*), sum(balance) FROM accounts;\n\
        PRAGMA integrity_check;\n";
    let answer = sh(Command::new("sqlite3").arg(&db).arg(script));
    fs.unmount_fs();
    // the filesystem reaches the device: mount again and read the table back
    fs.mount();
    let again = sh(Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT count(*), sum(balance) FROM accounts;"));
    fs.unmount();
    assert!(answer.contains("5000|500000"), "{answer}");
    assert!(answer.contains("ok"), "{answer}");
    assert_eq!(again.trim(), "5000|500000");
    let (stderr, report, _) = served.stop();
    // mkfs, the journal and the database reached the flash
    let programmed = report["counters"]["flash_pages_programmed"]
        .as_u64()
        .unwrap();
    assert!(programmed > 100, "{stderr}");
    assert!(report["write"]["requests"].as_u64().unwrap() > 100);
}

/// The PostgreSQL binaries' folder (Debian: /usr/lib/postgresql/VERSION/bin).
fn postgres_bin() -> PathBuf {
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .find(|bin| bin.join("postgres").exists() && bin.join("initdb").exists());
    found.expect("PostgreSQL is not installed: run scripts/install-test-deps (make test does)")
}

/// Issue 33 item 3: a database server's standard benchmark on the simulated SSD. PostgreSQL
/// (Debian's, run as its `postgres` user) keeps its cluster on ext4 (nbdfuse + fuse2fs) on a
/// small device; pgbench initializes scale 1 and runs TPC-B-like transactions from 4 clients
/// with fsync on; the device report shows the flushes and, on a device this small, GC.
#[test]
fn postgres_pgbench_runs_on_ext4_on_the_simulated_ssd() {
    let bin = postgres_bin();
    tool("pgbench");
    tool("runuser");
    let dir = scratch("pgbench");
    // 335 MB raw: the cluster, pgbench's tables and their WAL (about 400 MB of page writes,
    // most of them partial pages) fill it enough for GC
    let device = mlc1_device(&dir, 160);
    let served = Served::start(device.to_str().unwrap(), &dir, "none");
    // permissions are checked for the postgres user: no fakeroot; allow_other lets it in
    let fs = Ext4::make(&served, &dir, "allow_other");
    let data = fs.mnt.join("pgdata");
    let sock = dir.join("pgsock");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&sock).unwrap();
    // the scratch folder is root's: postgres needs to reach the socket folder and the mount
    sh(Command::new("chmod").arg("755").arg(&dir));
    sh(Command::new("chown")
        .arg("postgres:postgres")
        .arg(&data)
        .arg(&sock));
    sh(Command::new("chmod").arg("700").arg(&data));
    let as_postgres = |program: &Path| {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    };
    sh(as_postgres(&bin.join("initdb")).arg("-D").arg(&data).args([
        "-A",
        "trust",
        "-U",
        "postgres",
        "--no-sync",
    ]));
    let options = format!(
        "-k {} -c listen_addresses='' -c shared_buffers=16MB -c fsync=on",
        sock.display()
    );
    sh(as_postgres(&bin.join("pg_ctl"))
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(sock.join("postgres.log"))
        .args(["-w", "-o", &options, "start"]));
    let pgbench = |args: &[&str]| {
        let out = Command::new("runuser")
            .args(["-u", "postgres", "--", "pgbench", "-h"])
            .arg(&sock)
            .args(["-U", "postgres"])
            .args(args)
            .arg("postgres")
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let init = pgbench(&["-i", "-s", "1"]);
    let run = pgbench(&["-c", "4", "-t", "500"]);
    let stop = as_postgres(&bin.join("pg_ctl"))
        .arg("-D")
        .arg(&data)
        .args(["-w", "-m", "fast", "stop"])
        .output()
        .unwrap();
    fs.unmount();
    assert!(init.0, "pgbench -i: {}", init.1);
    assert!(run.0, "pgbench: {}", run.1);
    assert!(stop.status.success(), "pg_ctl stop");
    assert!(
        run.1
            .contains("number of transactions actually processed: 2000/2000"),
        "{}",
        run.1
    );
    assert!(
        run.1.contains("number of failed transactions: 0"),
        "{}",
        run.1
    );
    let (stderr, report, serve) = served.stop();
    // every commit's WAL flush reached the device as a flush
    assert!(
        serve["commands"]["flush"].as_u64().unwrap() > 2000,
        "{serve}"
    );
    assert!(
        report["write"]["requests"].as_u64().unwrap() > 10_000,
        "{stderr}"
    );
    let counters = &report["counters"];
    let erases = counters["erases"].as_u64().unwrap();
    assert!(erases > 0, "no GC on a device this small: {counters}");
    eprintln!(
        "pgbench on nandlab: {}\ndevice: {} writes, {} flushes, {} pages programmed for {} \
         host pages, {} GC copies, {erases} erases, {:.1} s simulated",
        run.1.lines().find(|l| l.starts_with("tps")).unwrap_or(""),
        report["write"]["requests"],
        serve["commands"]["flush"],
        counters["flash_pages_programmed"],
        counters["host_pages_written"],
        counters["gc_page_copies"],
        serve["sim_s"].as_f64().unwrap()
    );
}
