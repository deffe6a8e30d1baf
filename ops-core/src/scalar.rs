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
//! # Meaning, per data type
//!
//! Every value of an expression has the *compute type* of the tensor the
//! pattern works on, or is a boolean (a comparison).
//!
//! - **Floats** (FLOAT16, FLOAT32): the CPU reference computes in `f64` and
//!   rounds once to the output type; the GPU computes in `f32` (FLOAT16
//!   values too) and rounds once on store. The two agree within the spec's
//!   accuracy contract. `min`/`max` propagate NaN and order -0.0 below +0.0;
//!   `round` rounds half to even; `%` is C's `fmod`; division by zero and
//!   `sqrt`/`log` of negative numbers follow IEEE 754. FLOAT64 has no
//!   arithmetic on the GPU (core WebGPU has no `f64`): a spec that computes
//!   must leave it out of its tables.
//! - **Integers**: exact, and wrapping in the tensor's type after every
//!   operation (two's complement: INT8 `127 + 1` is `-128`, UINT8 `0 - 1`
//!   is 255). Division truncates toward zero; `x / 0` is `x`, `x % 0` is 0,
//!   and `MIN / -1` is `MIN` (WGSL's definitions, kept on the CPU). `abs` of
//!   `MIN` is `MIN`. `floor`, `ceil` and `round` are the identity;
//!   `sqrt`, `exp`, `log`, `pow` and decimal literals are errors in a spec
//!   whose tables give the expression an integer type. 64-bit integers
//!   (word pairs on the GPU) have `+ - *`, `neg`, `abs`, `min`, `max` and
//!   the comparisons; `/` and `%` on them are spec errors.
//! - `lowest` and `highest` are the type's extremes: -infinity and +infinity
//!   for floats, `MIN` and `MAX` for integers.
//! - **BOOL** computes as an unsigned 1-bit integer: `max` is or, `min` is
//!   and, `+` is exclusive or; `lowest` is false and `highest` true.

use crate::DataType;

/// A variable of an expression; which ones a parameter may name is the
/// pattern's choice (a fold's `map` sees [`Var::X`], its `combine`
/// [`Var::A`] and [`Var::B`], its `finish` [`Var::Acc`] and [`Var::N`]).
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
}

impl Var {
    /// Every variable.
    pub const ALL: [Var; 5] = [Var::X, Var::A, Var::B, Var::Acc, Var::N];

    /// The name a spec writes.
    pub const fn name(self) -> &'static str {
        match self {
            Var::X => "x",
            Var::A => "a",
            Var::B => "b",
            Var::Acc => "acc",
            Var::N => "n",
        }
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
    /// `!c` on a boolean
    Not,
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
            Unary::Not => "not",
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
    /// `pow(a, b)`
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
}

/// A scalar expression. See the [module docs](self) for its meaning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A variable.
    Var(Var),
    /// An integer literal, converted to the compute type.
    Int(i64),
    /// A decimal literal (floats only).
    Float(f64),
    /// A boolean literal.
    Bool(bool),
    /// The value of the descriptor's attribute (by spec order), converted
    /// to the compute type (an integer attribute to a float type exactly as
    /// `f64`; a float attribute is only in float types' expressions).
    Attr(u16, AttrScalar),
    /// The type's lowest value (-infinity, or `MIN`).
    Lowest,
    /// The type's highest value (+infinity, or `MAX`).
    Highest,
    /// A one-operand operation.
    Unary(Unary, &'static Scalar),
    /// A two-operand operation.
    Binary(Binary, &'static Scalar, &'static Scalar),
    /// `select(c, t, f)` / `if c { t } else { f }`: `t` when `c`, else `f`.
    Select(&'static Scalar, &'static Scalar, &'static Scalar),
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
}

/// A value of an expression on the CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A float, in `f64`.
    F(f64),
    /// An integer, already wrapped to its type.
    I(i128),
    /// A boolean.
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

/// Parameter words of attribute values for a kernel computing in `dtype`'s
/// compute type: two words per attribute, in spec order (the `f32` bits of
/// a float, the wrapped bits of an integer, low word first; 1 or 0 for a
/// boolean).
pub fn attr_words(attrs: &[Value], dtype: DataType) -> Vec<u32> {
    let mut out = Vec::with_capacity(2 * attrs.len());
    for &a in attrs {
        let bits: u64 = match (a, dtype.is_float()) {
            (Value::F(x), _) => u64::from((x as f32).to_bits()),
            (Value::I(x), true) => u64::from((x as f64 as f32).to_bits()),
            (Value::I(x), false) => wrap(x, dtype) as u64,
            (Value::B(b), _) => u64::from(b),
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

impl Scalar {
    /// Evaluates the expression for a tensor of `dtype` with the variables
    /// `vars` (indexed as [`Var::ALL`]) and the descriptor's attribute values
    /// `attrs` (spec order; [`Value::F`] for floats, [`Value::I`] for
    /// integers, [`Value::B`] for booleans).
    ///
    /// Returns a number of the compute type ([`Value::F`] for floats,
    /// [`Value::I`] for integers) or a boolean. The spec compiler has
    /// checked the expression's types, so a mismatch here is a bug in it;
    /// it gives NaN or 0 rather than a panic.
    pub fn eval(&self, dtype: DataType, vars: &[Value; 5], attrs: &[Value]) -> Value {
        let float = dtype.is_float();
        match *self {
            Scalar::Var(v) => vars[v as usize],
            Scalar::Attr(i, _) => match (attrs.get(usize::from(i)), float) {
                (Some(Value::I(x)), true) => Value::F(*x as f64),
                (Some(Value::I(x)), false) => Value::I(wrap(*x, dtype)),
                (Some(v), _) => *v,
                (None, _) => Value::I(0),
            },
            Scalar::Int(i) => {
                if float {
                    Value::F(i as f64)
                } else {
                    Value::I(wrap(i128::from(i), dtype))
                }
            }
            Scalar::Float(f) => {
                if float {
                    Value::F(f)
                } else {
                    Value::I(0)
                }
            }
            Scalar::Bool(b) => Value::B(b),
            Scalar::Lowest | Scalar::Highest => {
                let high = matches!(self, Scalar::Highest);
                if float {
                    Value::F(if high {
                        f64::INFINITY
                    } else {
                        f64::NEG_INFINITY
                    })
                } else {
                    let (lo, hi) = int_range(dtype);
                    Value::I(if high { hi } else { lo })
                }
            }
            Scalar::Unary(op, e) => unary(op, e.eval(dtype, vars, attrs), dtype),
            Scalar::Binary(op, a, b) => binary(
                op,
                a.eval(dtype, vars, attrs),
                b.eval(dtype, vars, attrs),
                dtype,
            ),
            Scalar::Select(c, t, f) => match c.eval(dtype, vars, attrs) {
                Value::B(true) => t.eval(dtype, vars, attrs),
                _ => f.eval(dtype, vars, attrs),
            },
        }
    }

    /// Why the expression cannot be computed for a tensor of `dtype` on
    /// the GPU (and so cannot be in a spec whose tables list `dtype`), or
    /// `None` when it can. See the [module docs](self).
    pub fn unsupported_for(&self, dtype: DataType) -> Option<String> {
        let mut why = None;
        self.visit(&mut |e| {
            if why.is_some() {
                return;
            }
            why = match *e {
                _ if dtype == DataType::Float64 => {
                    Some("FLOAT64 arithmetic is not available on the GPU (core WebGPU has no f64)".to_string())
                }
                Scalar::Float(_) if !dtype.is_float() => {
                    Some(format!("a decimal literal has no {dtype} value"))
                }
                Scalar::Attr(_, AttrScalar::Float) if !dtype.is_float() => {
                    Some(format!("a float attribute has no {dtype} value"))
                }
                Scalar::Unary(op @ (Unary::Sqrt | Unary::Exp | Unary::Log), _) if !dtype.is_float() => {
                    Some(format!("`{}` is not defined on {dtype}", op.name()))
                }
                Scalar::Binary(Binary::Pow, _, _) if !dtype.is_float() => {
                    Some(format!("`pow` is not defined on {dtype}"))
                }
                Scalar::Binary(op @ (Binary::Div | Binary::Rem), _, _)
                    if !dtype.is_float() && dtype.size_bits() == 64 =>
                {
                    Some(format!(
                        "`{}` on {dtype} is not available on the GPU (64-bit integers are word pairs)",
                        if op == Binary::Div { "/" } else { "%" }
                    ))
                }
                _ => None,
            };
        });
        why
    }

    /// Calls `f` on this node and every node below it.
    pub fn visit(&self, f: &mut dyn FnMut(&Scalar)) {
        f(self);
        match *self {
            Scalar::Unary(_, e) => e.visit(f),
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
            Unary::Not => f64::NAN,
        }),
        Value::I(x) => Value::I(wrap(
            match op {
                Unary::Neg => -x,
                Unary::Abs => x.abs(),
                Unary::Floor | Unary::Ceil | Unary::Round => x,
                Unary::Sqrt | Unary::Exp | Unary::Log | Unary::Not => 0,
            },
            dtype,
        )),
        Value::B(b) => Value::B(op == Unary::Not && !b),
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
        (Value::I(x), Value::I(y)) => Value::I(wrap(
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
                _ => 0,
            },
            dtype,
        )),
        _ => Value::I(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: Scalar = Scalar::Var(Var::X);

    fn vars(x: Value) -> [Value; 5] {
        [x, Value::I(0), Value::I(0), Value::I(0), Value::I(0)]
    }

    #[test]
    fn integers_wrap_in_their_type() {
        static E: Scalar = Scalar::Binary(Binary::Add, &X, &Scalar::Int(1));
        assert_eq!(
            E.eval(DataType::Int8, &vars(Value::I(127)), &[]),
            Value::I(-128)
        );
        static F: Scalar = Scalar::Binary(Binary::Sub, &X, &Scalar::Int(1));
        assert_eq!(
            F.eval(DataType::Uint8, &vars(Value::I(0)), &[]),
            Value::I(255)
        );
        static M: Scalar = Scalar::Binary(Binary::Mul, &X, &X);
        assert_eq!(
            M.eval(DataType::Int64, &vars(Value::I(i128::from(i64::MAX))), &[]),
            Value::I(1)
        );
        static A: Scalar = Scalar::Unary(Unary::Abs, &X);
        assert_eq!(
            A.eval(DataType::Int32, &vars(Value::I(-(1 << 31))), &[]),
            Value::I(-(1 << 31))
        );
    }

    #[test]
    fn integer_division_edges() {
        static D: Scalar = Scalar::Binary(Binary::Div, &X, &Scalar::Int(0));
        assert_eq!(
            D.eval(DataType::Int32, &vars(Value::I(7)), &[]),
            Value::I(7)
        );
        static R: Scalar = Scalar::Binary(Binary::Rem, &X, &Scalar::Int(0));
        assert_eq!(
            R.eval(DataType::Int32, &vars(Value::I(7)), &[]),
            Value::I(0)
        );
        static M: Scalar = Scalar::Binary(Binary::Div, &X, &Scalar::Int(-1));
        assert_eq!(
            M.eval(DataType::Int16, &vars(Value::I(-32768)), &[]),
            Value::I(-32768)
        );
        static T: Scalar = Scalar::Binary(Binary::Div, &X, &Scalar::Int(2));
        assert_eq!(
            T.eval(DataType::Int32, &vars(Value::I(-7)), &[]),
            Value::I(-3)
        );
        static S: Scalar = Scalar::Binary(Binary::Rem, &X, &Scalar::Int(3));
        assert_eq!(
            S.eval(DataType::Int32, &vars(Value::I(-7)), &[]),
            Value::I(-1)
        );
    }

    #[test]
    fn float_min_max_propagate_nan_and_order_zeros() {
        static MIN: Scalar = Scalar::Binary(Binary::Min, &X, &Scalar::Float(0.0));
        static MAX: Scalar = Scalar::Binary(Binary::Max, &X, &Scalar::Float(0.0));
        let f = |e: &Scalar, x: f64| match e.eval(DataType::Float32, &vars(Value::F(x)), &[]) {
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
    fn round_half_to_even_and_extremes() {
        static R: Scalar = Scalar::Unary(Unary::Round, &X);
        assert_eq!(
            R.eval(DataType::Float32, &vars(Value::F(2.5)), &[]),
            Value::F(2.0)
        );
        assert_eq!(
            R.eval(DataType::Float32, &vars(Value::F(-3.5)), &[]),
            Value::F(-4.0)
        );
        assert_eq!(
            Scalar::Lowest.eval(DataType::Uint16, &vars(Value::I(0)), &[]),
            Value::I(0)
        );
        assert_eq!(
            Scalar::Highest.eval(DataType::Int8, &vars(Value::I(0)), &[]),
            Value::I(127)
        );
        assert_eq!(
            Scalar::Lowest.eval(DataType::Float16, &vars(Value::I(0)), &[]),
            Value::F(f64::NEG_INFINITY)
        );
    }
}
