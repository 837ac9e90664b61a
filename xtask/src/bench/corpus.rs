//! The search corpora: a source-like tree generated deterministically from a seed (kept
//! between runs, rebuilt when the generator changes), and a real source tree when one is
//! present (the cargo registry's unpacked crates).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The generator's seed; change it (or [`VERSION`]) and the tree is regenerated.
pub const SEED: u64 = 0x7001_3A1C_5EED_0001;
/// The generator's version.
pub const VERSION: u32 = 1;
/// Files in the generated tree (plus the `.hidden` ones and the `config.toml` files).
pub const FILES: usize = 8_000;
/// Directories holding a `config.toml` (the selective Glob matches exactly these).
pub const TOMLS: usize = 60;
/// Files under `.hidden/` (both Grep and `rg --hidden` search them).
pub const HIDDEN: usize = 20;

/// xorshift64*: small, fast, the same everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced, xorshift needs a non-zero state).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next_u64() % n.max(1) as u64).unwrap_or(0)
    }
}

const WORDS: &[&str] = &[
    "let", "self", "value", "result", "config", "buffer", "index", "count", "parse", "render",
    "write", "read", "stream", "token", "error", "state", "cache", "queue", "node", "edge", "path",
    "file", "line", "match", "filter", "map", "into", "from", "async", "await", "return", "struct",
    "impl", "trait", "where", "const", "static", "mut", "ref", "move",
];
const EXTS: &[&str] = &["rs", "rs", "rs", "rs", "py", "py", "js", "js", "md", "txt"];

/// The text of generated file `i` (deterministic in the generator's state).
fn file_text(rng: &mut Rng, i: usize) -> String {
    let size = 2_048 + rng.below(14_336);
    let mut text = String::with_capacity(size + 200);
    let needle_line = i.is_multiple_of(40).then(|| rng.below(40));
    let handler_line = (i % 10 == 3).then(|| rng.below(40));
    let long_line = (i % 400 == 7).then(|| rng.below(20));
    let mut line_no = 0;
    while text.len() < size {
        if needle_line == Some(line_no) {
            let _ = writeln!(text, "    // needle_{i} marks this file");
        } else if handler_line == Some(line_no) {
            let w = WORDS[rng.below(WORDS.len())];
            let _ = writeln!(text, "fn {w}_handler(ctx: &Context) -> Result<()> {{");
        } else if long_line == Some(line_no) {
            let mut long = String::from("    let table = [");
            while long.len() < 700 {
                let _ = write!(long, "\"{}\", ", WORDS[rng.below(WORDS.len())]);
            }
            long.push_str("]; // fn wide_handler(");
            text.push_str(&long);
            text.push('\n');
        } else {
            let indent = rng.below(4) * 4;
            text.extend(std::iter::repeat_n(' ', indent));
            let words = 3 + rng.below(12);
            for w in 0..words {
                if w > 0 {
                    text.push(' ');
                }
                text.push_str(WORDS[rng.below(WORDS.len())]);
            }
            text.push('\n');
        }
        line_no += 1;
    }
    text
}

/// Writes the generated tree of `files` source files (plus the `config.toml` and `.hidden`
/// files) into `dir`.
pub fn generate(dir: &Path, files: usize) -> std::io::Result<usize> {
    let mut rng = Rng::new(SEED);
    let mut written = 0;
    for i in 0..files {
        let sub = dir.join(format!("src/m{:02}/p{}", i % 40, (i / 40) % 8));
        std::fs::create_dir_all(&sub)?;
        let ext = EXTS[rng.below(EXTS.len())];
        std::fs::write(sub.join(format!("f{i:05}.{ext}")), file_text(&mut rng, i))?;
        written += 1;
    }
    for t in 0..TOMLS {
        let sub = dir.join(format!("src/m{:02}/p{}", t % 40, t / 40));
        std::fs::create_dir_all(&sub)?;
        std::fs::write(
            sub.join("config.toml"),
            format!("[package]\nname = \"m{t}\"\n"),
        )?;
        written += 1;
    }
    let hidden = dir.join(".hidden");
    std::fs::create_dir_all(&hidden)?;
    for h in 0..HIDDEN {
        std::fs::write(hidden.join(format!("h{h}.rs")), file_text(&mut rng, h * 40))?;
        written += 1;
    }
    Ok(written)
}

/// The generated tree under `target/bench/corpus`, generated now unless a complete one of the
/// same seed and version is there.
pub fn generated(root: &Path) -> crate::Result<PathBuf> {
    let base = root.join("target/bench/corpus");
    let name = format!("generated-v{VERSION}-{SEED:016x}");
    let dir = base.join(&name);
    let stamp = base.join(format!("{name}.complete"));
    if dir.is_dir() && stamp.is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&base)?;
    let tmp = base.join(format!("{name}.partial"));
    for stale in [&tmp, &dir] {
        if stale.exists() {
            std::fs::remove_dir_all(stale)
                .map_err(|e| format!("removing {}: {e}", stale.display()))?;
        }
    }
    let start = std::time::Instant::now();
    let files = generate(&tmp, FILES).map_err(|e| format!("generating {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &dir)?;
    std::fs::write(&stamp, format!("{files}\n"))?;
    println!(
        "==> generated the corpus: {files} files in {} ({:.1} s)",
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(dir)
}

/// A real source tree, when present: `$CARGO_HOME/registry/src` (else `~/.cargo/registry/src`).
pub fn real() -> Option<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let dir = cargo_home.join("registry/src");
    dir.is_dir().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_plants_what_the_benches_search() {
        let a = tempfile::tempdir().unwrap();
        // The first 200 files are enough to check the layout and the determinism.
        let mut ra = Rng::new(SEED);
        let mut rb = Rng::new(SEED);
        for i in 0..200 {
            assert_eq!(file_text(&mut ra, i), file_text(&mut rb, i));
        }
        let n = generate(a.path(), 400).unwrap();
        assert_eq!(n, 400 + TOMLS + HIDDEN);
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        let f0 = a.path().join("src/m00/p0");
        let name = std::fs::read_dir(&f0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("f00000."))
            .unwrap();
        assert!(read(&f0.join(&name)).contains("needle_0 marks this file"));
        assert!(read(&a.path().join("src/m05/p1/config.toml")).contains("name = \"m45\""));
        assert!(a.path().join(".hidden/h3.rs").is_file());
        let long = std::fs::read_dir(a.path().join("src/m07/p0"))
            .unwrap()
            .map(|e| read(&e.unwrap().path()))
            .any(|t| {
                t.lines()
                    .any(|l| l.len() > 500 && l.contains("fn wide_handler("))
            });
        assert!(long, "a long line with a match exists");
    }

    #[test]
    fn rng_is_stable() {
        let mut r = Rng::new(1);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut r = Rng::new(1);
        assert_eq!(first, (0..3).map(|_| r.next_u64()).collect::<Vec<_>>());
        assert!(Rng::new(0).below(10) < 10);
    }
}
