//! Tokens to syntax tree. Errors are collected; after one, the parser skips
//! to the next item so that every mistake of a file is reported in one build.

use super::ast::*;
use super::lexer::{lex, Tok, Token};
use crate::diag::{Diagnostic, Errors, Span};

const ITEM_KEYWORDS: &[&str] = &[
    "source",
    "aliases",
    "introduced",
    "input",
    "output",
    "attr",
    "enum",
    "rules",
    "support",
    "compute",
];

/// Parses a whole spec file.
pub fn parse_spec(src: &str, errors: &mut Errors) -> SpecFile {
    let tokens = lex(src, errors);
    let mut p = Parser { tokens, pos: 0 };
    p.parse_file(errors)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

type PResult<T> = Result<T, Diagnostic>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.tokens[(self.pos + n).min(self.tokens.len() - 1)].tok
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(i) if i == kw)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            Tok::Ident(i) => format!("`{i}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Decimal(d) => format!("`{d}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Doc(_) => "a doc comment".into(),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "end of file".into(),
        }
    }

    fn expected(&self, what: &str) -> Diagnostic {
        Diagnostic::new(
            self.span(),
            format!("expected {what}, found {}", self.describe()),
        )
    }

    fn expect_punct(&mut self, p: &str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<Span> {
        if self.is_kw(kw) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{kw}`")))
        }
    }

    fn name(&mut self, what: &str) -> PResult<Name> {
        match self.peek().clone() {
            Tok::Ident(text) => {
                let span = self.bump().span;
                Ok(Name { text, span })
            }
            _ => Err(self.expected(what)),
        }
    }

    fn string(&mut self, what: &str) -> PResult<String> {
        match self.peek().clone() {
            Tok::Str(s) => {
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn docs(&mut self) -> Vec<String> {
        let mut docs = Vec::new();
        while let Tok::Doc(d) = self.peek().clone() {
            self.bump();
            docs.push(d);
        }
        docs
    }

    fn parse_file(&mut self, errors: &mut Errors) -> SpecFile {
        let mut file = SpecFile {
            docs: self.docs(),
            ..SpecFile::default()
        };
        let start = self.span();
        if let Err(d) = self.expect_kw("operator") {
            errors.push(d.help("a spec file holds one `operator Name { ... }` block"));
            return file;
        }
        match self.name("the operator's name") {
            Ok(n) => file.name = Some(n),
            Err(d) => errors.push(d),
        }
        if let Err(d) = self.expect_punct("{") {
            errors.push(d);
            return file;
        }
        loop {
            let docs = self.docs();
            if self.eat_punct("}") {
                break;
            }
            if matches!(self.peek(), Tok::Eof) {
                errors.push(self.expected("`}` closing the operator block"));
                break;
            }
            match self.parse_item(docs) {
                Ok(item) => file.items.push(item),
                Err(d) => {
                    errors.push(d);
                    self.recover();
                }
            }
        }
        if !matches!(self.peek(), Tok::Eof) {
            errors.push(self.expected("end of file after the operator block"));
        }
        file.span = start.join(self.prev_span());
        file
    }

    /// Skips to the next item keyword at the operator block's depth.
    fn recover(&mut self) {
        let mut depth = 0i32;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Punct("{") => depth += 1,
                Tok::Punct("}") => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        if self.at_item_start() {
                            return;
                        }
                        continue;
                    }
                }
                Tok::Ident(i) if depth == 0 && ITEM_KEYWORDS.contains(&i.as_str()) => return,
                _ => {}
            }
            self.bump();
        }
    }

    fn at_item_start(&self) -> bool {
        matches!(self.peek(), Tok::Ident(i) if ITEM_KEYWORDS.contains(&i.as_str()))
            || matches!(self.peek(), Tok::Punct("}") | Tok::Doc(_) | Tok::Eof)
    }

    fn parse_item(&mut self, docs: Vec<String>) -> PResult<Item> {
        let kw = match self.peek() {
            Tok::Ident(i) => i.clone(),
            _ => return Err(self.expected(
                "an item (`input`, `output`, `attr`, `enum`, `rules`, `support`, `compute`, ...)",
            )),
        };
        match kw.as_str() {
            "source" => {
                let start = self.bump().span;
                let s = self.string("a string naming the seed document")?;
                Ok(Item::Source(s, start.join(self.prev_span())))
            }
            "aliases" => {
                self.bump();
                let mut names = vec![self.name("an alias name")?];
                while self.eat_punct(",") {
                    names.push(self.name("an alias name")?);
                }
                Ok(Item::Aliases(names))
            }
            "introduced" => {
                self.bump();
                let (l, s) = self.level()?;
                Ok(Item::Introduced(l, s))
            }
            "input" | "output" => {
                self.bump();
                let name = self.name("a tensor name")?;
                self.expect_punct(":")?;
                let opt_start = self.span();
                let optional = self.eat_kw("optional");
                let host = self.eat_kw("host");
                let given = self.eat_kw("given");
                self.expect_kw("tensor")?;
                let count = if self.eat_punct("[") {
                    let r = self.range()?;
                    self.expect_punct("]")?;
                    Some(r)
                } else if optional {
                    Some(RangeLit {
                        lo: 0,
                        hi: 1,
                        span: opt_start.join(self.prev_span()),
                    })
                } else {
                    None
                };
                let seed = match self.peek() {
                    Tok::Str(_) => Some(self.string("")?),
                    _ => None,
                };
                Ok(Item::Tensor(TensorDecl {
                    docs,
                    output: kw == "output",
                    host,
                    given,
                    name,
                    seed,
                    count,
                }))
            }
            "attr" => {
                self.bump();
                let name = self.name("an attribute name")?;
                self.expect_punct(":")?;
                let base = self.name(
                    "an attribute type (`u32`, `i32`, `i64`, `bool`, an enum; `[]` for a list)",
                )?;
                let of = if self.eat_punct("(") {
                    let t = self.name("a tensor name")?;
                    self.expect_punct(")")?;
                    Some(t)
                } else {
                    None
                };
                let list = if self.eat_punct("[") {
                    self.expect_punct("]")?;
                    true
                } else {
                    false
                };
                let default = if self.eat_punct("=") {
                    Some(self.expr()?)
                } else {
                    None
                };
                let seed = match self.peek() {
                    Tok::Str(_) => Some(self.string("")?),
                    _ => None,
                };
                Ok(Item::Attr(AttrDecl {
                    docs,
                    name,
                    ty: TypeRef { base, list, of },
                    default,
                    seed,
                }))
            }
            "enum" => {
                self.bump();
                let name = self.name("an enum name")?;
                self.expect_punct("{")?;
                let mut members = Vec::new();
                while !self.eat_punct("}") {
                    members.push(self.name("an enum member")?);
                    if !self.eat_punct(",") {
                        self.expect_punct("}")?;
                        break;
                    }
                }
                Ok(Item::Enum(EnumDecl {
                    docs,
                    name,
                    members,
                }))
            }
            "rules" => {
                let start = self.bump().span;
                self.expect_punct("{")?;
                let mut rules = Vec::new();
                while !self.eat_punct("}") {
                    rules.push(self.rule()?);
                }
                Ok(Item::Rules(rules, start.join(self.prev_span())))
            }
            "support" => {
                let start = self.bump().span;
                self.expect_punct("{")?;
                let mut entries = Vec::new();
                while !self.eat_punct("}") {
                    if self.eat_kw("when") {
                        let attr = self.name("an enum attribute")?;
                        self.expect_kw("in")?;
                        self.expect_punct("[")?;
                        let mut members = Vec::new();
                        while !self.eat_punct("]") {
                            members.push(self.name("an enum member")?);
                            if !self.eat_punct(",") {
                                self.expect_punct("]")?;
                                break;
                            }
                        }
                        self.expect_punct("{")?;
                        while !self.eat_punct("}") {
                            let mut e = self.entry()?;
                            e.when = Some((attr.clone(), members.clone()));
                            entries.push(e);
                        }
                        continue;
                    }
                    entries.push(self.entry()?);
                }
                Ok(Item::Support(entries, start.join(self.prev_span())))
            }
            "compute" => {
                let start = self.bump().span;
                let pattern = self.name(
                    "a compute family (`elementwise`, `fold`, `reduce`, `view`, ...: an unknown name lists them all) or `switch`",
                )?;
                if pattern.text == "switch" {
                    let attr = self.name("an enum attribute")?;
                    self.expect_punct("{")?;
                    let mut arms = Vec::new();
                    while !self.eat_punct("}") {
                        let arm_docs = self.docs();
                        let mut members = vec![self.name("an enum member")?];
                        while self.eat_punct(",") {
                            members.push(self.name("an enum member")?);
                        }
                        self.expect_punct(":")?;
                        let arm_start = self.span();
                        let arm_pattern = self.name("a pattern name")?;
                        arms.push((
                            members,
                            self.compute_body(arm_docs, arm_start, arm_pattern)?,
                        ));
                    }
                    return Ok(Item::Compute(ComputeDecl {
                        docs,
                        pattern,
                        params: Vec::new(),
                        switch: Some((attr, arms)),
                        span: start.join(self.prev_span()),
                    }));
                }
                Ok(Item::Compute(self.compute_body(docs, start, pattern)?))
            }
            other => {
                let d = self.expected("an item (`input`, `output`, `attr`, `enum`, `rules`, `support`, `compute`, ...)");
                Err(
                    match crate::diag::near_miss(other, ITEM_KEYWORDS.iter().copied()) {
                        Some(m) => d.help(format!("did you mean `{m}`?")),
                        None => d,
                    },
                )
            }
        }
    }

    /// `{ key: value ... }` of a compute block whose pattern name is read.
    fn compute_body(
        &mut self,
        docs: Vec<String>,
        start: Span,
        pattern: Name,
    ) -> PResult<ComputeDecl> {
        self.expect_punct("{")?;
        let mut params = Vec::new();
        while !self.eat_punct("}") {
            let key = self.name("a parameter name")?;
            self.expect_punct(":")?;
            let value = if matches!(self.peek(), Tok::Ident(_))
                && matches!(self.peek_at(1), Tok::Punct("{"))
            {
                let attr = self.name("")?;
                self.bump();
                let mut pairs = Vec::new();
                while !self.eat_punct("}") {
                    let m = self.name("an enum member")?;
                    self.expect_punct(":")?;
                    let v = self.name("a value")?;
                    pairs.push((m, v));
                    if !self.eat_punct(",") {
                        self.expect_punct("}")?;
                        break;
                    }
                }
                ParamValue::Map(attr, pairs)
            } else {
                ParamValue::Expr(self.expr()?)
            };
            params.push(Param { key, value });
        }
        Ok(ComputeDecl {
            docs,
            pattern,
            params,
            switch: None,
            span: start.join(self.prev_span()),
        })
    }

    fn level(&mut self) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Decimal(d) => Ok((d, self.bump().span)),
            _ => Err(self.expected("a feature level such as `3.0`")),
        }
    }

    fn range(&mut self) -> PResult<RangeLit> {
        let start = self.span();
        let lo = self.int_lit()?;
        let hi = if self.eat_punct("..=") {
            self.int_lit()?
        } else {
            lo
        };
        Ok(RangeLit {
            lo,
            hi,
            span: start.join(self.prev_span()),
        })
    }

    fn int_lit(&mut self) -> PResult<i128> {
        match self.peek() {
            Tok::Int(v) => {
                let v = *v;
                self.bump();
                Ok(v)
            }
            _ => Err(self.expected("an integer")),
        }
    }

    fn rule(&mut self) -> PResult<RuleDecl> {
        let start = self.span();
        if self.eat_kw("let") {
            let name = self.name("a name")?;
            self.expect_punct("=")?;
            let e = self.expr()?;
            self.expect_punct(";")?;
            return Ok(RuleDecl::Let(name, e));
        }
        if self.eat_kw("require") {
            let e = self.expr()?;
            self.expect_punct("=>")?;
            let msg = self.string("the rule's message in the seed's words")?;
            self.expect_punct(";")?;
            return Ok(RuleDecl::Require(e, msg, start.join(self.prev_span())));
        }
        if self.eat_kw("for") {
            let mut var = self.name("a name for each tensor")?;
            let mut index = None;
            if self.eat_punct(",") {
                index = Some(var);
                var = self.name("a name for each tensor")?;
            }
            self.expect_kw("in")?;
            let list = self.name("a variadic tensor list")?;
            self.expect_punct("{")?;
            let mut body = Vec::new();
            while !self.eat_punct("}") {
                body.push(self.rule()?);
            }
            return Ok(RuleDecl::For(
                index,
                var,
                list,
                body,
                start.join(self.prev_span()),
            ));
        }
        for kw in ["shape", "dtype"] {
            if self.eat_kw(kw) {
                let name = self.name("an output tensor")?;
                self.expect_punct("=")?;
                let e = self.expr()?;
                self.expect_punct("=>")?;
                let msg = self.string("the rule's message in the seed's words")?;
                self.expect_punct(";")?;
                let span = start.join(self.prev_span());
                return Ok(if kw == "shape" {
                    RuleDecl::Shape(name, e, msg, span)
                } else {
                    RuleDecl::DType(name, e, msg, span)
                });
            }
        }
        Err(self.expected("a rule (`require`, `let`, `shape`, `dtype`, `for`)"))
    }

    fn entry(&mut self) -> PResult<EntryDecl> {
        let start = self.span();
        let level = if self.eat_kw("level") {
            Some(self.level()?)
        } else {
            None
        };
        let ranks = if self.eat_kw("ranks") {
            Some(self.range()?)
        } else {
            None
        };
        if level.is_none() && ranks.is_none() {
            return Err(self.expected("`level` or `ranks` starting a support entry"));
        }
        self.expect_punct("{")?;
        let mut rows = Vec::new();
        while !self.eat_punct("}") {
            let row_start = self.span();
            let tensor = self.name("a tensor name")?;
            self.expect_punct(":")?;
            let mut dtypes = Vec::new();
            let mut ranks = None;
            loop {
                if self.eat_punct(";") {
                    break;
                }
                if self.eat_kw("ranks") {
                    ranks = Some(self.range()?);
                    continue;
                }
                dtypes.push(self.name("a data type or `;`")?);
            }
            rows.push(RowDecl {
                tensor,
                dtypes,
                ranks,
                span: row_start.join(self.prev_span()),
            });
        }
        Ok(EntryDecl {
            when: None,
            level,
            ranks,
            rows,
            span: start.join(self.prev_span()),
        })
    }

    // ---- expressions, lowest precedence first ----

    fn expr(&mut self) -> PResult<Expr> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> PResult<Expr> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["==", "!=", "<", "<=", ">", ">="],
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["++"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Tok::Punct(p) if LEVELS[level].contains(p) => *p,
                _ => break,
            };
            self.bump();
            let rhs = self.binary(level + 1)?;
            let span = lhs.span.join(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
            if level == 2 {
                break;
            }
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        for op in ["-", "!", "~"] {
            if self.eat_punct(op) {
                let e = self.unary()?;
                let span = start.join(e.span);
                return Ok(Expr {
                    kind: ExprKind::Unary(op, Box::new(e)),
                    span,
                });
            }
        }
        self.postfix()
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            if self.eat_punct(".") {
                let field = self.name("a field name (`sizes`)")?;
                let span = e.span.join(field.span);
                e = Expr {
                    kind: ExprKind::Field(Box::new(e), field),
                    span,
                };
            } else if self.eat_punct("[") {
                let a = self.expr()?;
                if self.eat_punct("..") {
                    let b = self.expr()?;
                    let end = self.expect_punct("]")?;
                    let span = e.span.join(end);
                    e = Expr {
                        kind: ExprKind::Slice(Box::new(e), Box::new(a), Box::new(b)),
                        span,
                    };
                } else {
                    let end = self.expect_punct("]")?;
                    let span = e.span.join(end);
                    e = Expr {
                        kind: ExprKind::Index(Box::new(e), Box::new(a)),
                        span,
                    };
                }
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Int(v),
                    span: start,
                })
            }
            Tok::Decimal(d) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Decimal(d),
                    span: start,
                })
            }
            Tok::Punct("(") => {
                self.bump();
                let mut e = self.expr()?;
                let end = self.expect_punct(")")?;
                e.span = start.join(end);
                Ok(e)
            }
            Tok::Punct("[") => {
                self.bump();
                if self.eat_kw("for") {
                    let var = self.name("a loop variable")?;
                    self.expect_kw("in")?;
                    let lo = self.binary(3)?;
                    self.expect_punct("..")?;
                    let hi = self.binary(3)?;
                    let filter = if self.eat_kw("if") {
                        Some(Box::new(self.expr()?))
                    } else {
                        None
                    };
                    self.expect_punct(":")?;
                    let body = self.expr()?;
                    let end = self.expect_punct("]")?;
                    return Ok(Expr {
                        kind: ExprKind::ListFor(
                            var,
                            Box::new(lo),
                            Box::new(hi),
                            filter,
                            Box::new(body),
                        ),
                        span: start.join(end),
                    });
                }
                let mut items = Vec::new();
                while !self.is_punct("]") {
                    items.push(self.expr()?);
                    if !self.eat_punct(",") {
                        break;
                    }
                }
                let end = self.expect_punct("]")?;
                Ok(Expr {
                    kind: ExprKind::List(items),
                    span: start.join(end),
                })
            }
            Tok::Ident(id) => {
                match id.as_str() {
                    "true" | "false" => {
                        self.bump();
                        return Ok(Expr {
                            kind: ExprKind::Bool(id == "true"),
                            span: start,
                        });
                    }
                    "if" => {
                        self.bump();
                        let c = self.expr()?;
                        self.expect_punct("{")?;
                        let a = self.expr()?;
                        self.expect_punct("}")?;
                        self.expect_kw("else")?;
                        self.expect_punct("{")?;
                        let b = self.expr()?;
                        let end = self.expect_punct("}")?;
                        return Ok(Expr {
                            kind: ExprKind::If(Box::new(c), Box::new(a), Box::new(b)),
                            span: start.join(end),
                        });
                    }
                    "all" if matches!(self.peek_at(1), Tok::Punct("(")) => {
                        self.bump();
                        self.bump();
                        let var = self.name("a loop variable")?;
                        self.expect_kw("in")?;
                        let lo = self.binary(3)?;
                        self.expect_punct("..")?;
                        let hi = self.binary(3)?;
                        self.expect_punct(":")?;
                        let body = self.expr()?;
                        let end = self.expect_punct(")")?;
                        return Ok(Expr {
                            kind: ExprKind::All(var, Box::new(lo), Box::new(hi), Box::new(body)),
                            span: start.join(end),
                        });
                    }
                    _ => {}
                }
                let max_form = matches!(self.peek_at(2), Tok::Ident(m) if m == "max")
                    && matches!(self.peek_at(3), Tok::Punct("("));
                if id == "cast"
                    && matches!(self.peek_at(1), Tok::Punct("<"))
                    && matches!(self.peek_at(2), Tok::Ident(_))
                    && (max_form || matches!(self.peek_at(3), Tok::Punct(">")))
                {
                    // `cast<TYPE>(e)` and `cast<max(T, FLOAT32)>(e)`;
                    // `cast < x` stays a comparison.
                    self.bump();
                    self.bump();
                    let ty = if max_form {
                        let first = self.bump().span;
                        self.expect_punct("(")?;
                        let a = self.name("a type parameter (`T`)")?;
                        self.expect_punct(",")?;
                        let b = self.name("a float data type (`FLOAT32`)")?;
                        let last = self.expect_punct(")")?;
                        CastType::Max(a, b, first.join(last))
                    } else {
                        CastType::Name(self.name("a data type (`FLOAT32`) or `T`")?)
                    };
                    self.expect_punct(">")?;
                    self.expect_punct("(")?;
                    let e = self.expr()?;
                    let end = self.expect_punct(")")?;
                    return Ok(Expr {
                        kind: ExprKind::Cast(ty, Box::new(e)),
                        span: start.join(end),
                    });
                }
                let name = self.name("")?;
                if self.eat_punct("(") {
                    let mut args = Vec::new();
                    while !self.is_punct(")") {
                        args.push(self.expr()?);
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                    let end = self.expect_punct(")")?;
                    return Ok(Expr {
                        kind: ExprKind::Call(name, args),
                        span: start.join(end),
                    });
                }
                Ok(Expr {
                    kind: ExprKind::Name(name.text),
                    span: start,
                })
            }
            _ => Err(self.expected("an expression")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_an_operator() {
        let src = r#"
/// Doc.
operator X {
    introduced 3.0
    input input: tensor "InputTensor"
    output output: tensor "OutputTensor"
    attr axes: u32[] "Axes"
    enum Dir { A, B }
    rules {
        require all(i in 0..len(axes): axes[i] < rank(input)) => "in range";
        let q = input.sizes[rank(input) - 1];
        shape output = [for d in 0..rank(input) if !contains(axes, d): input.sizes[d]] ++ [1] => "sizes";
    }
    support {
        level 3.0 ranks 1..=8 { input: FLOAT32 FLOAT16; output: UINT32 ranks 1..=4; }
    }
    compute reduce { input: input  ties: dir { A: first, B: last } }
}
"#;
        let mut e = Errors::default();
        let f = parse_spec(src, &mut e);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(f.docs, vec!["Doc."]);
        assert_eq!(f.items.len(), 8);
    }

    #[test]
    fn reports_several_errors_in_one_pass() {
        let src =
            "operator X {\n  input a: tensr\n  attr b u32\n  rules { require 1 < => \"m\"; }\n}\n";
        let mut e = Errors::default();
        parse_spec(src, &mut e);
        assert!(e.into_vec().len() >= 3);
    }
}
