//! Spec-file tokens.

use crate::diag::{Errors, Span};

/// A token kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// An integer literal.
    Int(i128),
    /// A decimal number such as `3.0` (feature levels).
    Decimal(String),
    /// A string literal (unescaped).
    Str(String),
    /// A `///` doc comment line (without the slashes and one leading space).
    Doc(String),
    /// Punctuation.
    Punct(&'static str),
    /// End of file.
    Eof,
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The kind.
    pub tok: Tok,
    /// The span.
    pub span: Span,
}

const PUNCTS: &[&str] = &[
    "..=", "=>", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "++", "..", "{", "}", "(", ")",
    "[", "]", ":", ";", ",", "=", "<", ">", "+", "-", "*", "/", "%", "!", ".", "&", "|", "^", "~",
];

/// Splits a spec file into tokens, recording every bad character.
pub fn lex(src: &str, errors: &mut Errors) -> Vec<Token> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if src[i..].starts_with("///") && !src[i..].starts_with("////") {
            let end = src[i..].find('\n').map_or(src.len(), |n| i + n);
            let text = &src[i + 3..end];
            let text = text.strip_prefix(' ').unwrap_or(text);
            out.push(Token {
                tok: Tok::Doc(text.to_string()),
                span: Span::new(i, end),
            });
            i = end;
            continue;
        }
        if src[i..].starts_with("//") {
            i = src[i..].find('\n').map_or(src.len(), |n| i + n);
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(src[start..i].to_string()),
                span: Span::new(start, i),
            });
            continue;
        }
        if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                out.push(Token {
                    tok: Tok::Decimal(src[start..i].to_string()),
                    span: Span::new(start, i),
                });
                continue;
            }
            let span = Span::new(start, i);
            match src[start..i].parse::<i128>() {
                Ok(v) => out.push(Token {
                    tok: Tok::Int(v),
                    span,
                }),
                Err(_) => errors.error(span, "integer literal is too large"),
            }
            continue;
        }
        if c == b'"' {
            i += 1;
            let mut text = String::new();
            let mut closed = false;
            while i < bytes.len() {
                let ch = src[i..].chars().next().unwrap_or('\0');
                match ch {
                    '"' => {
                        i += 1;
                        closed = true;
                        break;
                    }
                    '\\' if i + 1 < bytes.len() => {
                        let next = src[i + 1..].chars().next().unwrap_or('\0');
                        text.push(match next {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                        i += 1 + next.len_utf8();
                    }
                    '\n' => break,
                    _ => {
                        text.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            let span = Span::new(start, i);
            if closed {
                out.push(Token {
                    tok: Tok::Str(text),
                    span,
                });
            } else {
                errors.error(span, "unterminated string literal");
            }
            continue;
        }
        if let Some(p) = PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
            i += p.len();
            out.push(Token {
                tok: Tok::Punct(p),
                span: Span::new(start, i),
            });
            continue;
        }
        let ch = src[i..].chars().next().unwrap_or('\0');
        i += ch.len_utf8().max(1);
        errors.error(Span::new(start, i), format!("unexpected character `{ch}`"));
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(src.len(), src.len()),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let mut e = Errors::default();
        let t = lex(
            "/// doc\nlevel 3.0 ranks 1..=8 { x: \"A\\\"b\" } // c\n",
            &mut e,
        );
        assert!(e.is_empty());
        let kinds: Vec<Tok> = t.into_iter().map(|t| t.tok).collect();
        assert_eq!(kinds[0], Tok::Doc("doc".into()));
        assert_eq!(kinds[2], Tok::Decimal("3.0".into()));
        assert_eq!(kinds[4], Tok::Int(1));
        assert_eq!(kinds[5], Tok::Punct("..="));
        assert_eq!(kinds[10], Tok::Str("A\"b".into()));
    }
}
