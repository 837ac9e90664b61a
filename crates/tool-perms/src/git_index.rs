//! The paths a git index lists (`.git/index`, git's `DIRC` format, versions 2 to 4): the
//! files git tracks, which a `git diff` may print. Read without running git (whose
//! configuration may run programs), and refused (`None`) wherever the file is not exactly
//! what this reader knows: another object format, a split index, an entry whose recorded
//! name length disagrees with its name, bytes missing.

/// The index's paths, relative to the work tree, in the index's order. A sparse index's
/// directory entries and submodules (gitlinks) end with `/`. `None` when the bytes are not an index this reader
/// understands.
pub(crate) fn index_paths(bytes: &[u8]) -> Option<Vec<String>> {
    /// The checksum that ends the file (SHA-1).
    const HASH: usize = 20;
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = usize::try_from(be32(8)?).ok()?;
    // Each entry takes at least 62 bytes: a count the file cannot hold is no index.
    if count > bytes.len() / 62 {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    let mut at = 12;
    for _ in 0..count {
        let start = at;
        // 40 bytes of stat data (the mode at 24), then the object id (20 bytes of SHA-1),
        // then the flags.
        let mode = be32(start + 24)?;
        let flags_at = start + 40 + 20;
        let flags = u16::from_be_bytes(bytes.get(flags_at..flags_at + 2)?.try_into().ok()?);
        at = flags_at + 2;
        if flags & 0x4000 != 0 {
            // Extended flags (version 3 and later only).
            if version < 3 {
                return None;
            }
            at += 2;
        }
        let fixed = at - start;
        let name = if version == 4 {
            // The name is the previous one, cut by a number of bytes, and a new tail.
            let (strip, used) = offset_varint(bytes.get(at..)?)?;
            at += used;
            let tail = bytes.get(at..)?;
            let end = tail.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(&tail[..end]);
            at += end + 1;
            name
        } else {
            let tail = bytes.get(at..)?;
            let end = tail.iter().position(|&b| b == 0)?;
            let name = tail[..end].to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 bytes.
            at = start + ((fixed + name.len() + 8) & !7);
            name
        };
        // The low 12 bits hold the name's length (0xFFF for longer ones): a layout this
        // reader does not know (a 32-byte object id) disagrees here.
        let recorded = usize::from(flags & 0x0FFF);
        if (recorded < 0x0FFF && recorded != name.len()) || name.is_empty() {
            return None;
        }
        let mut path = String::from_utf8_lossy(&name).into_owned();
        // A submodule (a gitlink): its own files, which a diff may print, are below it.
        if mode & 0o170_000 == 0o160_000 {
            path.push('/');
        }
        out.push(path);
        previous = name;
    }
    // Extensions, then the checksum: a split index (`link`) keeps entries in another file.
    loop {
        let left = bytes.len().checked_sub(at)?;
        if left == HASH {
            return Some(out);
        }
        let signature = bytes.get(at..at + 4)?;
        if signature == b"link" {
            return None;
        }
        let size = usize::try_from(be32(at + 4)?).ok()?;
        at = at.checked_add(8)?.checked_add(size)?;
    }
}

/// git's variable-length offset (`decode_varint`): 7 bits a byte, most significant first,
/// each continuation adding one. The value and the bytes it took.
fn offset_varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut used = 0;
    let mut c = *bytes.first()?;
    used += 1;
    let mut value = usize::from(c & 0x7F);
    while c & 0x80 != 0 {
        c = *bytes.get(used)?;
        used += 1;
        value = value
            .checked_add(1)?
            .checked_mul(128)?
            .checked_add(usize::from(c & 0x7F))?;
    }
    Some((value, used))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What `git ls-files` lists, for indexes git itself wrote in versions 2, 3 (an
    /// intent-to-add entry has extended flags) and 4 (names prefix-compressed), with long
    /// and nested names.
    #[test]
    fn reads_the_paths_git_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        let long = "n".repeat(250);
        for file in [
            ".env",
            "src/main.rs",
            "src/sub/deep/a.txt",
            "src/sub/deep/ab.txt",
            "z",
            &format!("docs/{long}/{long}.md"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, file).unwrap();
        }
        git(root, &["add", "."]);
        std::fs::write(root.join("later.txt"), "x").unwrap();
        git(root, &["add", "-N", "later.txt"]);
        // A submodule's gitlink, listed with a `/`.
        let id = "a".repeat(40);
        git(
            root,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{id},module"),
            ],
        );
        for version in ["2", "3", "4"] {
            git(root, &["update-index", "--index-version", version]);
            let bytes = std::fs::read(root.join(".git/index")).unwrap();
            let listed: Vec<String> = git(root, &["ls-files", "-z"])
                .split('\0')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    if s == "module" {
                        "module/".to_owned()
                    } else {
                        s.to_owned()
                    }
                })
                .collect();
            assert_eq!(
                index_paths(&bytes).as_deref(),
                Some(listed.as_slice()),
                "version {version}"
            );
        }
    }

    /// Bytes that are not such an index are refused, never read wrong or panicked on.
    #[test]
    fn refuses_what_it_does_not_know() {
        assert_eq!(index_paths(b""), None);
        assert_eq!(index_paths(b"DIRC"), None);
        let mut header = b"DIRC".to_vec();
        header.extend_from_slice(&5u32.to_be_bytes());
        header.extend_from_slice(&0u32.to_be_bytes());
        assert_eq!(index_paths(&header), None, "version 5");
        let mut huge = b"DIRC".to_vec();
        huge.extend_from_slice(&2u32.to_be_bytes());
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(index_paths(&huge), None, "a count the file cannot hold");
        // A real index cut anywhere is refused, or read whole when all its entries are
        // still there (the checksum is not verified).
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("a"), "a").unwrap();
        std::fs::write(dir.path().join("b"), "b").unwrap();
        git(dir.path(), &["add", "a", "b"]);
        let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
        let whole = index_paths(&bytes);
        assert_eq!(whole, Some(vec!["a".to_owned(), "b".to_owned()]));
        for cut in 0..bytes.len() {
            let read = index_paths(&bytes[..cut]);
            assert!(read.is_none() || read == whole, "cut at {cut}: {read:?}");
        }
        // A split index keeps its entries elsewhere.
        git(dir.path(), &["update-index", "--split-index"]);
        let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
        assert_eq!(index_paths(&bytes), None, "split index");
    }
}
