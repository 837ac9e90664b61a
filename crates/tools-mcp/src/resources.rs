//! `ListMcpResourcesTool` and `ReadMcpResourceTool`: MCP resources as two built-in-style
//! tools, as in Claude Code.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::{
    InputError, MaxResultSize, PermissionResult, ProgressSender, Tool, ToolError, ToolOutput,
    ToolResult, ToolResultContent, ToolUseContext,
};

use crate::manager::Inner;

/// Name of the resource-listing tool.
pub const LIST_MCP_RESOURCES_TOOL: &str = "ListMcpResourcesTool";
/// Name of the resource-reading tool.
pub const READ_MCP_RESOURCE_TOOL: &str = "ReadMcpResourceTool";

fn json_output(value: Value) -> ToolResult {
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    ToolResult::new(ToolOutput {
        content: ToolResultContent::Text(text),
        structured: value,
    })
}

/// `ListMcpResourcesTool {server?}`: the resources of one server, or of all connected
/// servers; each entry carries its `server`.
pub(crate) struct ListMcpResourcesTool {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for ListMcpResourcesTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ListMcpResourcesTool")
    }
}

#[async_trait::async_trait]
impl Tool for ListMcpResourcesTool {
    fn name(&self) -> &str {
        LIST_MCP_RESOURCES_TOOL
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "Optional server name to filter resources by"}
            },
            "additionalProperties": false
        })
    }

    fn parse_input(&self, input: Value) -> Result<Value, InputError> {
        resource_input(self.name(), &self.input_schema(), input)
    }

    fn description(&self) -> Cow<'_, str> {
        "Lists available resources from configured MCP servers. Each resource object includes \
         a 'server' field indicating which server it's from."
            .into()
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    /// Allowed: it only reads what a server the user configured offers (Claude Code asks no
    /// approval for it). Deny rules are looked at before this, so they still stop it.
    async fn check_permissions(&self, _input: &Value, _ctx: &ToolUseContext) -> PermissionResult {
        PermissionResult::allow()
    }

    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        tokio::select! {
            listed = self.list(&input) => listed,
            () = ctx.cancellation().cancelled() => Err(ToolError::Cancelled(None)),
        }
    }
}

impl ListMcpResourcesTool {
    /// Lists the resources of one server, or of every server with resources, all at once
    /// (one slow server does not hold up the others).
    async fn list(&self, input: &Value) -> Result<ToolResult, ToolError> {
        let wanted = input["server"].as_str();
        let servers: Vec<_> = match wanted {
            Some(name) => vec![self.inner.server(name)?],
            None => self
                .inner
                .servers
                .iter()
                .filter(|s| s.supports_resources())
                .cloned()
                .collect(),
        };
        let listed =
            futures::future::join_all(servers.iter().map(|server| server.list_resources())).await;
        let mut all = Vec::new();
        for (server, listed) in servers.iter().zip(listed) {
            match listed {
                Ok(list) => {
                    for mut r in list {
                        if let Value::Object(map) = &mut r {
                            map.insert("server".into(), Value::String(server.name().to_owned()));
                        }
                        all.push(r);
                    }
                }
                // With an explicit server, its failure is the answer; otherwise skip it.
                Err(e) if wanted.is_some() => return Err(e),
                Err(_) => {}
            }
        }
        if all.is_empty() {
            return Ok(ToolResult::text(
                "No resources found. MCP servers may still provide tools even if they have no resources.",
            ));
        }
        Ok(json_output(Value::Array(all)))
    }
}

/// `ReadMcpResourceTool {server, uri}`: reads one resource; text contents are returned,
/// binary contents written to a file whose path is returned.
pub(crate) struct ReadMcpResourceTool {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for ReadMcpResourceTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadMcpResourceTool")
    }
}

#[async_trait::async_trait]
impl Tool for ReadMcpResourceTool {
    fn name(&self) -> &str {
        READ_MCP_RESOURCE_TOOL
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server name"},
                "uri": {"type": "string", "description": "The resource URI to read"}
            },
            "required": ["server", "uri"],
            "additionalProperties": false
        })
    }

    fn parse_input(&self, input: Value) -> Result<Value, InputError> {
        resource_input(self.name(), &self.input_schema(), input)
    }

    fn description(&self) -> Cow<'_, str> {
        "Reads a specific resource from an MCP server, identified by server name and resource URI."
            .into()
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    /// Allowed: it only reads what a server the user configured offers (Claude Code asks no
    /// approval for it). Deny rules are looked at before this, so they still stop it.
    async fn check_permissions(&self, _input: &Value, _ctx: &ToolUseContext) -> PermissionResult {
        PermissionResult::allow()
    }

    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        let (Some(server), Some(uri)) = (input["server"].as_str(), input["uri"].as_str()) else {
            return Err(ToolError::msg(
                "ReadMcpResourceTool needs both \"server\" and \"uri\" strings",
            ));
        };
        let conn = self.inner.server(server)?;
        let result = conn.read_resource(uri, ctx.cancellation()).await?;
        // All or nothing: every blob is decoded before any is written, and a write that
        // fails takes the files written before it away, so that a failed read leaves no
        // file behind that its error does not name.
        let mut read = Vec::new();
        for item in result["contents"].as_array().cloned().unwrap_or_default() {
            let item_uri = item["uri"].as_str().unwrap_or(uri).to_owned();
            let mime = item["mimeType"].clone();
            if let Some(text) = item["text"].as_str() {
                read.push(Content::Text(
                    json!({"uri": item_uri, "mimeType": mime, "text": text}),
                ));
            } else if let Some(blob) = item["blob"].as_str() {
                let bytes = decode_base64(blob).ok_or_else(|| {
                    ToolError::msg(format!(
                        "MCP server \"{}\": resource {} has invalid base64 data; \
                         none of the resource's contents were saved",
                        tool_core::escape_hidden(server),
                        tool_core::escape_hidden(&item_uri)
                    ))
                })?;
                read.push(Content::Blob {
                    uri: item_uri,
                    mime,
                    bytes,
                });
            }
        }
        let mut saved = SavedBlobs::default();
        let mut contents = Vec::with_capacity(read.len());
        for content in read {
            match content {
                Content::Text(text) => contents.push(text),
                Content::Blob { uri, mime, bytes } => {
                    let path = self.blob_path(&self.blob_dir()?, server, &uri, mime.as_str());
                    write_atomic(&path, &bytes)?;
                    saved.0.push(path.clone());
                    contents.push(json!({
                        "uri": uri,
                        "mimeType": mime,
                        "blobSavedTo": path.display().to_string(),
                        "text": format!("[Binary content ({} bytes) saved to {}]", bytes.len(), path.display()),
                    }));
                }
            }
        }
        saved.keep();
        Ok(json_output(json!({"contents": contents})))
    }
}

/// One entry of a resource read's `contents`, read and checked, not yet saved.
enum Content {
    /// A text entry, as the result shows it.
    Text(Value),
    /// A binary entry, decoded.
    Blob {
        uri: String,
        mime: Value,
        bytes: Vec<u8>,
    },
}

/// The blobs of one read saved so far: removed when dropped (a later one failed to be
/// written, or the call was dropped half-way) unless [`kept`](Self::keep).
#[derive(Default)]
struct SavedBlobs(Vec<PathBuf>);

impl SavedBlobs {
    /// Every blob was saved: the files stay, named in the result.
    fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for SavedBlobs {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl ReadMcpResourceTool {
    /// Where binary contents go, created readable by this user only (a resource may be
    /// anything the server has): [`McpOptions::blob_dir`](crate::McpOptions::blob_dir), else
    /// [`default_blob_dir`] in the system temp dir.
    fn blob_dir(&self) -> Result<PathBuf, ToolError> {
        match &self.inner.opts.blob_dir {
            Some(dir) => {
                tool_core::create_private_dir(dir).map_err(|e| ToolError::io(dir, e))?;
                Ok(dir.clone())
            }
            None => default_blob_dir(&std::env::temp_dir()),
        }
    }

    fn blob_path(&self, dir: &Path, server: &str, uri: &str, mime: Option<&str>) -> PathBuf {
        let stem: String = uri
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(80)
            .collect();
        let ext = match mime {
            Some("image/png") => ".png",
            Some("image/jpeg") => ".jpg",
            Some("image/gif") => ".gif",
            Some("application/pdf") => ".pdf",
            Some("application/gzip") => ".gz",
            _ => ".bin",
        };
        let unique = self.inner.next_blob();
        dir.join(format!(
            "{}-{stem}-{}-{unique}{ext}",
            crate::naming::normalize_name_for_mcp(server),
            std::process::id()
        ))
    }
}

/// The name of the default blob directory in the system temp dir.
const BLOB_DIR_NAME: &str = "toolwright-mcp-resources";

/// The default blob directory under `base` (the system temp dir), created owner-only:
/// `toolwright-mcp-resources`, or `toolwright-mcp-resources-<uid>` when that name is taken
/// by something unsafe. On a shared machine anyone may create the first name before us (a
/// directory of theirs, one others may write to, a symlink to a place of their choosing), and
/// then our blobs would be theirs to read or replace: the directory must be a real directory
/// (not a symlink), ours, and writable by no one else. When neither name is, the error says
/// why, for both.
fn default_blob_dir(base: &Path) -> Result<PathBuf, ToolError> {
    let shared = base.join(BLOB_DIR_NAME);
    #[cfg(unix)]
    {
        let uid = tool_core::process::effective_uid();
        let Some(why_shared) = unsafe_dir(&shared, uid) else {
            return Ok(shared);
        };
        let own = base.join(format!("{BLOB_DIR_NAME}-{uid}"));
        match unsafe_dir(&own, uid) {
            None => {
                tracing::warn!(
                    "{} {why_shared}; binary MCP resources go to {} instead",
                    shared.display(),
                    own.display()
                );
                Ok(own)
            }
            Some(why_own) => Err(ToolError::msg(format!(
                "binary MCP resources cannot be saved safely: {} {why_shared}, and {} \
                 {why_own}; remove them, or have the host set a blob directory of its own",
                shared.display(),
                own.display()
            ))),
        }
    }
    #[cfg(not(unix))]
    {
        tool_core::create_private_dir(&shared).map_err(|e| ToolError::io(&shared, e))?;
        Ok(shared)
    }
}

/// Creates `dir` owner-only if it does not exist, then says what makes it unsafe for private
/// files, if anything: not a real directory (a symlink, a file), another user's, or writable
/// by its group or others.
#[cfg(unix)]
fn unsafe_dir(dir: &Path, uid: u32) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if let Err(e) = tool_core::create_private_dir(dir) {
        return Some(format!("cannot be created ({e})"));
    }
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) => return Some(format!("cannot be examined ({e})")),
    };
    if meta.file_type().is_symlink() {
        Some("is a symbolic link".into())
    } else if !meta.is_dir() {
        Some("is not a directory".into())
    } else if meta.uid() != uid {
        Some(format!("belongs to another user (uid {})", meta.uid()))
    } else if meta.mode() & 0o022 != 0 {
        Some(format!(
            "is writable by other users (mode {:o})",
            meta.mode() & 0o777
        ))
    } else {
        None
    }
}

/// The schema step of the two resource tools: the fields are checked against `schema`
/// (a `server` that is not a string is refused, not read as "every server"), and keys the
/// schema does not list are dropped, as Claude Code's non-strict objects do.
fn resource_input(tool: &str, schema: &Value, input: Value) -> Result<Value, InputError> {
    let mut lenient = schema.clone();
    if let Some(obj) = lenient.as_object_mut() {
        obj.remove("additionalProperties");
    }
    let mut input = tool_core::check_input(tool, &lenient, input, false)?;
    if let Value::Object(fields) = &mut input {
        fields.retain(|k, _| schema["properties"].get(k).is_some());
    }
    Ok(input)
}

/// Standard base64 (with or without padding; whitespace ignored); `None` on invalid input.
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    LENIENT.decode(clean).ok()
}

/// Writes `bytes` to `path` atomically: an exclusively created temporary file beside it
/// (unpredictable name), synced, then renamed over `path`, so a reader never sees a partial
/// file and a failed write leaves nothing behind.
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), ToolError> {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| ToolError::io(dir, e))?;
    std::io::Write::write_all(&mut file, bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| ToolError::io(file.path(), e))?;
    file.persist(path)
        .map_err(|e| ToolError::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("YQ==").as_deref(), Some(&b"a"[..]));
        assert_eq!(decode_base64("aGVs\nbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("!!!"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_blob_dir_others_could_write_to_or_swap_is_not_used() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let private = |dir: &Path| {
            let meta = std::fs::symlink_metadata(dir).unwrap();
            meta.is_dir() && meta.mode() & 0o077 == 0
        };
        // Made before us, writable by anyone: the blobs go elsewhere, to a private directory.
        let base = tempfile::tempdir().unwrap();
        let shared = base.path().join(BLOB_DIR_NAME);
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let dir = default_blob_dir(base.path()).unwrap();
        assert_ne!(dir, shared);
        assert!(dir.starts_with(base.path()), "{}", dir.display());
        assert!(private(&dir), "{}", dir.display());
        // A symlink to somewhere else: not followed.
        let base = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::set_permissions(elsewhere.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.path().join(BLOB_DIR_NAME);
        std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
        let dir = default_blob_dir(base.path()).unwrap();
        assert_ne!(dir, link);
        assert!(private(&dir), "{}", dir.display());
        // Ours and private already: used as it is.
        let base = tempfile::tempdir().unwrap();
        let first = default_blob_dir(base.path()).unwrap();
        assert_eq!(first, base.path().join(BLOB_DIR_NAME));
        assert_eq!(default_blob_dir(base.path()).unwrap(), first);
        // Both names taken by unsafe directories: a clear error.
        let base = tempfile::tempdir().unwrap();
        let uid = std::fs::metadata(base.path()).unwrap().uid();
        for name in [BLOB_DIR_NAME.to_owned(), format!("{BLOB_DIR_NAME}-{uid}")] {
            let dir = base.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let err = default_blob_dir(base.path()).unwrap_err().to_string();
        assert!(
            err.contains(BLOB_DIR_NAME) && err.contains("writable by other users"),
            "{err}"
        );
    }
}
