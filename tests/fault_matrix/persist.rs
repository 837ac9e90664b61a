//! The results directory fails while a large result is persisted: not writable, or full.
//!
//! Not writable: a regular file where the directory should be, which stops root too (CI runs
//! as root, which a directory without write permission does not stop), and a read-only
//! tmpfs. Full: a small tmpfs. A tmpfs needs a process that may mount one (root with
//! CAP_SYS_ADMIN); elsewhere the tmpfs cases are skipped with a notice, but under `CI=true`
//! they fail: CI runs as root on the session's own machine, which can mount.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::rig::{Faulty, call, rig, temp_files, text};

/// A mounted tmpfs, unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
    _holder: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs with `options`, or `None` (with a notice naming `case`, the part of the
    /// test that then does not run) when mounting is not allowed here. Under `CI=true` a
    /// refused mount fails instead: CI can mount.
    fn mount(options: &str, case: &str) -> Option<Self> {
        let holder = tempfile::tempdir().unwrap();
        let dir = holder.path().join("fs");
        std::fs::create_dir(&dir).unwrap();
        let refused = match Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&dir)
            .output()
        {
            Ok(o) if o.status.success() => {
                return Some(Self {
                    dir,
                    _holder: holder,
                });
            }
            Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
            Err(e) => format!("cannot run `mount`: {e}"),
        };
        let msg = format!(
            "cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN: {refused}); {case} did not run"
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("SKIPPED: {msg}");
        None
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn persist_into(results: PathBuf) -> (String, bool, Option<PathBuf>) {
    let (tool, _) = Faulty::new();
    let rig = rig()
        .tool(tool)
        .settings(json!({"permissions": {"allow": ["Faulty"]}}))
        .results_dir(results)
        .build()
        .await;
    let r = rig
        .run_one(call("toolu_big", "Faulty", json!({"fault": "big"})))
        .await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
    (text(&r), r.outcome.result.is_error, r.outcome.persisted)
}

/// Persists the large result into `results`, which cannot be created or written: the call
/// succeeds and the model gets the head and tail and a note why there is no file, which
/// must name `why` (so the test fails, rather than passes, for another reason).
async fn not_saved_because(results: PathBuf, why: &str) {
    let (t, is_error, persisted) = persist_into(results).await;
    assert!(!is_error);
    assert!(persisted.is_none());
    assert!(t.len() < 60_000, "{} characters reached the model", t.len());
    assert!(
        t.contains(&format!(
            "[Output too large (195.3KB) and could not be saved to a file: {why}"
        )),
        "{}",
        &t[t.len().saturating_sub(300)..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_directory_not_writable() {
    // A regular file where the results directory should be: it cannot be created (the
    // product creates it as `create_dir_all` does: EEXIST), by root either.
    let holder = tempfile::tempdir().unwrap();
    let blocker = holder.path().join("tool-results");
    std::fs::write(&blocker, "in the way\n").unwrap();
    not_saved_because(blocker.clone(), "File exists").await;
    // Nothing was written beside it, nor into it.
    assert_eq!(entries(holder.path()), ["tool-results"]);
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "in the way\n");

    // A read-only filesystem.
    let Some(fs) = Tmpfs::mount("ro,size=64k", "the read-only filesystem case") else {
        return;
    };
    not_saved_because(fs.dir.join("tool-results"), "Read-only file system").await;
    assert!(entries(&fs.dir).is_empty(), "{:?}", entries(&fs.dir));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_directory_full() {
    let Some(fs) = Tmpfs::mount("size=64k", "the disk-full case") else {
        return;
    };
    let results = fs.dir.join("tool-results");
    let (t, is_error, persisted) = persist_into(results.clone()).await;
    assert!(!is_error);
    assert!(persisted.is_none());
    assert!(
        t.contains("could not be saved to a file: No space left on device"),
        "{}",
        &t[t.len().saturating_sub(300)..]
    );
    // Nothing half-written and no temporary file stays in the full directory.
    assert!(entries(&results).is_empty(), "{:?}", entries(&results));
    assert!(temp_files(&fs.dir).is_empty());
}
