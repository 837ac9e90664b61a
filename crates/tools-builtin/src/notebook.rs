//! Jupyter notebooks: an order-preserving JSON value (so an edit changes only the cells it
//! touches), and the cell-by-cell rendering Read shows the model.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Number;
use tool_core::ContentBlock;

/// A JSON value whose objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Num(Number),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Obj(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key`, keeping its position when present, appending otherwise.
    pub(crate) fn set(&mut self, key: &str, value: Json) {
        if let Json::Obj(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value,
                None => entries.push((key.to_owned(), value)),
            }
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Num(n) => n.as_u64(),
            _ => None,
        }
    }

    pub(crate) fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// Text that may be stored as a string or a list of strings (notebook `source`, `text`).
    pub(crate) fn multiline_text(&self) -> String {
        match self {
            Json::Str(s) => s.clone(),
            Json::Arr(items) => items.iter().filter_map(Json::as_str).collect(),
            _ => String::new(),
        }
    }

    /// Serialises with `indent` spaces per level, as Jupyter does (1 by default).
    pub(crate) fn to_pretty(&self, indent: usize) -> Result<String, serde_json::Error> {
        let indent = vec![b' '; indent];
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&indent);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        self.serialize(&mut ser)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Num(n) => n.serialize(s),
            Json::Str(v) => s.serialize_str(v),
            Json::Arr(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Obj(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Num(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Num(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
                Number::from_f64(v)
                    .map(Json::Num)
                    .ok_or_else(|| E::custom("non-finite number"))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Json, E> {
                Ok(Json::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Arr(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut entries: Vec<(String, Json)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Json>()? {
                    match entries.iter_mut().find(|(key, _)| *key == k) {
                        Some(slot) => slot.1 = v,
                        None => entries.push((k, v)),
                    }
                }
                Ok(Json::Obj(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// The indentation (spaces per level) of a pretty-printed JSON document; 1 when unknown.
pub(crate) fn detect_indent(text: &str) -> usize {
    text.lines()
        .nth(1)
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

/// The id Claude Code shows for cell `index`: its `id`, or `cell-N`.
pub(crate) fn cell_id(cell: &Json, index: usize) -> String {
    cell.get("id")
        .and_then(Json::as_str)
        .map_or_else(|| format!("cell-{index}"), str::to_owned)
}

/// The notebook's language (`metadata.language_info.name`, default python).
pub(crate) fn language(nb: &Json) -> String {
    nb.get("metadata")
        .and_then(|m| m.get("language_info"))
        .and_then(|l| l.get("name"))
        .and_then(Json::as_str)
        .unwrap_or("python")
        .to_owned()
}

/// Outputs longer than this are replaced by a pointer to read them with jq.
const MAX_OUTPUT_CHARS: usize = 10_000;

/// Most images one notebook read shows.
pub(crate) const MAX_NOTEBOOK_IMAGES: usize = 20;

/// The media type of the `n`-th image output (base64 `data`) of a notebook as the model
/// will be shown it ([`tool_core::check_image`]: read from the bytes, not the output's
/// label), or why it cannot be shown: one image the API refuses fails every later request
/// of the conversation.
fn image_to_show(data: &str, n: usize) -> Result<&'static str, String> {
    use base64::Engine as _;
    if n > MAX_NOTEBOOK_IMAGES {
        return Err(format!("a read shows at most {MAX_NOTEBOOK_IMAGES} images"));
    }
    // Before decoding: far too long to be an image the API takes.
    if data.len() / 4 * 3 > tool_core::MAX_IMAGE_BYTES + 2 {
        return Err(tool_core::ImageRejection::TooLarge {
            size: data.len() / 4 * 3,
        }
        .to_string());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|_| "its data is not valid base64".to_owned())?;
    tool_core::check_image(&bytes).map_err(|why| why.to_string())
}

/// Renders a notebook for the model: one text block per cell (`<cell id="...">...`), then
/// its outputs as text and image blocks. Also returns a structured summary of the cells.
pub(crate) fn render(nb: &Json, path_display: &str) -> (Vec<ContentBlock>, Vec<serde_json::Value>) {
    let language = language(nb);
    let mut blocks = Vec::new();
    let mut cells_out = Vec::new();
    let mut images = 0;
    let cells = match nb.get("cells") {
        Some(Json::Arr(cells)) => cells.as_slice(),
        _ => &[],
    };
    for (index, cell) in cells.iter().enumerate() {
        let id = cell_id(cell, index);
        let cell_type = cell
            .get("cell_type")
            .and_then(Json::as_str)
            .unwrap_or("code");
        let source = cell
            .get("source")
            .map(Json::multiline_text)
            .unwrap_or_default();
        let mut meta = String::new();
        if cell_type != "code" {
            meta.push_str(&format!("<cell_type>{cell_type}</cell_type>"));
        }
        if cell_type == "code" && language != "python" {
            meta.push_str(&format!("<language>{language}</language>"));
        }
        blocks.push(ContentBlock::text(format!(
            "<cell id=\"{id}\">{meta}{source}</cell id=\"{id}\">"
        )));
        let mut outputs_json = Vec::new();
        if let Some(Json::Arr(outputs)) = cell.get("outputs") {
            for output in outputs {
                let (text, image) = render_output(output);
                let text = if text.chars().count() > MAX_OUTPUT_CHARS {
                    format!(
                        "Outputs are too large to include. Use Bash with: cat \"{path_display}\" | jq '.cells[{index}].outputs'"
                    )
                } else {
                    text
                };
                if !text.is_empty() {
                    blocks.push(ContentBlock::text(text.clone()));
                }
                if let Some(data) = &image {
                    images += 1;
                    match image_to_show(data, images) {
                        Ok(media_type) => blocks.push(ContentBlock::image(media_type, data.clone())),
                        Err(why) => blocks.push(ContentBlock::text(format!(
                            "[Image output omitted: {why}. Use Bash with: cat \"{path_display}\" | jq '.cells[{index}].outputs']"
                        ))),
                    }
                }
                outputs_json.push(serde_json::json!({"text": text, "has_image": image.is_some()}));
            }
        }
        cells_out.push(serde_json::json!({
            "cell_id": id,
            "cellType": cell_type,
            "language": language,
            "source": source,
            "execution_count": cell.get("execution_count").and_then(Json::as_u64),
            "outputs": outputs_json,
        }));
    }
    (blocks, cells_out)
}

/// The blocks [`render`] makes, rebuilt from its cell summaries (for a hook's replacement
/// output). Images are not in the summaries, so none are shown.
pub(crate) fn render_cells(cells: &[serde_json::Value]) -> Vec<ContentBlock> {
    let mut blocks = Vec::new();
    for cell in cells {
        let text = |key: &str| cell[key].as_str().unwrap_or_default();
        let (id, cell_type, language) = (text("cell_id"), text("cellType"), text("language"));
        let mut meta = String::new();
        if cell_type != "code" {
            meta.push_str(&format!("<cell_type>{cell_type}</cell_type>"));
        }
        if cell_type == "code" && !language.is_empty() && language != "python" {
            meta.push_str(&format!("<language>{language}</language>"));
        }
        blocks.push(ContentBlock::text(format!(
            "<cell id=\"{id}\">{meta}{}</cell id=\"{id}\">",
            text("source")
        )));
        for output in cell["outputs"].as_array().into_iter().flatten() {
            if let Some(t) = output["text"].as_str().filter(|t| !t.is_empty()) {
                blocks.push(ContentBlock::text(t));
            }
        }
    }
    blocks
}

/// An output's text and the base64 of its image (PNG or JPEG), if it has one.
fn render_output(output: &Json) -> (String, Option<String>) {
    match output.get("output_type").and_then(Json::as_str) {
        Some("stream") => (
            output
                .get("text")
                .map(Json::multiline_text)
                .unwrap_or_default(),
            None,
        ),
        Some("execute_result" | "display_data") => {
            let data = output.get("data");
            let text = data
                .and_then(|d| d.get("text/plain"))
                .map(Json::multiline_text)
                .unwrap_or_default();
            let image = data.and_then(|d| {
                ["image/png", "image/jpeg"].into_iter().find_map(|key| {
                    d.get(key).map(|v| {
                        v.multiline_text()
                            .chars()
                            .filter(|c| !c.is_whitespace())
                            .collect()
                    })
                })
            });
            (text, image)
        }
        Some("error") => {
            let ename = output.get("ename").and_then(Json::as_str).unwrap_or("");
            let evalue = output.get("evalue").and_then(Json::as_str).unwrap_or("");
            let traceback = match output.get("traceback") {
                Some(Json::Arr(lines)) => lines
                    .iter()
                    .filter_map(Json::as_str)
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            (format!("{ename}: {evalue}\n{traceback}"), None)
        }
        _ => (String::new(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_key_order_and_indent() {
        let text = "{\n \"z\": 1,\n \"a\": [\n  \"x\",\n  {\n   \"k\": null,\n   \"b\": true\n  }\n ],\n \"m\": {}\n}";
        let json: Json = serde_json::from_str(text).unwrap();
        assert_eq!(json.to_pretty(detect_indent(text)).unwrap(), text);
        let two = "{\n  \"b\": 1.5,\n  \"a\": \"\u{e9}\"\n}";
        let json: Json = serde_json::from_str(two).unwrap();
        assert_eq!(json.to_pretty(detect_indent(two)).unwrap(), two);
    }
}
