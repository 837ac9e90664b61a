//! The `NotebookEdit` tool: replaces, inserts or deletes one cell of a Jupyter notebook,
//! keeping the rest of the document as it was (key order, indentation, metadata), and
//! writes it atomically, in the encoding it had (a UTF-8 byte order mark kept, UTF-16 kept
//! UTF-16: `notebook::decode_file`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    FileAccess, MaxResultSize, PermissionSubject, ProgressSender, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError,
};

use crate::fsutil;
use crate::notebook::{self, Json};

/// The kind of a notebook cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CellType {
    /// Code.
    Code,
    /// Markdown.
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Markdown => "markdown",
        }
    }
}

/// What to do with the cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditMode {
    /// Replace the cell's source (the default).
    #[default]
    Replace,
    /// Insert a new cell after `cell_id` (at the start without one, or with an empty one).
    Insert,
    /// Delete the cell.
    Delete,
}

/// Input of the `NotebookEdit` tool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NotebookEditInput {
    /// The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)
    pub notebook_path: String,
    /// The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified.
    #[serde(default)]
    pub cell_id: Option<String>,
    /// The new source for the cell
    pub new_source: String,
    /// The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required.
    #[serde(default)]
    pub cell_type: Option<CellType>,
    /// The type of edit to make (replace, insert, delete). Defaults to replace.
    #[serde(default)]
    pub edit_mode: Option<EditMode>,
}

/// What `NotebookEdit` returns (Claude Code's shape).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NotebookEditOutput {
    /// The source written.
    pub new_source: String,
    /// The cell changed (the new cell's id for an insert).
    pub cell_id: Option<String>,
    /// The cell's type.
    pub cell_type: String,
    /// The notebook's language.
    pub language: String,
    /// What was done.
    pub edit_mode: EditMode,
    /// The absolute path.
    pub notebook_path: PathBuf,
    /// The notebook before.
    pub original_file: String,
    /// The notebook after.
    pub updated_file: String,
}

/// The `NotebookEdit` tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct NotebookEdit;

const DESCRIPTION: &str = "Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source. Jupyter notebooks are interactive documents that combine code, text, and visualizations, commonly used for data analysis and scientific computing. The notebook_path parameter must be an absolute path, not a relative path. The cell_id identifies the cell to edit (or, for insert, the cell to insert after). Use edit_mode=insert to add a new cell after the cell with that ID (or at the beginning when no ID is given). Use edit_mode=delete to delete the cell.";

/// A refusal with an optional code.
type Refusal = (String, Option<i32>);

fn refusal(message: impl Into<String>, code: i32) -> Refusal {
    (message.into(), Some(code))
}

/// The position of the cell `id` names: a cell's `id`, or `cell-N` for the N-th cell.
fn find_cell(cells: &[Json], id: &str) -> Option<usize> {
    cells
        .iter()
        .position(|c| c.get("id").and_then(Json::as_str) == Some(id))
        .or_else(|| cell_index(id).filter(|&n| n < cells.len()))
}

/// The N of a `cell-N` id (digits only, as Claude Code's `parseCellId` reads it).
fn cell_index(id: &str) -> Option<usize> {
    id.strip_prefix("cell-")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?
        .parse()
        .ok()
}

static ID_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh cell id, unique in `cells` (nbformat 4.5 ids: 1-64 chars of `[a-zA-Z0-9-_]`).
fn new_cell_id(cells: &[Json]) -> String {
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let n = ID_COUNTER.fetch_add(1, Ordering::Relaxed);
        let mixed = (nanos as u64)
            ^ (u64::from(std::process::id()) << 32)
            ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let id = format!("{:012x}", mixed & 0xFFFF_FFFF_FFFF);
        if find_cell(cells, &id).is_none() {
            return id;
        }
    }
}

/// Source as the notebook stores it: a list of lines when its cells use lists.
fn source_value(source: &str, as_list: bool) -> Json {
    if !as_list {
        return Json::str(source);
    }
    Json::Arr(source.split_inclusive('\n').map(Json::str).collect())
}

struct Applied {
    updated: String,
    cell_id: Option<String>,
    cell_type: String,
    language: String,
}

/// What changed in the `cells` array, for rewriting only that part of the text.
enum CellChange {
    /// Cell `i` is now this.
    Replaced(usize, Json),
    /// Cell `i` is gone.
    Deleted(usize),
    /// This cell is new at position `i`.
    Inserted(usize, Json),
}

/// The leading whitespace of the line `at` is on.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    notebook::leading_whitespace(&text[start..at])
}

/// The whitespace just before `at` (what separates a cell from the `[` or `,` before it).
fn whitespace_before(text: &str, at: usize) -> &str {
    let before = &text[..at];
    &before[before.trim_end_matches([' ', '\t', '\r', '\n']).len()..]
}

/// `text` with `change` made to its `cells` array at `spans`: everything else, the other
/// cells included, stays as written (escapes, indentation with tabs, a minified layout),
/// so a one-cell edit is a one-cell diff. New text is laid out in the document's own
/// indentation (`unit` per level) and line endings.
fn splice(text: &str, spans: &notebook::CellSpans, change: &CellChange, unit: &str) -> String {
    let crlf = fsutil::is_pure_crlf(text);
    let render = |value: &Json, base: &str| {
        let out = value.to_pretty_at(unit, base);
        if crlf { fsutil::lf_to_crlf(&out) } else { out }
    };
    let cells = &spans.cells;
    let (range, replacement) = match change {
        CellChange::Replaced(i, cell) => {
            let r = cells[*i].clone();
            (r.clone(), render(cell, line_indent(text, r.start)))
        }
        CellChange::Deleted(i) => match (cells.len(), *i) {
            // The last cell: an empty array.
            (1, _) => (spans.array.clone(), "[]".to_owned()),
            // From the end of the cell before (its `,` and the whitespace go too).
            (_, i) if i > 0 => (cells[i - 1].end..cells[i].end, String::new()),
            // The first of several: up to the next one.
            (_, _) => (cells[0].start..cells[1].start, String::new()),
        },
        CellChange::Inserted(at, cell) => {
            if cells.is_empty() {
                let array = Json::Arr(vec![cell.clone()]);
                (
                    spans.array.clone(),
                    render(&array, line_indent(text, spans.array.start)),
                )
            } else if *at < cells.len() {
                let p = cells[*at].start;
                let new = render(cell, line_indent(text, p));
                (p..p, format!("{new},{}", whitespace_before(text, p)))
            } else {
                let last = &cells[cells.len() - 1];
                let new = render(cell, line_indent(text, last.start));
                (
                    last.end..last.end,
                    format!(",{}{new}", whitespace_before(text, last.start)),
                )
            }
        }
    };
    let mut out = String::with_capacity(text.len() + replacement.len());
    out.push_str(&text[..range.start]);
    out.push_str(&replacement);
    out.push_str(&text[range.end..]);
    out
}

/// Applies the edit to the notebook text in memory.
fn apply(text: &str, input: &NotebookEditInput) -> Result<Applied, Refusal> {
    let (mut nb, spans) = notebook::parse_with_cells(text).map_err(|e| match e {
        notebook::ParseError::TooManyValues | notebook::ParseError::TooDeep { .. } => {
            refusal(format!("Notebook cannot be edited: {e}."), 6)
        }
        notebook::ParseError::Invalid { .. } => refusal("Notebook is not valid JSON.", 6),
    })?;
    let language = notebook::language(&nb);
    let (major, minor) = (
        nb.get("nbformat").and_then(Json::as_u64).unwrap_or(4),
        nb.get("nbformat_minor").and_then(Json::as_u64).unwrap_or(0),
    );
    let Some(Json::Arr(cells)) = nb.get_mut("cells") else {
        return Err(refusal("Notebook has no cells array.", 6));
    };
    let mode = input.edit_mode.unwrap_or_default();
    // An empty id is no id, as Claude Code's `if (!cell_id)` reads it: an insert goes at
    // the beginning, anything else must name its cell.
    let cell_id = input.cell_id.as_deref().filter(|id| !id.is_empty());
    let index = match cell_id {
        Some(id) => match find_cell(cells, id) {
            Some(i) => Some(i),
            // `cell-N` past the last cell: said by its index, as Claude Code says it.
            None => {
                return Err(match cell_index(id) {
                    Some(n) => refusal(
                        format!("Cell with index {n} does not exist in notebook."),
                        7,
                    ),
                    None => refusal(format!("Cell with ID \"{id}\" not found in notebook."), 8),
                });
            }
        },
        None if mode != EditMode::Insert => {
            return Err(refusal(
                "Cell ID must be specified when not inserting a new cell.",
                7,
            ));
        }
        None => None,
    };
    let as_list = cells
        .iter()
        .any(|c| matches!(c.get("source"), Some(Json::Arr(_))));
    let mut result_id = cell_id.map(str::to_owned);
    let cell_type;
    let change;
    match mode {
        EditMode::Delete => {
            let i = index.unwrap_or(0);
            cell_type = cells[i]
                .get("cell_type")
                .and_then(Json::as_str)
                .unwrap_or("code")
                .to_owned();
            cells.remove(i);
            change = CellChange::Deleted(i);
        }
        EditMode::Insert => {
            let Some(kind) = input.cell_type else {
                return Err(refusal(
                    "Cell type is required when using edit_mode=insert.",
                    5,
                ));
            };
            let at = index.map_or(0, |i| i + 1);
            let mut cell = vec![("cell_type".to_owned(), Json::str(kind.as_str()))];
            if major > 4 || (major == 4 && minor >= 5) {
                let id = new_cell_id(cells);
                result_id = Some(id.clone());
                cell.push(("id".to_owned(), Json::str(id)));
            } else {
                result_id = Some(format!("cell-{at}"));
            }
            cell.push(("metadata".to_owned(), Json::Obj(Vec::new())));
            if kind == CellType::Code {
                cell.push(("execution_count".to_owned(), Json::Null));
                cell.push(("outputs".to_owned(), Json::Arr(Vec::new())));
            }
            cell.push((
                "source".to_owned(),
                source_value(&input.new_source, as_list),
            ));
            cells.insert(at, Json::Obj(cell));
            change = CellChange::Inserted(at, cells[at].clone());
            cell_type = kind.as_str().to_owned();
        }
        EditMode::Replace => {
            let i = index.unwrap_or(0);
            let cell = &mut cells[i];
            if !matches!(cell, Json::Obj(_)) {
                return Err(refusal(
                    format!(
                        "Cell \"{}\" is not a cell (a JSON object) but {}: the notebook is malformed there; delete the cell or fix the file.",
                        cell_id.unwrap_or_default(),
                        cell.kind()
                    ),
                    6,
                ));
            }
            let old_type = cell
                .get("cell_type")
                .and_then(Json::as_str)
                .unwrap_or("code")
                .to_owned();
            let new_type = input
                .cell_type
                .map_or(old_type.clone(), |t| t.as_str().to_owned());
            let list = matches!(cell.get("source"), Some(Json::Arr(_)))
                || (cell.get("source").is_none() && as_list);
            cell.set("source", source_value(&input.new_source, list));
            if new_type != old_type {
                cell.set("cell_type", Json::str(new_type.clone()));
            }
            if new_type == "code" {
                cell.set("execution_count", Json::Null);
                cell.set("outputs", Json::Arr(Vec::new()));
                // nbformat 4 allows `attachments` on markdown and raw cells only.
                if let Json::Obj(entries) = cell {
                    entries.retain(|(k, _)| k != "attachments");
                }
            } else if let Json::Obj(entries) = cell {
                entries.retain(|(k, _)| k != "outputs" && k != "execution_count");
            }
            change = CellChange::Replaced(i, cell.clone());
            cell_type = new_type;
        }
    }
    // A top-level `cells` array always has its spans (the parser records them).
    let spans = spans.ok_or_else(|| refusal("Notebook has no cells array.", 6))?;
    let updated = splice(text, &spans, &change, notebook::indent_unit(text));
    Ok(Applied {
        updated,
        cell_id: result_id,
        cell_type,
        language,
    })
}

fn notebook_path(
    input: &NotebookEditInput,
    ctx: &ToolUseContext,
) -> Result<PathBuf, ValidationError> {
    let path = fsutil::absolute_path(&input.notebook_path, "notebook_path", ctx)?;
    if !path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
    {
        return Err(ValidationError::with_code(
            "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.",
            2,
        ));
    }
    Ok(path)
}

#[async_trait::async_trait]
impl TypedTool for NotebookEdit {
    type Input = NotebookEditInput;
    type Output = NotebookEditOutput;
    const NAME: &'static str = "NotebookEdit";

    fn description(&self) -> Cow<'_, str> {
        DESCRIPTION.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn search_hint(&self) -> Option<&str> {
        Some("edit Jupyter notebook cells (.ipynb)")
    }
    /// It replaces or deletes existing text: not an additive change.
    fn is_destructive(&self, _: &NotebookEditInput) -> bool {
        true
    }
    /// Announced by name and loaded through ToolSearch, as in Claude Code.
    fn should_defer(&self) -> bool {
        true
    }
    /// Hooks and prompts see the absolute path the tool uses (Claude Code's
    /// `backfillObservableInput`).
    fn observable_input(
        &self,
        input: &serde_json::Value,
        ctx: &ToolUseContext,
    ) -> Option<serde_json::Value> {
        fsutil::observable_path(input, "notebook_path", ctx)
    }
    fn permission_subject(&self, input: &NotebookEditInput) -> Option<PermissionSubject> {
        fsutil::subject_path(&input.notebook_path).map(|path| PermissionSubject::Path {
            path,
            access: FileAccess::Write,
        })
    }

    async fn validate_input(
        &self,
        input: &NotebookEditInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let path = notebook_path(input, ctx)?;
        // A denied path first, before the file system is looked at (Claude Code's order).
        fsutil::refuse_denied_path(&path, FileAccess::Write, ctx)?;
        if input.edit_mode == Some(EditMode::Insert) && input.cell_type.is_none() {
            return Err(ValidationError::with_code(
                "Cell type is required when using edit_mode=insert.",
                5,
            ));
        }
        let (input, ctx) = (input.clone(), ctx.clone());
        // Off the async workers: the notebook may be large. Cheap checks first: a file that
        // was never read (or changed since) is refused before it is loaded, and one too
        // large for Read to show could never have been read whole.
        let lock_path = path.clone();
        fsutil::validation_locked(Some(&lock_path), move || {
            fsutil::check_regular_or_missing(&path).map_err(ValidationError::new)?;
            match std::fs::metadata(&path) {
                // As Edit and Write say it (not "has not been read yet").
                Ok(meta) if meta.is_dir() => {
                    return Err(ValidationError::new(directory_message(&path)));
                }
                Ok(meta) if meta.len() > crate::read::MAX_NOTEBOOK_BYTES => {
                    return Err(ValidationError::new(format!(
                        "Notebook is {} bytes, more than the {} bytes a notebook may have to be edited.",
                        meta.len(),
                        crate::read::MAX_NOTEBOOK_BYTES
                    )));
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(ValidationError::with_code(
                        "Notebook file does not exist.",
                        1,
                    ));
                }
                Err(e) => return Err(ValidationError::new(ToolError::io(&path, e).to_model_text())),
            }
            fsutil::check_stale(&ctx, &path, 9, 10)?;
            let text = match fsutil::read_optional(&path) {
                Ok(Some(bytes)) => {
                    let hash = tool_core::ContentHash::of(&bytes);
                    fsutil::check_unchanged(&ctx, &path, Some(hash), 10)?;
                    notebook::decode_file(&bytes, NOT_JSON)
                        .map_err(|message| ValidationError::with_code(message, 6))?
                        .text
                }
                Ok(None) => {
                    return Err(ValidationError::with_code(
                        "Notebook file does not exist.",
                        1,
                    ));
                }
                Err(e) => return Err(ValidationError::new(e.to_model_text())),
            };
            apply(&text, &input)
                .map(|_| ())
                .map_err(|(message, code)| match code {
                    Some(code) => ValidationError::with_code(message, code),
                    None => ValidationError::new(message),
                })
        })
        .await
    }

    async fn call(
        &self,
        input: NotebookEditInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<NotebookEditOutput>, ToolError> {
        let path = notebook_path(&input, &ctx).map_err(|e| ToolError::msg(e.message))?;
        let confine = fsutil::write_confinement(self, &ctx, &path, |real| {
            fsutil::input_with_path(&input, "notebook_path", real)
        })
        .await;
        let out = fsutil::blocking_locked(path, move |path, lock| {
            edit_blocking(path, &confine, input, &ctx, lock)
        })
        .await?;
        Ok(ToolResult::new(out))
    }

    fn to_content(&self, output: &NotebookEditOutput) -> ToolResultContent {
        let id = output.cell_id.as_deref().unwrap_or("");
        ToolResultContent::Text(match output.edit_mode {
            EditMode::Replace => format!("Updated cell {id} with {}", output.new_source),
            EditMode::Insert => format!("Inserted cell {id} with {}", output.new_source),
            EditMode::Delete => format!("Deleted cell {id}"),
        })
    }
}

/// The refusal for a notebook that is not UTF-8 or UTF-16 text (Claude Code's words for
/// one `JSON.parse` refuses).
const NOT_JSON: &str = "Notebook is not valid JSON.";

/// The refusal for a path that is a directory, in Edit's and Write's words.
fn directory_message(path: &Path) -> String {
    format!("Path is a directory, not a file: {}", path.display())
}

/// The cell edit, with the notebook's lock held from the read to the read-cache update.
fn edit_blocking(
    path: &Path,
    confine: &fsutil::Confinement,
    input: NotebookEditInput,
    ctx: &ToolUseContext,
    lock: &fsutil::FileLock,
) -> Result<NotebookEditOutput, ToolError> {
    if path.is_dir() {
        return Err(ToolError::msg(directory_message(path)));
    }
    let bytes = fsutil::read_optional(path)?
        .ok_or_else(|| ToolError::msg("Notebook file does not exist."))?;
    // Written back in the notebook's own encoding: a UTF-8 byte order mark kept, UTF-16
    // kept UTF-16.
    let fsutil::Decoded { text, encoding } =
        notebook::decode_file(&bytes, NOT_JSON).map_err(ToolError::msg)?;
    let applied = apply(&text, &input).map_err(|(message, _)| ToolError::msg(message))?;
    let verified = fsutil::recheck_before_write(ctx, path, Some(&bytes), lock)?;
    fsutil::write_and_record(
        ctx,
        path,
        confine,
        &fsutil::encode(&applied.updated, encoding),
        applied.updated.clone(),
        verified,
        fsutil::Known::Whole,
        lock,
    )?;
    Ok(NotebookEditOutput {
        new_source: input.new_source,
        cell_id: applied.cell_id,
        cell_type: applied.cell_type,
        language: applied.language,
        edit_mode: input.edit_mode.unwrap_or_default(),
        notebook_path: path.to_path_buf(),
        original_file: text,
        updated_file: applied.updated,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// A notebook of `cells` (type, source) written as another tool might: indented by
    /// `indent` (empty: on one line), with CRLF line endings or not.
    fn write_notebook(cells: &[(bool, String)], indent: &str, crlf: bool) -> String {
        let cells: Vec<Value> = cells
            .iter()
            .enumerate()
            .map(|(i, (code, source))| {
                let mut cell = json!({"cell_type": if *code { "code" } else { "markdown" },
                    "id": format!("c{i}"), "metadata": {"n": i}, "source": source});
                if *code {
                    cell["execution_count"] = json!(i);
                    cell["outputs"] = json!([{"output_type": "stream", "text": "out"}]);
                }
                cell
            })
            .collect();
        let nb = json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
        let text = if indent.is_empty() {
            serde_json::to_string(&nb).unwrap()
        } else {
            let mut out = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
            nb.serialize(&mut ser).unwrap();
            String::from_utf8(out).unwrap() + "\n"
        };
        if crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        }
    }

    fn any_source() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[a-z \"\\\\\n\t\u{e9}\u{1F600}]{0,12}").unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Whatever the layout, an edit gives valid JSON with the edit made, and every cell
        /// it does not touch is in the new text exactly as it was in the old.
        #[test]
        fn an_edit_changes_one_cell_and_keeps_the_others_byte_for_byte(
            cells in proptest::collection::vec((any::<bool>(), any_source()), 0..5),
            indent in prop_oneof![Just(""), Just(" "), Just("  "), Just("\t")],
            crlf in any::<bool>(),
            mode in 0..3u8,
            target in 0..6usize,
            new_source in any_source(),
            make_code in any::<bool>(),
        ) {
            let text = write_notebook(&cells, indent, crlf && !indent.is_empty());
            let mode = [EditMode::Replace, EditMode::Insert, EditMode::Delete][usize::from(mode)];
            let input = NotebookEditInput {
                notebook_path: "/nb.ipynb".into(),
                cell_id: (mode != EditMode::Insert || target < cells.len())
                    .then(|| format!("cell-{target}")),
                new_source: new_source.clone(),
                cell_type: Some(if make_code { CellType::Code } else { CellType::Markdown }),
                edit_mode: Some(mode),
            };
            let applied = match apply(&text, &input) {
                Ok(applied) => applied,
                Err(_) => {
                    // Only a cell that is not there is refused.
                    prop_assert!(target >= cells.len());
                    return Ok(());
                }
            };
            let before: Value = serde_json::from_str(&text).unwrap();
            let after: Value = serde_json::from_str(&applied.updated).unwrap();
            let old = before["cells"].as_array().unwrap();
            let new = after["cells"].as_array().unwrap();
            let (touched, kept): (Option<usize>, Vec<usize>) = match mode {
                EditMode::Delete => {
                    prop_assert_eq!(new.len(), old.len() - 1);
                    (None, (0..old.len()).filter(|i| *i != target).collect())
                }
                EditMode::Insert => {
                    prop_assert_eq!(new.len(), old.len() + 1);
                    let at = input.cell_id.as_ref().map_or(0, |_| target + 1);
                    prop_assert_eq!(new[at]["source"].as_str(), Some(new_source.as_str()));
                    (Some(at), (0..old.len()).collect())
                }
                EditMode::Replace => {
                    prop_assert_eq!(new.len(), old.len());
                    prop_assert_eq!(new[target]["source"].as_str(), Some(new_source.as_str()));
                    prop_assert_eq!(
                        new[target]["cell_type"].as_str(),
                        Some(if make_code { "code" } else { "markdown" })
                    );
                    (Some(target), (0..old.len()).filter(|i| *i != target).collect())
                }
            };
            // The other cells, in order, unchanged as values and as text.
            let others: Vec<&Value> = new
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != touched)
                .map(|(_, c)| c)
                .collect();
            prop_assert_eq!(others.len(), kept.len());
            let (_, spans) = notebook::parse_with_cells(&text).unwrap();
            let spans = spans.unwrap();
            for (cell, i) in others.iter().zip(&kept) {
                prop_assert_eq!(*cell, &old[*i]);
                prop_assert!(applied.updated.contains(&text[spans.cells[*i].clone()]));
            }
            // The rest of the document too.
            prop_assert_eq!(&after["metadata"], &before["metadata"]);
            prop_assert_eq!(&after["nbformat_minor"], &before["nbformat_minor"]);
            // Line endings and the final line break as the file had them.
            if crlf && !indent.is_empty() {
                prop_assert!(!applied.updated.replace("\r\n", "").contains('\n'));
            }
            prop_assert_eq!(applied.updated.ends_with('\n'), text.ends_with('\n'));
        }
    }
}
