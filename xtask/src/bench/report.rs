//! The report: rows of figures, each a ratio against a baseline measured in the same run,
//! rendered as one Markdown table and as JSON.

use std::fmt::Write as _;

use serde_json::{Value, json};

/// A measured quantity: the median of several runs, with the smallest and largest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// The median.
    pub median: f64,
    /// The smallest run.
    pub min: f64,
    /// The largest run.
    pub max: f64,
    /// How many runs (samples) the median is of; 0 for a computed value.
    pub runs: usize,
}

impl Figure {
    /// The median, min and max of `samples`; `None` when there are none (or one is NaN).
    pub fn from_samples(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() || samples.iter().any(|x| x.is_nan()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            f64::midpoint(v[n / 2 - 1], v[n / 2])
        };
        Some(Self {
            median,
            min: v[0],
            max: v[n - 1],
            runs: n,
        })
    }

    /// A value computed rather than measured (the oracle, a limit).
    pub fn computed(value: f64) -> Self {
        Self {
            median: value,
            min: value,
            max: value,
            runs: 0,
        }
    }

    /// Every value multiplied by `k` (a change of unit).
    pub fn scaled(self, k: f64) -> Self {
        Self {
            median: self.median * k,
            min: self.min * k,
            max: self.max * k,
            runs: self.runs,
        }
    }
}

/// The unit figures of a row are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Microseconds.
    Micros,
    /// Milliseconds.
    Millis,
    /// Calls per second (more is better).
    CallsPerSec,
    /// Mebibytes of resident memory.
    MiB,
}

impl Unit {
    /// The unit's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Micros => "µs",
            Self::Millis => "ms",
            Self::CallsPerSec => "calls/s",
            Self::MiB => "MiB",
        }
    }

    /// Decimals for figures around `x`.
    fn decimals(self, x: f64) -> usize {
        match self {
            Self::CallsPerSec => 0,
            Self::MiB => 1,
            Self::Micros | Self::Millis if x.abs() >= 100.0 => 1,
            Self::Micros | Self::Millis => 2,
        }
    }
}

/// What a row is held to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// ours / baseline must be at most this.
    RatioAtMost(f64),
    /// ours / baseline must be at least this.
    RatioAtLeast(f64),
    /// ours (median) must be below this, in the row's unit.
    Below(f64),
    /// No target: the figure is reported.
    Report,
}

impl Target {
    fn label(self, unit: Unit) -> String {
        match self {
            Self::RatioAtMost(x) => format!("≤ {x}"),
            Self::RatioAtLeast(x) => format!("≥ {x}"),
            Self::Below(x) => format!("< {x} {}", unit.symbol()),
            Self::Report => "report".to_owned(),
        }
    }

    fn kind(self) -> (&'static str, Option<f64>) {
        match self {
            Self::RatioAtMost(x) => ("ratio_at_most", Some(x)),
            Self::RatioAtLeast(x) => ("ratio_at_least", Some(x)),
            Self::Below(x) => ("below", Some(x)),
            Self::Report => ("report", None),
        }
    }
}

/// Whether a row met its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Met.
    Pass,
    /// Not met.
    Miss,
    /// Nothing to meet.
    Report,
    /// The figure could not be measured.
    Error,
}

impl Status {
    /// The word in the table and the JSON.
    pub fn word(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Miss => "MISS",
            Self::Report => "report",
            Self::Error => "error",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The bench section (`exec`, `files`, ...).
    pub section: String,
    /// What is measured.
    pub figure: String,
    /// Our figure; `None` when measuring failed (see `note`).
    pub ours: Option<Figure>,
    /// The baseline's name and figure, measured in the same run.
    pub baseline: Option<(String, Figure)>,
    /// The unit of both figures.
    pub unit: Unit,
    /// What the row is held to.
    pub target: Target,
    /// A remark: the method, a count, or what went wrong.
    pub note: String,
}

impl Row {
    /// A row comparing `ours` with a named baseline.
    pub fn compare(
        section: &str,
        figure: impl Into<String>,
        unit: Unit,
        ours: Figure,
        baseline: (impl Into<String>, Figure),
        target: Target,
    ) -> Self {
        Self {
            section: section.to_owned(),
            figure: figure.into(),
            ours: Some(ours),
            baseline: Some((baseline.0.into(), baseline.1)),
            unit,
            target,
            note: String::new(),
        }
    }

    /// A row without a baseline.
    pub fn alone(
        section: &str,
        figure: impl Into<String>,
        unit: Unit,
        ours: Figure,
        target: Target,
    ) -> Self {
        Self {
            section: section.to_owned(),
            figure: figure.into(),
            ours: Some(ours),
            baseline: None,
            unit,
            target,
            note: String::new(),
        }
    }

    /// A row for a figure that could not be measured.
    pub fn failed(section: &str, figure: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            section: section.to_owned(),
            figure: figure.into(),
            ours: None,
            baseline: None,
            unit: Unit::Millis,
            target: Target::Report,
            note: why.into(),
        }
    }

    /// The same row with a note.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }

    /// ours / baseline, on the medians.
    pub fn ratio(&self) -> Option<f64> {
        let ours = self.ours?;
        let (_, base) = self.baseline.as_ref()?;
        (base.median != 0.0).then(|| ours.median / base.median)
    }

    /// Whether the row met its target.
    pub fn status(&self) -> Status {
        let Some(ours) = self.ours else {
            return Status::Error;
        };
        let met = match self.target {
            Target::Report => return Status::Report,
            Target::Below(limit) => ours.median < limit,
            Target::RatioAtMost(x) => match self.ratio() {
                Some(r) => r <= x,
                None => return Status::Error,
            },
            Target::RatioAtLeast(x) => match self.ratio() {
                Some(r) => r >= x,
                None => return Status::Error,
            },
        };
        if met { Status::Pass } else { Status::Miss }
    }
}

/// `median unit (min–max)`, all three with the median's decimals.
fn cell(unit: Unit, f: &Figure) -> String {
    let d = unit.decimals(f.median);
    let value = format!("{:.d$} {}", f.median, unit.symbol());
    let (min, max) = (format!("{:.d$}", f.min), format!("{:.d$}", f.max));
    if f.runs == 0 {
        format!("{value} (computed)")
    } else if f.runs == 1 || min == max {
        value
    } else {
        format!("{value} ({min}–{max})")
    }
}

/// A ratio with three decimals near 1, two elsewhere.
fn ratio_text(r: f64) -> String {
    if (0.9..1.1).contains(&r) {
        format!("{r:.3}")
    } else {
        format!("{r:.2}")
    }
}

/// Markdown-safe text for a table cell.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The rows as one Markdown table.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| section | figure | ours | baseline | ratio | target | result | note |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let ours = row
            .ours
            .map_or_else(|| "—".to_owned(), |f| cell(row.unit, &f));
        let baseline = row.baseline.as_ref().map_or_else(
            || "—".to_owned(),
            |(name, f)| format!("{name}: {}", cell(row.unit, f)),
        );
        let ratio = row.ratio().map_or_else(|| "—".to_owned(), ratio_text);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            row.section,
            escape(&row.figure),
            ours,
            escape(&baseline),
            ratio,
            row.target.label(row.unit),
            row.status().word(),
            escape(&row.note)
        );
    }
    out
}

fn figure_json(f: &Figure) -> Value {
    json!({"median": f.median, "min": f.min, "max": f.max, "runs": f.runs})
}

/// One row as JSON (figure, ours, baseline, ratio, target, unit, status).
pub fn row_json(row: &Row) -> Value {
    let (kind, value) = row.target.kind();
    json!({
        "section": row.section,
        "figure": row.figure,
        "ours": row.ours.as_ref().map(figure_json),
        "baseline": row.baseline.as_ref().map(|(name, f)| {
            let mut v = figure_json(f);
            v["name"] = json!(name);
            v
        }),
        "ratio": row.ratio(),
        "target": {"label": row.target.label(row.unit), "kind": kind, "value": value},
        "unit": row.unit.symbol(),
        "status": row.status().word(),
        "note": row.note,
    })
}

/// A free-form Markdown table that follows the main one (the executor's scaling table).
#[derive(Debug, Clone, PartialEq)]
pub struct Extra {
    /// Its heading.
    pub title: String,
    /// The Markdown table.
    pub markdown: String,
    /// The same data for the JSON report.
    pub json: Value,
}

/// Where and when the report was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// `nproc`.
    pub cpus: usize,
    /// The CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// The bench sections run.
    pub sections: Vec<String>,
}

/// The whole report as Markdown.
pub fn markdown(machine: &Machine, rows: &[Row], extras: &[Extra], notes: &[String]) -> String {
    let mut out = format!(
        "# Toolwright benchmarks\n\n{} · {} CPUs ({}) · sections: {}\n\n",
        machine.date,
        machine.cpus,
        machine.cpu_model,
        machine.sections.join(", ")
    );
    out.push_str(&markdown_table(rows));
    for extra in extras {
        let _ = write!(out, "\n### {}\n\n{}", extra.title, extra.markdown);
    }
    if !notes.is_empty() {
        out.push_str("\n### Method\n\n");
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

/// The whole report as JSON.
pub fn json(machine: &Machine, rows: &[Row], extras: &[Extra], notes: &[String]) -> Value {
    json!({
        "machine": {"cpus": machine.cpus, "cpu_model": machine.cpu_model, "date": machine.date},
        "sections": machine.sections,
        "rows": rows.iter().map(row_json).collect::<Vec<_>>(),
        "tables": extras.iter().map(|e| json!({"title": e.title, "data": e.json})).collect::<Vec<_>>(),
        "notes": notes,
    })
}

/// The civil UTC date of `secs` seconds after the Unix epoch (Howard Hinnant's algorithm).
pub fn utc_date(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(median: f64, min: f64, max: f64) -> Figure {
        Figure {
            median,
            min,
            max,
            runs: 5,
        }
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        let f = Figure::from_samples(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((f.median, f.min, f.max, f.runs), (3.0, 1.0, 5.0, 3));
        let f = Figure::from_samples(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((f.median, f.min, f.max), (2.5, 1.0, 4.0));
        assert!(Figure::from_samples(&[]).is_none());
        assert!(Figure::from_samples(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn status_follows_the_target_on_the_ratio_of_medians() {
        let row = |ours: f64, target| {
            Row::compare(
                "files",
                "Grep",
                Unit::Millis,
                fig(ours, ours, ours),
                ("rg", fig(10.0, 9.0, 11.0)),
                target,
            )
        };
        assert_eq!(row(11.5, Target::RatioAtMost(1.15)).status(), Status::Pass);
        assert_eq!(row(11.6, Target::RatioAtMost(1.15)).status(), Status::Miss);
        assert_eq!(row(10.0, Target::RatioAtLeast(1.0)).status(), Status::Pass);
        assert_eq!(row(9.9, Target::RatioAtLeast(1.0)).status(), Status::Miss);
        assert_eq!(row(99.0, Target::Report).status(), Status::Report);
        let alone = |v: f64| {
            Row::alone(
                "search",
                "q",
                Unit::Micros,
                fig(v, v, v),
                Target::Below(1000.0),
            )
        };
        assert_eq!(alone(999.0).status(), Status::Pass);
        assert_eq!(alone(1000.0).status(), Status::Miss);
        assert_eq!(Row::failed("mcp", "x", "no peers").status(), Status::Error);
        let zero = Row::compare(
            "x",
            "y",
            Unit::Millis,
            fig(1.0, 1.0, 1.0),
            ("b", fig(0.0, 0.0, 0.0)),
            Target::RatioAtMost(1.0),
        );
        assert_eq!(zero.ratio(), None);
        assert_eq!(zero.status(), Status::Error);
    }

    #[test]
    fn markdown_rows_show_median_min_max_ratio_and_result() {
        let rows = vec![
            Row::compare(
                "files",
                "Grep content | generated",
                Unit::Millis,
                fig(12.0, 11.5, 13.25),
                ("rg", fig(10.0, 9.5, 10.5)),
                Target::RatioAtMost(1.15),
            )
            .with_note("7 runs"),
            Row::alone(
                "exec",
                "oracle",
                Unit::Millis,
                Figure::computed(1030.0),
                Target::Report,
            ),
            Row::failed("mcp", "MCP stdio calls/s", "peers not installed"),
        ];
        let md = markdown_table(&rows);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[2],
            "| files | Grep content \\| generated | 12.00 ms (11.50–13.25) | rg: 10.00 ms (9.50–10.50) | 1.20 | ≤ 1.15 | MISS | 7 runs |"
        );
        assert_eq!(
            lines[3],
            "| exec | oracle | 1030.0 ms (computed) | — | — | report | report |  |"
        );
        assert_eq!(
            lines[4],
            "| mcp | MCP stdio calls/s | — | — | — | report | error | peers not installed |"
        );
    }

    #[test]
    fn json_rows_carry_every_field() {
        let row = Row::compare(
            "mcp",
            "stdio vs TS SDK",
            Unit::CallsPerSec,
            fig(2500.0, 2400.0, 2600.0),
            ("TS SDK", fig(2000.0, 1900.0, 2100.0)),
            Target::RatioAtLeast(1.0),
        );
        let v = row_json(&row);
        assert_eq!(v["figure"], "stdio vs TS SDK");
        assert_eq!(v["ours"]["median"], 2500.0);
        assert_eq!(v["baseline"]["name"], "TS SDK");
        assert_eq!(v["baseline"]["max"], 2100.0);
        assert_eq!(v["ratio"], 1.25);
        assert_eq!(v["target"]["kind"], "ratio_at_least");
        assert_eq!(v["target"]["label"], "≥ 1");
        assert_eq!(v["unit"], "calls/s");
        assert_eq!(v["status"], "pass");
        let failed = row_json(&Row::failed("x", "y", "why"));
        assert!(failed["ours"].is_null() && failed["ratio"].is_null());
        assert_eq!(failed["status"], "error");
    }

    #[test]
    fn whole_report_has_machine_table_extras_and_notes() {
        let machine = Machine {
            cpus: 2,
            cpu_model: "AMD EPYC".into(),
            date: "2025-01-02".into(),
            sections: vec!["exec".into()],
        };
        let rows = vec![Row::failed("exec", "f", "n")];
        let extras = vec![Extra {
            title: "Scaling".into(),
            markdown: "| a |\n|---|\n| 1 |\n".into(),
            json: json!([1]),
        }];
        let md = markdown(&machine, &rows, &extras, &["both as processes".into()]);
        assert!(md.starts_with("# Toolwright benchmarks\n\n2025-01-02 · 2 CPUs (AMD EPYC)"));
        assert!(md.contains("\n### Scaling\n\n| a |"));
        assert!(md.ends_with("### Method\n\n- both as processes\n"));
        let j = json(&machine, &rows, &extras, &[]);
        assert_eq!(j["machine"]["cpus"], 2);
        assert_eq!(j["rows"].as_array().unwrap().len(), 1);
        assert_eq!(j["tables"][0]["data"], json!([1]));
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_735_689_599), "2024-12-31");
        assert_eq!(utc_date(1_735_689_600), "2025-01-01");
    }
}
