//! ToolSearch: finds deferred tools by name or keyword and returns `tool_reference` blocks,
//! which load the tools' schemas (Claude Code's `ToolSearchTool`).
//!
//! The algorithm is Claude Code's (semantics 7.4): `select:A,B` picks tools by name; an
//! exact name wins alone; an `mcp__server` prefix lists that server's tools; otherwise each
//! whitespace-separated term scores every deferred tool: an exact name part **10** (MCP
//! **12**), else a name part containing the term **5** (MCP **6**), a search-hint word match
//! **+4**, a description (`prompt()`) word match **+2**. Terms written `+term` are required.
//! Scores above zero are kept, sorted descending (stable), and cut at `max_results`.
//!
//! Claude Code also adds **3** when "the full spaced name contains the term" and nothing has
//! scored yet; terms never contain whitespace, so that case implies a name-part match, which
//! already scored: it can never fire and is not evaluated (the tests check the indexed search
//! against a literal port, the `+3` included).
//!
//! Scoring runs on a [`ToolSearchIndex`] built once per tool list (kept in the context's app
//! state): name parts, description words and hint words are hashed to the tools holding
//! them, so a query touches only the tools it matches.
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use memchr::memmem;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    ContentBlock, MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolResultContent,
    ToolUseContext, TypedTool, async_trait,
};

/// The tool's name.
pub const TOOL_SEARCH_NAME: &str = "ToolSearch";

/// How many matches a query returns when `max_results` is absent.
pub const DEFAULT_MAX_RESULTS: usize = 5;

/// The text of a search that found nothing.
pub const NO_MATCH_TEXT: &str = "No matching deferred tools found";

/// Input of the ToolSearch tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ToolSearchInput {
    /// Query to find deferred tools. Use "select:<tool_name>" for direct selection, or keywords to search.
    pub query: String,
    /// Maximum number of results to return (default: 5)
    pub max_results: Option<f64>,
}

/// Output of the ToolSearch tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSearchOutput {
    /// The names found, best first.
    pub matches: Vec<String>,
    /// The query as given.
    pub query: String,
    /// How many deferred tools were searched.
    pub total_deferred_tools: usize,
    /// MCP servers still connecting, when nothing was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_mcp_servers: Option<Vec<String>>,
}

/// The ToolSearch tool. Never deferred itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolSearch;

const PROMPT: &str = "Fetches full schema definitions for deferred tools so they can be called.

Deferred tools appear by name in <available-deferred-tools> messages. Until fetched, only the name is known - there is no parameter schema, so the tool cannot be invoked. This tool takes a query, matches it against the deferred tool list, and returns the matched tools' complete JSONSchema definitions inside a <functions> block. Once a tool's schema appears in that result, it is callable exactly like any tool defined at the top of the prompt.

Result format: each matched tool appears as one <function>{\"description\": \"...\", \"name\": \"...\", \"parameters\": {...}}</function> line inside the <functions> block - the same encoding as the tool list at the top of this prompt.

Query forms:
- \"select:Read,Edit,Grep\" - fetch these exact tools by name
- \"notebook jupyter\" - keyword search, up to max_results best matches
- \"+slack send\" - require \"slack\" in the name, rank by remaining terms";

/// Whether `tool` is deferred (Claude Code's `isDeferredTool`, semantics 7.1): never when
/// `always_load`, always for MCP tools, never for ToolSearch itself, otherwise
/// `should_defer`.
pub fn is_deferred_tool(tool: &dyn Tool) -> bool {
    if tool.always_load() {
        return false;
    }
    if tool.is_mcp() {
        return true;
    }
    if tool.name() == TOOL_SEARCH_NAME {
        return false;
    }
    tool.should_defer()
}

/// The announcement of the deferred pool that precedes a request (Claude Code's non-delta
/// mode): `<available-deferred-tools>`, the deferred tools' names sorted one per line, and
/// the closing tag. `None` when no tool is deferred.
pub fn deferred_tools_announcement(tools: &[Arc<dyn Tool>]) -> Option<String> {
    let mut names: Vec<&str> = tools
        .iter()
        .filter(|t| is_deferred_tool(t.as_ref()))
        .map(|t| t.name())
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort_unstable();
    Some(format!(
        "<available-deferred-tools>\n{}\n</available-deferred-tools>",
        names.join("\n")
    ))
}

/// A tool's name split as Claude Code's `parseToolName` does: MCP names
/// (`mcp__server__tool_name`) on `__` and `_`, others on CamelCase humps and `_`, lower-cased.
/// Returns the parts and whether the name is an MCP name.
pub fn name_parts(name: &str) -> (Vec<String>, bool) {
    if let Some(rest) = name.strip_prefix("mcp__") {
        let lower = rest.to_lowercase();
        let parts = lower
            .split("__")
            .flat_map(|p| p.split('_'))
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        return (parts, true);
    }
    // `name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ')`, then split on spaces.
    let mut spaced = String::with_capacity(name.len() + 8);
    let mut prev_lower = false;
    for c in name.chars() {
        if prev_lower && c.is_ascii_uppercase() {
            spaced.push(' ');
        }
        prev_lower = c.is_ascii_lowercase();
        spaced.push(if c == '_' { ' ' } else { c });
    }
    let parts = spaced
        .to_lowercase()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    (parts, false)
}

/// A JavaScript regex word character (`\w`, ASCII only).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Every start of `needle` in `haystack`, overlapping ones included (`memmem::find_iter`
/// resumes after a match, so it skips an occurrence that overlaps the previous one, as in
/// `x-x` in `ax-x-x`).
fn find_overlapping<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let finder = memmem::Finder::new(needle);
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + finder.find(haystack.get(from..)?)?;
        from = at + 1;
        Some(at)
    })
}

/// Whether `text` matches the JavaScript regex `\b<term>\b` (`term` literal, ASCII word
/// boundaries).
pub fn word_match(text: &str, term: &str) -> bool {
    let (t, n) = (text.as_bytes(), term.as_bytes());
    let (Some(&first), Some(&last)) = (n.first(), n.last()) else {
        return false;
    };
    find_overlapping(t, n).any(|at| {
        let before = at.checked_sub(1).and_then(|i| t.get(i)).copied();
        let after = t.get(at + n.len()).copied();
        before.is_some_and(is_word_byte) != is_word_byte(first)
            && is_word_byte(last) != after.is_some_and(is_word_byte)
    })
}

/// The ASCII word runs of a lower-cased text: exactly the terms made of word characters that
/// `\bterm\b` matches in it.
fn words(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

fn all_word_chars(term: &str) -> bool {
    term.bytes().all(is_word_byte)
}

/// Texts joined by NUL bytes into one haystack, so that one SIMD scan finds a term in all
/// of them. NUL is not a word character, so `\b` at an entry's edge behaves as at the edge
/// of a lone string.
#[derive(Default)]
struct Blob {
    text: Vec<u8>,
    starts: Vec<usize>,
}

impl Blob {
    fn push(&mut self, entry: &str) {
        self.starts.push(self.text.len());
        self.text.extend_from_slice(entry.as_bytes());
        self.text.push(0);
    }

    /// The entries (ascending, each once) containing `term`: anywhere, or as `\bterm\b`
    /// when `word`.
    fn find(&self, term: &str, word: bool) -> Vec<usize> {
        let n = term.as_bytes();
        let (Some(&first), Some(&last)) = (n.first(), n.last()) else {
            return Vec::new();
        };
        let finder = memmem::Finder::new(n);
        let mut out: Vec<usize> = Vec::new();
        let mut from = 0;
        while let Some(found) = self.text.get(from..).and_then(|h| finder.find(h)) {
            let at = from + found;
            let entry = self.starts.partition_point(|&s| s <= at).saturating_sub(1);
            // The entry's end (its NUL, the last one's too); a match must not run into it.
            let end = self
                .starts
                .get(entry + 1)
                .map_or(self.text.len() - 1, |&s| s - 1);
            // Next, the byte after this start: an occurrence overlapping this one counts.
            from = at + 1;
            if at + n.len() > end {
                continue;
            }
            if word {
                let before = at.checked_sub(1).and_then(|i| self.text.get(i)).copied();
                let after = self.text.get(at + n.len()).copied();
                if before.is_some_and(is_word_byte) == is_word_byte(first)
                    || is_word_byte(last) == after.is_some_and(is_word_byte)
                {
                    continue;
                }
            }
            out.push(entry);
            // The entry is found: go on from the next one.
            from = end + 1;
        }
        out
    }
}

struct Deferred {
    /// Index in the full tool list.
    tool: usize,
    name_lower: String,
    is_mcp: bool,
}

/// A precomputed search index over one tool list. Build it once per list
/// ([`ToolSearchIndex::build`]); queries ([`ToolSearchIndex::search`]) then touch only the
/// tools they match.
pub struct ToolSearchIndex {
    names: Vec<String>,
    deferred: Vec<Deferred>,
    /// Name and aliases -> first deferred id.
    deferred_by_name: HashMap<String, usize>,
    /// Name and aliases -> first tool index.
    all_by_name: HashMap<String, usize>,
    /// Lower-cased name -> first deferred id.
    deferred_by_lower: HashMap<String, usize>,
    /// Lower-cased name -> first tool index.
    all_by_lower: HashMap<String, usize>,
    /// Name part -> deferred ids holding it (each once).
    parts: HashMap<String, Vec<u32>>,
    /// Every distinct part (joined in one haystack), for substring matches.
    part_blob: Blob,
    /// The part of each `part_blob` entry, with its deferred ids.
    part_entries: Vec<(String, Vec<u32>)>,
    /// Descriptions by deferred id, for terms that are not plain words.
    desc_blob: Blob,
    /// Search hints by deferred id, for terms that are not plain words.
    hint_blob: Blob,
    /// Description word -> deferred ids.
    desc_words: HashMap<String, Vec<u32>>,
    /// Search-hint word -> deferred ids.
    hint_words: HashMap<String, Vec<u32>>,
}

impl std::fmt::Debug for ToolSearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSearchIndex")
            .field("tools", &self.names.len())
            .field("deferred", &self.deferred.len())
            .finish()
    }
}

fn push_id(map: &mut HashMap<String, Vec<u32>>, key: &str, id: u32) {
    let ids = map.entry(key.to_owned()).or_default();
    if ids.last() != Some(&id) {
        ids.push(id);
    }
}

impl ToolSearchIndex {
    /// Indexes `tools` (their deferred subset for scoring, all of them for name look-ups).
    pub fn build(tools: &[Arc<dyn Tool>]) -> Self {
        let mut index = Self {
            names: Vec::with_capacity(tools.len()),
            deferred: Vec::new(),
            deferred_by_name: HashMap::new(),
            all_by_name: HashMap::new(),
            deferred_by_lower: HashMap::new(),
            all_by_lower: HashMap::new(),
            parts: HashMap::new(),
            part_blob: Blob::default(),
            part_entries: Vec::new(),
            desc_blob: Blob::default(),
            hint_blob: Blob::default(),
            desc_words: HashMap::new(),
            hint_words: HashMap::new(),
        };
        for (i, tool) in tools.iter().enumerate() {
            let name = tool.name().to_owned();
            let deferred = is_deferred_tool(tool.as_ref());
            let lower = name.to_lowercase();
            for key in std::iter::once(name.as_str()).chain(tool.aliases().iter().copied()) {
                index.all_by_name.entry(key.to_owned()).or_insert(i);
                if deferred {
                    index
                        .deferred_by_name
                        .entry(key.to_owned())
                        .or_insert(index.deferred.len());
                }
            }
            index.all_by_lower.entry(lower.clone()).or_insert(i);
            if deferred {
                let id = index.deferred.len();
                index.deferred_by_lower.entry(lower.clone()).or_insert(id);
                let id32 = u32::try_from(id).unwrap_or(u32::MAX);
                let (parts, is_mcp) = name_parts(&name);
                for part in &parts {
                    push_id(&mut index.parts, part, id32);
                }
                drop(parts);
                let desc = tool.prompt().to_lowercase();
                let hint = tool
                    .search_hint()
                    .map(str::to_lowercase)
                    .unwrap_or_default();
                for w in words(&desc) {
                    push_id(&mut index.desc_words, w, id32);
                }
                for w in words(&hint) {
                    push_id(&mut index.hint_words, w, id32);
                }
                index.desc_blob.push(&desc);
                index.hint_blob.push(&hint);
                index.deferred.push(Deferred {
                    tool: i,
                    name_lower: lower,
                    is_mcp,
                });
            }
            index.names.push(name);
        }
        let mut entries: Vec<(String, Vec<u32>)> = index
            .parts
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        entries.sort_unstable();
        for (part, _) in &entries {
            index.part_blob.push(part);
        }
        index.part_entries = entries;
        index
    }

    /// How many tools are deferred.
    pub fn deferred_count(&self) -> usize {
        self.deferred.len()
    }

    /// The names of the deferred tools, in list order.
    pub fn deferred_names(&self) -> impl Iterator<Item = &str> {
        self.deferred.iter().map(|d| self.names[d.tool].as_str())
    }

    fn deferred_name(&self, id: usize) -> String {
        self.names[self.deferred[id].tool].clone()
    }

    /// Runs a query (Claude Code's `call`): `select:` names, or keyword search. Returns the
    /// matching names, best first.
    pub fn search(&self, query: &str, max_results: usize) -> Vec<String> {
        self.search_cut(query, Cut::First(max_results))
    }

    /// [`Self::search`] with the keyword results cut by `cut`; `select:` is never cut.
    fn search_cut(&self, query: &str, cut: Cut) -> Vec<String> {
        if let Some(list) = strip_select(query) {
            let mut found: Vec<String> = Vec::new();
            for wanted in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let name = self
                    .deferred_by_name
                    .get(wanted)
                    .map(|&id| self.deferred_name(id))
                    .or_else(|| self.all_by_name.get(wanted).map(|&i| self.names[i].clone()));
                if let Some(name) = name
                    && !found.contains(&name)
                {
                    found.push(name);
                }
            }
            return found;
        }
        self.keyword_search(query, cut)
    }

    fn keyword_search(&self, query: &str, cut: Cut) -> Vec<String> {
        let q = query.trim().to_lowercase();
        if let Some(&id) = self.deferred_by_lower.get(&q) {
            return vec![self.deferred_name(id)];
        }
        if let Some(&i) = self.all_by_lower.get(&q) {
            return vec![self.names[i].clone()];
        }
        if q.starts_with("mcp__") && q.len() > 5 {
            let hits: Vec<String> = cut.apply(
                self.deferred
                    .iter()
                    .filter(|d| d.name_lower.starts_with(&q))
                    .map(|d| self.names[d.tool].clone()),
            );
            if !hits.is_empty() {
                return hits;
            }
        }
        let terms: Vec<&str> = q.split_whitespace().collect();
        let mut required: Vec<&str> = Vec::new();
        let mut optional: Vec<&str> = Vec::new();
        for term in &terms {
            match term.strip_prefix('+') {
                Some(rest) if !rest.is_empty() => required.push(rest),
                _ => optional.push(term),
            }
        }
        let scoring: Vec<&str> = if required.is_empty() {
            terms.clone()
        } else {
            required.iter().chain(optional.iter()).copied().collect()
        };
        let mut distinct_required: Vec<&str> = Vec::new();
        for r in &required {
            if !distinct_required.contains(r) {
                distinct_required.push(r);
            }
        }

        let n = self.deferred.len();
        let mut score = vec![0u32; n];
        let mut touched: Vec<u32> = Vec::new();
        // Per-term stamps (term number + 1) so a tool counts once per term and category.
        let mut part_stamp = vec![0u32; n];
        let mut any_stamp = vec![0u32; n];
        let mut required_hits = vec![0u32; n];
        for (k, term) in scoring.iter().enumerate() {
            let stamp = u32::try_from(k + 1).unwrap_or(u32::MAX);
            let is_required = distinct_required.contains(term)
                && scoring[..k].iter().all(|earlier| earlier != term);
            let mut hit = |id: u32, add: u32, score: &mut [u32], any_stamp: &mut [u32]| {
                let i = id as usize;
                if any_stamp[i] == 0 {
                    touched.push(id);
                }
                score[i] += add;
                if any_stamp[i] != stamp {
                    any_stamp[i] = stamp;
                    if is_required {
                        required_hits[i] += 1;
                    }
                }
            };
            // Name parts: exact, else substring.
            if let Some(ids) = self.parts.get(*term) {
                for &id in ids {
                    part_stamp[id as usize] = stamp;
                    let add = if self.deferred[id as usize].is_mcp {
                        12
                    } else {
                        10
                    };
                    hit(id, add, &mut score, &mut any_stamp);
                }
            }
            for entry in self.part_blob.find(term, false) {
                let (part, ids) = &self.part_entries[entry];
                if part.len() > term.len() {
                    for &id in ids {
                        if part_stamp[id as usize] != stamp {
                            part_stamp[id as usize] = stamp;
                            let add = if self.deferred[id as usize].is_mcp {
                                6
                            } else {
                                5
                            };
                            hit(id, add, &mut score, &mut any_stamp);
                        }
                    }
                }
            }
            // Hint and description words.
            if all_word_chars(term) {
                if let Some(ids) = self.hint_words.get(*term) {
                    for &id in ids {
                        hit(id, 4, &mut score, &mut any_stamp);
                    }
                }
                if let Some(ids) = self.desc_words.get(*term) {
                    for &id in ids {
                        hit(id, 2, &mut score, &mut any_stamp);
                    }
                }
            } else {
                for id in self.hint_blob.find(term, true) {
                    hit(
                        u32::try_from(id).unwrap_or(u32::MAX),
                        4,
                        &mut score,
                        &mut any_stamp,
                    );
                }
                for id in self.desc_blob.find(term, true) {
                    hit(
                        u32::try_from(id).unwrap_or(u32::MAX),
                        2,
                        &mut score,
                        &mut any_stamp,
                    );
                }
            }
        }
        let need = u32::try_from(distinct_required.len()).unwrap_or(u32::MAX);
        touched.sort_unstable();
        let mut ranked: Vec<(u32, u32)> = touched
            .into_iter()
            .filter(|&id| score[id as usize] > 0 && required_hits[id as usize] >= need)
            .map(|id| (id, score[id as usize]))
            .collect();
        ranked.sort_by_key(|&(_, s)| std::cmp::Reverse(s));
        cut.apply(
            ranked
                .into_iter()
                .map(|(id, _)| self.deferred_name(id as usize)),
        )
    }
}

/// How keyword results are cut, as JavaScript's `slice(0, n)` cuts them.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// `n` ≥ 0: the first `n`.
    First(usize),
    /// `n` < 0: all but the last `-n`.
    AllButLast(usize),
}

impl Cut {
    /// The `max_results` a model sent, as `slice(0, max_results)` reads it: the whole part
    /// of the number (2.5 keeps 2), one below zero counting from the end.
    fn from_max_results(max_results: f64) -> Self {
        let m = max_results.trunc();
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "the whole part of a number, sign taken apart; the cast saturates"
        )]
        if m >= 0.0 {
            Cut::First(m as usize)
        } else {
            Cut::AllButLast(-m as usize)
        }
    }

    fn apply(self, names: impl Iterator<Item = String>) -> Vec<String> {
        match self {
            Cut::First(n) => names.take(n).collect(),
            Cut::AllButLast(n) => {
                let mut all: Vec<String> = names.collect();
                all.truncate(all.len().saturating_sub(n));
                all
            }
        }
    }
}

/// The list after a case-insensitive `select:` prefix (`/^select:(.+)$/i`).
fn strip_select(query: &str) -> Option<&str> {
    let head = query.get(..7)?;
    let rest = &query[7..];
    (head.eq_ignore_ascii_case("select:") && !rest.is_empty() && !rest.contains('\n'))
        .then_some(rest)
}

/// The context's cached index, rebuilt when the tool list changes. It holds the tools it
/// was built from: kept alive, none of their allocations can be reused by a new tool, so
/// comparing by identity cannot mistake a new list for the old one.
#[derive(Clone)]
struct CachedIndex {
    tools: Arc<[Arc<dyn Tool>]>,
    index: Arc<ToolSearchIndex>,
}

/// The index of the context's tool list, built on first use and kept in its app state.
pub fn index_for(ctx: &ToolUseContext) -> Arc<ToolSearchIndex> {
    let tools = ctx.tools();
    if let Some(cached) = ctx.app_state().get::<CachedIndex>()
        && cached.tools.len() == tools.len()
        && cached
            .tools
            .iter()
            .zip(tools)
            .all(|(a, b)| Arc::ptr_eq(a, b))
    {
        return cached.index;
    }
    let index = Arc::new(ToolSearchIndex::build(tools));
    ctx.app_state().set(CachedIndex {
        tools: tools.into(),
        index: Arc::clone(&index),
    });
    index
}

#[async_trait]
impl TypedTool for ToolSearch {
    type Input = ToolSearchInput;
    type Output = ToolSearchOutput;
    const NAME: &'static str = TOOL_SEARCH_NAME;

    fn description(&self) -> Cow<'_, str> {
        "Search for or select deferred tools to make them available for use".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        PROMPT.into()
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &ToolSearchInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &ToolSearchInput) -> bool {
        true
    }

    /// Not offered in this turn ([`tool_core::ToolOptions::tool_search_off`]): refused with
    /// the text of a call of a tool that does not exist, since its `tool_reference` answer
    /// would make every later request one the API refuses (no tool-search beta).
    async fn validate_input(
        &self,
        _input: &ToolSearchInput,
        ctx: &ToolUseContext,
    ) -> Result<(), tool_core::ValidationError> {
        if ctx.options().tool_search_off {
            return Err(tool_core::ValidationError::new(format!(
                "Error: No such tool available: {TOOL_SEARCH_NAME}"
            )));
        }
        Ok(())
    }

    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &ToolSearchInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: ToolSearchInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<ToolSearchOutput>, ToolError> {
        let index = index_for(&ctx);
        // Any number, as Claude Code's schema takes it; `select:` is never cut.
        let cut = input
            .max_results
            .map_or(Cut::First(DEFAULT_MAX_RESULTS), Cut::from_max_results);
        let matches = index.search_cut(&input.query, cut);
        let pending: Vec<String> = ctx
            .options()
            .mcp_clients
            .iter()
            // Only servers still connecting: a failed one will not bring tools by waiting.
            .filter(|c| c.state == tool_core::McpClientState::Pending)
            .map(|c| c.name.clone())
            .collect();
        Ok(ToolResult::new(ToolSearchOutput {
            pending_mcp_servers: (matches.is_empty() && !pending.is_empty()).then_some(pending),
            matches,
            query: input.query,
            total_deferred_tools: index.deferred_count(),
        }))
    }

    fn to_content(&self, output: &ToolSearchOutput) -> ToolResultContent {
        if output.matches.is_empty() {
            let mut text = NO_MATCH_TEXT.to_owned();
            if let Some(pending) = &output.pending_mcp_servers {
                text.push_str(&format!(
                    ". Some MCP servers are still connecting: {}. Their tools will become available shortly — try searching again.",
                    pending.join(", ")
                ));
            }
            return ToolResultContent::Text(text);
        }
        ToolResultContent::Blocks(
            output
                .matches
                .iter()
                .map(|name| ContentBlock::ToolReference {
                    tool_name: name.clone(),
                })
                .collect(),
        )
    }
}
