//! WGSL kernels of the `reduce` pattern (ArgMin, ArgMax, ReduceMin, ReduceMax).
//!
//! One kernel per [`ReduceVariant`], input data type and output data type;
//! the plan builder `ops_core::patterns::reduce::reduce_plan` fills the
//! parameter words ([`ops_core::patterns::reduce::params`]) and picks the
//! variant. Bindings of group 0, in order ([`REDUCE_BINDINGS`]):
//!
//! 0. `params: array<u32>` (read): the parameter words;
//! 1. `input: array<u32>` (read): the input tensor's packed words;
//! 2. `output` (read_write): the output tensor's packed words,
//!    `array<atomic<u32>>` when the output type is narrower than 32 bits
//!    (the output must start zeroed), `array<u32>` otherwise.
//!
//! Every element is compared by an integer key ([`super::dtype::gen_key`])
//! turned into a *rank* (the key for `Min`, its complement for `Max`) so that
//! the smallest rank always wins; equal ranks are broken by position (lower
//! for [`Ties::First`](ops_core::patterns::reduce::Ties::First), higher for
//! `Last`), which makes any combine order agree with the CPU reference.

use ops_core::patterns::reduce::{
    params, Keep, ReduceConfig, ReduceVariant, Select, WORKGROUP_SIZE,
};
use ops_core::{Access, DataType};

use super::dtype::{self, NanKey};
use super::segments::{self, with_segmented_variant, Buffer, Layout};
use super::writer::Writer;

/// The bindings of every reduce kernel: params, input, output.
pub const REDUCE_BINDINGS: &[Access] = &[Access::Read, Access::Read, Access::ReadWrite];

/// The bindings of every reduce kernel (see [`REDUCE_BINDINGS`]).
pub fn reduce_bindings() -> &'static [Access] {
    REDUCE_BINDINGS
}

/// The entry point's name.
pub const REDUCE_ENTRY: &str = "main";

/// The kernel key by the framework's convention,
/// `{operator}/{variant name}/{INPUT}/{OUTPUT}` (`ArgMin/reduce_rows/FLOAT16/UINT64`).
pub fn reduce_kernel_key(
    operator: &str,
    variant: ReduceVariant,
    input: DataType,
    output: DataType,
) -> String {
    format!(
        "{operator}/{}/{}/{}",
        variant.name(),
        input.spec_name(),
        output.spec_name()
    )
}

/// True when a kernel can be generated for this data-type pair: `Keep::Index`
/// needs an integer output, `Keep::Value` the input's type.
pub fn reduce_supported(cfg: &ReduceConfig, input: DataType, output: DataType) -> bool {
    match cfg.keep {
        Keep::Index => output.is_int(),
        Keep::Value => output == input,
    }
}

/// The complete WGSL of one reduce kernel: the module and its segmented
/// variant ([`super::segments`]; the input and output are segmented).
///
/// `key` is the kernel key (written into the header) and `origin` the spec
/// path (`// @generated from {origin}`). The pair must be
/// [`reduce_supported`]; otherwise the module still generates, but stores
/// meaningless bits.
pub fn reduce_kernel(
    cfg: &ReduceConfig,
    variant: ReduceVariant,
    input: DataType,
    output: DataType,
    key: &str,
    origin: &str,
) -> String {
    debug_assert!(reduce_supported(cfg, input, output), "{key}");
    let buffers = reduce_buffers(output);
    let plain = reduce_module(cfg, variant, input, output, key, origin, Layout::Plain);
    let segmented = reduce_module(cfg, variant, input, output, key, origin, Layout::Segmented);
    with_segmented_variant(plain, &segmented, &buffers)
}

/// The buffers of a reduce kernel, in binding order.
fn reduce_buffers(output: DataType) -> [Buffer<'static>; 3] {
    [
        Buffer::read("params", false),
        Buffer::read("input", true),
        Buffer::read_write("output", dtype::is_packed(output), true),
    ]
}

/// One module of a reduce kernel, plain or segmented.
fn reduce_module(
    cfg: &ReduceConfig,
    variant: ReduceVariant,
    input: DataType,
    output: DataType,
    key: &str,
    origin: &str,
    layout: Layout,
) -> String {
    let buffers = reduce_buffers(output);
    let key_ty = dtype::raw_type(input);
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!(
        "reduce ({}): keep {:?}, select {:?}, zeros {:?}; input {input}, output {output}",
        variant.name(),
        cfg.keep,
        cfg.select,
        cfg.zeros
    ));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    for (name, word) in [
        ("P_OUTPUT_COUNT", params::OUTPUT_COUNT),
        ("P_REDUCE_LEN", params::REDUCE_LEN),
        ("P_KEPT_RANK", params::KEPT_RANK),
        ("P_REDUCED_RANK", params::REDUCED_RANK),
        ("P_TIES", params::TIES),
        ("P_KEPT_SIZES", params::KEPT_SIZES),
        ("P_KEPT_STRIDES", params::KEPT_STRIDES),
        ("P_REDUCED_SIZES", params::REDUCED_SIZES),
        ("P_REDUCED_STRIDES", params::REDUCED_STRIDES),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.line(format!("const TIES_LAST: u32 = {}u;", params::TIES_LAST));
    w.comment("The position of no element: an empty candidate.");
    w.line("const NO_POSITION: u32 = 0xffffffffu;");
    w.blank();
    segments::declare(&mut w, &buffers, layout);
    if variant == ReduceVariant::Tree {
        w.blank();
        w.line(format!(
            "var<workgroup> wg_rank: array<{key_ty}, WORKGROUP_SIZE>;"
        ));
        w.line("var<workgroup> wg_position: array<u32, WORKGROUP_SIZE>;");
    }

    w.blank();
    segments::gen_accessors(&mut w, &buffers, layout);
    dtype::gen_load_from(&mut w, "load_input", &buffers[1], layout, input);
    w.blank();
    dtype::gen_store_to(&mut w, "store_output", &buffers[2], layout, output);
    w.blank();
    let nan = match cfg.select {
        Select::Min => NanKey::Lowest,
        Select::Max => NanKey::Highest,
    };
    dtype::gen_key(&mut w, "order_key", input, cfg.zeros, nan);
    w.blank();
    dtype::gen_key_less(&mut w, "key_less", input);
    w.blank();
    gen_rank(&mut w, cfg.select, key_ty);
    w.blank();
    gen_better(&mut w, key_ty);
    w.blank();
    gen_offset(
        &mut w,
        "kept_offset",
        "o",
        "P_KEPT_RANK",
        "P_KEPT_SIZES",
        "P_KEPT_STRIDES",
    );
    w.blank();
    gen_offset(
        &mut w,
        "reduced_offset",
        "r",
        "P_REDUCED_RANK",
        "P_REDUCED_SIZES",
        "P_REDUCED_STRIDES",
    );
    w.blank();
    gen_emit(&mut w, cfg.keep, output);
    w.blank();
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {REDUCE_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let last = params[P_TIES] == TIES_LAST;");
    match variant {
        ReduceVariant::Rows => gen_rows_body(&mut w),
        ReduceVariant::Tree => gen_tree_body(&mut w, key_ty),
    }
    w.close();
    w.finish()
}

/// `fn rank(v: raw) -> key`: smaller ranks win the selection.
fn gen_rank(w: &mut Writer, select: Select, key_ty: &str) {
    w.comment("The selection's rank of a raw element: the smallest rank wins.");
    w.open(format!("fn rank(v: {key_ty}) -> {key_ty}"));
    match select {
        Select::Min => w.line("return order_key(v);"),
        Select::Max => w.line("return ~order_key(v);"),
    };
    w.close();
}

/// `fn better(...)`: whether candidate `a` beats candidate `b`.
fn gen_better(w: &mut Writer, key_ty: &str) {
    w.comment("Whether candidate a (rank, position) beats candidate b; either may be empty.");
    w.open(format!(
        "fn better(rank_a: {key_ty}, position_a: u32, rank_b: {key_ty}, position_b: u32, last: bool) -> bool"
    ));
    w.block("if (position_a == NO_POSITION)", |w| {
        w.line("return false;");
    });
    w.block("if (position_b == NO_POSITION)", |w| {
        w.line("return true;");
    });
    w.block("if (key_less(rank_a, rank_b))", |w| {
        w.line("return true;");
    });
    w.block("if (key_less(rank_b, rank_a))", |w| {
        w.line("return false;");
    });
    w.block("if (last)", |w| {
        w.line("return position_a > position_b;");
    });
    w.line("return position_a < position_b;");
    w.close();
}

/// `fn {name}(index: u32) -> u32`: the input offset of a row-major index
/// over the dimensions in the params words.
fn gen_offset(w: &mut Writer, name: &str, arg: &str, rank: &str, sizes: &str, strides: &str) {
    w.open(format!("fn {name}({arg}: u32) -> u32"));
    w.line(format!("var rest = {arg};"));
    w.line("var offset = 0u;");
    w.line(format!("let dims = params[{rank}];"));
    w.block("for (var d = dims; d > 0u; d = d - 1u)", |w| {
        w.line(format!("let size = params[{sizes} + d - 1u];"));
        w.line(format!(
            "offset = offset + (rest % size) * params[{strides} + d - 1u];"
        ));
        w.line("rest = rest / size;");
    });
    w.line("return offset;");
    w.close();
}

/// `fn emit(o, position, base)`: writes output element `o`.
fn gen_emit(w: &mut Writer, keep: Keep, output: DataType) {
    w.comment("Writes output element o: the selected element's position or bits.");
    w.open("fn emit(o: u32, position: u32, base: u32)");
    match keep {
        Keep::Index => {
            w.line(format!(
                "store_output(o, {});",
                dtype::raw_from_u32(output, "position")
            ));
        }
        Keep::Value => {
            w.line("store_output(o, load_input(base + reduced_offset(position)));");
        }
    }
    w.close();
}

fn gen_rows_body(w: &mut Writer) {
    w.comment("One thread per output element.");
    w.line("let count = params[P_OUTPUT_COUNT];");
    w.block(
        "if (group >= count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u))",
        |w| {
            w.line("return;");
        },
    );
    w.line("let o = group * WORKGROUP_SIZE + lid;");
    w.block("if (o >= count)", |w| {
        w.line("return;");
    });
    w.line("let base = kept_offset(o);");
    w.line("let len = params[P_REDUCE_LEN];");
    w.line("var best_rank = rank(load_input(base));");
    w.line("var best_position = 0u;");
    w.block("for (var r = 1u; r < len; r = r + 1u)", |w| {
        w.line("let candidate = rank(load_input(base + reduced_offset(r)));");
        w.block(
            "if (better(candidate, r, best_rank, best_position, last))",
            |w| {
                w.line("best_rank = candidate;");
                w.line("best_position = r;");
            },
        );
    });
    w.line("emit(o, best_position, base);");
}

fn gen_tree_body(w: &mut Writer, key_ty: &str) {
    w.comment("One workgroup per output element; barriers stay in uniform control flow.");
    w.line("let in_range = group < params[P_OUTPUT_COUNT];");
    w.line("var base = 0u;");
    w.line("var len = 0u;");
    w.block("if (in_range)", |w| {
        w.line("base = kept_offset(group);");
        w.line("len = params[P_REDUCE_LEN];");
    });
    w.line(format!("var best_rank = {};", zero_of(key_ty)));
    w.line("var best_position = NO_POSITION;");
    w.line("var r = lid;");
    w.block("loop", |w| {
        w.block("if (r >= len)", |w| {
            w.line("break;");
        });
        w.line("let candidate = rank(load_input(base + reduced_offset(r)));");
        w.block(
            "if (better(candidate, r, best_rank, best_position, last))",
            |w| {
                w.line("best_rank = candidate;");
                w.line("best_position = r;");
            },
        );
        w.comment("Stop before r + WORKGROUP_SIZE could wrap around.");
        w.block("if (len - r <= WORKGROUP_SIZE)", |w| {
            w.line("break;");
        });
        w.line("r = r + WORKGROUP_SIZE;");
    });
    w.line("wg_rank[lid] = best_rank;");
    w.line("wg_position[lid] = best_position;");
    w.block(
        "for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u)",
        |w| {
            w.line("workgroupBarrier();");
            w.block("if (lid < stride)", |w| {
                w.line("let other_rank = wg_rank[lid + stride];");
                w.line("let other_position = wg_position[lid + stride];");
                w.block(
                    "if (better(other_rank, other_position, wg_rank[lid], wg_position[lid], last))",
                    |w| {
                        w.line("wg_rank[lid] = other_rank;");
                        w.line("wg_position[lid] = other_position;");
                    },
                );
            });
        },
    );
    w.block("if (lid == 0u && in_range)", |w| {
        w.line("emit(group, wg_position[0], base);");
    });
}

fn zero_of(key_ty: &str) -> &'static str {
    if key_ty == "u32" {
        "0u"
    } else {
        "vec2<u32>(0u, 0u)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ops_core::patterns::reduce::Zeros;

    /// Output data types of an operator for an input type.
    type Outputs = fn(DataType) -> Vec<DataType>;

    /// The four operators' configurations and their output types for an input type.
    fn configs() -> Vec<(&'static str, ReduceConfig, Outputs)> {
        let index_outputs: Outputs = |_| {
            vec![
                DataType::Int64,
                DataType::Int32,
                DataType::Uint64,
                DataType::Uint32,
            ]
        };
        let same: Outputs = |t| vec![t];
        vec![
            (
                "ArgMin",
                ReduceConfig {
                    keep: Keep::Index,
                    select: Select::Min,
                    zeros: Zeros::Equal,
                },
                index_outputs,
            ),
            (
                "ArgMax",
                ReduceConfig {
                    keep: Keep::Index,
                    select: Select::Max,
                    zeros: Zeros::Equal,
                },
                index_outputs,
            ),
            (
                "ReduceMin",
                ReduceConfig {
                    keep: Keep::Value,
                    select: Select::Min,
                    zeros: Zeros::NegativeFirst,
                },
                same,
            ),
            (
                "ReduceMax",
                ReduceConfig {
                    keep: Keep::Value,
                    select: Select::Max,
                    zeros: Zeros::NegativeFirst,
                },
                same,
            ),
        ]
    }

    fn validate(key: &str, text: &str) {
        let (counts, segmented) =
            segments::segmented_part(text).unwrap_or_else(|| panic!("{key}: no segmented variant"));
        assert_eq!(counts, [1, 4, 4], "{key}");
        let bindings = |m: naga::Module| {
            m.global_variables
                .iter()
                .filter(|(_, g)| g.binding.is_some())
                .count()
        };
        assert_eq!(bindings(validate_module(key, segmented)), 9, "{key}");
        assert_eq!(bindings(validate_module(key, text)), 3, "{key}");
    }

    fn validate_module(key: &str, wgsl: &str) -> naga::Module {
        let module = naga::front::wgsl::parse_str(wgsl)
            .unwrap_or_else(|e| panic!("{key}: {}\n{wgsl}", e.emit_to_string(wgsl)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{key}: {}\n{wgsl}", e.emit_to_string(wgsl)));
        let entry = module
            .entry_points
            .iter()
            .find(|e| e.name == REDUCE_ENTRY)
            .unwrap_or_else(|| panic!("{key}: no entry point `{REDUCE_ENTRY}`"));
        assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1], "{key}");
        module
    }

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        let mut count = 0;
        for (op, cfg, outputs) in configs() {
            for variant in ReduceVariant::ALL {
                for input in DataType::ALL {
                    for output in outputs(input) {
                        assert!(reduce_supported(&cfg, input, output));
                        let key = reduce_kernel_key(op, variant, input, output);
                        let wgsl =
                            reduce_kernel(&cfg, variant, input, output, &key, "specs/test.op");
                        assert!(wgsl.starts_with("// @generated from specs/test.op\n"));
                        assert!(wgsl.contains(&key));
                        validate(&key, &wgsl);
                        count += 1;
                    }
                }
            }
        }
        assert_eq!(count, 2 * 11 * (4 + 4 + 1 + 1));
    }

    #[test]
    fn narrow_index_outputs_validate() {
        let cfg = ReduceConfig {
            keep: Keep::Index,
            select: Select::Max,
            zeros: Zeros::Equal,
        };
        for variant in ReduceVariant::ALL {
            for output in [
                DataType::Int16,
                DataType::Uint8,
                DataType::Int8,
                DataType::Uint16,
            ] {
                let key = reduce_kernel_key("ArgMax", variant, DataType::Float16, output);
                validate(
                    &key,
                    &reduce_kernel(&cfg, variant, DataType::Float16, output, &key, "x"),
                );
            }
        }
    }

    #[test]
    fn bindings_and_packing() {
        assert_eq!(
            reduce_bindings(),
            &[Access::Read, Access::Read, Access::ReadWrite]
        );
        let cfg = ReduceConfig {
            keep: Keep::Value,
            select: Select::Min,
            zeros: Zeros::NegativeFirst,
        };
        let packed = reduce_kernel(
            &cfg,
            ReduceVariant::Rows,
            DataType::Int8,
            DataType::Int8,
            "k",
            "o",
        );
        assert!(packed.contains("var<storage, read_write> output: array<atomic<u32>>;"));
        let plain = reduce_kernel(
            &cfg,
            ReduceVariant::Tree,
            DataType::Float64,
            DataType::Float64,
            "k",
            "o",
        );
        assert!(plain.contains("var<storage, read_write> output: array<u32>;"));
        assert!(plain.contains("const WORKGROUP_SIZE: u32 = 256u;"));
        assert_eq!(
            reduce_kernel_key(
                "ArgMin",
                ReduceVariant::Rows,
                DataType::Float16,
                DataType::Uint64
            ),
            "ArgMin/reduce_rows/FLOAT16/UINT64"
        );
    }
}
