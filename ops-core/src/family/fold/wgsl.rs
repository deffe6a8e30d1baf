//! WGSL kernels of the `fold` family ([`super`]).
//!
//! One thread per output element and chunk folds the chunk's values with
//! the spec's `map` and `combine`, starting from `identity`; a final pass
//! applies `finish` and stores the output, other passes store partial
//! results for a `fold_partials` pass. The arithmetic is the spec's, turned
//! into WGSL by [`crate::wgsl::scalar`].
//!
//! A shifted fold ([`Fold::shift`]) has two more kernels, `shift_input` and
//! `shift_partials`, the same loops over the shift's fold, whose final pass
//! stores each output's `m` as a partial (words in the compute type) in
//! their `partials` binding; the main kernels bind those as `shifts`, and
//! pass output `o`'s to `map` and `finish`.

use super::runtime::{params, Fold, FoldVariant, Shift, WORKGROUP_SIZE};
use crate::scalar::Var;
use crate::DataType;

use crate::scalar::TypeEnv;
use crate::wgsl::dtype::{self, is_packed};
use crate::wgsl::scalar::{compute_type, gen_expr_helpers, gen_helpers, scalar_wgsl};
use crate::wgsl::segments::{self, Buffer};
use crate::wgsl::writer::Writer;

/// The kernel key: `{operator}/{variant}/{DATA}` (`ReduceSum/fold_input/FLOAT16`).
pub fn fold_kernel_key(operator: &str, variant: FoldVariant, dtype: DataType) -> String {
    format!("{operator}/{}/{}", variant.name(), dtype.spec_name())
}

/// Why `fold` cannot run on tensors of `dtype` on the GPU, or `None`.
pub fn fold_unsupported(fold: &Fold, dtype: DataType) -> Option<String> {
    if let Some(s) = fold.shift.filter(|_| !dtype.is_float()) {
        return Some(format!("`shift: {}` is for float types", s.name()));
    }
    let env = TypeEnv::uniform(std::slice::from_ref(&dtype));
    let shift = fold.shift.map(Shift::fold);
    [Some(fold), shift]
        .into_iter()
        .flatten()
        .flat_map(|f| [f.identity, f.map, f.combine, f.finish])
        .find_map(|e| e.unsupported_for(&env))
}

/// The buffers of `variant`'s kernel for `fold`, in binding order
/// ([`FoldVariant::bindings`]).
fn buffers(fold: &Fold, variant: FoldVariant, dtype: DataType) -> Vec<Buffer<'static>> {
    let mut out = vec![
        Buffer::params(),
        Buffer::read("src", true),
        Buffer::read_write("partials", false, true),
    ];
    if !variant.is_shift() {
        out.push(Buffer::read_write("output", is_packed(dtype), true));
        if fold.shift.is_some() {
            out.push(Buffer::read("shifts", true));
        }
    }
    out
}

/// The complete WGSL of one fold kernel, plain and segmented
/// ([`crate::wgsl::segments`]). `fold` must be supported for `dtype`
/// ([`fold_unsupported`]).
pub fn fold_kernel(
    fold: &Fold,
    variant: FoldVariant,
    dtype: DataType,
    key: &str,
    origin: &str,
    text: &FoldText,
) -> String {
    segments::combined(fold_kernel_text(fold, variant, dtype, key, origin, text))
}

/// The parts of [`fold_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
///
/// The complete WGSL of one fold kernel, plain and segmented
/// ([`crate::wgsl::segments`]). `fold` must be supported for `dtype`
/// ([`fold_unsupported`]).
pub fn fold_kernel_text(
    fold: &Fold,
    variant: FoldVariant,
    dtype: DataType,
    key: &str,
    origin: &str,
    text: &FoldText,
) -> crate::KernelText {
    module(fold, variant, dtype, key, origin, text)
}

/// The spec's text of each expression, for the kernel's comments.
#[derive(Clone, Debug, Default)]
pub struct FoldText {
    /// `identity`.
    pub identity: String,
    /// `map`.
    pub map: String,
    /// `combine`.
    pub combine: String,
    /// `finish`.
    pub finish: String,
}

fn module(
    fold: &Fold,
    variant: FoldVariant,
    dtype: DataType,
    key: &str,
    origin: &str,
    text: &FoldText,
) -> crate::KernelText {
    let bufs = buffers(fold, variant, dtype);
    let (src, partials) = (bufs[1], bufs[2]);
    // The shift's kernels fold the shift's arithmetic; the main kernels of
    // a shifted fold read `m`.
    let (arith, shift_text, shifted) = match (variant.is_shift(), fold.shift) {
        (true, Some(s)) => (s.fold(), Some(shift_fold_text(s)), false),
        (false, Some(_)) => (fold, None, true),
        _ => (fold, None, false),
    };
    let text = shift_text.as_ref().unwrap_or(text);
    let t = compute_type(dtype);
    let wide = dtype.size_bits() == 64;
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    let shift = fold
        .shift
        .map_or(String::new(), |s| format!("; shift {}", s.name()));
    w.comment(format!(
        "fold ({}) of {dtype} in {t}: identity {}; map {}; combine {}; finish {}{shift}",
        variant.name(),
        text.identity,
        text.map,
        text.combine,
        text.finish
    ));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    for (name, word) in [
        ("P_OUTPUTS", params::OUTPUTS),
        ("P_LEN", params::LEN),
        ("P_CHUNK", params::CHUNK),
        ("P_CHUNKS", params::CHUNKS),
        ("P_FINAL", params::FINAL),
        ("P_N_LO", params::N_LO),
        ("P_N_HI", params::N_HI),
        ("P_KEPT_DIMS", params::KEPT_DIMS),
        ("P_REDUCED_DIMS", params::REDUCED_DIMS),
        ("P_KEPT_SIZES", params::KEPT_SIZES),
        ("P_KEPT_STRIDES", params::KEPT_STRIDES),
        ("P_REDUCED_SIZES", params::REDUCED_SIZES),
        ("P_REDUCED_STRIDES", params::REDUCED_STRIDES),
        ("P_ATTRS", params::ATTRS),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.blank();
    segments::write_bindings(&mut w, &bufs);
    gen_helpers(&mut w, dtype);
    let env = TypeEnv::uniform(std::slice::from_ref(&dtype));
    gen_expr_helpers(
        &mut w,
        &[arith.identity, arith.map, arith.combine, arith.finish],
        &env,
    );
    w.blank();
    // Partial `i` of a buffer of partials (words in the compute type).
    let load_acc = |w: &mut Writer, name: &str, buf: &Buffer<'_>| {
        w.open(format!("fn {name}(i: u32) -> {t}"));
        if wide {
            w.line(format!(
                "return acc_value(vec2<u32>({}, {}));",
                buf.word("2u * i"),
                buf.word("2u * i + 1u")
            ));
        } else {
            w.line(format!("return acc_value({});", buf.word("i")));
        }
        w.close();
    };
    if variant.reads_input() {
        dtype::gen_load_from(&mut w, "load_input", &src, dtype);
    } else {
        load_acc(&mut w, "load_partial", &src);
    }
    if shifted {
        w.blank();
        load_acc(&mut w, "load_shift", &bufs[4]);
    }
    w.blank();
    w.open(format!("fn store_partial(i: u32, v: {t})"));
    w.line("let words = acc_words(v);");
    if wide {
        w.line(partials.set("2u * i", "words.x"));
        w.line(partials.set("2u * i + 1u", "words.y"));
    } else {
        w.line(partials.set("i", "words"));
    }
    w.close();
    w.blank();
    if !variant.is_shift() {
        dtype::gen_store_to(&mut w, "store_output", &bufs[3], dtype);
        w.blank();
    }
    let var = |v: Var| v.name().to_string();
    // `m` after the pattern's own parameters where the fold reads it.
    let m = if shifted {
        format!(", m: {t}")
    } else {
        String::new()
    };
    w.open(format!("fn identity() -> {t}"));
    w.line(format!(
        "return {};",
        scalar_wgsl(arith.identity, &env, &var)
    ));
    w.close();
    w.blank();
    w.open(format!("fn map(x: {t}{m}) -> {t}"));
    w.line(format!("return {};", scalar_wgsl(arith.map, &env, &var)));
    w.close();
    w.blank();
    w.open(format!("fn combine(a: {t}, b: {t}) -> {t}"));
    w.line(format!(
        "return {};",
        scalar_wgsl(arith.combine, &env, &var)
    ));
    w.close();
    w.blank();
    w.open(format!("fn finish(acc: {t}, n: {t}{m}) -> {t}"));
    w.line(format!("return {};", scalar_wgsl(arith.finish, &env, &var)));
    w.close();
    w.blank();
    let n = match t {
        "f32" => "bitcast<f32>(param(P_N_LO))",
        "i32" => "bitcast<i32>(param(P_N_LO))",
        "u32" => "param(P_N_LO)",
        _ => "vec2<u32>(param(P_N_LO), param(P_N_HI))",
    };
    let m = if shifted { ", m" } else { "" };
    w.line(format!("@compute @workgroup_size({WORKGROUP_SIZE})"));
    w.open("fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>)");
    w.line("let t = gid.x + gid.y * nwg.x * WORKGROUP_SIZE;");
    w.line("let chunks = param(P_CHUNKS);");
    w.block("if (t >= param(P_OUTPUTS) * chunks)", |w| {
        w.line("return;");
    });
    w.line("let o = t / chunks;");
    w.line("let c = t - o * chunks;");
    w.line("let len = param(P_LEN);");
    w.line("let begin = min(c * param(P_CHUNK), len);");
    w.line("let end = min(begin + param(P_CHUNK), len);");
    if shifted {
        w.line("let m = load_shift(o);");
    }
    w.line("var acc = identity();");
    if variant.reads_input() {
        let fold_value = format!("acc = combine(acc, map(decode(load_input(OFFSET)){m}));");
        w.comment("The first element of output o's sub-tensor.");
        w.line("var rest = o;");
        w.line("var base = 0u;");
        w.block(
            "for (var d = param(P_KEPT_DIMS); d > 0u; d = d - 1u)",
            |w| {
                w.line("let size = param(P_KEPT_SIZES + d - 1u);");
                w.line("base = base + (rest % size) * param(P_KEPT_STRIDES + d - 1u);");
                w.line("rest = rest / size;");
            },
        );
        w.block("if (param(P_REDUCED_DIMS) <= 1u)", |w| {
            w.line("let stride = param(P_REDUCED_STRIDES);");
            w.block("for (var r = begin; r < end; r = r + 1u)", |w| {
                w.line(fold_value.replace("OFFSET", "base + r * stride"));
            });
        });
        w.block("else", |w| {
            w.block("for (var r = begin; r < end; r = r + 1u)", |w| {
                w.line("var q = r;");
                w.line("var offset = base;");
                w.block(
                    "for (var d = param(P_REDUCED_DIMS); d > 0u; d = d - 1u)",
                    |w| {
                        w.line("let size = param(P_REDUCED_SIZES + d - 1u);");
                        w.line("offset = offset + (q % size) * param(P_REDUCED_STRIDES + d - 1u);");
                        w.line("q = q / size;");
                    },
                );
                w.line(fold_value.replace("OFFSET", "offset"));
            });
        });
    } else {
        w.block("for (var j = begin; j < end; j = j + 1u)", |w| {
            w.line("acc = combine(acc, load_partial(o * len + j));");
        });
    }
    w.block("if (param(P_FINAL) == 1u)", |w| {
        if variant.is_shift() {
            w.comment("The shift of output o (t = o in a final pass).");
            w.line(format!("store_partial(t, finish(acc, {n}));"));
        } else {
            w.line(format!("store_output(o, encode(finish(acc, {n}{m})));"));
        }
    });
    w.block("else", |w| {
        w.line("store_partial(t, acc);");
    });
    w.close();
    w.finish_kernel()
}

/// The comment text of the shift's fold.
fn shift_fold_text(shift: Shift) -> FoldText {
    match shift {
        Shift::Max => FoldText {
            identity: "lowest".into(),
            map: "x".into(),
            combine: "max(a, b)".into(),
            finish: "if abs(acc) < highest { acc } else { 0 }".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::{Binary, Scalar, Ty, Unary};

    const X: Scalar = Scalar::Var(Var::X);
    const A: Scalar = Scalar::Var(Var::A);
    const B: Scalar = Scalar::Var(Var::B);
    const ACC: Scalar = Scalar::Var(Var::Acc);
    const N: Scalar = Scalar::Var(Var::N);
    const M: Scalar = Scalar::Var(Var::M);

    static FOLDS: [Fold; 3] = [
        Fold {
            identity: &Scalar::Int(0, Ty::T),
            map: &Scalar::Unary(Unary::Abs, &X),
            combine: &Scalar::Binary(Binary::Add, &A, &B),
            finish: &Scalar::Binary(Binary::Div, &ACC, &N),
            accuracy: None,
            domain: None,
            shift: None,
        },
        Fold {
            identity: &Scalar::Lowest(Ty::T),
            map: &Scalar::Binary(Binary::Mul, &X, &X),
            combine: &Scalar::Binary(Binary::Max, &A, &B),
            finish: &Scalar::Select(
                &Scalar::Binary(Binary::Lt, &ACC, &Scalar::Int(0, Ty::T)),
                &Scalar::Unary(Unary::Neg, &ACC),
                &Scalar::Binary(Binary::Sub, &ACC, &N),
            ),
            accuracy: None,
            domain: None,
            shift: None,
        },
        Fold {
            identity: &Scalar::Int(1, Ty::T),
            map: &Scalar::Unary(Unary::Exp, &X),
            combine: &Scalar::Binary(Binary::Pow, &A, &B),
            finish: &Scalar::Unary(Unary::Round, &Scalar::Unary(Unary::Log, &ACC)),
            accuracy: None,
            domain: None,
            shift: None,
        },
    ];

    /// Every supported (fold, type, variant) kernel parses and validates
    /// with no optional capability, plain and segmented.
    #[test]
    fn kernels_validate() {
        let mut count = 0;
        for fold in &FOLDS {
            for dt in DataType::ALL {
                if fold_unsupported(fold, dt).is_some() {
                    continue;
                }
                for &v in FoldVariant::of(fold) {
                    let key = fold_kernel_key("Test", v, dt);
                    let wgsl = fold_kernel(fold, v, dt, &key, "test", &FoldText::default());
                    let plain = segments::plain_part(&wgsl);
                    crate::wgsl::validated_module(&key, plain, "main", WORKGROUP_SIZE);
                    let (_, seg) = segments::segmented_part(&wgsl).expect("segmented variant");
                    crate::wgsl::validated_module(&key, seg, "main", WORKGROUP_SIZE);
                    count += 1;
                }
            }
        }
        // abs/div and max of squares: every type (64-bit integers and
        // FLOAT64 divide by long division); exp/pow/log: FLOAT64 (word
        // pairs), FLOAT32, FLOAT16.
        assert_eq!(count, 2 * (12 + 12 + 3));
    }

    #[test]
    fn unsupported_combinations_are_named() {
        assert_eq!(fold_unsupported(&FOLDS[0], DataType::Int64), None);
        assert!(fold_unsupported(&FOLDS[2], DataType::Int32)
            .unwrap()
            .contains("exp"));
        assert_eq!(fold_unsupported(&FOLDS[0], DataType::Float64), None);
        assert_eq!(fold_unsupported(&FOLDS[2], DataType::Float64), None);
    }

    /// Log-sum-exp shifted by the maximum: `exp(x - m)`, `log(acc) + m`.
    static LSE: Fold = Fold {
        identity: &Scalar::Int(0, Ty::T),
        map: &Scalar::Unary(Unary::Exp, &Scalar::Binary(Binary::Sub, &X, &M)),
        combine: &Scalar::Binary(Binary::Add, &A, &B),
        finish: &Scalar::Binary(Binary::Add, &Scalar::Unary(Unary::Log, &ACC), &M),
        accuracy: None,
        domain: None,
        shift: Some(Shift::Max),
    };

    /// A shifted fold's four kernels validate on every float type, plain
    /// and segmented; the main ones bind the shifts, the shift's do not
    /// bind the output.
    #[test]
    fn shifted_kernels_validate() {
        assert_eq!(FoldVariant::of(&LSE), &FoldVariant::ALL);
        assert_eq!(FoldVariant::of(&FOLDS[0]).len(), 2);
        for dt in [DataType::Float16, DataType::Float32, DataType::Float64] {
            assert_eq!(fold_unsupported(&LSE, dt), None, "{dt}");
            for v in FoldVariant::ALL {
                let key = fold_kernel_key("Lse", v, dt);
                let wgsl = fold_kernel(&LSE, v, dt, &key, "test", &FoldText::default());
                let plain = segments::plain_part(&wgsl);
                let module = crate::wgsl::validated_module(&key, plain, "main", WORKGROUP_SIZE);
                let bindings = module
                    .global_variables
                    .iter()
                    .filter(|(_, g)| g.binding.is_some());
                assert_eq!(bindings.count(), v.bindings(&LSE).len(), "{key}");
                assert_eq!(plain.contains("fn load_shift"), !v.is_shift(), "{key}");
                assert_eq!(plain.contains("fn store_output"), !v.is_shift(), "{key}");
                let (_, seg) = segments::segmented_part(&wgsl).expect("segmented variant");
                crate::wgsl::validated_module(&key, seg, "main", WORKGROUP_SIZE);
            }
        }
        assert!(fold_unsupported(&LSE, DataType::Int32)
            .unwrap()
            .contains("float types"));
    }

    /// A round trip through every type, `cast<T>(cast<U>(x))`, and a
    /// typed integer attribute: every kernel validates.
    #[test]
    fn cast_kernels_validate() {
        use crate::scalar::AttrScalar;
        let mut count = 0;
        for u in DataType::ALL {
            let inner: &'static Scalar = Box::leak(Box::new(Scalar::Cast(Ty::Data(u), &X)));
            let map: &'static Scalar = Box::leak(Box::new(Scalar::Cast(Ty::T, inner)));
            let attr: &'static Scalar = Box::leak(Box::new(Scalar::Cast(
                Ty::T,
                Box::leak(Box::new(Scalar::Attr(0, AttrScalar::Int, Ty::Data(u)))),
            )));
            let fold = Fold {
                identity: &Scalar::Lowest(Ty::T),
                map,
                combine: &Scalar::Binary(Binary::Max, &A, &B),
                finish: attr,
                accuracy: None,
                domain: None,
                shift: None,
            };
            for dt in DataType::ALL {
                assert_eq!(fold_unsupported(&fold, dt), None);
                let key = fold_kernel_key("Cast", FoldVariant::Input, dt);
                let wgsl = fold_kernel(
                    &fold,
                    FoldVariant::Input,
                    dt,
                    &key,
                    "test",
                    &FoldText::default(),
                );
                crate::wgsl::validated_module(
                    &key,
                    segments::plain_part(&wgsl),
                    "main",
                    WORKGROUP_SIZE,
                );
                count += 1;
            }
        }
        assert_eq!(count, 12 * 12);
    }
}
