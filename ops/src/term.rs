//! What the `ops` command shows a person at a terminal: the adapter line
//! every subcommand prints, progress bars, and the colours of outcome words.
//!
//! The library's own output ([`crate::runner::run_files`], the `Display` of
//! [`crate::runner::Report`]) stays plain text. Colour is opt-in: a writer
//! asks for it, and the command writes through [`anstream::AutoStream`],
//! which drops the escapes when the stream is not a terminal or `NO_COLOR`
//! is set (`CLICOLOR_FORCE=1` keeps them).

use std::io::{self, Write};
use std::time::{Duration, Instant};

use anstyle::{AnsiColor, Style};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The adapter in words, as every subcommand names it:
/// `llvmpipe (LLVM 15.0.7, 256 bits) [vulkan, software]`, the kind being
/// `software` for a software adapter and wgpu's device type otherwise
/// (`DiscreteGpu`, `IntegratedGpu`, ...).
pub fn adapter_text(a: &ops_gpu::AdapterSummary) -> String {
    let kind = if a.software {
        "software"
    } else {
        a.device_type.as_str()
    };
    format!("{} [{}, {kind}]", a.name, a.backend)
}

/// The line `ops run` and `ops fuzz` start with:
/// `gpu: NAME [BACKEND, KIND], CLASS plans` ([`adapter_text`], and the
/// class of plans the context runs, [`ops_gpu::Context::device_class`]).
pub fn gpu_line(ctx: &ops_gpu::Context) -> String {
    format!(
        "gpu: {}, {} plans",
        adapter_text(ctx.adapter()),
        ctx.device_class().name()
    )
}

/// The style of an outcome word: `PASS` green, `FAIL` and `ERROR` bold red,
/// `SKIP` yellow; any other word plain.
pub fn word_style(word: &str) -> Style {
    let color = match word {
        "PASS" => return Style::new().fg_color(Some(AnsiColor::Green.into())),
        "SKIP" => return Style::new().fg_color(Some(AnsiColor::Yellow.into())),
        "FAIL" | "ERROR" => AnsiColor::Red,
        _ => return Style::new(),
    };
    Style::new().fg_color(Some(color.into())).bold()
}

/// `word` between the escapes of [`word_style`] when `color`, else `word`.
pub fn paint(word: &str, color: bool) -> String {
    paint_as(word, word, color)
}

/// `text` in the style of the outcome word `word` when `color`, else `text`.
pub fn paint_as(text: &str, word: &str, color: bool) -> String {
    let style = word_style(word);
    if color && style != Style::new() {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

/// A progress bar on stderr (count, total, ETA), drawn when stderr is a
/// terminal (and `TERM` is not `dumb`) once the work has lasted `delay`, so
/// that short work prints its lines alone. Where it is not drawn (CI, a
/// file), [`Bar::drawn`] is false and the caller prints plain lines or
/// nothing.
#[derive(Debug)]
pub struct Bar {
    bar: ProgressBar,
    since: Instant,
    delay: Duration,
    terminal: bool,
    shown: bool,
}

impl Bar {
    /// A bar counting `len` of `unit` (`files`, `cases`).
    pub fn new(len: u64, unit: &str, delay: Duration) -> Bar {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        let template = format!(
            "{{spinner}} {{elapsed:>4}} [{{bar:30}}] {{pos}}/{{len}} {unit}, ETA {{eta}}: {{wide_msg}}"
        );
        bar.set_style(
            ProgressStyle::with_template(&template)
                .expect("a valid template")
                .progress_chars("=> "),
        );
        let mut b = Bar {
            bar,
            since: Instant::now(),
            delay,
            terminal: !ProgressDrawTarget::stderr().is_hidden(),
            shown: false,
        };
        b.reveal();
        b
    }

    /// A bar that is never drawn (for callers that asked for no progress).
    pub fn hidden() -> Bar {
        Bar {
            bar: ProgressBar::hidden(),
            since: Instant::now(),
            delay: Duration::ZERO,
            terminal: false,
            shown: false,
        }
    }

    /// Sets the count and the message, drawing the bar once it is due.
    pub fn update(&mut self, pos: u64, message: impl Into<std::borrow::Cow<'static, str>>) {
        self.bar.set_position(pos);
        self.bar.set_message(message);
        self.reveal();
    }

    fn reveal(&mut self) {
        if self.terminal && !self.shown && self.since.elapsed() >= self.delay {
            self.shown = true;
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    /// Whether the bar can be drawn (stderr is a terminal): callers print
    /// plain progress lines where it cannot.
    pub fn drawn(&self) -> bool {
        self.terminal
    }

    /// The bar, for [`Suspend`].
    pub fn bar(&self) -> &ProgressBar {
        &self.bar
    }

    /// Clears the bar from the terminal for good.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A writer that passes whole lines to `inner` with `bar` cleared from the
/// terminal meanwhile ([`ProgressBar::suspend`]), so that output and the bar
/// do not overwrite each other. A partial line waits for its newline (or a
/// flush).
pub struct Suspend<'a, W: Write + ?Sized> {
    bar: ProgressBar,
    inner: &'a mut W,
    pending: Vec<u8>,
}

impl<'a, W: Write + ?Sized> Suspend<'a, W> {
    /// Writes to `inner` around `bar`.
    pub fn new(bar: &ProgressBar, inner: &'a mut W) -> Self {
        Suspend {
            bar: bar.clone(),
            inner,
            pending: Vec::new(),
        }
    }

    fn write_out(&mut self, upto: usize) -> io::Result<()> {
        let (bar, inner, pending) = (&self.bar, &mut *self.inner, &mut self.pending);
        bar.suspend(|| {
            inner.write_all(&pending[..upto])?;
            inner.flush()
        })?;
        pending.drain(..upto);
        Ok(())
    }
}

impl<W: Write + ?Sized> Write for Suspend<'_, W> {
    /// Linear in what is written: only `buf` is searched for a newline,
    /// never the partial line before it (`ops run --json` writes a tensor's
    /// data as one line, in pieces of a few bytes).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let before = self.pending.len();
        self.pending.extend_from_slice(buf);
        if let Some(last) = buf.iter().rposition(|&b| b == b'\n') {
            self.write_out(before + last + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.write_out(self.pending.len())?;
        }
        self.inner.flush()
    }
}

impl<W: Write + ?Sized> Drop for Suspend<'_, W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// A table as the command prints one, through comfy-table: no borders,
/// columns two spaces apart, a rule under the header; the columns
/// `right` (numbers) aligned right. [`table_text`] renders it.
pub fn table(header: &[&str], right: &[usize]) -> comfy_table::Table {
    use comfy_table::{CellAlignment, ContentArrangement, Table};
    let mut table = Table::new();
    // comfy-table's preset characters, a space leaving a part out: only
    // the header rule is drawn.
    table
        .load_preset("     -             ")
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().copied());
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    for &c in right {
        if let Some(column) = table.column_mut(c) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// `table`'s lines, each after `indent` and without trailing spaces.
pub fn table_text(table: &comfy_table::Table, indent: &str) -> String {
    let mut text = String::new();
    for line in table.lines() {
        text.push_str(indent);
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of a million pieces, as `ops run --json` writes a tensor of a
    /// million elements, passes in time linear in its length: searching
    /// the whole partial line at each piece took minutes from 100,000.
    #[test]
    fn suspend_passes_long_lines_whole() {
        let mut inner = Vec::new();
        let bar = ProgressBar::hidden();
        {
            let mut out = Suspend::new(&bar, &mut inner);
            out.write_all(b"[").unwrap();
            for i in 0..1_000_000 {
                write!(out, "{i}, ").unwrap();
            }
            out.write_all(b"]\nnext").unwrap();
        }
        let text = String::from_utf8(inner).unwrap();
        assert!(text.starts_with("[0, 1, 2, "), "{:.40}", text);
        assert!(
            text.ends_with("999999, ]\nnext"),
            "the rest is written when dropped"
        );
    }
}
