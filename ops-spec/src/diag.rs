//! Diagnostics: errors that point into a spec file.

use std::fmt::Write;

/// A byte range in a spec file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from two offsets.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// One error in a spec file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where.
    pub span: Span,
    /// What is wrong (lower case, names in backticks).
    pub message: String,
    /// What was probably meant, if anything.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
            help: None,
        }
    }

    /// Adds a help line.
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Renders the diagnostic as rustc does: message, `--> file:line:col`,
    /// the quoted line and carets under the span.
    pub fn render(&self, path: &str, source: &str) -> String {
        let (line, col) = line_col(source, self.span.start);
        let line_text = source.lines().nth(line - 1).unwrap_or("");
        let width = line.to_string().len();
        let pad = " ".repeat(width);
        let start_col = col - 1;
        let line_len = line_text.chars().count();
        let span_chars = source
            .get(self.span.start..self.span.end.min(source.len()))
            .map(|s| s.lines().next().unwrap_or("").chars().count())
            .unwrap_or(1);
        let carets = span_chars.clamp(1, line_len.saturating_sub(start_col).max(1));
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.message);
        let _ = writeln!(out, "{pad}--> {path}:{line}:{col}");
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{line} | {line_text}");
        let _ = write!(
            out,
            "{pad} | {}{}",
            " ".repeat(start_col),
            "^".repeat(carets)
        );
        if let Some(help) = &self.help {
            let _ = write!(out, "\n{pad} = help: {help}");
        }
        out
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// The candidate closest to `name` by edit distance (optimal string
/// alignment: a transposition counts as one edit), if close enough.
pub fn near_miss<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.len() / 3).max(1) + usize::from(name.len() > 5);
    candidates
        .into_iter()
        .map(|c| {
            let (a, b) = (name.to_ascii_lowercase(), c.to_ascii_lowercase());
            // On equal distance, prefer a candidate with the same letters
            // (a transposition: `FLOAT61` means `FLOAT16`, not `FLOAT64`).
            let mut sa: Vec<char> = a.chars().collect();
            let mut sb: Vec<char> = b.chars().collect();
            sa.sort_unstable();
            sb.sort_unstable();
            ((strsim::osa_distance(&a, &b), sa != sb), c)
        })
        .filter(|((d, _), _)| *d <= limit)
        .min_by_key(|(k, _)| *k)
        .map(|(_, c)| c)
}

/// Collects diagnostics across the pipeline (serde's `Ctxt`).
#[derive(Debug, Default)]
pub struct Errors {
    list: Vec<Diagnostic>,
}

impl Errors {
    /// Records one.
    pub fn push(&mut self, d: Diagnostic) {
        self.list.push(d);
    }

    /// Records one at `span`.
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::new(span, message));
    }

    /// True when none were recorded.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The recorded diagnostics, in source order.
    pub fn into_vec(mut self) -> Vec<Diagnostic> {
        self.list.sort_by_key(|d| d.span.start);
        // Each once (the instances of a spec repeat their common mistakes).
        let mut out: Vec<Diagnostic> = Vec::with_capacity(self.list.len());
        for d in self.list {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_miss_finds_transpositions() {
        let types = ["FLOAT64", "FLOAT16", "FLOAT32", "INT8"];
        assert_eq!(near_miss("FLOAT61", types), Some("FLOAT16"));
        assert_eq!(near_miss("BANANA", types), None);
    }

    #[test]
    fn render_points_at_the_span() {
        let src = "operator A {\n    input: FLOAT61\n}\n";
        let start = src.find("FLOAT61").unwrap();
        let d = Diagnostic::new(Span::new(start, start + 7), "unknown data type `FLOAT61`")
            .help("did you mean `FLOAT16`?");
        let r = d.render("specs/a.op", src);
        assert!(r.contains("--> specs/a.op:2:12"), "{r}");
        assert!(r.contains("2 |     input: FLOAT61"), "{r}");
        assert!(r.contains("^^^^^^^"), "{r}");
    }
}
