//! `cargo xtask check-layers` on real manifests: the workspace passes, a wrong fixture fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

fn xtask(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn fails_on_a_deliberately_wrong_graph() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bad-layers/Cargo.toml");
    let out = xtask(&["check-layers", "--manifest-path", fixture.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tool-core depends on tool-exec, against the layering"),
        "{stderr}"
    );
}

#[test]
fn passes_on_this_workspace() {
    let out = xtask(&["check-layers"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
