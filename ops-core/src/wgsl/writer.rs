//! A small indenting writer for generated WGSL.
//!
//! Generators emit one line at a time and open and close blocks through it,
//! so that every kernel comes out consistently indented without nested
//! `format!` templates.

use std::fmt::Write as _;

/// Builds WGSL source line by line, four spaces per indent level.
#[derive(Debug, Default)]
pub struct Writer {
    out: String,
    depth: usize,
    bindings: Option<Bindings>,
}

/// A kernel's binding declarations and accessors in both layouts
/// ([`crate::wgsl::segments`]), and where in the source they go.
#[derive(Debug)]
struct Bindings {
    at: usize,
    plain: String,
    segmented: String,
    counts: Vec<u32>,
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Writer {
        Writer::default()
    }

    /// Writes one line at the current indent (an empty line stays empty).
    pub fn line(&mut self, text: impl AsRef<str>) -> &mut Writer {
        let text = text.as_ref();
        if !text.is_empty() {
            for _ in 0..self.depth {
                self.out.push_str("    ");
            }
            self.out.push_str(text);
        }
        self.out.push('\n');
        self
    }

    /// Writes an empty line.
    pub fn blank(&mut self) -> &mut Writer {
        self.line("")
    }

    /// Writes each line of `text` (which may hold several) at the current indent.
    pub fn lines(&mut self, text: &str) -> &mut Writer {
        for l in text.lines() {
            self.line(l);
        }
        self
    }

    /// Writes a `// ...` comment line.
    pub fn comment(&mut self, text: impl AsRef<str>) -> &mut Writer {
        let mut s = String::from("//");
        if !text.as_ref().is_empty() {
            let _ = write!(s, " {}", text.as_ref());
        }
        self.line(s)
    }

    /// One indent level deeper.
    pub fn indent(&mut self) -> &mut Writer {
        self.depth += 1;
        self
    }

    /// One indent level shallower.
    pub fn dedent(&mut self) -> &mut Writer {
        debug_assert!(self.depth > 0, "unbalanced dedent");
        self.depth = self.depth.saturating_sub(1);
        self
    }

    /// Writes `header {` and indents.
    pub fn open(&mut self, header: impl AsRef<str>) -> &mut Writer {
        self.line(format!("{} {{", header.as_ref()));
        self.indent()
    }

    /// Dedents and writes `}`.
    pub fn close(&mut self) -> &mut Writer {
        self.dedent();
        self.line("}")
    }

    /// Dedents, writes `} tail {` and indents again (`} else {`).
    pub fn reopen(&mut self, tail: impl AsRef<str>) -> &mut Writer {
        self.dedent();
        self.line(format!("}} {} {{", tail.as_ref()));
        self.indent()
    }

    /// Writes `header { ... }` with `body` writing the inside.
    pub fn block(
        &mut self,
        header: impl AsRef<str>,
        body: impl FnOnce(&mut Writer),
    ) -> &mut Writer {
        self.open(header);
        body(self);
        self.close()
    }

    /// The current indent level.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The source written so far.
    pub fn as_str(&self) -> &str {
        &self.out
    }

    /// Places a kernel's binding declarations and accessors here: `plain`
    /// in the module, `segmented` in its segmented variant (`counts`:
    /// bindings each plain binding becomes), the rest of the source shared
    /// ([`Writer::finish_kernel`]). Once a module.
    pub fn bindings(&mut self, plain: String, segmented: String, counts: Vec<u32>) -> &mut Writer {
        debug_assert!(self.bindings.is_none(), "bindings placed twice");
        self.bindings = Some(Bindings {
            at: self.out.len(),
            plain,
            segmented,
            counts,
        });
        self
    }

    /// The finished source (every block must be closed), with the plain
    /// bindings.
    pub fn finish(self) -> String {
        self.finish_kernel().wgsl
    }

    /// The finished module and, where bindings were placed, its segmented
    /// variant: the same source around the segmented bindings.
    pub fn finish_kernel(self) -> crate::KernelText {
        debug_assert_eq!(self.depth, 0, "unclosed block");
        let Some(b) = self.bindings else {
            return crate::KernelText {
                wgsl: self.out,
                segmented: None,
            };
        };
        let (head, tail) = self.out.split_at(b.at);
        crate::KernelText {
            wgsl: format!("{head}{}{tail}", b.plain),
            segmented: Some((b.counts, format!("{head}{}{tail}", b.segmented))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_blocks() {
        let mut w = Writer::new();
        w.comment("hi");
        w.block("fn f()", |w| {
            w.open("if (true)")
                .line("return;")
                .reopen("else")
                .line("x = 1;")
                .close();
        });
        assert_eq!(
            w.finish(),
            "// hi\nfn f() {\n    if (true) {\n        return;\n    } else {\n        x = 1;\n    }\n}\n"
        );
    }
}
