//! A fake catalog for testing the case reader and the runner without the
//! generated operators.
//!
//! `Fake` copies `input` to `output`; its `mode` attribute makes it misbehave:
//! `copy`, `plus_one` (adds one to element 1), `index` (an index error),
//! `unsupported`, `device` (a device error), `panic`, `invalid` (fails
//! validation), `reject` (fails building with a validation error),
//! `bad_build` (fails building with an invalid-argument error). It is
//! valid from feature level 3.0. `Pair` has two inputs and two outputs.

use ops_core::__private::support::SupportTable;
use ops_core::{
    AttrInfo, AttrKind, AttrValue, DeviceClass, FeatureLevel, GpuPlan, HostTensor, OpArgs, OpError,
    Operator, OperatorInfo, TensorDesc, TensorInfo, ValidationError,
};

pub static FAKE: OperatorInfo = OperatorInfo {
    name: "Fake",
    instance: "",
    groups: &[],
    namespace: "",
    aliases: &["FakeAlias"],
    inputs: &["input"],
    outputs: &["output"],
    introduced: Some(FeatureLevel::FL3_0),
    kernels: &[],
    build: build_fake,
    tensors: &[
        TensorInfo {
            name: "input",
            seed: "InputTensor",
            output: false,
            host: false,
        },
        TensorInfo {
            name: "output",
            seed: "OutputTensor",
            output: true,
            host: false,
        },
    ],
    attrs: &[
        AttrInfo {
            name: "mode",
            seed: "Mode",
            kind: AttrKind::Enum(&[
                "COPY",
                "PLUS_ONE",
                "INDEX",
                "UNSUPPORTED",
                "DEVICE",
                "PANIC",
                "INVALID",
                "REJECT",
                "BAD_BUILD",
            ]),
            has_default: false,
        },
        AttrInfo {
            name: "axes",
            seed: "Axes",
            kind: AttrKind::List { signed: true },
            has_default: true,
        },
        AttrInfo {
            name: "empty",
            seed: "Empty",
            kind: AttrKind::List { signed: false },
            has_default: true,
        },
        AttrInfo {
            name: "keep",
            seed: "Keep",
            kind: AttrKind::Bool,
            has_default: true,
        },
        AttrInfo {
            name: "count",
            seed: "Count",
            kind: AttrKind::Int { signed: true },
            has_default: true,
        },
        AttrInfo {
            name: "n",
            seed: "N",
            kind: AttrKind::Int { signed: true },
            has_default: true,
        },
        AttrInfo {
            name: "size",
            seed: "Size",
            kind: AttrKind::Int { signed: false },
            has_default: true,
        },
    ],
    table: &FAKE_TABLE,
    rules: &[],
    strided_inputs: false,
};

static FAKE_TABLE: SupportTable = SupportTable {
    operator: "Fake",
    selector: None,
    introduced: Some(FeatureLevel::FL3_0),
    entries: &[],
    tensor_names: &["input", "output"],
    seed_names: &["InputTensor", "OutputTensor"],
};

pub static PAIR: OperatorInfo = OperatorInfo {
    name: "Pair",
    instance: "",
    groups: &[],
    namespace: "",
    aliases: &[],
    inputs: &["first", "second"],
    outputs: &["low", "high"],
    introduced: None,
    kernels: &[],
    build: build_pair,
    tensors: &[],
    attrs: &[],
    table: &PAIR_TABLE,
    rules: &[],
    strided_inputs: false,
};

static PAIR_TABLE: SupportTable = SupportTable {
    operator: "Pair",
    selector: None,
    introduced: None,
    entries: &[],
    tensor_names: &["first", "second", "low", "high"],
    seed_names: &["First", "Second", "Low", "High"],
};

pub static CATALOG: [&OperatorInfo; 2] = [&FAKE, &PAIR];

pub fn catalog() -> &'static [&'static OperatorInfo] {
    &CATALOG
}

#[derive(Debug)]
pub struct FakeOp {
    mode: String,
    input: TensorDesc,
    output: TensorDesc,
}

fn tensor(args: &OpArgs, name: &str) -> Result<TensorDesc, OpError> {
    args.tensors
        .get(name)
        .cloned()
        .ok_or_else(|| OpError::InvalidArgument(format!("missing tensor `{name}`")))
}

fn build_fake(args: &OpArgs) -> Result<Box<dyn Operator>, OpError> {
    let mode = match args.attributes.get("mode") {
        Some(AttrValue::Enum(m)) => m.clone(),
        Some(other) => {
            return Err(OpError::InvalidArgument(format!(
                "attribute `mode` should be an enum, got {other:?}"
            )))
        }
        None => return Err(OpError::InvalidArgument("missing attribute `mode`".into())),
    };
    if mode == "bad_build" {
        return Err(OpError::InvalidArgument("the fake builder refuses".into()));
    }
    if mode == "reject" {
        return Err(OpError::Validation(ValidationError {
            operator: "Fake",
            rule: "mode must not be `reject`".into(),
            detail: "it is".into(),
        }));
    }
    Ok(Box::new(FakeOp {
        mode,
        input: tensor(args, "input")?,
        output: tensor(args, "output")?,
    }))
}

impl Operator for FakeOp {
    fn info(&self) -> &'static OperatorInfo {
        &FAKE
    }
    fn validate(&self, level: FeatureLevel) -> Result<(), ValidationError> {
        let fail = |rule: &str, detail: String| ValidationError {
            operator: "Fake",
            rule: rule.into(),
            detail,
        };
        if level < FeatureLevel::FL3_0 {
            return Err(fail("Fake needs feature level 3.0", format!("got {level}")));
        }
        if self.mode == "invalid" {
            return Err(fail("mode must not be `invalid`", "it is".into()));
        }
        if self.input != self.output {
            return Err(fail(
                "OutputTensor must match InputTensor",
                format!("{:?} vs {:?}", self.output, self.input),
            ));
        }
        Ok(())
    }
    fn min_feature_level(&self) -> Option<FeatureLevel> {
        Some(FeatureLevel::FL3_0)
    }
    fn input_descs(&self) -> Vec<TensorDesc> {
        vec![self.input.clone()]
    }
    fn output_descs(&self) -> Vec<TensorDesc> {
        vec![self.output.clone()]
    }
    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        match self.mode.as_str() {
            "index" => Err(OpError::IndexOutOfRange {
                tensor: "input".into(),
                position: vec![0],
                value: 9,
                low: 0,
                high: 1,
            }),
            "unsupported" => Err(OpError::Unsupported("no such thing".into())),
            "device" => Err(OpError::Device("lost".into())),
            "panic" => panic!("the fake operator panicked"),
            "plus_one" => {
                let mut bytes = inputs[0].bytes().to_vec();
                bytes[inputs[0].dtype().size_bytes()] += 1;
                Ok(vec![HostTensor::from_bytes(self.output.clone(), bytes)?])
            }
            _ => Ok(vec![inputs[0].clone()]),
        }
    }
    fn gpu_plan_for(&self, _: DeviceClass) -> Result<GpuPlan, OpError> {
        Err(OpError::Unsupported(
            "the fake operator has no GPU plan".into(),
        ))
    }
    fn index_error(&self, _: &[&HostTensor], _: usize, _: u64) -> OpError {
        OpError::InvalidArgument("no index checks".into())
    }
}

#[derive(Debug)]
pub struct PairOp {
    descs: [TensorDesc; 4],
}

fn build_pair(args: &OpArgs) -> Result<Box<dyn Operator>, OpError> {
    Ok(Box::new(PairOp {
        descs: [
            tensor(args, "first")?,
            tensor(args, "second")?,
            tensor(args, "low")?,
            tensor(args, "high")?,
        ],
    }))
}

impl Operator for PairOp {
    fn info(&self) -> &'static OperatorInfo {
        &PAIR
    }
    fn validate(&self, _: FeatureLevel) -> Result<(), ValidationError> {
        Ok(())
    }
    fn min_feature_level(&self) -> Option<FeatureLevel> {
        None
    }
    fn input_descs(&self) -> Vec<TensorDesc> {
        self.descs[..2].to_vec()
    }
    fn output_descs(&self) -> Vec<TensorDesc> {
        self.descs[2..].to_vec()
    }
    /// Outputs the inputs in the order given (so a test sees the order).
    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        Ok(inputs.iter().map(|t| (*t).clone()).collect())
    }
    fn gpu_plan_for(&self, _: DeviceClass) -> Result<GpuPlan, OpError> {
        Err(OpError::Unsupported("no GPU plan".into()))
    }
    fn index_error(&self, _: &[&HostTensor], _: usize, _: u64) -> OpError {
        OpError::InvalidArgument("no index checks".into())
    }
}

/// Parses `text` as file `t.json` against the fake catalog.
pub fn parse(text: &str) -> Result<Vec<crate::case::Case>, crate::case::CaseErrors> {
    crate::case::parse_cases("t.json", text.as_bytes(), catalog())
}

/// The single error message of a bad `text`; panics when it parses or has several.
pub fn one_error(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("expected an error for {text}"),
        Err(e) => {
            assert_eq!(e.errors.len(), 1, "expected one error, got:\n{e}");
            e.errors[0].to_string()
        }
    }
}
