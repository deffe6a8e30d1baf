//! Tensors larger than one storage binding: the *segmented variant* every
//! generated kernel carries.
//!
//! A storage-buffer binding holds at most `max_storage_buffer_binding_size`
//! bytes: 128 MiB by WebGPU's default and on Mesa's lavapipe, which also
//! allows buffers of up to 2 GiB. To run on tensors between the two, every
//! kernel's WGSL ends with a second, complete module in a block comment:
//!
//! ```text
//! // ... the plain kernel: one binding per buffer ...
//! /* @segmented 1 4 4
//! // ... the segmented variant ...
//! */
//! ```
//!
//! The numbers after `@segmented` say, for each binding of the plain kernel
//! in order, how many consecutive bindings of the variant it becomes: 1 for
//! small buffers (parameters, status words), [`SEGMENTS`] for tensors. A
//! tensor binding `x` becomes `x_s0` .. `x_s3`; the runtime (`ops-gpu`) binds
//! bytes `[k * S, (k + 1) * S)` of the buffer as `x_sk`, with one segment size
//! `S` (a multiple of the storage offset alignment, at most the binding
//! limit) for every segment but the last, and a small dummy buffer for
//! segments past the buffer's end.
//!
//! A kernel reaches a buffer's words only through its accessor functions
//! ([`Buffer::word`], [`Buffer::vector`], [`Buffer::set`],
//! [`Buffer::store_vector`], [`Buffer::atomic`]), which [`write_bindings`]
//! defines with the declarations in both layouts: the plain module's index
//! the one array directly, the variant's route word `i` to segment `i / n`,
//! word `i % n`, where `n = arrayLength(&x_s0)` (so a buffer that fits one
//! segment is all in `x_s0`). The generator runs once; the two modules
//! differ in those lines alone ([`Writer::finish_kernel`]).
//!
//! The plain kernel stays the one that runs whenever every buffer fits one
//! binding: it binds fewer buffers (devices may allow as few as 8 storage
//! buffers per stage; the segmented variants of the catalog need up to 18) and
//! skips the routing. A block comment keeps the variant out of the plain
//! module for every WGSL parser while keeping [`crate::Kernel`] as it is.

use crate::{Access, PARAM_WORDS};

use super::writer::Writer;

/// Bindings a tensor becomes in the segmented variant: with the 128 MiB
/// binding limit of WebGPU's defaults and lavapipe, tensors of up to 512 MiB.
pub const SEGMENTS: u32 = 4;

/// The marker that opens the segmented variant's block comment.
pub const SEGMENTED_MARKER: &str = "/* @segmented";

/// Which of the two modules is being generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// One binding per buffer; words are indexed directly.
    Plain,
    /// Tensor buffers in [`SEGMENTS`] bindings each, reached through accessors.
    Segmented,
}

/// One storage buffer a kernel binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer<'a> {
    /// The global variable's name in the plain kernel.
    pub name: &'a str,
    /// How the kernel binds it.
    pub access: Access,
    /// Bound as `array<atomic<u32>>` (else `array<u32>`).
    pub atomic: bool,
    /// A tensor (or scratch) buffer, whose size the caller decides and which
    /// is therefore segmented in the segmented variant; parameter and status
    /// buffers are small and stay one binding.
    pub tensor: bool,
    /// Bound as `array<vec4<u32>>`: 16 bytes a load (and, read-write, a
    /// store), besides single words. The buffer's byte size must be a
    /// multiple of 16.
    pub vec4: bool,
}

impl<'a> Buffer<'a> {
    /// A read-only `array<u32>` buffer.
    pub const fn read(name: &'a str, tensor: bool) -> Buffer<'a> {
        Buffer {
            name,
            access: Access::Read,
            atomic: false,
            tensor,
            vec4: false,
        }
    }

    /// A read-only tensor buffer bound as `array<vec4<u32>>`, read a vector
    /// ([`Buffer::vector`]) or a word ([`Buffer::word`]) at a time.
    pub const fn read_vec4(name: &'a str) -> Buffer<'a> {
        Buffer {
            name,
            access: Access::Read,
            atomic: false,
            tensor: true,
            vec4: true,
        }
    }

    /// The pass's parameter words, bound as a uniform array of vectors
    /// ([`crate::Access::Uniform`]) and read with `param(i)` (word `i`).
    pub const fn params() -> Buffer<'static> {
        Buffer {
            name: "params",
            access: Access::Uniform,
            atomic: false,
            tensor: false,
            vec4: true,
        }
    }

    /// A read-write tensor buffer bound as `array<vec4<u32>>`, read and
    /// written a vector ([`Buffer::vector`], [`Buffer::store_vector`]) or a
    /// word ([`Buffer::word`], [`Buffer::set`]) at a time.
    pub const fn read_write_vec4(name: &'a str) -> Buffer<'a> {
        Buffer {
            name,
            access: Access::ReadWrite,
            atomic: false,
            tensor: true,
            vec4: true,
        }
    }

    /// A read-write buffer, `array<atomic<u32>>` when `atomic`.
    pub const fn read_write(name: &'a str, atomic: bool, tensor: bool) -> Buffer<'a> {
        Buffer {
            name,
            access: Access::ReadWrite,
            atomic,
            tensor,
            vec4: false,
        }
    }

    /// Bindings this buffer takes in `layout`.
    pub fn segments(&self, layout: Layout) -> u32 {
        match layout {
            Layout::Segmented if self.tensor => SEGMENTS,
            _ => 1,
        }
    }

    fn store_type(&self) -> String {
        if self.access == Access::Uniform {
            format!("array<vec4<u32>, {}>", PARAM_WORDS / 4)
        } else if self.atomic {
            "array<atomic<u32>>".into()
        } else if self.vec4 {
            "array<vec4<u32>>".into()
        } else {
            "array<u32>".into()
        }
    }

    /// An expression reading word `index` (a `u32` expression), through
    /// the buffer's accessor (`{name}_word`).
    pub fn word(&self, index: &str) -> String {
        format!("{}_word({index})", self.name)
    }

    /// An expression reading `vec4<u32>` `index` (words `4 * index ..`) of a
    /// [`read_vec4`](Buffer::read_vec4) or
    /// [`read_write_vec4`](Buffer::read_write_vec4) buffer.
    pub fn vector(&self, index: &str) -> String {
        debug_assert!(self.vec4, "{} is not bound as vec4", self.name);
        format!("{}_vector({index})", self.name)
    }

    /// A statement storing `value` in word `index` of a non-atomic buffer.
    pub fn set(&self, index: &str, value: &str) -> String {
        debug_assert!(!self.atomic && self.access == Access::ReadWrite);
        format!("{}_set({index}, {value});", self.name)
    }

    /// A statement storing `vec4<u32>` `value` in vector `index` (words
    /// `4 * index ..`) of a [`read_write_vec4`](Buffer::read_write_vec4)
    /// buffer.
    pub fn store_vector(&self, index: &str, value: &str) -> String {
        debug_assert!(
            self.vec4 && self.access == Access::ReadWrite,
            "{} is not bound as a writable vec4 array",
            self.name
        );
        format!("{}_store({index}, {value});", self.name)
    }

    /// A statement applying `atomic{op}` (`And`, `Or`, `Min`, `Max`) with
    /// `value` to word `index` of an atomic buffer, its result unused.
    pub fn atomic(&self, op: &str, index: &str, value: &str) -> String {
        debug_assert!(self.atomic && ATOMIC_OPS.contains(&op), "{op}");
        format!(
            "{}_atomic_{}({index}, {value});",
            self.name,
            op.to_ascii_lowercase()
        )
    }
}

/// The atomic operations [`Buffer::atomic`] offers.
const ATOMIC_OPS: [&str; 4] = ["And", "Or", "Min", "Max"];

/// Writes the declarations of `buffers`, bound in order from binding 0
/// (`@group(0) @binding(b) var<storage, read> name: array<u32>;`).
pub fn declare(w: &mut Writer, buffers: &[Buffer], layout: Layout) {
    let mut binding = 0;
    for b in buffers {
        let space = match b.access {
            Access::Read => "storage, read",
            Access::ReadWrite => "storage, read_write",
            Access::Uniform => "uniform",
        };
        let n = b.segments(layout);
        for k in 0..n {
            let name = if n > 1 {
                format!("{}_s{k}", b.name)
            } else {
                b.name.to_string()
            };
            w.line(format!(
                "@group(0) @binding({binding}) var<{space}> {name}: {};",
                b.store_type()
            ));
            binding += 1;
        }
    }
    if buffers.iter().any(|b| b.access == Access::Uniform) {
        w.blank();
        w.comment("Parameter word i: the same in every thread, one load wherever it is read.");
        w.line("fn param(i: u32) -> u32 {");
        w.line("    return params[i >> 2u][i & 3u];");
        w.line("}");
    }
}

/// Writes the accessor functions of every storage buffer, through which
/// a kernel reaches its words in either layout: `{name}_word` (and, for a
/// `vec4` buffer, `{name}_vector`), and for a writable one `{name}_set`
/// (`{name}_store` of a vector, `{name}_atomic_{op}` of an atomic word).
/// A buffer of one binding indexes its array directly; a segmented one
/// routes index `i` to its segment.
pub fn gen_accessors(w: &mut Writer, buffers: &[Buffer], layout: Layout) {
    for b in buffers.iter().filter(|b| b.access != Access::Uniform) {
        let n = b.segments(layout);
        let name = b.name;
        // One accessor: `body(array, index)` its single statement.
        let define = |w: &mut Writer, header: &str, body: &dyn Fn(&str, &str) -> String| {
            if n > 1 {
                route(w, header, name, n, body);
            } else {
                w.open(header);
                w.line(body(name, "i"));
                w.close();
            }
        };
        let load = |seg: &str, i: &str| {
            if b.atomic {
                format!("atomicLoad(&{seg}[{i}])")
            } else {
                format!("{seg}[{i}]")
            }
        };
        let units = if b.vec4 { "vectors" } else { "words" };
        let what = if b.vec4 { "Vector" } else { "Word" };
        if n > 1 {
            w.comment(format!(
                "{what} i of `{name}`, bound in {n} segments of arrayLength(&{name}_s0) {units}."
            ));
        } else {
            w.comment(format!("{what} i of `{name}`."));
        }
        if b.vec4 {
            define(
                w,
                &format!("fn {name}_vector(i: u32) -> vec4<u32>"),
                &|seg, i| format!("return {seg}[{i}];"),
            );
            w.blank();
            // A word of one binding is a scalar load (a whole vector and a
            // dynamic lane pick cost a CPU adapter dearly, in time and in
            // its compiler's time); a routed one picks it from the vector.
            w.open(format!("fn {name}_word(i: u32) -> u32"));
            if n > 1 {
                w.line(format!("return {name}_vector(i >> 2u)[i & 3u];"));
            } else {
                w.line(format!("return {name}[i >> 2u][i & 3u];"));
            }
            w.close();
            w.blank();
            if b.access == Access::ReadWrite {
                define(
                    w,
                    &format!("fn {name}_store(i: u32, v: vec4<u32>)"),
                    &|seg, i| format!("{seg}[{i}] = v;"),
                );
                w.blank();
                w.comment("Word `lane` of vector i: a store of that word alone.");
                define(
                    w,
                    &format!("fn {name}_set_lane(i: u32, lane: u32, v: u32)"),
                    &|seg, i| format!("{seg}[{i}][lane] = v;"),
                );
                w.blank();
                w.open(format!("fn {name}_set(i: u32, v: u32)"));
                w.line(format!("{name}_set_lane(i >> 2u, i & 3u, v);"));
                w.close();
                w.blank();
            }
            continue;
        }
        define(w, &format!("fn {name}_word(i: u32) -> u32"), &|seg, i| {
            format!("return {};", load(seg, i))
        });
        if b.access == Access::ReadWrite && !b.atomic {
            w.blank();
            define(w, &format!("fn {name}_set(i: u32, v: u32)"), &|seg, i| {
                format!("{seg}[{i}] = v;")
            });
        }
        if b.atomic {
            for op in ATOMIC_OPS {
                w.blank();
                define(
                    w,
                    &format!(
                        "fn {name}_atomic_{}(i: u32, v: u32)",
                        op.to_ascii_lowercase()
                    ),
                    &|seg, i| format!("atomic{op}(&{seg}[{i}], v);"),
                );
            }
        }
        w.blank();
    }
}

/// Places `buffers`' declarations (bound in order from binding 0) and
/// accessors in `w`, in both layouts: the plain module and its segmented
/// variant then share every other line ([`Writer::finish_kernel`]).
pub fn write_bindings(w: &mut Writer, buffers: &[Buffer]) {
    let render = |layout: Layout| {
        let mut d = Writer::new();
        declare(&mut d, buffers, layout);
        d.blank();
        gen_accessors(&mut d, buffers, layout);
        d.finish()
    };
    let counts = buffers
        .iter()
        .map(|b| b.segments(Layout::Segmented))
        .collect();
    w.bindings(render(Layout::Plain), render(Layout::Segmented), counts);
}

/// One routing function: `body(segment, word)` is its single statement on
/// the word's segment (a `return` for loads).
fn route(
    w: &mut Writer,
    header: &str,
    name: &str,
    segments: u32,
    body: &dyn Fn(&str, &str) -> String,
) {
    let returns = body("x", "i").starts_with("return");
    w.open(header);
    w.line(format!("let n = arrayLength(&{name}_s0);"));
    w.block("if (i < n)", |w| {
        w.line(body(&format!("{name}_s0"), "i"));
        if !returns {
            w.line("return;");
        }
    });
    w.line("let s = i / n;");
    w.line("let r = i - s * n;");
    for k in 1..segments - 1 {
        w.block(format!("if (s == {k}u)"), |w| {
            w.line(body(&format!("{name}_s{k}"), "r"));
            if !returns {
                w.line("return;");
            }
        });
    }
    w.line(body(&format!("{name}_s{}", segments - 1), "r"));
    w.close();
}

/// A kernel's parts as one text: the plain module, then the segmented
/// variant in its block comment, headed by each plain binding's segment
/// count (what [`plain_part`] and [`segmented_part`] read back).
pub fn combined(text: crate::KernelText) -> String {
    let mut out = text.wgsl;
    if let Some((counts, segmented)) = text.segmented {
        debug_assert!(
            !segmented.contains("/*") && !segmented.contains("*/"),
            "the segmented variant must not hold block comments"
        );
        let counts: Vec<String> = counts.iter().map(u32::to_string).collect();
        out.push_str(&format!("{SEGMENTED_MARKER} {}\n", counts.join(" ")));
        out.push_str(&segmented);
        out.push_str("*/\n");
    }
    out
}

/// The plain module of a kernel text, without its segmented variant.
pub fn plain_part(wgsl: &str) -> &str {
    match wgsl.find(SEGMENTED_MARKER) {
        Some(at) => &wgsl[..at],
        None => wgsl,
    }
}

/// The segmented variant of a kernel text and its per-binding segment
/// counts, if it has one.
pub fn segmented_part(wgsl: &str) -> Option<(Vec<u32>, &str)> {
    let at = wgsl.find(SEGMENTED_MARKER)?;
    let rest = &wgsl[at + SEGMENTED_MARKER.len()..];
    let (header, body) = rest.split_once('\n')?;
    let body = body.strip_suffix("*/\n")?;
    let counts = header
        .split_whitespace()
        .map(|c| c.parse().ok())
        .collect::<Option<Vec<u32>>>()?;
    Some((counts, body))
}

/// A kernel built from a generated kernel text (the plain module and, when
/// present, its segmented variant, as [`combined`] writes
/// them), leaked for the program's lifetime as generated code holds kernels
/// in statics: what tests that generate kernels at run time use.
pub fn leak_kernel(
    key: &str,
    text: &str,
    entry: &'static str,
    bindings: &'static [Access],
    workgroup_size: u32,
) -> &'static crate::Kernel {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let (key, plain) = (leak(key), leak(plain_part(text)));
    Box::leak(Box::new(match segmented_part(text) {
        Some((counts, wgsl)) => crate::Kernel::with_variant(
            key,
            plain,
            entry,
            bindings,
            workgroup_size,
            crate::Segmented {
                wgsl: leak(wgsl),
                segments: Box::leak(counts.into_boxed_slice()),
            },
        ),
        None => crate::Kernel::new(key, plain, entry, bindings, workgroup_size),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUFFERS: [Buffer; 3] = [
        Buffer::params(),
        Buffer::read("input", true),
        Buffer::read_write("output", true, true),
    ];

    /// A kernel generated once: its body reads and writes through the
    /// accessors.
    fn kernel() -> crate::KernelText {
        let mut w = Writer::new();
        write_bindings(&mut w, &BUFFERS);
        w.open("@compute @workgroup_size(1) fn main()");
        w.line(format!("let x = {};", BUFFERS[1].word("param(0)")));
        w.line(BUFFERS[2].atomic("Or", "param(1)", "x"));
        w.line(BUFFERS[2].atomic("Max", "0u", "x"));
        w.close();
        w.finish_kernel()
    }

    fn validate(wgsl: &str) -> naga::Module {
        let module = naga::front::wgsl::parse_str(wgsl)
            .unwrap_or_else(|e| panic!("{}\n{wgsl}", e.emit_to_string(wgsl)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}\n{wgsl}", e.emit_to_string(wgsl)));
        module
    }

    /// The text after the last accessor: the body both modules share.
    fn body(wgsl: &str) -> &str {
        &wgsl[wgsl.find("@compute").unwrap()..]
    }

    #[test]
    fn plain_accessors_index_directly() {
        let plain = kernel().wgsl;
        assert!(plain.contains("@group(0) @binding(1) var<storage, read> input: array<u32>;"));
        assert!(plain.contains("fn input_word(i: u32) -> u32 {\n    return input[i];\n}"));
        assert!(plain.contains("let x = input_word(param(0));"));
        // Parameter words: a uniform block read through `param`.
        assert!(plain.contains("@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;"));
        assert!(plain.contains("fn param(i: u32) -> u32 {"));
        assert_eq!(PARAM_WORDS, 96);
        assert!(plain.contains("atomicOr(&output[i], v);"));
        assert!(plain.contains("output_atomic_or(param(1), x);"));
        assert!(!plain.contains("arrayLength"));
        assert_eq!(validate(&plain).global_variables.len(), 3);
    }

    #[test]
    fn segmented_accessors_route_and_the_body_is_shared() {
        let text = kernel();
        let (counts, seg) = text.segmented.clone().unwrap();
        assert_eq!(counts, [1, 4, 4]);
        assert!(seg.contains("@group(0) @binding(4) var<storage, read> input_s3: array<u32>;"));
        assert!(seg.contains(
            "@group(0) @binding(8) var<storage, read_write> output_s3: array<atomic<u32>>;"
        ));
        assert!(seg.contains("let n = arrayLength(&input_s0);"));
        assert!(seg.contains("atomicOr(&output_s2[r], v);"));
        assert_eq!(body(&seg), body(&text.wgsl));
        assert_eq!(validate(&seg).global_variables.len(), 9);
    }

    const VEC4_BUFFERS: [Buffer; 3] = [
        Buffer::params(),
        Buffer::read_vec4("input"),
        Buffer::read_write_vec4("output"),
    ];

    /// Vectors and words of a read-only and a read-write vec4 buffer.
    fn vec4_kernel() -> crate::KernelText {
        let [_, input, output] = VEC4_BUFFERS;
        let mut w = Writer::new();
        write_bindings(&mut w, &VEC4_BUFFERS);
        w.open("@compute @workgroup_size(1) fn main()");
        w.line(format!("let v = {};", input.vector("param(0)")));
        w.line(output.store_vector("param(1)", "v"));
        w.line(format!("let x = {};", output.word("param(2)")));
        w.line(output.set("param(3)", &format!("x + {}", input.word("5u"))));
        w.close();
        w.finish_kernel()
    }

    #[test]
    fn vec4_buffers_store_vectors_and_words() {
        let text = vec4_kernel();
        let plain = &text.wgsl;
        assert!(plain
            .contains("@group(0) @binding(2) var<storage, read_write> output: array<vec4<u32>>;"));
        assert!(plain.contains("output_store(param(1), v);"));
        assert!(plain.contains("output_set(param(3), x + input_word(5u));"));
        assert!(plain.contains("fn output_store(i: u32, v: vec4<u32>) {\n    output[i] = v;\n}"));
        assert!(plain.contains("output[i][lane] = v;"));
        assert_eq!(validate(plain).global_variables.len(), 3);
        let (_, seg) = text.segmented.clone().unwrap();
        assert!(seg.contains(
            "@group(0) @binding(8) var<storage, read_write> output_s3: array<vec4<u32>>;"
        ));
        assert!(seg.contains("output_s2[r][lane] = v;"));
        assert_eq!(body(&seg), body(plain));
        // The read-only buffer gets no store accessors.
        for module in [plain.as_str(), seg.as_str()] {
            assert!(!module.contains("fn input_store"));
            assert!(!module.contains("fn input_set"));
        }
        assert_eq!(validate(&seg).global_variables.len(), 9);
    }

    #[test]
    fn the_variant_rides_in_a_comment() {
        let parts = kernel();
        let text = combined(parts.clone());
        // The whole text is the plain module to a WGSL parser.
        assert_eq!(validate(&text).global_variables.len(), 3);
        assert_eq!(plain_part(&text), parts.wgsl);
        let (counts, body) = segmented_part(&text).unwrap();
        let (want_counts, want) = parts.segmented.unwrap();
        assert_eq!(counts, want_counts);
        assert_eq!(body, want);
        assert!(segmented_part(&parts.wgsl).is_none());
    }
}
