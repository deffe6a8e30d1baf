//! Typed expressions to `static` trees of `ops_core::expr::Expr`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{ArithOp, CmpOp, Expr, Func, Step};

/// An `ops_core::__private::expr::Expr` constant expression.
pub fn gen_expr(e: &Expr) -> TokenStream {
    let x = quote!(::ops_core::__private::expr::Expr);
    let b = |e: &Expr| {
        let t = gen_expr(e);
        quote!(&#t)
    };
    match e {
        Expr::Int(v) => {
            let v = proc_macro2::Literal::i128_unsuffixed(*v);
            quote!(#x::Int(#v))
        }
        Expr::Bool(v) => quote!(#x::Bool(#v)),
        Expr::DType(t) => {
            let t = gen_dtype(*t);
            quote!(#x::DType(#t))
        }
        Expr::Enum(i) => quote!(#x::Enum(#i)),
        Expr::Attr(i) => quote!(#x::Attr(#i)),
        Expr::Var(i) => quote!(#x::Var(#i)),
        Expr::Rank(i) => quote!(#x::Rank(#i)),
        Expr::Sizes(i) => quote!(#x::Sizes(#i)),
        Expr::TensorDType(i) => quote!(#x::TensorDType(#i)),
        Expr::Values(i) => quote!(#x::Values(#i)),
        Expr::Index(l, i) => {
            let (l, i) = (b(l), b(i));
            quote!(#x::Index(#l, #i))
        }
        Expr::Slice(l, a, c) => {
            let (l, a, c) = (b(l), b(a), b(c));
            quote!(#x::Slice(#l, #a, #c))
        }
        Expr::Concat(l, r) => {
            let (l, r) = (b(l), b(r));
            quote!(#x::Concat(#l, #r))
        }
        Expr::Neg(a) => {
            let a = b(a);
            quote!(#x::Neg(#a))
        }
        Expr::Not(a) => {
            let a = b(a);
            quote!(#x::Not(#a))
        }
        Expr::And(l, r) => {
            let (l, r) = (b(l), b(r));
            quote!(#x::And(#l, #r))
        }
        Expr::Or(l, r) => {
            let (l, r) = (b(l), b(r));
            quote!(#x::Or(#l, #r))
        }
        Expr::Arith(op, l, r) => {
            let op = match op {
                ArithOp::Add => quote!(Add),
                ArithOp::Sub => quote!(Sub),
                ArithOp::Mul => quote!(Mul),
                ArithOp::Div => quote!(Div),
                ArithOp::Rem => quote!(Rem),
            };
            let (l, r) = (b(l), b(r));
            quote!(#x::Arith(::ops_core::__private::expr::ArithOp::#op, #l, #r))
        }
        Expr::Cmp(op, l, r, tl, tr) => {
            let op = match op {
                CmpOp::Eq => quote!(Eq),
                CmpOp::Ne => quote!(Ne),
                CmpOp::Lt => quote!(Lt),
                CmpOp::Le => quote!(Le),
                CmpOp::Gt => quote!(Gt),
                CmpOp::Ge => quote!(Ge),
            };
            let (l, r) = (b(l), b(r));
            quote!(#x::Cmp(::ops_core::__private::expr::CmpOp::#op, #l, #r, #tl, #tr))
        }
        Expr::If(c, l, r) => {
            let (c, l, r) = (b(c), b(l), b(r));
            quote!(#x::If(#c, #l, #r))
        }
        Expr::Call(f, args, texts) => {
            let f = match f {
                Func::Len => quote!(Len),
                Func::Contains => quote!(Contains),
                Func::Unique => quote!(Unique),
                Func::Product => quote!(Product),
                Func::Sum => quote!(Sum),
                Func::Broadcastable => quote!(Broadcastable),
                Func::Broadcast => quote!(Broadcast),
                Func::Min => quote!(Min),
                Func::Max => quote!(Max),
                Func::IsSigned => quote!(IsSigned),
                Func::IsFloat => quote!(IsFloat),
                Func::Normalize => quote!(Normalize),
                Func::Range => quote!(Range),
            };
            let args = args.iter().map(gen_expr);
            quote!(#x::Call(::ops_core::__private::expr::Func::#f, &[#(#args),*], &[#(#texts),*]))
        }
        Expr::All {
            var,
            name,
            lo,
            hi,
            body,
        } => {
            let (lo, hi, body) = (b(lo), b(hi), b(body));
            quote!(#x::All { var: #var, name: #name, lo: #lo, hi: #hi, body: #body })
        }
        Expr::ListFor {
            var,
            lo,
            hi,
            filter,
            body,
        } => {
            let (lo, hi, body) = (b(lo), b(hi), b(body));
            let filter = match filter {
                Some(f) => {
                    let f = b(f);
                    quote!(::core::option::Option::Some(#f))
                }
                None => quote!(::core::option::Option::None),
            };
            quote!(#x::ListFor { var: #var, lo: #lo, hi: #hi, filter: #filter, body: #body })
        }
        Expr::List(items) => {
            let items = items.iter().map(gen_expr);
            quote!(#x::List(&[#(#items),*]))
        }
    }
}

/// An `ops_core::__private::expr::Step`.
pub fn gen_step(s: &Step) -> TokenStream {
    let st = quote!(::ops_core::__private::expr::Step);
    match s {
        Step::Require { cond, message } => {
            let c = gen_expr(cond);
            quote!(#st::Require { cond: #c, message: #message })
        }
        Step::Let { var, value } => {
            let v = gen_expr(value);
            quote!(#st::Let { var: #var, value: #v })
        }
        Step::Shape {
            tensor,
            sizes,
            message,
        } => {
            let v = gen_expr(sizes);
            quote!(#st::Shape { tensor: #tensor, sizes: #v, message: #message })
        }
        Step::DType {
            tensor,
            dtype,
            message,
        } => {
            let v = gen_expr(dtype);
            quote!(#st::DType { tensor: #tensor, dtype: #v, message: #message })
        }
    }
}

/// `::ops_core::DataType::X`.
pub fn gen_dtype(t: ops_core::DataType) -> TokenStream {
    let v = proc_macro2::Ident::new(&format!("{t:?}"), proc_macro2::Span::call_site());
    quote!(::ops_core::DataType::#v)
}
