//! The results directory fails while a large result is persisted: read-only, or full.
//!
//! A read-only or full filesystem is a small tmpfs when this process may mount one (root);
//! otherwise a directory without write permission stands in for read-only, and the full
//! case is skipped with a notice.

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
    /// Mounts a tmpfs with `options`, or `None` when mounting is not allowed here.
    fn mount(options: &str) -> Option<Self> {
        let holder = tempfile::tempdir().unwrap();
        let dir = holder.path().join("fs");
        std::fs::create_dir(&dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then_some(Self {
            dir,
            _holder: holder,
        })
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_directory_not_writable() {
    // Either guard keeps the directory alive while it is used.
    let mut _holder = None;
    let mounted = Tmpfs::mount("ro,size=64k");
    let results = match &mounted {
        Some(fs) => fs.dir.clone(),
        None => {
            use std::os::unix::fs::PermissionsExt;
            let holder = tempfile::tempdir().unwrap();
            let dir = holder.path().join("ro");
            std::fs::create_dir(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
            _holder = Some(holder);
            dir
        }
    };
    let (t, is_error, persisted) = persist_into(results.join("tool-results")).await;
    // The call succeeded; the model gets the head and tail and a note why there is no file.
    assert!(!is_error);
    assert!(persisted.is_none());
    assert!(t.len() < 60_000, "{} characters reached the model", t.len());
    assert!(
        t.contains("[Output too large (195.3KB) and could not be saved to a file: "),
        "{}",
        &t[t.len().saturating_sub(300)..]
    );
    assert!(entries(&results).is_empty(), "{:?}", entries(&results));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_directory_full() {
    let Some(fs) = Tmpfs::mount("size=64k") else {
        eprintln!(
            "SKIPPED: cannot mount a tmpfs here (needs root); the disk-full case did not run"
        );
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
