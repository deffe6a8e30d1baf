//! Scalar arithmetic declared in spec files, and its exact CPU meaning.
//!
//! A spec states what a pattern computes per element as a [`Scalar`]
//! expression (a fold's `map: x * x`, `combine: a + b`, `finish:
//! sqrt(acc)`). The spec compiler turns each expression into the WGSL of
//! every data type of the spec's tables and into a static tree of this type,
//! which [`Scalar::eval`] interprets for the CPU reference. The same tree
//! type serves both: the spec compiler builds it while checking the spec,
//! and generated code holds it as a `static`.
//!
//! # Types
//!
//! Every node of an expression has a data type ([`Scalar::type_of`]),
//! inferred by the spec compiler over a *type environment* ([`TypeEnv`]):
//! the type of each variable, which may be a *type parameter* ([`Ty`])
//! that each kernel binds to one data type of the tables. In a fold every
//! variable has the tensor's type, the parameter `T`; a family whose
//! inputs have types of their own gives each variable its own type.
//!
//! - A variable has its environment's type; a cast `cast<INT8>(e)` has its
//!   target; a comparison, `&&`, `||`, `!` and `true`/`false` are BOOL.
//! - Every other operation takes two operands of one type and gives that
//!   type: `cast<INT8>(x) + cast<FLOAT32>(x)` is a compile error (cast one
//!   of them).
//! - A literal, an attribute and `lowest`/`highest` take the type of their
//!   context: the other operand (`x + 1`), the cast they are the operand of
//!   (`cast<FLOAT16>(0.1)`: a *typed literal*), else what the pattern needs
//!   (a fold's `identity: 0` is a `T`).
//! - What the pattern needs is checked: a fold's `map`, `combine` and
//!   `finish` give a `T`; `cast<T>(e)` converts to it.
//! - A cast's target may be `max(T, FLOAT32)` ([`Ty::AtLeast`]; generally
//!   `max(PARAM, FLOAT)`, a type parameter and FLOAT16 or FLOAT32): the
//!   wider of the float type each kernel binds `T` to and the named one,
//!   FLOAT32 for a FLOAT16 or FLOAT32 `T`, FLOAT64 for a FLOAT64 `T`. It
//!   computes in `T`'s own precision, but at least FLOAT32, each cast a
//!   rounding on both backends (see "Meaning"). It is a type like the
//!   others: `cast<max(T, FLOAT32)>(x) + beta` reads `beta` at it, and it
//!   does not mix with `T` or FLOAT32 without a cast. The spec compiler
//!   refuses it, at the form, where the tables bind `T` to a type that is
//!   not a float, and refuses `max(FLOAT16, T)`, `max(T, INT8)` and
//!   `max(T, FLOAT64)` (FLOAT64 whatever `T` is: a fixed FLOAT64 cast,
//!   refused as `cast<FLOAT64>` is).
//!
//! # Meaning, per data type
//!
//! - **Floats** (FLOAT16, FLOAT32) compute in `f32`, FLOAT16 values too,
//!   and round once to the output type on store: the GPU in its kernels,
//!   the CPU backend by rounding every operation's result to `f32`
//!   ([`Precision::Compute`]), so that an intermediate beyond the `f32`
//!   range is infinity on both, and a sum that cancels loses the same
//!   bits. The yardstick of the accuracy contracts computes in `f64` and
//!   rounds once ([`Precision::Yardstick`], [`Scalar::eval`]); each
//!   backend's result is within the spec's contract of it where the
//!   contract holds ([`crate::accuracy::contract_matches`]). `min`/`max` propagate NaN and order -0.0 below +0.0;
//!   `round` rounds half to even; `%` is C's `fmod`; division by zero and
//!   `sqrt`/`log` of negative numbers follow IEEE 754. FLOAT64 is computed
//!   on the GPU on its bits (core WebGPU has no `f64`;
//!   [`crate::wgsl::float64`]), exactly as the CPU's `f64`: casts,
//!   comparisons, `min`, `max`, `abs`, `neg`, `+`, `-`, `*`, `/`, `%`,
//!   `sqrt`, `floor`, `ceil` and `round`, and within a few ULP `exp`,
//!   `log`, `tanh` and `pow` ([`crate::wgsl::float64_fn`]); a spec that
//!   takes another operation in FLOAT64 must leave it out of its tables.
//! - **Integers**: exact, and wrapping in their type after every
//!   operation (two's complement: INT8 `127 + 1` is `-128`, UINT8 `0 - 1`
//!   is 255). Division truncates toward zero; `x / 0` is `x`, `x % 0` is 0,
//!   and `MIN / -1` is `MIN` (WGSL's definitions, kept on the CPU). `abs` of
//!   `MIN` is `MIN`. `floor`, `ceil` and `round` are the identity;
//!   `sqrt`, `exp`, `log` and decimal literals are errors in a spec whose
//!   tables give the expression an integer type. `pow(x, y)` is the
//!   product of `y` factors `x`, wrapping; a negative `y` gives 1 for a
//!   base of 1, ±1 for -1 and 0 otherwise (the integer part of the real
//!   power, 0 for a base of 0). 64-bit integers (word pairs on the GPU)
//!   have `+ - *`, `/` and `%` (long division), `pow`, `neg`, `abs`,
//!   `min`, `max` and the comparisons.
//! - **Bitwise** `&`, `|`, `^`, `~` and the shifts `<<`, `>>` are for
//!   integers of every width (errors on floats and BOOL): they act on the
//!   two's complement bits; `>>` is arithmetic on signed types, logical on
//!   unsigned ones; a shift count is read as unsigned, and a count of the
//!   type's width or more shifts every bit out (0, or -1 for `>>` of a
//!   negative value), where WGSL would take the count modulo 32.
//! - `lowest` and `highest` are the type's extremes: -infinity and +infinity
//!   for floats, `MIN` and `MAX` for integers, false and true for BOOL.
//! - **BOOL** computes as an unsigned 1-bit integer: `max` is or, `min` and
//!   `*` are and, `+` and `-` are exclusive or, false orders below true.
//!
//! # Literals and attributes
//!
//! A literal is a constant of its type, rounded once: an integer literal
//! wraps to an integer type (its lowest bit for BOOL) and rounds to nearest
//! even to a float type; a decimal literal (float types only) is the
//! decimal number rounded once to its type (the spec compiler rounds the
//! spec's text directly, not through a rounded `f64`). A literal whose
//! type is stated, by a cast or by a typed operand (`cast<INT8>(x) + 300`),
//! must be in the type's range: `cast<UINT8>(-1)` is a compile error. An
//! integer attribute is converted as a cast from INT64; a float attribute
//! keeps its value at the compute precision (float types only).
//!
//! # Casts
//!
//! `cast<TYPE>(e)` ([`Scalar::Cast`], [`cast_value`]) converts a value to
//! a data type, exactly: the CPU reference and the GPU agree bit for bit
//! on every pair of types (NaN payloads aside). ONNX leaves some cases
//! undefined; these follow C, numpy and ONNX Runtime where they agree,
//! and saturate where they do not:
//!
//! - integer to integer: two's complement wrap, keeping the low bits
//!   (INT32 300 to INT8 is 44, INT8 -1 to UINT64 is `2^64 - 1`);
//! - integer or float to float: rounded once to nearest even; FLOAT16
//!   overflows to infinity (65520 and beyond); 64-bit integers round
//!   correctly from all 64 bits (2^53 + 1 to FLOAT32 is 2^53, and
//!   `2^60 + 2^36 + 1` is `2^60 + 2^37`, not the `2^60` a rounding through
//!   `f64` gives);
//! - float to integer: truncated toward zero; NaN is 0; values beyond the
//!   type's range, and the infinities, saturate to its `MIN` or `MAX`
//!   (ONNX calls these undefined; this is Rust's `as`, and what ONNX
//!   Runtime's saturating casts give);
//! - anything to BOOL: `e != 0`, so NaN is true and -0.0 false; BOOL to a
//!   number: 0 or 1.
//!
//! A cast is exact on its operand's value; an operand that is itself
//! computed in floats (`cast<INT32>(x * 0.1)`) is computed in `f32` on both
//! backends first, so the two agree where that `f32` arithmetic does (`+`,
//! `-`, `*` and `/` are correctly rounded on both; `exp`, `log` and the
//! like only within the accuracy contract).
//!
//! A cast after every step makes `+`, `-` and `*` exact against the
//! yardstick too: in
//! `cast<T>(cast<max(T, FLOAT32)>(cast<max(T, FLOAT32)>(alpha * cast<max(T, FLOAT32)>(x)) + beta))`
//! the yardstick's `f64` result of each operation on FLOAT32 values, rounded
//! once to FLOAT32, is the correctly rounded FLOAT32 result the GPU's
//! `f32` gives (`f64` has more than twice FLOAT32's precision), and in a
//! FLOAT64 kernel each step is an `f64` operation on both backends.

use crate::DataType;
use crate::Element as _;

/// A variable of an expression; which ones a parameter may name is the
/// pattern's choice (a fold's `map` sees [`Var::X`], its `combine`
/// [`Var::A`] and [`Var::B`], its `finish` [`Var::Acc`] and [`Var::N`], and
/// a shifted fold's `map` and `finish` [`Var::M`] too).
/// Its type is the [`TypeEnv`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    /// The element (`x`).
    X,
    /// The left operand of a combine (`a`).
    A,
    /// The right operand of a combine (`b`).
    B,
    /// The accumulated value (`acc`).
    Acc,
    /// The number of elements reduced (`n`).
    N,
    /// A shifted fold's shift (`m`): the maximum of the output's
    /// sub-tensor ([`crate::family::fold::Shift`]).
    M,
    /// An element-wise pattern's first input (the spec names it by its
    /// tensor's name).
    In0,
    /// Its second input.
    In1,
    /// Its third input.
    In2,
    /// Its fourth input.
    In3,
    /// Its fifth input.
    In4,
    /// Its sixth input.
    In5,
    /// Its seventh input: with the output, the eight storage buffers core
    /// WebGPU binds per stage.
    In6,
}

impl Var {
    /// How many variables there are.
    pub const COUNT: usize = 13;

    /// Every variable.
    pub const ALL: [Var; Var::COUNT] = [
        Var::X,
        Var::A,
        Var::B,
        Var::Acc,
        Var::N,
        Var::M,
        Var::In0,
        Var::In1,
        Var::In2,
        Var::In3,
        Var::In4,
        Var::In5,
        Var::In6,
    ];

    /// The variables of an element-wise pattern's inputs, in input order.
    pub const INPUTS: [Var; 7] = [
        Var::In0,
        Var::In1,
        Var::In2,
        Var::In3,
        Var::In4,
        Var::In5,
        Var::In6,
    ];

    /// The name a spec writes.
    pub const fn name(self) -> &'static str {
        match self {
            Var::X => "x",
            Var::A => "a",
            Var::B => "b",
            Var::Acc => "acc",
            Var::N => "n",
            Var::M => "m",
            Var::In0 => "in0",
            Var::In1 => "in1",
            Var::In2 => "in2",
            Var::In3 => "in3",
            Var::In4 => "in4",
            Var::In5 => "in5",
            Var::In6 => "in6",
        }
    }
}

/// The type of a node of an expression, as the spec compiler inferred it:
/// a data type, or a *type parameter* that each kernel binds to a data
/// type of the tables (the fold's `T`, its tensor's type: FLOAT32 in one
/// kernel, INT8 in another). [`TypeEnv`] binds the parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// The `i`-th type parameter of the pattern ([`TypeEnv::params`]).
    Param(u8),
    /// A data type (a cast's target, a typed literal, a variable of a
    /// fixed type).
    Data(DataType),
    /// `max(T, FLOAT32)`: the wider of the float type the `i`-th type
    /// parameter is bound to and a float data type (FLOAT16 `T` gives
    /// FLOAT32, FLOAT32 gives FLOAT32, FLOAT64 gives FLOAT64): a cast's
    /// target that computes in `T`'s own precision, but at least the given
    /// one. The spec compiler admits it only where the tables bind the
    /// parameter to float types, and only with FLOAT16 or FLOAT32
    /// ([`TypeEnv::resolve`]).
    AtLeast(u8, DataType),
}

impl Ty {
    /// The first type parameter: the fold's `T`.
    pub const T: Ty = Ty::Param(0);

    /// The type parameter `self` names ([`Ty::Param`] and [`Ty::AtLeast`]),
    /// if any.
    pub const fn param(self) -> Option<u8> {
        match self {
            Ty::Param(i) | Ty::AtLeast(i, _) => Some(i),
            Ty::Data(_) => None,
        }
    }
}

/// The types an expression is evaluated or generated at: the data type
/// bound to each type parameter, and each variable's type.
///
/// A fold has one parameter, `T` (its tensor's data type), and every
/// variable is a `T` ([`TypeEnv::uniform`]); a family whose inputs have
/// types of their own (ONNX `Where(cond: bool, x: T, y: T)`) gives each
/// variable its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeEnv<'a> {
    /// The data type of each type parameter ([`Ty::Param`]).
    pub params: &'a [DataType],
    /// Each variable's type, indexed as [`Var::ALL`].
    pub vars: [Ty; Var::COUNT],
}

impl<'a> TypeEnv<'a> {
    /// Every variable is the first parameter, bound to `params[0]` (a
    /// fold's environment: `std::slice::from_ref(&dtype)`).
    pub const fn uniform(params: &'a [DataType]) -> TypeEnv<'a> {
        TypeEnv {
            params,
            vars: [Ty::T; Var::COUNT],
        }
    }

    /// The environment of an expression over a list of tensors: `types`
    /// holds each tensor's type, then the result's, and the tensors are
    /// [`Var::INPUTS`] in order (an element-wise value's environment);
    /// `params` binds the type parameters.
    pub fn of_inputs(types: &[Ty], params: &'a [DataType]) -> TypeEnv<'a> {
        let mut env = TypeEnv::uniform(params);
        let inputs = types.len().saturating_sub(1);
        for (i, &t) in types[..inputs].iter().enumerate() {
            env.vars[Var::INPUTS[i] as usize] = t;
        }
        env
    }

    /// The data type `t` stands for. [`Ty::AtLeast`]`(i, floor)` is the
    /// wider of parameter `i`'s float type and `floor`; where the parameter
    /// is bound to a type that is not a float (which the spec compiler
    /// refuses at the form), it is that type unchanged.
    ///
    /// # Panics
    ///
    /// When `t` is a parameter the environment does not bind (the spec
    /// compiler only builds trees whose parameters the pattern binds).
    pub fn resolve(&self, t: Ty) -> DataType {
        let param = |i: u8| {
            *self
                .params
                .get(usize::from(i))
                .expect("an expression names a type parameter its pattern binds")
        };
        match t {
            Ty::Data(d) => d,
            Ty::Param(i) => param(i),
            Ty::AtLeast(i, floor) => {
                let d = param(i);
                if d.is_float() && floor.is_float() && floor.size_bytes() > d.size_bytes() {
                    floor
                } else {
                    d
                }
            }
        }
    }

    /// The data type of variable `v`.
    pub fn var(&self, v: Var) -> DataType {
        self.resolve(self.vars[v as usize])
    }
}

#[cfg(test)]
mod ty_tests {
    use super::*;

    #[test]
    fn at_least_resolves_to_the_wider_float() {
        use DataType::*;
        let wide = Ty::AtLeast(0, Float32);
        for (t, want) in [(Float16, Float32), (Float32, Float32), (Float64, Float64)] {
            let env = TypeEnv::uniform(std::slice::from_ref(&t));
            assert_eq!(env.resolve(wide), want, "max({t}, FLOAT32)");
        }
        // A FLOAT16 floor is the parameter itself on every float.
        for t in [Float16, Float32, Float64] {
            let env = TypeEnv::uniform(std::slice::from_ref(&t));
            assert_eq!(env.resolve(Ty::AtLeast(0, Float16)), t);
        }
        // The second parameter, not the first.
        let params = [Float64, Float16];
        let env = TypeEnv::uniform(&params);
        assert_eq!(env.resolve(Ty::AtLeast(1, Float32)), Float32);
        assert_eq!(env.resolve(Ty::AtLeast(0, Float32)), Float64);
        // A non-float binding (refused by the spec compiler) stays itself.
        let env = TypeEnv::uniform(std::slice::from_ref(&Int8));
        assert_eq!(env.resolve(wide), Int8);
        assert_eq!(wide.param(), Some(0));
        assert_eq!(Ty::Data(Float32).param(), None);
    }

    #[test]
    fn at_least_types_expressions_per_kernel() {
        // `cast<T>(cast<max(T, FLOAT32)>(cast<max(T, FLOAT32)>(x) * 0.1))`:
        // a FLOAT16 kernel rounds the product to FLOAT32, a FLOAT64 one
        // computes it in FLOAT64.
        const WIDE_TY: Ty = Ty::AtLeast(0, DataType::Float32);
        static X: Scalar = Scalar::Var(Var::X);
        static WIDE: Scalar = Scalar::Cast(WIDE_TY, &X);
        static TENTH: Scalar = Scalar::Float(0.1, WIDE_TY);
        static PRODUCT: Scalar = Scalar::Binary(Binary::Mul, &WIDE, &TENTH);
        static ROUNDED: Scalar = Scalar::Cast(WIDE_TY, &PRODUCT);
        static BACK: Scalar = Scalar::Cast(Ty::T, &ROUNDED);
        let mut vars = [Value::F(0.0); Var::COUNT];
        vars[Var::X as usize] = Value::F(3.0);
        let f16 = TypeEnv::uniform(&[DataType::Float16]);
        assert_eq!(ROUNDED.type_of(&f16), DataType::Float32);
        assert_eq!(BACK.type_of(&f16), DataType::Float16);
        assert_eq!(
            ROUNDED.eval(&f16, &vars, &[]),
            Value::F(f64::from(3.0f32 * 0.1f32))
        );
        let f64s = TypeEnv::uniform(&[DataType::Float64]);
        assert_eq!(ROUNDED.type_of(&f64s), DataType::Float64);
        assert_eq!(BACK.type_of(&f64s), DataType::Float64);
        assert_eq!(ROUNDED.eval(&f64s, &vars, &[]), Value::F(3.0 * 0.1));
        assert_ne!(f64::from(3.0f32 * 0.1f32), 3.0 * 0.1);
    }
}

/// A one-operand operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unary {
    /// `-x`, `neg(x)`
    Neg,
    /// `abs(x)`
    Abs,
    /// `sqrt(x)`
    Sqrt,
    /// `exp(x)`
    Exp,
    /// `log(x)` (natural)
    Log,
    /// `floor(x)`
    Floor,
    /// `ceil(x)`
    Ceil,
    /// `round(x)`, half to even
    Round,
    /// `tanh(x)`, the hyperbolic tangent
    Tanh,
    /// `!c` on a boolean
    Not,
    /// `~x`, the bitwise complement of an integer
    BitNot,
}

impl Unary {
    /// The name a spec writes (`neg` for `-x`, `not` for `!c`).
    pub const fn name(self) -> &'static str {
        match self {
            Unary::Neg => "neg",
            Unary::Abs => "abs",
            Unary::Sqrt => "sqrt",
            Unary::Exp => "exp",
            Unary::Log => "log",
            Unary::Floor => "floor",
            Unary::Ceil => "ceil",
            Unary::Round => "round",
            Unary::Tanh => "tanh",
            Unary::Not => "not",
            Unary::BitNot => "~",
        }
    }
}

/// A two-operand operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binary {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b`
    Div,
    /// `a % b`
    Rem,
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
    /// `pow(a, b)`, of `a`'s type. An exponent of another type keeps its
    /// value: of a float base, a float exponent is used as it is (the
    /// power computed in the wider float type, FLOAT64 on the GPU for a
    /// FLOAT64 exponent, `f32` for FLOAT16 and FLOAT32), an integer one
    /// gives `|a|^b` negated for a negative `a` and an odd `b` (the parity
    /// read from the integer, exact over its range); of an integer base, a
    /// float exponent gives the real power, computed in FLOAT64 by the same
    /// steps on both backends ([`crate::wgsl::float64_fn::cpu::pow`]: the
    /// same bits), taken to an integer within 4 ULP of it
    /// ([`snap_to_integer`]) and converted as `cast` converts (toward zero,
    /// saturating, NaN to 0), and an integer exponent converts to the
    /// base's type.
    Pow,
    /// `a == b`
    Eq,
    /// `a != b`
    Ne,
    /// `a < b`
    Lt,
    /// `a <= b`
    Le,
    /// `a > b`
    Gt,
    /// `a >= b`
    Ge,
    /// `a && b` (booleans)
    And,
    /// `a || b` (booleans)
    Or,
    /// `a & b`, bitwise and (integers)
    BitAnd,
    /// `a | b`, bitwise or (integers)
    BitOr,
    /// `a ^ b`, bitwise exclusive or (integers)
    BitXor,
    /// `a << b`: `a` shifted left by `b` bits (integers; 0 from a count
    /// of the type's width or more)
    Shl,
    /// `a >> b`: `a` shifted right by `b` bits, logical for unsigned types,
    /// arithmetic (the sign copied in) for signed ones (integers; 0 or -1
    /// from a count of the type's width or more)
    Shr,
}

impl Binary {
    /// True for the comparisons (a boolean from two numbers).
    pub const fn is_comparison(self) -> bool {
        matches!(
            self,
            Binary::Eq | Binary::Ne | Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge
        )
    }

    /// True for `&&` and `||` (a boolean from two booleans).
    pub const fn is_logical(self) -> bool {
        matches!(self, Binary::And | Binary::Or)
    }

    /// True for the bitwise operations and shifts (integers only).
    pub const fn is_bitwise(self) -> bool {
        matches!(
            self,
            Binary::BitAnd | Binary::BitOr | Binary::BitXor | Binary::Shl | Binary::Shr
        )
    }

    /// The operator a spec writes (`&`, `<<`) for the bitwise operations,
    /// the function name otherwise.
    pub const fn symbol(self) -> &'static str {
        match self {
            Binary::BitAnd => "&",
            Binary::BitOr => "|",
            Binary::BitXor => "^",
            Binary::Shl => "<<",
            Binary::Shr => ">>",
            Binary::Add => "+",
            Binary::Sub => "-",
            Binary::Mul => "*",
            Binary::Div => "/",
            Binary::Rem => "%",
            Binary::Min => "min",
            Binary::Max => "max",
            Binary::Pow => "pow",
            Binary::Eq => "==",
            Binary::Ne => "!=",
            Binary::Lt => "<",
            Binary::Le => "<=",
            Binary::Gt => ">",
            Binary::Ge => ">=",
            Binary::And => "&&",
            Binary::Or => "||",
        }
    }
}

/// A scalar expression, typed: see the [module docs](self) for its
/// meaning.
///
/// Every node has a type in a [`TypeEnv`] ([`Scalar::type_of`]): a
/// variable has its own, a literal, an attribute and `lowest`/`highest`
/// carry theirs (the spec compiler infers it from the other operand), a
/// cast has its target, a comparison is BOOL, and every other operation
/// has its operands' (one type for both).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A variable.
    Var(Var),
    /// An integer literal of a type: wrapped to an integer type, rounded
    /// once (to nearest even) to a float type, its lowest bit for BOOL.
    Int(i64, Ty),
    /// A decimal literal of a float type, rounded once to it (the spec
    /// compiler rounds the spec's decimal text; see the module docs).
    Float(f64, Ty),
    /// A boolean literal (BOOL).
    Bool(bool),
    /// The value of the descriptor's attribute (by spec order) as a value
    /// of a type: an integer attribute converted as a cast from INT64, a
    /// float attribute as its value at the compute precision (float types
    /// only), a boolean attribute as BOOL.
    Attr(u16, AttrScalar, Ty),
    /// The type's lowest value (-infinity, `MIN`, false).
    Lowest(Ty),
    /// The type's highest value (+infinity, `MAX`, true).
    Highest(Ty),
    /// The type's lowest finite value (C++'s `numeric_limits::lowest()`:
    /// `-FLT_MAX`, `MIN`, false).
    FiniteLowest(Ty),
    /// The type's highest finite value (C++'s `numeric_limits::max()`:
    /// `FLT_MAX`, `MAX`, true).
    FiniteHighest(Ty),
    /// A one-operand operation.
    Unary(Unary, &'static Scalar),
    /// A two-operand operation.
    Binary(Binary, &'static Scalar, &'static Scalar),
    /// `select(c, t, f)` / `if c { t } else { f }`: `t` when `c`, else `f`.
    Select(&'static Scalar, &'static Scalar, &'static Scalar),
    /// `cast<TYPE>(e)`: `e` converted to a type ([`cast_value`]).
    Cast(Ty, &'static Scalar),
}

/// What an attribute read by an expression holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttrScalar {
    /// An integer attribute (`u32`, `i32`, `i64`).
    Int,
    /// A float attribute (`f32`, `f64`).
    Float,
    /// A boolean attribute.
    Bool,
    /// A `scalar(t)` attribute ([`Number`]): already a value of the node's
    /// type, tensor `t`'s (the host converts it, [`Number::value_as`]).
    Number,
}

/// A number of any data type, held exactly: DirectML's `DML_SCALAR_UNION`
/// (a clip's `Min` and `Max`, read as `MinMaxDataType`), so that 64-bit
/// integer bounds beyond 2^53 keep every bit. A spec declares one as
/// `attr min: scalar(output)`: a value of `output`'s data type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer (every INT64 and UINT64 value).
    Int(i128),
    /// A float.
    Float(f64),
}

impl Default for Number {
    fn default() -> Self {
        Number::Int(0)
    }
}

macro_rules! number_from {
    ($variant:ident: $($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(v: $t) -> Number {
                Number::$variant(v.into())
            }
        }
    )*};
}
number_from!(Int: i8, i16, i32, i64, u8, u16, u32, u64, i128);
number_from!(Float: f32, f64);

impl From<half::f16> for Number {
    fn from(v: half::f16) -> Number {
        Number::Float(v.to_f64())
    }
}

impl Number {
    /// The number as a value of `dtype`, the one conversion of a union's
    /// value to its data type: a float type rounds it once to nearest even
    /// (an integer from all its bits: 2^53 + 1 to FLOAT32 is 2^53); an
    /// integer type takes an integer exactly, saturating one beyond its
    /// range (a clamp's bound of 300 on UINT8 clamps as 255 does), and a
    /// float as `cast` converts (truncated toward zero, saturated, NaN 0);
    /// BOOL is `!= 0`.
    pub fn value_as(self, dtype: DataType) -> Value {
        match self {
            Number::Int(x) if dtype.is_int() => {
                let (lo, hi) = int_range(dtype);
                Value::I(x.clamp(lo, hi))
            }
            Number::Int(x) => cast_value(Value::I(x), dtype),
            Number::Float(f) => cast_value(Value::F(f), dtype),
        }
    }
}

/// How the CPU evaluates float arithmetic ([`Scalar::eval_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The backends' arithmetic, the CPU backend's answer: FLOAT16 and
    /// FLOAT32 operations compute in `f32`, each result rounded to `f32`
    /// as the GPU kernels round it (FLOAT64 in `f64`), so that an
    /// intermediate that overflows `f32` is infinity and a sum that
    /// cancels loses what `f32` loses.
    Compute,
    /// The yardstick of the accuracy contracts: floats compute in `f64`
    /// and round once to the output type.
    Yardstick,
}

impl Precision {
    /// `v`, a result of type `dtype`, as this precision keeps it: rounded
    /// to `f32` for a FLOAT16 or FLOAT32 result at [`Precision::Compute`],
    /// unchanged otherwise.
    pub fn settle(self, v: Value, dtype: DataType) -> Value {
        match (self, v) {
            (Precision::Compute, Value::F(x))
                if matches!(dtype, DataType::Float16 | DataType::Float32) =>
            {
                Value::F(f64::from(x as f32))
            }
            _ => v,
        }
    }
}

/// A value of an expression on the CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A float, in `f64`.
    F(f64),
    /// An integer, already wrapped to its type.
    I(i128),
    /// A boolean (a BOOL value).
    B(bool),
}

/// Wraps `v` to the integer type `dtype` (two's complement; BOOL is an
/// unsigned 1-bit integer: `+` is exclusive or, `max` is or).
pub fn wrap(v: i128, dtype: DataType) -> i128 {
    if dtype == DataType::Bool {
        return v & 1;
    }
    let bits = dtype.size_bits();
    let masked = v & ((1i128 << bits) - 1);
    if dtype.is_signed_int() && masked >> (bits - 1) != 0 {
        masked - (1i128 << bits)
    } else {
        masked
    }
}

/// `(MIN, MAX)` of an integer type (`(0, 1)` for BOOL).
pub fn int_range(dtype: DataType) -> (i128, i128) {
    if dtype == DataType::Bool {
        return (0, 1);
    }
    let bits = dtype.size_bits();
    if dtype.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The FLOAT16 nearest to `x` (ties to even; 65520 and beyond to
/// infinity), as bits: rounded once from the `f64` value, sticky bits
/// included. A NaN keeps its sign and the top ten bits of its payload and
/// becomes quiet.
pub fn f16_bits(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let a = bits & 0x7fff_ffff_ffff_ffff;
    if a > 0x7ff0_0000_0000_0000 {
        return sign | 0x7e00 | ((a >> 42) & 0x3ff) as u16;
    }
    let m = f64::from_bits(a);
    if m >= 65520.0 {
        return sign | 0x7c00;
    }
    if m < 2f64.powi(-25) {
        // Below half the smallest subnormal (2^-24): zero. (2^-25 itself
        // is a tie, and goes to the even zero too.)
        return sign;
    }
    // The unit in the last place of the result: 2^(e - 10) for normal
    // results, 2^-24 for subnormal ones. Scaling by powers of two is exact.
    let e = ((a >> 52) as i32 - 1023).max(-1022);
    let q = (e - 10).max(-24);
    let r = (m * 2f64.powi(-q)).round_ties_even() * 2f64.powi(q);
    // `r` is a FLOAT16 value, so this conversion is exact.
    sign | half::f16::from_f64(r).to_bits()
}

/// `x` rounded once to the float type `dtype` (FLOAT64: unchanged).
pub fn round_float(x: f64, dtype: DataType) -> f64 {
    match dtype {
        DataType::Float32 => f64::from(x as f32),
        DataType::Float16 => half::f16::from_bits(f16_bits(x)).to_f64(),
        _ => x,
    }
}

/// `r` taken to the nearest integer `n` (halves to even) when it lies
/// within 4 ULP of `n` without being `n` or 0: less than `2^(e - 50)`
/// from it, `e` the exponent of `n` (compared by biased exponents, as the
/// GPU's `dx_pow_int` does). An integer power of a float exponent is
/// this, truncated: a real power that is an integer lands on it whichever
/// backend's `pow` rounded it a few ULP below.
pub fn snap_to_integer(r: f64) -> f64 {
    let n = r.round_ties_even();
    let exponent = |v: f64| (v.abs().to_bits() >> 52) & 0x7ff;
    if r.is_finite() && n != 0.0 && n != r && exponent(r - n) + 50 < exponent(n) {
        n
    } else {
        r
    }
}

/// A value converted to `to`: the meaning of [`Scalar::Cast`] (see the
/// [module docs](self)). `v` holds a value of its type exactly (a float
/// of FLOAT16 or FLOAT32 is one of that type's values, an integer is in
/// its type's range).
///
/// - integer to integer: two's complement wrap (the low bits);
/// - integer or float to float: rounded once, to nearest even (to
///   infinity beyond the range);
/// - float to integer: truncated toward zero; NaN is 0; values beyond the
///   range, infinities included, saturate to `MIN` or `MAX`;
/// - to BOOL: `v != 0` (NaN is true); BOOL to a number: 0 or 1.
pub fn cast_value(v: Value, to: DataType) -> Value {
    match v {
        Value::B(b) => {
            if to.is_bool() {
                Value::B(b)
            } else if to.is_float() {
                Value::F(f64::from(u8::from(b)))
            } else {
                Value::I(i128::from(b))
            }
        }
        Value::I(x) => {
            if to.is_bool() {
                Value::B(x != 0)
            } else if to.is_float() {
                Value::F(int_to_float(x, to))
            } else {
                Value::I(wrap(x, to))
            }
        }
        Value::F(f) => {
            if to.is_bool() {
                // NaN != 0 is true.
                Value::B(f != 0.0)
            } else if to.is_float() {
                Value::F(round_float(f, to))
            } else {
                // `as` truncates toward zero, saturates and maps NaN to 0.
                let (lo, hi) = int_range(to);
                Value::I((f as i128).clamp(lo, hi))
            }
        }
    }
}

/// An integer rounded once to the float type `to`.
fn int_to_float(x: i128, to: DataType) -> f64 {
    match to {
        // Rust's integer-to-float `as` rounds to nearest even, once.
        DataType::Float32 => f64::from(x as f32),
        // Exact below 2^53; beyond, every value rounds to infinity.
        DataType::Float16 => round_float(x as f64, to),
        _ => x as f64,
    }
}

/// Parameter words of attribute values, two words per attribute in spec
/// order, whatever type an expression reads them as: the `f32` bits of a
/// float (high word 0), an integer as INT64 (wrapped, low word first), 1
/// or 0 for a boolean. The kernels convert each to the type of the
/// expression that reads it.
pub fn attr_words(attrs: &[Value]) -> Vec<u32> {
    let mut out = Vec::with_capacity(2 * attrs.len());
    for &a in attrs {
        let bits: u64 = match a {
            Value::F(x) => u64::from((x as f32).to_bits()),
            Value::I(x) => wrap(x, DataType::Int64) as u64,
            Value::B(b) => u64::from(b),
        };
        out.extend([bits as u32, (bits >> 32) as u32]);
    }
    out
}

/// IEEE 754-2019 `minimum`/`maximum`: NaN propagates (the first NaN
/// operand), -0.0 orders below +0.0.
fn float_min_max(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() {
        return a;
    }
    if b.is_nan() {
        return b;
    }
    if a == b {
        // Equal numbers differ only as zeros of different signs.
        let neg = if max {
            a.is_sign_negative() && b.is_sign_negative()
        } else {
            a.is_sign_negative() || b.is_sign_negative()
        };
        return if neg { -a.abs() } else { a.abs() };
    }
    if (a < b) != max {
        a
    } else {
        b
    }
}

/// A literal `i` as a value of `dtype`: wrapped, rounded once, or its
/// lowest bit (BOOL).
fn int_literal(i: i128, dtype: DataType) -> Value {
    if dtype.is_bool() {
        Value::B(i & 1 == 1)
    } else {
        cast_value(Value::I(i), dtype)
    }
}

impl Scalar {
    /// Evaluates the expression in the type environment `env`, with the
    /// variables `vars` (indexed as [`Var::ALL`], each a value of its
    /// type: [`Value::F`] for floats, [`Value::I`] for integers,
    /// [`Value::B`] or 0/1 for BOOL) and the descriptor's attribute values
    /// `attrs` (spec order; [`Value::F`] for floats, [`Value::I`] for
    /// integers, [`Value::B`] for booleans).
    ///
    /// Returns a value of the expression's type ([`Scalar::type_of`]). The
    /// spec compiler has checked the expression's types, so a mismatch
    /// here is a bug in it; it gives NaN or 0 rather than a panic.
    pub fn eval(&self, env: &TypeEnv<'_>, vars: &[Value; Var::COUNT], attrs: &[Value]) -> Value {
        self.eval_at(Precision::Yardstick, env, vars, attrs)
    }

    /// [`Scalar::eval`] at `precision`: [`Precision::Yardstick`] computes
    /// floats in `f64`; [`Precision::Compute`] rounds the result of every
    /// FLOAT16 and FLOAT32 operation (and every float attribute read at
    /// those types) to `f32`, the arithmetic of the GPU kernels.
    pub fn eval_at(
        &self,
        precision: Precision,
        env: &TypeEnv<'_>,
        vars: &[Value; Var::COUNT],
        attrs: &[Value],
    ) -> Value {
        self.eval_typed(precision, env, vars, attrs).0
    }

    /// At most how many loop iterations one evaluation of the expression
    /// runs in the GPU helpers it calls, in `env`: integer powers (one per
    /// exponent bit), 64-bit integer `/` and `%` (long division), and
    /// FLOAT64's `/`, `%`, `sqrt`, `exp`, `log`, `tanh` and `pow`
    /// (`crate::wgsl::float64`, `crate::wgsl::float64_fn`). Planners keep a
    /// thread's loops, these included, within [`crate::LOOP_BUDGET`].
    pub fn gpu_loop_steps(&self, env: &TypeEnv<'_>) -> u64 {
        let mut steps = 0;
        self.visit(&mut |e| {
            steps += match *e {
                Scalar::Binary(op, a, b) => {
                    let t = a.type_of(env);
                    // FLOAT64 `pow`, also for an integer base's float exponent.
                    let f64_pow =
                        t == DataType::Float64 || (t.is_int() && b.type_of(env).is_float());
                    match (op, t) {
                        (Binary::Pow, _) if f64_pow => {
                            crate::wgsl::float64::LOG_STEPS + crate::wgsl::float64::EXP_STEPS
                        }
                        (Binary::Div, DataType::Float64) => crate::wgsl::float64::DIV_STEPS,
                        (Binary::Rem, DataType::Float64) => crate::wgsl::float64::REM_STEPS,
                        (Binary::Rem, DataType::Float32 | DataType::Float16) => {
                            crate::wgsl::scalar::FMOD_STEPS
                        }
                        (Binary::Div | Binary::Rem, DataType::Int64 | DataType::Uint64) => 64,
                        (Binary::Pow, _) if t.is_int() => 8 * t.size_bytes() as u64,
                        _ => 0,
                    }
                }
                Scalar::Unary(op, a) if a.type_of(env) == DataType::Float64 => match op {
                    Unary::Sqrt => crate::wgsl::float64::SQRT_STEPS,
                    Unary::Exp | Unary::Tanh => crate::wgsl::float64::EXP_STEPS,
                    Unary::Log => crate::wgsl::float64::LOG_STEPS,
                    _ => 0,
                },
                _ => 0,
            };
        });
        steps
    }

    /// The data type of the expression's value in `env`.
    pub fn type_of(&self, env: &TypeEnv<'_>) -> DataType {
        match *self {
            Scalar::Var(v) => env.var(v),
            Scalar::Int(_, t)
            | Scalar::Float(_, t)
            | Scalar::Attr(_, _, t)
            | Scalar::Lowest(t)
            | Scalar::Highest(t)
            | Scalar::FiniteLowest(t)
            | Scalar::FiniteHighest(t)
            | Scalar::Cast(t, _) => env.resolve(t),
            Scalar::Bool(_) => DataType::Bool,
            Scalar::Unary(Unary::Not, _) => DataType::Bool,
            Scalar::Unary(_, a) => a.type_of(env),
            Scalar::Binary(op, a, _) => {
                if op.is_comparison() || op.is_logical() {
                    DataType::Bool
                } else {
                    a.type_of(env)
                }
            }
            Scalar::Select(_, t, _) => t.type_of(env),
        }
    }

    /// [`Scalar::eval`] with the value's type, computed on the way up (so
    /// that evaluation is linear in the tree).
    fn eval_typed(
        &self,
        precision: Precision,
        env: &TypeEnv<'_>,
        vars: &[Value; Var::COUNT],
        attrs: &[Value],
    ) -> (Value, DataType) {
        let settle = |v: Value, dt: DataType| precision.settle(v, dt);
        match *self {
            Scalar::Var(v) => {
                let dt = env.var(v);
                let value = match vars[v as usize] {
                    Value::I(x) if dt.is_bool() => Value::B(x & 1 == 1),
                    other => other,
                };
                (value, dt)
            }
            Scalar::Int(i, t) => {
                let dt = env.resolve(t);
                (int_literal(i128::from(i), dt), dt)
            }
            Scalar::Float(f, t) => {
                let dt = env.resolve(t);
                let v = if dt.is_float() {
                    Value::F(round_float(f, dt))
                } else if dt.is_bool() {
                    Value::B(false)
                } else {
                    Value::I(0)
                };
                (v, dt)
            }
            Scalar::Bool(b) => (Value::B(b), DataType::Bool),
            Scalar::Attr(i, _, t) => {
                let dt = env.resolve(t);
                let v = match attrs.get(usize::from(i)) {
                    Some(Value::I(x)) => cast_value(Value::I(wrap(*x, DataType::Int64)), dt),
                    Some(Value::F(x)) if dt.is_float() => settle(Value::F(*x), dt),
                    Some(Value::B(b)) => Value::B(*b),
                    _ if dt.is_float() => Value::F(f64::NAN),
                    _ => cast_value(Value::I(0), dt),
                };
                (v, dt)
            }
            Scalar::Lowest(t)
            | Scalar::Highest(t)
            | Scalar::FiniteLowest(t)
            | Scalar::FiniteHighest(t) => {
                let dt = env.resolve(t);
                let high = matches!(self, Scalar::Highest(_) | Scalar::FiniteHighest(_));
                let finite = matches!(self, Scalar::FiniteLowest(_) | Scalar::FiniteHighest(_));
                let v = if dt.is_float() {
                    let m = match (finite, dt.size_bits()) {
                        (false, _) => f64::INFINITY,
                        (true, 16) => 65504.0,
                        (true, 32) => f64::from(f32::MAX),
                        (true, _) => f64::MAX,
                    };
                    Value::F(if high { m } else { -m })
                } else if dt.is_bool() {
                    Value::B(high)
                } else {
                    let (lo, hi) = int_range(dt);
                    Value::I(if high { hi } else { lo })
                };
                (v, dt)
            }
            Scalar::Unary(op, e) => {
                let (v, dt) = e.eval_typed(precision, env, vars, attrs);
                let dt = if op == Unary::Not { DataType::Bool } else { dt };
                (settle(unary(op, v, dt), dt), dt)
            }
            Scalar::Binary(op, a, b) => {
                let (x, dt) = a.eval_typed(precision, env, vars, attrs);
                let (y, yt) = b.eval_typed(precision, env, vars, attrs);
                // `pow`'s exponent may have another type ([`Binary::Pow`]).
                if op == Binary::Pow && yt != dt {
                    return match (x, y) {
                        (Value::I(x), Value::F(y)) if dt.is_int() => (
                            cast_value(
                                Value::F(snap_to_integer(crate::wgsl::float64_fn::cpu::pow(
                                    x as f64, y,
                                ))),
                                dt,
                            ),
                            dt,
                        ),
                        // A float base: the exponent in its own type (an
                        // `f64` holds every float exactly).
                        (Value::F(x), Value::F(y)) => (settle(Value::F(x.powf(y)), dt), dt),
                        // The sign of a negative base from the integer's own
                        // parity, exact beyond 2^53.
                        (Value::F(x), Value::I(y)) => {
                            let m = x.abs().powf(y as f64);
                            let odd = y % 2 != 0;
                            let v = Value::F(if x.is_sign_negative() && odd { -m } else { m });
                            (settle(v, dt), dt)
                        }
                        (x, y) => (settle(binary(op, x, cast_value(y, dt), dt), dt), dt),
                    };
                }
                let rt = if op.is_comparison() || op.is_logical() {
                    DataType::Bool
                } else {
                    dt
                };
                (settle(binary(op, x, y, dt), rt), rt)
            }
            Scalar::Select(c, t, f) => match c.eval_typed(precision, env, vars, attrs).0 {
                Value::B(true) => t.eval_typed(precision, env, vars, attrs),
                _ => f.eval_typed(precision, env, vars, attrs),
            },
            Scalar::Cast(t, e) => {
                let to = env.resolve(t);
                let (v, _) = e.eval_typed(precision, env, vars, attrs);
                (cast_value(v, to), to)
            }
        }
    }

    /// Why the expression cannot be computed on the GPU in `env` (and so
    /// cannot be in a spec whose tables bind its parameters so), or `None`
    /// when it can. See the [module docs](self).
    pub fn unsupported_for(&self, env: &TypeEnv<'_>) -> Option<String> {
        let mut why = None;
        self.check_gpu(env, &mut why);
        why
    }

    /// The type of the expression, recording in `why` the first reason it
    /// cannot be computed on the GPU.
    fn check_gpu(&self, env: &TypeEnv<'_>, why: &mut Option<String>) -> DataType {
        let mut operand_types = [None; 3];
        let children: [Option<&Scalar>; 3] = match *self {
            Scalar::Unary(_, a) | Scalar::Cast(_, a) => [Some(a), None, None],
            Scalar::Binary(_, a, b) => [Some(a), Some(b), None],
            Scalar::Select(c, t, f) => [Some(c), Some(t), Some(f)],
            _ => [None; 3],
        };
        for (slot, child) in operand_types.iter_mut().zip(children) {
            *slot = child.map(|c| c.check_gpu(env, why));
        }
        let ty = match *self {
            Scalar::Var(v) => env.var(v),
            Scalar::Int(_, t)
            | Scalar::Float(_, t)
            | Scalar::Attr(_, _, t)
            | Scalar::Lowest(t)
            | Scalar::Highest(t)
            | Scalar::FiniteLowest(t)
            | Scalar::FiniteHighest(t)
            | Scalar::Cast(t, _) => env.resolve(t),
            Scalar::Bool(_) => DataType::Bool,
            Scalar::Unary(Unary::Not, _) => DataType::Bool,
            Scalar::Binary(op, _, _) if op.is_comparison() || op.is_logical() => DataType::Bool,
            Scalar::Select(..) => operand_types[1].unwrap_or(DataType::Bool),
            _ => operand_types[0].unwrap_or(DataType::Bool),
        };
        if why.is_some() {
            return ty;
        }
        let operand = operand_types[0].unwrap_or(ty);
        // FLOAT64 is computed on the bits (`crate::wgsl::float64`): the
        // operations that are exact, and casts.
        let f64_missing = match *self {
            Scalar::Unary(op, _) if !crate::wgsl::float64::has_unary(op) => {
                Some(format!("`{}`", op.name()))
            }
            Scalar::Binary(op, _, _) if !crate::wgsl::float64::has_binary(op) => {
                Some(format!("`{}`", op.symbol()))
            }
            _ => None,
        };
        *why = match *self {
            _ if (ty == DataType::Float64 || operand == DataType::Float64)
                && f64_missing.is_some() =>
            {
                Some(format!(
                    "{} on FLOAT64 is not available on the GPU (core WebGPU has no f64; \
                     FLOAT64 has casts, comparisons, `min`, `max`, `abs`, `neg`, `+`, `-`, `*`, \
                     `/`, `%`, `sqrt`, `floor`, `ceil`, `round`, `exp`, `log`, `tanh` and `pow`)",
                    f64_missing.unwrap_or_default()
                ))
            }
            Scalar::Float(..) if !ty.is_float() => {
                Some(format!("a decimal literal has no {ty} value"))
            }
            Scalar::Attr(_, AttrScalar::Float, _) if !ty.is_float() => {
                Some(format!("a float attribute has no {ty} value"))
            }
            Scalar::Unary(op @ (Unary::Sqrt | Unary::Exp | Unary::Log | Unary::Tanh), _)
                if !ty.is_float() =>
            {
                Some(format!("`{}` is not defined on {ty}", op.name()))
            }
            Scalar::Unary(Unary::BitNot, _) if !ty.is_int() => {
                Some(format!("`~` is not defined on {ty}"))
            }
            Scalar::Binary(op, _, _) if op.is_bitwise() && !ty.is_int() => {
                Some(format!("`{}` is not defined on {ty}", op.symbol()))
            }
            Scalar::Binary(Binary::Pow, _, _) if ty.is_bool() => {
                Some(format!("`pow` is not defined on {ty}"))
            }
            _ => None,
        };
        ty
    }

    /// Calls `f` on this node and every node below it.
    pub fn visit(&self, f: &mut dyn FnMut(&Scalar)) {
        f(self);
        match *self {
            Scalar::Unary(_, e) | Scalar::Cast(_, e) => e.visit(f),
            Scalar::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Scalar::Select(c, t, e) => {
                c.visit(f);
                t.visit(f);
                e.visit(f);
            }
            _ => {}
        }
    }
}

fn unary(op: Unary, v: Value, dtype: DataType) -> Value {
    match v {
        Value::F(x) => Value::F(match op {
            Unary::Neg => -x,
            Unary::Abs => x.abs(),
            Unary::Sqrt => x.sqrt(),
            Unary::Exp => x.exp(),
            Unary::Log => x.ln(),
            Unary::Floor => x.floor(),
            Unary::Ceil => x.ceil(),
            Unary::Round => x.round_ties_even(),
            Unary::Tanh => x.tanh(),
            Unary::Not | Unary::BitNot => f64::NAN,
        }),
        Value::I(x) => Value::I(wrap(
            match op {
                Unary::Neg => -x,
                Unary::Abs => x.abs(),
                Unary::Floor | Unary::Ceil | Unary::Round => x,
                Unary::BitNot => !x,
                Unary::Sqrt | Unary::Exp | Unary::Log | Unary::Tanh | Unary::Not => 0,
            },
            dtype,
        )),
        // BOOL: an unsigned 1-bit integer (`-b` and `abs(b)` are `b`).
        Value::B(b) => Value::B(if matches!(op, Unary::Not | Unary::BitNot) {
            !b
        } else {
            b
        }),
    }
}

fn binary(op: Binary, a: Value, b: Value, dtype: DataType) -> Value {
    use std::cmp::Ordering;
    if op.is_logical() {
        let (Value::B(x), Value::B(y)) = (a, b) else {
            return Value::B(false);
        };
        return Value::B(if op == Binary::And { x && y } else { x || y });
    }
    if op.is_comparison() {
        let ord = match (a, b) {
            (Value::F(x), Value::F(y)) => x.partial_cmp(&y),
            (Value::I(x), Value::I(y)) => Some(x.cmp(&y)),
            (Value::B(x), Value::B(y)) => Some(x.cmp(&y)),
            _ => None,
        };
        return Value::B(match (op, ord) {
            (Binary::Ne, None) => true,
            (_, None) => false,
            (Binary::Eq, Some(o)) => o == Ordering::Equal,
            (Binary::Ne, Some(o)) => o != Ordering::Equal,
            (Binary::Lt, Some(o)) => o == Ordering::Less,
            (Binary::Le, Some(o)) => o != Ordering::Greater,
            (Binary::Gt, Some(o)) => o == Ordering::Greater,
            (_, Some(o)) => o != Ordering::Less,
        });
    }
    match (a, b) {
        (Value::F(x), Value::F(y)) => Value::F(match op {
            Binary::Add => x + y,
            Binary::Sub => x - y,
            Binary::Mul => x * y,
            Binary::Div => x / y,
            Binary::Rem => x % y,
            Binary::Min => float_min_max(x, y, false),
            Binary::Max => float_min_max(x, y, true),
            Binary::Pow => x.powf(y),
            _ => f64::NAN,
        }),
        (Value::I(x), Value::I(y)) => Value::I(int_binary(op, x, y, dtype)),
        // BOOL: an unsigned 1-bit integer.
        (Value::B(x), Value::B(y)) => {
            Value::B(int_binary(op, i128::from(x), i128::from(y), DataType::Bool) == 1)
        }
        _ => Value::I(0),
    }
}

fn int_binary(op: Binary, x: i128, y: i128, dtype: DataType) -> i128 {
    wrap(
        match op {
            Binary::Add => x + y,
            Binary::Sub => x - y,
            Binary::Mul => x.wrapping_mul(y),
            Binary::Div if y == 0 => x,
            Binary::Div => x / y,
            Binary::Rem if y == 0 => 0,
            Binary::Rem => x % y,
            Binary::Min => x.min(y),
            Binary::Max => x.max(y),
            // Two's complement: the wrapped values, sign-extended, combine
            // bit by bit as the type's bits do.
            Binary::BitAnd => x & y,
            Binary::BitOr => x | y,
            Binary::BitXor => x ^ y,
            Binary::Shl | Binary::Shr => return shift(op, x, y, dtype),
            Binary::Pow => int_pow(x, y, dtype),
            _ => 0,
        },
        dtype,
    )
}

/// `pow(x, y)` on integers of `dtype`: the product of `y` factors `x`,
/// wrapping as repeated multiplication wraps. A negative exponent gives
/// the integer part of the real power: 1 for a base of 1, ±1 for -1, and
/// 0 otherwise (a base of 0 included, where the real power is infinite:
/// as `x / 0` gives `x`, a defined value rather than a trap).
fn int_pow(x: i128, y: i128, dtype: DataType) -> i128 {
    if y < 0 {
        return match x {
            1 => 1,
            -1 if y % 2 != 0 => -1,
            -1 => 1,
            _ => 0,
        };
    }
    // Square and multiply over the exponent's bits, each step wrapped.
    let (mut r, mut b, mut n) = (1i128, wrap(x, dtype), y as u128);
    while n != 0 {
        if n & 1 == 1 {
            r = wrap(r.wrapping_mul(b), dtype);
        }
        b = wrap(b.wrapping_mul(b), dtype);
        n >>= 1;
    }
    r
}

/// `x << y` or `x >> y` in `dtype`: the count is `y`'s bits read as
/// unsigned (a negative count is a large one); a count of the type's width
/// or more shifts every bit out (0, or -1 for a negative `x` shifted
/// right); `>>` copies the sign in for signed types.
fn shift(op: Binary, x: i128, y: i128, dtype: DataType) -> i128 {
    let bits = if dtype.is_bool() {
        1
    } else {
        dtype.size_bits()
    };
    let count = y & ((1i128 << bits) - 1);
    let out = if count >= i128::from(bits) {
        if op == Binary::Shr && x < 0 {
            -1
        } else {
            0
        }
    } else if op == Binary::Shl {
        x << count
    } else {
        x >> count
    };
    wrap(out, dtype)
}

/// A host element as a CPU value of its compute type.
pub(crate) fn value_of(t: &crate::HostTensor, i: usize) -> Value {
    crate::with_element_type!(t.dtype(), T => {
        let v: T = t.get(i);
        match v.to_i128() {
            Some(x) => Value::I(x),
            None => Value::F(v.to_f64()),
        }
    })
}

/// A CPU value rounded once to `dtype`, as little-endian bytes.
pub(crate) fn write_value(v: Value, dtype: DataType, out: &mut Vec<u8>) {
    match (dtype, v) {
        (DataType::Float64, Value::F(x)) => x.write_le(out),
        (DataType::Float32, Value::F(x)) => (x as f32).write_le(out),
        (DataType::Float16, Value::F(x)) => half::f16::from_bits(f16_bits(x)).write_le(out),
        (_, Value::I(x)) if !dtype.is_float() => {
            let bytes = wrap(x, dtype).to_le_bytes();
            out.extend_from_slice(&bytes[..dtype.size_bytes()]);
        }
        (_, Value::B(b)) => {
            let mut bytes = vec![0u8; dtype.size_bytes()];
            bytes[0] = u8::from(b);
            out.extend_from_slice(&bytes);
        }
        // The spec compiler types every expression; a float value for an
        // integer type (or the reverse) cannot reach here.
        _ => out.extend_from_slice(&vec![0u8; dtype.size_bytes()]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: Scalar = Scalar::Var(Var::X);

    fn env(dt: DataType) -> TypeEnv<'static> {
        TypeEnv::uniform(Box::leak(Box::new([dt])))
    }

    fn vars(x: Value) -> [Value; Var::COUNT] {
        let mut v = [Value::I(0); Var::COUNT];
        v[0] = x;
        v
    }

    #[test]
    fn integer_powers_wrap_and_negative_exponents_truncate() {
        use DataType::*;
        assert_eq!(int_binary(Binary::Pow, 3, 4, Int32), 81);
        assert_eq!(int_binary(Binary::Pow, 2, 31, Int32), -(1 << 31));
        assert_eq!(int_binary(Binary::Pow, 2, 32, Int32), 0);
        assert_eq!(int_binary(Binary::Pow, 3, 5, Int8), wrap(243, Int8));
        assert_eq!(
            int_binary(Binary::Pow, 3, 41, Int64),
            wrap(3i128.pow(41), Int64)
        );
        assert_eq!(int_binary(Binary::Pow, 255, 2, Uint8), 1);
        assert_eq!(int_binary(Binary::Pow, 0, 0, Int32), 1);
        for (base, e, want) in [
            (1, -5, 1),
            (-1, -3, -1),
            (-1, -4, 1),
            (2, -1, 0),
            (0, -2, 0),
        ] {
            assert_eq!(int_binary(Binary::Pow, base, e, Int64), want, "{base}^{e}");
        }
    }

    #[test]
    fn integers_wrap_in_their_type() {
        static E: Scalar = Scalar::Binary(Binary::Add, &X, &Scalar::Int(1, Ty::T));
        assert_eq!(
            E.eval(&env(DataType::Int8), &vars(Value::I(127)), &[]),
            Value::I(-128)
        );
        static F: Scalar = Scalar::Binary(Binary::Sub, &X, &Scalar::Int(1, Ty::T));
        assert_eq!(
            F.eval(&env(DataType::Uint8), &vars(Value::I(0)), &[]),
            Value::I(255)
        );
        static M: Scalar = Scalar::Binary(Binary::Mul, &X, &X);
        assert_eq!(
            M.eval(
                &env(DataType::Int64),
                &vars(Value::I(i128::from(i64::MAX))),
                &[]
            ),
            Value::I(1)
        );
        static A: Scalar = Scalar::Unary(Unary::Abs, &X);
        assert_eq!(
            A.eval(&env(DataType::Int32), &vars(Value::I(-(1 << 31))), &[]),
            Value::I(-(1 << 31))
        );
    }

    #[test]
    fn integer_division_edges() {
        static D: Scalar = Scalar::Binary(Binary::Div, &X, &Scalar::Int(0, Ty::T));
        assert_eq!(
            D.eval(&env(DataType::Int32), &vars(Value::I(7)), &[]),
            Value::I(7)
        );
        static R: Scalar = Scalar::Binary(Binary::Rem, &X, &Scalar::Int(0, Ty::T));
        assert_eq!(
            R.eval(&env(DataType::Int32), &vars(Value::I(7)), &[]),
            Value::I(0)
        );
        static M: Scalar = Scalar::Binary(Binary::Div, &X, &Scalar::Int(-1, Ty::T));
        assert_eq!(
            M.eval(&env(DataType::Int16), &vars(Value::I(-32768)), &[]),
            Value::I(-32768)
        );
        static T: Scalar = Scalar::Binary(Binary::Div, &X, &Scalar::Int(2, Ty::T));
        assert_eq!(
            T.eval(&env(DataType::Int32), &vars(Value::I(-7)), &[]),
            Value::I(-3)
        );
        static S: Scalar = Scalar::Binary(Binary::Rem, &X, &Scalar::Int(3, Ty::T));
        assert_eq!(
            S.eval(&env(DataType::Int32), &vars(Value::I(-7)), &[]),
            Value::I(-1)
        );
    }

    #[test]
    fn float_min_max_propagate_nan_and_order_zeros() {
        static MIN: Scalar = Scalar::Binary(Binary::Min, &X, &Scalar::Float(0.0, Ty::T));
        static MAX: Scalar = Scalar::Binary(Binary::Max, &X, &Scalar::Float(0.0, Ty::T));
        let f = |e: &Scalar, x: f64| match e.eval(&env(DataType::Float32), &vars(Value::F(x)), &[])
        {
            Value::F(v) => v,
            v => panic!("{v:?}"),
        };
        assert!(f(&MIN, f64::NAN).is_nan());
        assert!(f(&MAX, f64::NAN).is_nan());
        assert!(f(&MIN, -0.0).is_sign_negative());
        assert!(f(&MAX, -0.0).is_sign_positive());
        assert_eq!(f(&MIN, -3.0), -3.0);
        assert_eq!(f(&MAX, -3.0), 0.0);
    }

    #[test]
    fn bitwise_operations_on_two_complement_bits() {
        use DataType::*;
        static AND: Scalar = Scalar::Binary(Binary::BitAnd, &X, &Scalar::Int(0x0f, Ty::T));
        static OR: Scalar = Scalar::Binary(Binary::BitOr, &X, &Scalar::Int(0x0f, Ty::T));
        static XOR: Scalar = Scalar::Binary(Binary::BitXor, &X, &Scalar::Int(-1, Ty::T));
        static NOT: Scalar = Scalar::Unary(Unary::BitNot, &X);
        let e = |s: &Scalar, dt: DataType, x: i128| s.eval(&env(dt), &vars(Value::I(x)), &[]);
        assert_eq!(e(&AND, Int8, -2), Value::I(0x0e));
        assert_eq!(e(&OR, Int8, -128), Value::I(-113));
        assert_eq!(e(&XOR, Uint8, 0x5a), Value::I(0xa5));
        assert_eq!(e(&XOR, Int16, 7), Value::I(-8));
        assert_eq!(e(&NOT, Uint16, 0), Value::I(0xffff));
        assert_eq!(e(&NOT, Int32, 0), Value::I(-1));
        assert_eq!(e(&NOT, Uint64, 1), Value::I(i128::from(u64::MAX - 1)));
        assert_eq!(
            e(&NOT, Int64, i128::from(i64::MIN)),
            Value::I(i128::from(i64::MAX))
        );
    }

    #[test]
    fn shifts_by_the_width_or_more_shift_every_bit_out() {
        use DataType::*;
        static Y: Scalar = Scalar::Var(Var::A);
        static SHL: Scalar = Scalar::Binary(Binary::Shl, &X, &Y);
        static SHR: Scalar = Scalar::Binary(Binary::Shr, &X, &Y);
        let e = |s: &Scalar, dt: DataType, x: i128, y: i128| {
            let mut v = vars(Value::I(x));
            v[Var::A as usize] = Value::I(y);
            s.eval(&env(dt), &v, &[])
        };
        assert_eq!(e(&SHL, Uint8, 0x81, 1), Value::I(0x02), "the low 8 bits");
        assert_eq!(e(&SHL, Uint8, 1, 7), Value::I(0x80));
        assert_eq!(e(&SHL, Uint8, 1, 8), Value::I(0));
        assert_eq!(e(&SHL, Uint8, 1, 255), Value::I(0));
        assert_eq!(e(&SHR, Uint8, 0x80, 7), Value::I(1));
        assert_eq!(e(&SHR, Uint8, 0x80, 8), Value::I(0));
        assert_eq!(e(&SHL, Uint32, 3, 31), Value::I(1 << 31));
        assert_eq!(e(&SHL, Uint32, 3, 32), Value::I(0));
        assert_eq!(
            e(&SHL, Uint64, 3, 63),
            Value::I(1 << 63),
            "64-bit counts up to 63"
        );
        assert_eq!(e(&SHL, Uint64, 3, 64), Value::I(0));
        assert_eq!(e(&SHR, Uint64, i128::from(u64::MAX), 63), Value::I(1));
        // Signed: `>>` copies the sign in; a negative count is a large one.
        assert_eq!(e(&SHR, Int8, -128, 7), Value::I(-1));
        assert_eq!(e(&SHR, Int8, -128, 8), Value::I(-1));
        assert_eq!(e(&SHR, Int8, 64, 100), Value::I(0));
        assert_eq!(e(&SHL, Int8, 1, -1), Value::I(0));
        assert_eq!(e(&SHL, Int8, 1, 7), Value::I(-128), "wraps");
        assert_eq!(e(&SHR, Int64, -8, 2), Value::I(-2));
    }

    #[test]
    fn bitwise_operations_are_integer_only() {
        static AND: Scalar = Scalar::Binary(Binary::BitAnd, &X, &X);
        static SHL: Scalar = Scalar::Binary(Binary::Shl, &X, &X);
        static NOT: Scalar = Scalar::Unary(Unary::BitNot, &X);
        for dt in [DataType::Float32, DataType::Float16, DataType::Bool] {
            assert!(AND.unsupported_for(&env(dt)).unwrap().contains("`&`"));
            assert!(SHL.unsupported_for(&env(dt)).unwrap().contains("`<<`"));
            assert!(NOT.unsupported_for(&env(dt)).unwrap().contains("`~`"));
        }
        assert_eq!(SHL.unsupported_for(&env(DataType::Uint64)), None);
    }

    #[test]
    fn round_half_to_even_and_extremes() {
        static R: Scalar = Scalar::Unary(Unary::Round, &X);
        assert_eq!(
            R.eval(&env(DataType::Float32), &vars(Value::F(2.5)), &[]),
            Value::F(2.0)
        );
        assert_eq!(
            R.eval(&env(DataType::Float32), &vars(Value::F(-3.5)), &[]),
            Value::F(-4.0)
        );
        assert_eq!(
            Scalar::Lowest(Ty::T).eval(&env(DataType::Uint16), &vars(Value::I(0)), &[]),
            Value::I(0)
        );
        assert_eq!(
            Scalar::Highest(Ty::T).eval(&env(DataType::Int8), &vars(Value::I(0)), &[]),
            Value::I(127)
        );
        assert_eq!(
            Scalar::Lowest(Ty::T).eval(&env(DataType::Float16), &vars(Value::I(0)), &[]),
            Value::F(f64::NEG_INFINITY)
        );
    }

    fn cast(v: Value, to: DataType) -> Value {
        cast_value(v, to)
    }

    fn f(v: Value) -> f64 {
        match v {
            Value::F(x) => x,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn float_to_int_truncates_saturates_and_maps_nan_to_zero() {
        use DataType::*;
        assert_eq!(cast(Value::F(f64::NAN), Int32), Value::I(0));
        assert_eq!(cast(Value::F(-f64::NAN), Uint8), Value::I(0));
        assert_eq!(cast(Value::F(f64::INFINITY), Int8), Value::I(127));
        assert_eq!(
            cast(Value::F(f64::NEG_INFINITY), Int64),
            Value::I(i128::from(i64::MIN))
        );
        assert_eq!(cast(Value::F(f64::NEG_INFINITY), Uint64), Value::I(0));
        assert_eq!(cast(Value::F(-0.99), Uint16), Value::I(0));
        assert_eq!(cast(Value::F(-1.0), Uint16), Value::I(0));
        assert_eq!(cast(Value::F(-2.7), Int16), Value::I(-2));
        assert_eq!(cast(Value::F(2.7), Int16), Value::I(2));
        assert_eq!(cast(Value::F(127.9), Int8), Value::I(127));
        assert_eq!(cast(Value::F(-128.9), Int8), Value::I(-128));
        assert_eq!(cast(Value::F(-129.0), Int8), Value::I(-128));
        assert_eq!(cast(Value::F(256.0), Uint8), Value::I(255));
        assert_eq!(
            cast(Value::F(2147483648.0), Int32),
            Value::I(i128::from(i32::MAX))
        );
        assert_eq!(
            cast(Value::F(-2147483648.0), Int32),
            Value::I(i128::from(i32::MIN))
        );
        assert_eq!(cast(Value::F(4294967295.0), Uint32), Value::I(4294967295));
        assert_eq!(
            cast(Value::F(1.8446744073709552e19), Uint64),
            Value::I(i128::from(u64::MAX))
        );
        assert_eq!(
            cast(Value::F(9.223372036854775e18), Int64),
            Value::I(9223372036854774784)
        );
    }

    #[test]
    fn int_to_int_wraps() {
        use DataType::*;
        assert_eq!(cast(Value::I(300), Int8), Value::I(44));
        assert_eq!(cast(Value::I(-1), Uint64), Value::I(i128::from(u64::MAX)));
        assert_eq!(cast(Value::I(i128::from(u64::MAX)), Int64), Value::I(-1));
        assert_eq!(cast(Value::I(200), Int8), Value::I(-56));
        assert_eq!(cast(Value::I(-129), Uint8), Value::I(127));
        assert_eq!(cast(Value::I(65536 + 7), Uint16), Value::I(7));
    }

    #[test]
    fn to_and_from_bool() {
        use DataType::*;
        assert_eq!(cast(Value::F(f64::NAN), Bool), Value::B(true));
        assert_eq!(cast(Value::F(-0.0), Bool), Value::B(false));
        assert_eq!(cast(Value::F(1e-300), Bool), Value::B(true));
        assert_eq!(cast(Value::I(256), Bool), Value::B(true), "not the low bit");
        assert_eq!(cast(Value::I(0), Bool), Value::B(false));
        assert_eq!(cast(Value::B(true), Float16), Value::F(1.0));
        assert_eq!(cast(Value::B(true), Int64), Value::I(1));
        assert_eq!(cast(Value::B(false), Uint8), Value::I(0));
    }

    #[test]
    fn float16_rounds_once_to_nearest_even() {
        use DataType::Float16;
        let h = |x: f64| f16_bits(x);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1).
        assert_eq!(h(1.0 + 2f64.powi(-11)), 0x3c00);
        // A sticky bit far below breaks the tie upwards (half's own
        // conversion drops bits below the top 32 and gets this wrong).
        assert_eq!(h(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), 0x3c01);
        assert_eq!(h(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        assert_eq!(h(65504.0), 0x7bff);
        assert_eq!(h(65519.99), 0x7bff);
        assert_eq!(h(65520.0), 0x7c00, "the tie at the top rounds to infinity");
        assert_eq!(h(-1e9), 0xfc00);
        // Subnormals: multiples of 2^-24; 2^-25 is a tie to zero.
        assert_eq!(h(2f64.powi(-24)), 0x0001);
        assert_eq!(h(2f64.powi(-25)), 0x0000);
        assert_eq!(h(2f64.powi(-25) * 1.0000001), 0x0001);
        assert_eq!(h(3.0 * 2f64.powi(-25)), 0x0002);
        assert_eq!(h(-0.0), 0x8000);
        assert_eq!(
            h(2f64.powi(-14) - 2f64.powi(-26)),
            0x0400,
            "rounds up to the smallest normal"
        );
        assert_eq!(h(f64::NAN) & 0x7e00, 0x7e00);
        assert_eq!(f(cast(Value::F(0.1), Float16)), 0.0999755859375);
        assert_eq!(f(cast(Value::I(2049), Float16)), 2048.0);
        assert_eq!(f(cast(Value::I(2051), Float16)), 2052.0);
        assert_eq!(f(cast(Value::I(65520), Float16)), f64::INFINITY);
        assert_eq!(
            f(cast(Value::I(i128::from(i64::MIN)), Float16)),
            f64::NEG_INFINITY
        );
        // Every FLOAT16 value converts to itself.
        for bits in 0..=0xffffu16 {
            let v = half::f16::from_bits(bits);
            if !v.is_nan() {
                assert_eq!(f16_bits(v.to_f64()), bits);
            }
        }
    }

    #[test]
    fn sixty_four_bit_integers_round_to_float32_from_every_bit() {
        use DataType::*;
        let to32 = |x: i128, from: DataType| f(cast(cast(Value::I(x), from), Float32));
        // 2^53 + 1: a tie in f32's terms? No: far below the last place; down.
        assert_eq!(to32((1 << 53) + 1, Int64), 2f64.powi(53));
        // 2^60 + 2^36 + 1: above the halfway point 2^60 + 2^36 by 1; through
        // f64 (53 bits) the 1 is lost, the tie goes to even (2^60).
        assert_eq!(
            to32((1 << 60) + (1 << 36) + 1, Int64),
            2f64.powi(60) + 2f64.powi(37)
        );
        assert_eq!(to32((1 << 60) + (1 << 36), Int64), 2f64.powi(60));
        assert_eq!(
            to32(-((1 << 60) + (1 << 36) + 1), Int64),
            -(2f64.powi(60) + 2f64.powi(37))
        );
        assert_eq!(to32(i128::from(u64::MAX), Uint64), 2f64.powi(64));
        assert_eq!(to32(i128::from(i64::MIN), Int64), -(2f64.powi(63)));
        assert_eq!(to32((1 << 24) + 1, Int32), 2f64.powi(24));
        assert_eq!(to32((1 << 24) + 3, Int32), 2f64.powi(24) + 4.0);
        assert_eq!(f(cast(Value::I((1 << 53) + 1), Float64)), 2f64.powi(53));
    }

    #[test]
    fn casts_in_expressions_are_typed() {
        // cast<INT8>(x) + 1 on a FLOAT32 element, back to FLOAT32.
        static ONE: Scalar = Scalar::Int(1, Ty::Data(DataType::Int8));
        static C: Scalar = Scalar::Cast(Ty::Data(DataType::Int8), &X);
        static SUM: Scalar = Scalar::Binary(Binary::Add, &C, &ONE);
        static E: Scalar = Scalar::Cast(Ty::T, &SUM);
        let env = env(DataType::Float32);
        assert_eq!(SUM.type_of(&env), DataType::Int8);
        assert_eq!(E.type_of(&env), DataType::Float32);
        assert_eq!(E.eval(&env, &vars(Value::F(126.5)), &[]), Value::F(127.0));
        // 127 + 1 wraps in INT8.
        assert_eq!(E.eval(&env, &vars(Value::F(1000.0)), &[]), Value::F(-128.0));
        // A typed decimal literal is rounded to its type.
        static TENTH: Scalar = Scalar::Float(0.1, Ty::Data(DataType::Float16));
        assert_eq!(
            TENTH.eval(&env, &vars(Value::I(0)), &[]),
            Value::F(0.0999755859375)
        );
        // BOOL: a comparison is a BOOL, and casts to 0 or 1.
        static NZ: Scalar = Scalar::Binary(Binary::Ne, &X, &Scalar::Int(0, Ty::T));
        static COUNT: Scalar = Scalar::Cast(Ty::T, &NZ);
        assert_eq!(
            COUNT.eval(&env, &vars(Value::F(f64::NAN)), &[]),
            Value::F(1.0)
        );
        assert_eq!(COUNT.eval(&env, &vars(Value::F(-0.0)), &[]), Value::F(0.0));
        // FLOAT64 casts, arithmetic, division and square roots are for the
        // GPU, on the bits; powers are not.
        static WIDE: Scalar = Scalar::Cast(Ty::Data(DataType::Float64), &X);
        assert_eq!(WIDE.unsupported_for(&env), None);
        static BACK: Scalar = Scalar::Cast(Ty::T, &WIDE);
        assert_eq!(BACK.unsupported_for(&env), None);
        static PRODUCT: Scalar = Scalar::Binary(Binary::Mul, &WIDE, &WIDE);
        assert_eq!(PRODUCT.unsupported_for(&env), None);
        static RATIO: Scalar = Scalar::Binary(Binary::Div, &WIDE, &WIDE);
        assert_eq!(RATIO.unsupported_for(&env), None);
        static ROOT: Scalar = Scalar::Unary(Unary::Sqrt, &RATIO);
        assert_eq!(ROOT.unsupported_for(&env), None);
        // exp, log, tanh and pow are computed on the bits too.
        static POWER: Scalar = Scalar::Binary(Binary::Pow, &WIDE, &WIDE);
        assert_eq!(POWER.unsupported_for(&env), None);
        for op in [Unary::Exp, Unary::Log, Unary::Tanh] {
            assert!(crate::wgsl::float64::has_unary(op), "{op:?}");
        }
        // Shifts stay integer operations.
        static SHIFT: Scalar = Scalar::Binary(Binary::Shl, &WIDE, &WIDE);
        assert!(SHIFT.unsupported_for(&env).is_some());
        assert_eq!(COUNT.unsupported_for(&env), None);
    }
}
