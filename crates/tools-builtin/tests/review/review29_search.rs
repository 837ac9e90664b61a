//! Glob and Grep, review 29: directories a Glob cannot read are named, not passed over; a
//! pattern's fixed directories in the other Unicode normalization form are found; a `~`
//! without a home directory is refused; an absolute Grep `glob` that filters out every file
//! says why.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::common::{assert_rerun_passed, ctx, fail, rerun_test, text};
use serde_json::json;
use tools_builtin::{Glob, Grep};

/// `café` composed (NFC), as a model types it.
const NFC: &str = "caf\u{e9}";
/// `café` decomposed (NFD), as an archive made on macOS unpacks it.
const NFD: &str = "cafe\u{301}";

/// The longest path the kernel takes, with its final NUL (Linux's `PATH_MAX`).
const PATH_MAX: usize = 4096;

/// A directory whose own path is short enough to list (`base`, about 3,950 bytes long,
/// made of nested directories) holding `pub/a.txt` and a directory `long` (a 200-byte name)
/// whose path is past `PATH_MAX`: no one, root included, can list `long` by its path
/// (`File name too long`), as a directory of another user's with mode 700 cannot be
/// listed. `long` holds `b.txt`, made through directory handles. Returns `base` and
/// `long`'s name.
fn tree_with_a_dir_past_path_max(tmp: &Path) -> (PathBuf, String) {
    let mut base = tmp.to_path_buf();
    while base.as_os_str().len() + 201 < 3950 {
        base.push("d".repeat(200));
    }
    let rest = 3950 - base.as_os_str().len() - 1;
    base.push("e".repeat(rest));
    fs::create_dir_all(base.join("pub")).unwrap();
    fs::write(base.join("pub/a.txt"), "hello\n").unwrap();
    let long = "l".repeat(200);
    assert!(base.join(&long).as_os_str().len() >= PATH_MAX);
    assert!(base.join("pub/a.txt").as_os_str().len() < PATH_MAX);
    let mode = nix::sys::stat::Mode::from_bits_truncate(0o755);
    let flags = nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY;
    let dir = fs::File::open(&base).unwrap();
    nix::sys::stat::mkdirat(&dir, long.as_str(), mode).unwrap();
    let inside = nix::fcntl::openat(&dir, long.as_str(), flags, mode).unwrap();
    let file = nix::fcntl::openat(
        &inside,
        "b.txt",
        nix::fcntl::OFlag::O_WRONLY | nix::fcntl::OFlag::O_CREAT,
        mode,
    )
    .unwrap();
    std::io::Write::write_all(&mut fs::File::from(file), b"hello\n").unwrap();
    assert!(fs::read_dir(base.join(&long)).is_err());
    (base, long)
}

/// A Glob that meets a directory it cannot list (here one whose path is past `PATH_MAX`,
/// which root cannot list either) lists what it found and names that directory with why,
/// as Grep does, instead of answering as if the tree held nothing more; a pattern whose
/// fixed directory is that one says so instead of a bare "No files found". A pattern that
/// cannot reach the directory (`pub/*`) says nothing of it.
#[tokio::test]
async fn glob_names_the_directories_it_could_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, long) = tree_with_a_dir_past_path_max(tmp.path());
    let c = ctx(&base);
    let note = format!(
        "[Not searched, as they could not be read: {long} (File name too long (os error 36))]"
    );
    let all = text(&Glob, &c, json!({"pattern": "**/*.txt"})).await;
    assert_eq!(all, format!("pub/a.txt\n{note}"));
    let fixed = text(&Glob, &c, json!({"pattern": format!("{long}/*")})).await;
    assert_eq!(fixed, format!("No files found\n{note}"));
    let unrelated = text(&Glob, &c, json!({"pattern": "pub/*"})).await;
    assert_eq!(unrelated, "pub/a.txt");
    // Grep over the same tree names it in the same words.
    let grep = text(&Grep, &c, json!({"pattern": "hello"})).await;
    assert!(grep.ends_with(&format!("\n\n{note}")), "{grep}");
}

/// The reviewer's case: `perm/priv` (mode 700, another user's) holds `b.txt`. As that
/// other user (`nobody`, through `setpriv`, when the tests run as root; else the test's own
/// user, with `priv` at mode 000), Glob `priv/*` and `**/*.txt` name `priv` as not read
/// (they answered "No files found" and `pub/a.txt` alone, without a word), with the same
/// words as Grep.
#[tokio::test]
async fn glob_names_a_directory_of_another_user() {
    const DIR: &str = "TOOLWRIGHT_TEST_REVIEW29_PRIV";
    if let Ok(dir) = std::env::var(DIR) {
        let c = ctx(Path::new(&dir));
        let note = "[Not searched, as they could not be read: priv (Permission denied (os error \
                    13))]";
        let fixed = text(&Glob, &c, json!({"pattern": "priv/*"})).await;
        assert_eq!(fixed, format!("No files found\n{note}"));
        let all = text(&Glob, &c, json!({"pattern": "**/*.txt"})).await;
        assert_eq!(all, format!("pub/a.txt\n{note}"));
        let grep = text(&Grep, &c, json!({"pattern": "hello"})).await;
        assert!(grep.ends_with(&format!("\n\n{note}")), "{grep}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let perm = tmp.path().join("perm");
    for (sub, file) in [("pub", "a.txt"), ("priv", "b.txt")] {
        fs::create_dir_all(perm.join(sub)).unwrap();
        fs::write(perm.join(sub).join(file), "hello\n").unwrap();
    }
    let private = perm.join("priv");
    let as_root = nix::unistd::geteuid().is_root();
    fs::set_permissions(
        &private,
        fs::Permissions::from_mode(if as_root { 0o700 } else { 0o000 }),
    )
    .unwrap();
    // As root, `nobody` runs a copy of this test binary beside the tree.
    let out = rerun_test(
        // Its path in the `review` binary, this file being its module `review29_search`.
        "review29_search::glob_names_a_directory_of_another_user",
        DIR,
        &perm,
        as_root.then(|| tmp.path().join("review29-test")).as_deref(),
    );
    fs::set_permissions(&private, fs::Permissions::from_mode(0o755)).unwrap();
    let Some(out) = out else {
        println!("skipped: running as root, and setpriv cannot run a command as nobody");
        return;
    };
    assert_rerun_passed(&out);
}

/// A pattern's fixed directories follow the rule every path follows: kept in the Unicode
/// form given, and only when nothing exists under that form, its NFC or NFD form. A
/// directory named in NFD is found by a pattern that names it in NFC, relative, absolute,
/// from `~/`, or after `..`, as a `path` naming it in NFC already was; Grep's `glob` finds
/// its files too. The directory the result names is the one on disk.
#[tokio::test]
async fn a_patterns_directory_in_the_other_normalization_form_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    fs::create_dir_all(p.join(NFD)).unwrap();
    fs::create_dir_all(p.join("sub")).unwrap();
    fs::write(p.join(NFD).join("x.txt"), "nfd here\n").unwrap();
    let c = ctx(&p).with_home(Some(p.clone()));
    let on_disk = format!("{NFD}/x.txt");
    // The `path` form, already right.
    let by_path = text(&Glob, &c, json!({"pattern": "*", "path": NFC})).await;
    assert_eq!(by_path, on_disk);
    for pattern in [
        format!("{NFC}/*"),
        format!("./{NFC}/*.txt"),
        format!("sub/../{NFC}/*"),
        format!("{}/{NFC}/*", p.display()),
        format!("~/{NFC}/*"),
    ] {
        let found = text(&Glob, &c, json!({ "pattern": pattern })).await;
        assert_eq!(found, on_disk, "{pattern}");
    }
    let grep = text(
        &Grep,
        &c,
        json!({"pattern": "nfd", "glob": format!("{NFC}/*")}),
    )
    .await;
    assert_eq!(grep, format!("Found 1 file\n{on_disk}"));
    // Excluding works the same way.
    let grep = text(
        &Grep,
        &c,
        json!({"pattern": "nfd", "glob": format!("!{NFC}/*")}),
    )
    .await;
    assert_eq!(grep, "No files found");
    // A name that exists in the form given keeps it: both twins, each found by its own.
    fs::create_dir_all(p.join(NFC)).unwrap();
    fs::write(p.join(NFC).join("y.txt"), "nfc\n").unwrap();
    let found = text(&Glob, &c, json!({"pattern": format!("{NFC}/*")})).await;
    assert_eq!(found, format!("{NFC}/y.txt"));
    let found = text(&Glob, &c, json!({"pattern": format!("{NFD}/*")})).await;
    assert_eq!(found, on_disk);
}

/// Without a home directory, a `~` `path` (Glob and Grep) or a `~/` Glob pattern is refused
/// as Read refuses it, instead of searching a directory named `~` in the working
/// directory (here one exists, holding a file each search would have found) or saying the
/// path does not exist. With a home directory, they search it.
#[tokio::test]
async fn a_tilde_without_a_home_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("cwd");
    let home = tmp.path().join("home");
    for dir in [cwd.join("~/proj"), home.join("proj")] {
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.rs"), "fn main() {}\n").unwrap();
    }
    let homeless = ctx(&cwd).with_home(None);
    let calls = [
        (
            &Glob as &dyn tool_core::Tool,
            json!({"pattern": "~/proj/*.rs"}),
            "pattern",
            "~/proj/*.rs",
        ),
        (
            &Glob,
            json!({"pattern": "*.rs", "path": "~/proj"}),
            "path",
            "~/proj",
        ),
        (
            &Glob,
            json!({"pattern": "proj/*.rs", "path": " ~ "}),
            "path",
            "~",
        ),
        (
            &Grep,
            json!({"pattern": "main", "path": "~/proj"}),
            "path",
            "~/proj",
        ),
        (&Grep, json!({"pattern": "main", "path": "~"}), "path", "~"),
    ];
    for (tool, input, field, shown) in &calls {
        let e = fail(*tool, &homeless, input.clone()).await;
        assert!(
            e.text.contains(&format!(
                "The {field} parameter starts with ~, but there is no home directory to \
                 expand it to: {shown}. Use an absolute path instead."
            )),
            "{input}: {}",
            e.text
        );
    }
    let homed = ctx(&cwd).with_home(Some(home.clone()));
    let expected = home.join("proj/a.rs").display().to_string();
    for (tool, input, _, _) in &calls {
        let found = text(*tool, &homed, input.clone()).await;
        assert!(found.contains(&expected), "{input}: {found}");
    }
    // `~x` is a name in the working directory, with a home or without one.
    fs::create_dir_all(cwd.join("~x")).unwrap();
    fs::write(cwd.join("~x/b.rs"), "fn main() {}\n").unwrap();
    let found = text(&Glob, &homeless, json!({"pattern": "~x/*.rs"})).await;
    assert_eq!(found, "~x/b.rs");
    let found = text(&Grep, &homeless, json!({"pattern": "main", "path": "~x"})).await;
    assert_eq!(found, "Found 1 file\n~x/b.rs");
}

/// A Grep `glob` is matched against paths relative to the searched directory: an absolute
/// one (`/tmp/…/src/*.rs`) lets no file through. When no file was searched the result says
/// so (ripgrep warns that nothing was searched), instead of a bare "No files found"; a
/// leading `/` that anchors a glob which does let files through adds nothing.
#[tokio::test]
async fn an_absolute_grep_glob_that_searched_nothing_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    fs::create_dir_all(p.join("src")).unwrap();
    fs::write(p.join("src/lib.rs"), "fn main() {}\n").unwrap();
    let c = ctx(&p);
    let absolute = format!("{}/src/*.rs", p.display());
    for mode in ["files_with_matches", "content", "count"] {
        let found = text(
            &Grep,
            &c,
            json!({"pattern": "main", "glob": absolute, "output_mode": mode}),
        )
        .await;
        assert!(
            found.ends_with(&format!(
                "\n\n[No file was searched: a glob is matched against paths relative to the \
                 searched directory, and `{absolute}` starts with /, which anchors it there. \
                 Give the directory as `path` and a glob relative to it.]"
            )),
            "{mode}: {found}"
        );
    }
    let found = text(&Grep, &c, json!({"pattern": "main", "glob": "/src/*.rs"})).await;
    assert_eq!(found, "Found 1 file\nsrc/lib.rs");
    // Files searched without a match: no note.
    let found = text(
        &Grep,
        &c,
        json!({"pattern": "nothing", "glob": "/src/*.rs"}),
    )
    .await;
    assert_eq!(found, "No files found");
}
