//! Writing cases as case files, through serde_json: `ops fuzz` writes its
//! failures this way, `ops run --json` its produced outputs.
//!
//! The layout is serde_json's with a [`Layout`] formatter: the outer
//! containers one member per line, each tensor object and every array of
//! data on one line, so that a file of large tensors stays readable.
//!
//! serde_json writes the numbers, except tensor elements: those are written
//! from [`format_element`]'s text (kept exact by serde_json's
//! `arbitrary_precision`), since serde_json has no FLOAT16 (an element
//! widened to `f64` would print as `0.0999755859375`, not `0.09998`) and
//! would write NaN and the infinities as `null`.

use std::collections::BTreeMap;
use std::io;
use std::str::FromStr;

use ops_core::{AttrValue, DataType, FeatureLevel, HostTensor, TensorDesc, Tolerance};
use serde::ser::SerializeMap;
use serde::Serialize;
use serde_json::ser::Formatter;
use serde_json::{Number, Value};

use super::{format_element, Case, ExpectedError};

/// A case as a case-file object, with its keys in the order a reader of
/// the file expects them (`name`, `op`, ..., `inputs`, `outputs`, then
/// the extra keys).
#[derive(Debug, Serialize)]
pub struct CaseJson {
    name: String,
    op: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    feature_level: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expect_error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expect_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtol: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    atol: Option<f64>,
    attributes: BTreeMap<String, Value>,
    inputs: Members<TensorJson>,
    outputs: Members<TensorJson>,
    #[serde(flatten)]
    extra: Members<String>,
}

/// A JSON object whose members keep the given order (serde_json's own map
/// sorts them).
#[derive(Debug)]
struct Members<T>(Vec<(String, T)>);

impl<T: Serialize> Serialize for Members<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A case-file tensor object: a description, with data when it has some.
#[derive(Debug, Serialize)]
struct TensorJson {
    dtype: &'static str,
    shape: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strides: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Vec<Value>>,
}

impl TensorJson {
    fn desc(desc: &TensorDesc) -> TensorJson {
        TensorJson {
            dtype: desc.dtype.case_name(),
            shape: desc.sizes.clone(),
            strides: desc.strides.clone(),
            data: None,
        }
    }

    fn tensor(t: &HostTensor) -> TensorJson {
        TensorJson {
            data: Some((0..t.len()).map(|i| element(t, i)).collect()),
            ..TensorJson::desc(t.desc())
        }
    }
}

/// Element `i` of `t`: booleans as JSON booleans, NaN and the infinities as
/// the strings the reader takes, other numbers as [`format_element`] spells
/// them (integers exactly, floats with the shortest digits that round-trip
/// in their own type).
fn element(t: &HostTensor, i: usize) -> Value {
    if t.dtype() == DataType::Bool {
        return Value::Bool(t.get::<bool>(i));
    }
    let text = format_element(t, i);
    match Number::from_str(&text) {
        Ok(n) => Value::Number(n),
        // `NaN`, `Infinity`, `-Infinity`.
        Err(_) => Value::String(text),
    }
}

fn attr(value: &AttrValue) -> Value {
    match value {
        AttrValue::Int(i) => Value::from(*i),
        AttrValue::Ints(v) => Value::from(v.clone()),
        AttrValue::Bool(b) => Value::Bool(*b),
        // serde_json writes the shortest digits that round-trip, with a
        // decimal point, so the value reads back as a float.
        AttrValue::Float(f) => Value::from(*f),
        AttrValue::Enum(s) => Value::String(s.clone()),
    }
}

impl Case {
    /// The case as a case-file object (see [`Case::to_json`]).
    pub fn json(&self, produced: Option<&[HostTensor]>, extra: &[(&str, &str)]) -> CaseJson {
        let (rtol, atol) = match self.tolerance {
            Some(Tolerance::Close { rtol, atol }) => (Some(rtol), Some(atol)),
            _ => (None, None),
        };
        CaseJson {
            name: self.name.clone(),
            op: self.op.clone(),
            feature_level: self.feature_level.map(|l: FeatureLevel| l.to_string()),
            expect_error: self.expect_error.map(ExpectedError::as_str),
            expect_message: self.expect_message.clone(),
            rtol,
            atol,
            attributes: self
                .attributes
                .iter()
                .map(|(k, v)| (k.clone(), attr(v)))
                .collect(),
            inputs: Members(
                self.inputs
                    .iter()
                    .map(|i| (i.name.clone(), TensorJson::tensor(&i.tensor)))
                    .collect(),
            ),
            outputs: Members(
                self.outputs
                    .iter()
                    .enumerate()
                    .map(|(k, o)| {
                        let body = match produced.and_then(|p| p.get(k)) {
                            Some(t) => TensorJson::tensor(t),
                            None => TensorJson::desc(&o.desc),
                        };
                        (o.name.clone(), body)
                    })
                    .collect(),
            ),
            extra: Members(
                extra
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
        }
    }

    /// The case as a pretty-printed JSON case object.
    ///
    /// `produced` replaces the outputs' data (`None` writes the outputs'
    /// descriptions without data); `extra` adds string-valued top-level keys
    /// after the standard ones (`backend`, `error`), which readers ignore. The
    /// text reads back as the same case: floats are written with the
    /// shortest digits that round-trip, NaN and the infinities as strings.
    pub fn to_json(&self, produced: Option<&[HostTensor]>, extra: &[(&str, &str)]) -> String {
        to_string(&self.json(produced, extra), 2)
    }
}

/// A tensor as a case-file tensor object, `{"dtype": ..., "shape": ..., "data": [...]}`,
/// on one line.
#[cfg(test)]
pub fn tensor_to_json(t: &HostTensor) -> String {
    to_string(&TensorJson::tensor(t), 0)
}

/// Case objects as a JSON array, one case after the other (`ops run --json`).
pub fn write_cases(out: impl io::Write, cases: &[CaseJson]) -> io::Result<()> {
    write(out, &cases, 3)
}

fn to_string(value: &impl Serialize, lines: usize) -> String {
    let mut buf = Vec::new();
    write(&mut buf, value, lines).expect("writing JSON to memory cannot fail");
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

/// `value` with the first `lines` levels of objects (and an outermost
/// array) one member per line, the rest on one line.
fn write(out: impl io::Write, value: &impl Serialize, lines: usize) -> io::Result<()> {
    let layout = Layout {
        lines,
        open: Vec::new(),
    };
    let mut serializer = serde_json::Serializer::with_formatter(out, layout);
    value.serialize(&mut serializer).map_err(io::Error::from)
}

/// serde_json's formatter for case files: containers less than `lines`
/// deep one member per line (objects, and the outermost array), deeper
/// ones on one line with `, ` and `: ` between members.
struct Layout {
    lines: usize,
    /// Per open container: one member per line, and whether it has members.
    open: Vec<(bool, bool)>,
}

impl Layout {
    fn open(
        &mut self,
        w: &mut (impl io::Write + ?Sized),
        object: bool,
        bracket: &[u8],
    ) -> io::Result<()> {
        let depth = self.open.len();
        let by_line = depth < self.lines && (object || depth == 0);
        self.open.push((by_line, false));
        w.write_all(bracket)
    }

    fn member(&mut self, w: &mut (impl io::Write + ?Sized), first: bool) -> io::Result<()> {
        let depth = self.open.len();
        let Some((by_line, has)) = self.open.last_mut() else {
            return Ok(());
        };
        *has = true;
        if !first {
            w.write_all(b",")?;
        }
        if *by_line {
            w.write_all(b"\n")?;
            w.write_all("  ".repeat(depth).as_bytes())
        } else if !first {
            w.write_all(b" ")
        } else {
            Ok(())
        }
    }

    fn close(&mut self, w: &mut (impl io::Write + ?Sized), bracket: &[u8]) -> io::Result<()> {
        if let Some((true, true)) = self.open.pop() {
            w.write_all(b"\n")?;
            w.write_all("  ".repeat(self.open.len()).as_bytes())?;
        }
        w.write_all(bracket)
    }
}

impl Formatter for Layout {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, false, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.member(w, first)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, true, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.member(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_puts_outer_members_on_lines_and_tensors_on_one() {
        let doc = serde_json::json!({"a": {"t": {"data": [1, 2]}, "u": []}, "b": {}});
        assert_eq!(
            to_string(&doc, 2),
            "{\n  \"a\": {\n    \"t\": {\"data\": [1, 2]},\n    \"u\": []\n  },\n  \"b\": {}\n}"
        );
        assert_eq!(to_string(&[1, 2], 3), "[\n  1,\n  2\n]");
        assert_eq!(to_string(&Vec::<u8>::new(), 3), "[]");
    }
}
