//! The atomic writer on file systems that fight back (review 33): a file's ACL and extended
//! attributes survive an Edit; an immutable or append-only directory is written in place
//! (nothing left behind); a failed Write removes the directories it made; a full disk says
//! why a write that shrinks a file needs room.
//!
//! Tests that need root (`chattr`, a `tmpfs` in a private mount namespace) or a file system
//! with ACLs skip with a printed reason where they cannot run.

use std::fs;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{ctx, fail, run, text};
use rustix::fs::XattrFlags;
use rustix::io::Errno;
use serde_json::json;
use tools_builtin::{Edit, Read, Write};

/// An ACL entry as the kernel's `system.posix_acl_*` value holds it.
fn acl_entry(tag: u16, perm: u16, id: u32) -> Vec<u8> {
    let mut e = tag.to_le_bytes().to_vec();
    e.extend(perm.to_le_bytes());
    e.extend(id.to_le_bytes());
    e
}

/// A raw POSIX ACL (version 2) of `entries` (tag, permissions, id).
fn acl(entries: &[(u16, u16, u32)]) -> Vec<u8> {
    let mut v = 2u32.to_le_bytes().to_vec();
    for &(tag, perm, id) in entries {
        v.extend(acl_entry(tag, perm, id));
    }
    v
}

const NO_ID: u32 = u32::MAX;
const ACL_ACCESS: &str = "system.posix_acl_access";
const ACL_DEFAULT: &str = "system.posix_acl_default";

/// The value of the attribute `name` of `path`, `None` when it has none.
fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 64 * 1024];
    match rustix::fs::getxattr(path, name, &mut buf[..]) {
        Ok(len) => {
            buf.truncate(len);
            Some(buf)
        }
        Err(Errno::NODATA) => None,
        Err(e) => panic!("getxattr {name} of {}: {e}", path.display()),
    }
}

/// Sets `name` on `path`; `false` (with the reason printed) when the file system cannot.
fn set_xattr(path: &Path, name: &str, value: &[u8]) -> bool {
    match rustix::fs::setxattr(path, name, value, XattrFlags::empty()) {
        Ok(()) => true,
        Err(e) => {
            eprintln!(
                "skipped: cannot set {name} on {} here ({e})",
                path.display()
            );
            false
        }
    }
}

/// The names in `dir` that are temporary files of a write.
fn temps_in(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tw-tmp."))
        .collect()
}

#[tokio::test]
async fn an_edit_keeps_the_files_acl_and_extended_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.txt");
    fs::write(&f, "one\n").unwrap();
    // user::rw- user:1234:rw- group::r-- mask::rw- other::--- (the mode shows 0660).
    let value = acl(&[
        (0x01, 6, NO_ID),
        (0x02, 6, 1234),
        (0x04, 4, NO_ID),
        (0x10, 6, NO_ID),
        (0x20, 0, NO_ID),
    ]);
    if !set_xattr(&f, ACL_ACCESS, &value) || !set_xattr(&f, "user.origin", b"kept") {
        return;
    }
    let acl_before = xattr(&f, ACL_ACCESS).unwrap();
    assert_eq!(fs::metadata(&f).unwrap().mode() & 0o7777, 0o660);
    let c = ctx(dir.path());
    text(&Read, &c, json!({"file_path": f})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "one", "new_string": "two"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "two\n");
    assert_eq!(
        xattr(&f, ACL_ACCESS).as_deref(),
        Some(&acl_before[..]),
        "the ACL was not kept: the group (r--) would write through the mask"
    );
    assert_eq!(xattr(&f, "user.origin").as_deref(), Some(&b"kept"[..]));
    assert_eq!(fs::metadata(&f).unwrap().mode() & 0o7777, 0o660);
    assert!(temps_in(dir.path()).is_empty());

    // A Write keeps them too.
    run(&Write, &c, json!({"file_path": f, "content": "three\n"}))
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "three\n");
    assert_eq!(xattr(&f, ACL_ACCESS).as_deref(), Some(&acl_before[..]));
    assert_eq!(xattr(&f, "user.origin").as_deref(), Some(&b"kept"[..]));
}

/// A file without an ACL in a directory whose default ACL a new file would inherit stays
/// without one: the new file carries the old file's attributes, not the directory's.
#[tokio::test]
async fn an_edit_does_not_give_a_file_the_directorys_default_acl() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let f = sub.join("f.txt");
    fs::write(&f, "one\n").unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o640)).unwrap();
    // default: user::rwx user:1234:rwx group::r-x mask::rwx other::r-x
    let default = acl(&[
        (0x01, 7, NO_ID),
        (0x02, 7, 1234),
        (0x04, 5, NO_ID),
        (0x10, 7, NO_ID),
        (0x20, 5, NO_ID),
    ]);
    if !set_xattr(&sub, ACL_DEFAULT, &default) {
        return;
    }
    let c = ctx(dir.path());
    text(&Read, &c, json!({"file_path": f})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "one", "new_string": "two"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "two\n");
    assert_eq!(
        xattr(&f, ACL_ACCESS),
        None,
        "the file gained the directory's default ACL (user 1234 can now read it)"
    );
    assert_eq!(fs::metadata(&f).unwrap().mode() & 0o7777, 0o640);
}

/// Sets inode flags with `chattr` and takes them off again when dropped (else the
/// temporary directory could not be removed).
struct Chattr(PathBuf, &'static str);

impl Chattr {
    /// `chattr +FLAG path`; `None` (with the reason printed) where that cannot be done.
    fn set(path: &Path, flag: &'static str) -> Option<Self> {
        let out = Command::new("chattr")
            .arg(format!("+{flag}"))
            .arg(path)
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Self(path.to_path_buf(), flag)),
            Ok(out) => {
                eprintln!(
                    "skipped: chattr +{flag} failed (root and a file system with inode flags \
                     are needed): {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: chattr cannot run: {e}");
                None
            }
        }
    }
}

impl Drop for Chattr {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .arg(format!("-{}", self.1))
            .arg(&self.0)
            .status();
    }
}

#[tokio::test]
async fn an_edit_in_an_immutable_directory_rewrites_the_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let f = sub.join("f.txt");
    fs::write(&f, "one\n").unwrap();
    let inode = fs::metadata(&f).unwrap().ino();
    let c = ctx(dir.path());
    text(&Read, &c, json!({"file_path": f})).await;
    let Some(_flag) = Chattr::set(&sub, "i") else {
        return;
    };
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "one", "new_string": "two"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "two\n");
    assert_eq!(fs::metadata(&f).unwrap().ino(), inode);
    // A new file cannot be made there: the error says so.
    let err = fail(
        &Write,
        &c,
        json!({"file_path": sub.join("new.txt"), "content": "x"}),
    )
    .await;
    assert!(
        err.text.contains("Operation not permitted") && err.text.contains("immutable"),
        "{}",
        err.text
    );
    assert!(temps_in(&sub).is_empty());
}

#[tokio::test]
async fn an_append_only_directory_is_written_without_a_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let f = sub.join("f.txt");
    fs::write(&f, "one\n").unwrap();
    let c = ctx(dir.path());
    text(&Read, &c, json!({"file_path": f})).await;
    let Some(_flag) = Chattr::set(&sub, "a") else {
        return;
    };
    let edited = run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "one", "new_string": "two"}),
    )
    .await;
    let left = temps_in(&sub);
    assert!(left.is_empty(), "temporary files left for good: {left:?}");
    edited.map_err(|f| f.text).unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "two\n");
    // A new file is made directly.
    let new = sub.join("new.txt");
    run(&Write, &c, json!({"file_path": new, "content": "fresh\n"}))
        .await
        .map_err(|f| f.text)
        .unwrap();
    assert_eq!(fs::read_to_string(&new).unwrap(), "fresh\n");
    assert!(temps_in(&sub).is_empty());
}

/// The variable that tells a re-run test it is the child inside the private namespace.
const CHILD: &str = "TW_REVIEW33_FSWRITE_DIR";

/// Runs the ignored test `name` of this binary again under `unshare -m` (a mount
/// namespace of its own, where it mounts a small tmpfs on `dir`); `false` (with the reason
/// printed) when that cannot be done here.
fn in_private_namespace(name: &str, dir: &Path) -> bool {
    let probe = Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: unshare -m is not possible here (root is needed): {probe:?}");
        return false;
    }
    // The test's path in the `review` binary, this file being its module `review33_fswrite`.
    let name = format!("review33_fswrite::{name}");
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("skipped:") {
        eprintln!("{err}");
        return false;
    }
    assert!(
        out.status.success() && said.contains("1 passed"),
        "{said}{err}"
    );
    true
}

/// In the child: mounts a tmpfs of `kib` KiB on the directory the parent gave; `None`
/// outside the child or where the mount fails (the reason printed).
fn mount_small_tmpfs(kib: u32) -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(CHILD)?);
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
        .arg(&dir)
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!(
            "skipped: cannot mount a tmpfs: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(dir)
}

/// Fills the file system of `dir` to the last byte.
fn fill(dir: &Path) {
    use std::io::Write as _;
    let mut filler = fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![b'f'; 4096];
    while filler.write_all(&chunk).is_ok() {}
    while filler.write_all(b"f").is_ok() {}
}

#[test]
#[ignore = "run by a_failed_write_removes_the_directories_it_made, in a namespace of its own"]
fn failed_write_on_a_full_tmpfs() {
    let Some(dir) = mount_small_tmpfs(64) else {
        return;
    };
    let w = dir.join("w");
    fs::create_dir(&w).unwrap();
    fill(&dir);
    let target = w.join("a/b/c/d.txt");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = ctx(&dir);
    let err = rt.block_on(fail(
        &Write,
        &c,
        json!({"file_path": target, "content": "x".repeat(16 * 1024)}),
    ));
    assert!(
        err.text.contains("No space left on device")
            && err.text.contains("16384 bytes")
            && err.text.contains("nothing of it was left behind"),
        "{}",
        err.text
    );
    assert!(w.is_dir(), "a directory the write did not make was removed");
    let left: Vec<_> = fs::read_dir(&w).unwrap().flatten().collect();
    assert!(left.is_empty(), "the failed write left {left:?}");
}

#[test]
fn a_failed_write_removes_the_directories_it_made() {
    let dir = tempfile::tempdir().unwrap();
    in_private_namespace("failed_write_on_a_full_tmpfs", dir.path());
}

#[test]
#[ignore = "run by a_full_disk_says_why_a_shrinking_edit_needs_room, in a namespace of its own"]
fn shrinking_edit_on_a_full_tmpfs() {
    let Some(dir) = mount_small_tmpfs(64) else {
        return;
    };
    let f = dir.join("f.txt");
    let lines: String = (0..20)
        .map(|i| format!("line {i:02} {}\n", "x".repeat(990)))
        .collect();
    fs::write(&f, &lines).unwrap();
    fill(&dir);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = ctx(&dir);
    rt.block_on(text(&Read, &c, json!({"file_path": f})));
    let first = lines.lines().next().unwrap();
    let err = rt.block_on(fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": first, "new_string": "short"}),
    ));
    let needed = lines.len() - first.len() + "short".len();
    assert!(err.text.contains("No space left on device"), "{}", err.text);
    assert!(
        err.text.contains("beside the file")
            && err.text.contains(&format!("{needed} bytes"))
            && err.text.contains(&dir.display().to_string()),
        "the error does not say why a smaller file needs room: {}",
        err.text
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), lines, "the file changed");
    assert!(temps_in(&dir).is_empty());
}

#[test]
fn a_full_disk_says_why_a_shrinking_edit_needs_room() {
    let dir = tempfile::tempdir().unwrap();
    in_private_namespace("shrinking_edit_on_a_full_tmpfs", dir.path());
}

/// The variable that tells the re-run test, as `nobody`, which file to edit.
const NOBODY: &str = "TW_REVIEW33_FSWRITE_NOBODY";

#[test]
#[ignore = "run by an_attribute_the_user_cannot_set_keeps_the_file_in_place, as nobody"]
fn edit_as_nobody() {
    let Some(f) = std::env::var_os(NOBODY).map(PathBuf::from) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = ctx(f.parent().unwrap());
    rt.block_on(text(&Read, &c, json!({"file_path": f})));
    rt.block_on(run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "one", "new_string": "two"}),
    ))
    .map_err(|f| f.text)
    .unwrap();
}

/// A `security.*` attribute only root may set: a user's Edit cannot give it to a new file,
/// so the file is rewritten in place and keeps it.
#[test]
fn an_attribute_the_user_cannot_set_keeps_the_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let f = dir.path().join("f.txt");
    fs::write(&f, "one\n").unwrap();
    if std::os::unix::fs::chown(&f, Some(65534), Some(65534)).is_err() {
        eprintln!("skipped: the file cannot be given to nobody (root is needed)");
        return;
    }
    if !set_xattr(&f, "security.tw_review33", b"label") {
        return;
    }
    let inode = fs::metadata(&f).unwrap().ino();
    let exe = dir.path().join("test-exe");
    fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
    const AS_NOBODY: [&str; 3] = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let probe = Command::new("setpriv").args(AS_NOBODY).arg("true").status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: setpriv cannot run a command as nobody here");
        return;
    }
    let out = Command::new("setpriv")
        .args(AS_NOBODY)
        .arg(&exe)
        .args([
            "--exact",
            "review33_fswrite::edit_as_nobody",
            "--ignored",
            "--nocapture",
        ])
        .env(NOBODY, &f)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("1 passed"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "two\n");
    assert_eq!(
        xattr(&f, "security.tw_review33").as_deref(),
        Some(&b"label"[..]),
        "the attribute was lost"
    );
    assert_eq!(fs::metadata(&f).unwrap().ino(), inode);
    assert!(temps_in(dir.path()).is_empty());
}
