//! Variadic operators past their widest instance.
//!
//! A spec's variadic list (`input data: tensor[1..=7]`) is compiled once
//! per count, up to what one kernel binds (seven inputs and the output are
//! core WebGPU's eight storage buffers per stage); ONNX's lists have no
//! upper bound. A call with more tensors than the widest instance runs as a
//! chain of catalog calls ([`Chain`]) whose answer is, bit for bit, the
//! spec's value of the single call:
//!
//! - A left fold (Max, Min, Sum of FLOAT32 and FLOAT64, and Concat): the
//!   first call takes as many tensors as it can and writes a partial
//!   result, each next one takes the running partial as its first input
//!   and as many further tensors as fit, and the last writes the output.
//!   `Max(a, ..., t)` is `Max(Max(Max(a, ..., g), h, ..., m), ...)`, so the
//!   spec's left-to-right order is kept exactly; Concat lays the partial
//!   out first, as the single call would.
//! - Sum of FLOAT16, whose spec adds in `f32` and rounds once: each input
//!   is cast to FLOAT32 (exact), the casts are summed as above (a FLOAT32
//!   partial is the single call's running `f32` sum), and one cast back to
//!   FLOAT16 rounds once.
//! - Mean (`sum(data) / count(data)`, one division at the end): the sum as
//!   Sum's chain in the spec's compute type (FLOAT32 for FLOAT16 and
//!   FLOAT32, FLOAT64 for FLOAT64), then Div by the count, then for FLOAT16
//!   the cast that rounds once. The count is a one-element tensor that Pad
//!   fills with its constant (the padded tensor, a scratch buffer, is
//!   cropped away).
//!
//! A variadic output list is chained the other way ([`OUTPUT_CHAINS`]):
//! Split into more parts than the widest instance writes cuts the first
//! parts and one rest, then cuts the rest again, each cut by explicit
//! lengths: `split`'s, or for equal parts (opset 18's `num_outputs`, or no
//! `split`) the spec's rule of the whole count, `ceil(dim / n)` each and the
//! last what remains.

use std::collections::BTreeMap;
use std::fmt;

use ops_core::{
    AttrValue, BufferRef, DataType, DeviceClass, FeatureLevel, GpuPlan, HostTensor, IndexBounds,
    OpArgs, OpError, Operator, OperatorInfo, OutputInit, TensorDesc, TensorGroup, Tolerance,
    ValidationError,
};

/// Operators (namespace, name) whose variadic input list a chain extends
/// (see the module documentation): a left fold (Sum, Max, Min), a
/// concatenation (Concat), or a sum and one division (Mean).
pub const LEFT_CHAINS: &[(&str, &str)] = &[
    ("onnx", "Sum"),
    ("onnx", "Max"),
    ("onnx", "Min"),
    ("onnx", "Mean"),
    ("onnx", "Concat"),
];

/// Operators (namespace, name) whose variadic output list may be chained:
/// the last output of a call is cut again by the next.
pub const OUTPUT_CHAINS: &[(&str, &str)] = &[("onnx", "Split")];

/// The variadic output list of `info` that a chain may extend: its last
/// output declaration, when it is a list and the operator is in
/// [`OUTPUT_CHAINS`].
pub fn chained_outputs(info: &OperatorInfo) -> Option<&'static TensorGroup> {
    let chains = OUTPUT_CHAINS
        .iter()
        .any(|&(ns, name)| info.namespace == ns && info.name == name);
    let last = info.groups.iter().rev().find(|g| g.output)?;
    (chains && last.max > 1).then_some(last)
}

/// The variadic input list of `info` that a chain may extend: its last
/// input declaration, when it is a list and the operator is in
/// [`LEFT_CHAINS`].
pub fn chained_group(info: &OperatorInfo) -> Option<&'static TensorGroup> {
    let chains = LEFT_CHAINS
        .iter()
        .any(|&(ns, name)| info.namespace == ns && info.name == name);
    let last = info.groups.iter().rev().find(|g| !g.output)?;
    (chains && last.max > 1).then_some(last)
}

/// The widest instance of `info`'s spec, when it chains a list: the one
/// a call with more tensors than any instance takes names.
pub fn widest(
    catalog: &[&'static OperatorInfo],
    info: &OperatorInfo,
) -> Option<&'static OperatorInfo> {
    let g = chained_group(info).or(chained_outputs(info))?;
    catalog.iter().copied().find(|i| {
        i.namespace == info.namespace
            && i.name == info.name
            && i.groups
                .iter()
                .any(|x| x.name == g.name && x.count == g.max)
    })
}

/// The input (or `output`) tensor names of a call of instance `info`:
/// its own, then, for a chained list, `data_7`, `data_8`, ... up to the
/// highest that `given` names (so that a missing one in between is
/// missing), as far as `given` could fill them.
pub fn tensor_names(info: &OperatorInfo, output: bool, given: &[&str]) -> Vec<String> {
    let own = if output { info.outputs } else { info.inputs };
    let mut names: Vec<String> = own.iter().map(|n| (*n).to_owned()).collect();
    let group = if output {
        chained_outputs(info)
    } else {
        chained_group(info)
    };
    if let Some(g) = group.filter(|g| g.count == g.max) {
        let prefix = format!("{}_", g.name);
        let highest = given
            .iter()
            .filter_map(|n| n.strip_prefix(&prefix)?.parse::<u32>().ok())
            .filter(|&k| k >= g.max && (k as usize) < g.max as usize + given.len())
            .max();
        if let Some(h) = highest {
            names.extend((g.max..=h).map(|k| format!("{prefix}{k}")));
        }
    }
    names
}

/// The instance of the spec `namespace::name` whose list `group` has
/// `count` tensors.
fn find(namespace: &str, name: &str, group: &str, count: u32) -> Option<&'static OperatorInfo> {
    ops::catalog().iter().copied().find(|i| {
        i.namespace == namespace
            && i.name == name
            && i.groups.iter().any(|g| g.name == group && g.count == count)
    })
}

/// The instance of `info`'s spec whose list `group` has `count` tensors.
fn instance(info: &OperatorInfo, group: &str, count: u32) -> Option<&'static OperatorInfo> {
    find(info.namespace, info.name, group, count)
}

/// The ONNX operator `name` of the catalog (one without lists: Cast, Div,
/// Pad, Reshape), which a chain calls.
fn onnx(name: &str) -> Result<&'static OperatorInfo, OpError> {
    ops::catalog()
        .iter()
        .copied()
        .find(|i| i.namespace == "onnx" && i.name == name && i.groups.is_empty())
        .ok_or_else(|| {
            OpError::Unsupported(format!(
                "a chain calls onnx::{name}, which the catalog lacks"
            ))
        })
}

/// How many tensors of list `group` `args` gives: `group_0`, `group_1`, ...
fn given(args: &OpArgs, group: &str) -> usize {
    (0..)
        .take_while(|k| args.tensors.contains_key(&format!("{group}_{k}")))
        .count()
}

/// Builds the descriptor of `info` from `args`: the instance's own when
/// the args' list fits it, else a [`Chain`] of calls.
pub fn build(info: &'static OperatorInfo, args: &OpArgs) -> Result<Box<dyn Operator>, OpError> {
    if let Some(group) = chained_outputs(info) {
        let n = given(args, group.name);
        if n > group.max as usize {
            return Chain::split(info, group, n, args).map(|c| Box::new(c) as Box<dyn Operator>);
        }
    }
    let Some(group) = chained_group(info) else {
        return (info.build)(args);
    };
    let n = given(args, group.name);
    if n <= group.max as usize {
        return match instance(info, group.name, n as u32) {
            Some(i) => (i.build)(args),
            None => (info.build)(args),
        };
    }
    Chain::left(info, group, n, args).map(|c| Box::new(c) as Box<dyn Operator>)
}

/// Where a tensor of a chain's step lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// The chain's input `i`.
    Input(usize),
    /// The chain's output `i`.
    Output(usize),
    /// Partial result `i`, a scratch buffer on the GPU.
    Partial(usize),
    /// Host tensor `i` of the chain's own (a step's `split` lengths, Pad's
    /// pads and constant), which no GPU pass binds.
    Host(usize),
    /// Zero tensor `i`: on the GPU a scratch buffer that no step writes
    /// (scratch starts zeroed).
    Zeros(usize),
}

/// One catalog call of a chain.
#[derive(Debug)]
struct Step {
    op: Box<dyn Operator>,
    inputs: Vec<Slot>,
    outputs: Vec<Slot>,
}

/// A variadic operator's call as a chain of catalog calls (see the module
/// documentation).
pub struct Chain {
    /// The widest instance: the operator the chain stands for.
    info: &'static OperatorInfo,
    inputs: Vec<TensorDesc>,
    outputs: Vec<TensorDesc>,
    partials: Vec<TensorDesc>,
    /// The host tensors the steps read ([`Slot::Host`]).
    constants: Vec<HostTensor>,
    /// The zero tensors the steps read ([`Slot::Zeros`]).
    zeros: Vec<HostTensor>,
    /// The host data of each input the descriptor keeps (`split`).
    host: Vec<Option<HostTensor>>,
    /// The output's data type, when the caller names it rather than the
    /// output (it is then inferred).
    output_dtype: Option<DataType>,
    steps: Vec<Step>,
    /// The widest instance over the list's first tensors: the spec's own
    /// rules, tables and accuracy contract, for a chain whose steps are
    /// other operators (Cast, Div) or other types (FLOAT32 partials).
    probe: Option<Box<dyn Operator>>,
}

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chain")
            .field("operator", &self.info.qualified_name())
            .field("inputs", &self.inputs.len())
            .field("steps", &self.steps.len())
            .finish_non_exhaustive()
    }
}

/// A broken rule of the spec, in its words, found by the chain itself
/// (where no single call can check the whole list).
fn rule(info: &OperatorInfo, rule: &str, detail: String) -> OpError {
    OpError::Validation(ValidationError {
        operator: info.name,
        rule: rule.to_owned(),
        detail,
    })
}

/// ONNX's `TensorProto.DataType` of `dtype`, as Cast's `to` takes it.
fn onnx_type(dtype: DataType) -> i128 {
    match dtype {
        DataType::Float32 => 1,
        DataType::Uint8 => 2,
        DataType::Int8 => 3,
        DataType::Uint16 => 4,
        DataType::Int16 => 5,
        DataType::Int32 => 6,
        DataType::Int64 => 7,
        DataType::Bool => 9,
        DataType::Float16 => 10,
        DataType::Float64 => 11,
        DataType::Uint32 => 12,
        DataType::Uint64 => 13,
    }
}

impl Chain {
    /// An empty chain standing for `info`, over `inputs` and `outputs`.
    fn new(
        info: &'static OperatorInfo,
        inputs: Vec<TensorDesc>,
        outputs: Vec<TensorDesc>,
    ) -> Chain {
        Chain {
            info,
            host: vec![None; inputs.len()],
            inputs,
            outputs,
            partials: Vec::new(),
            constants: Vec::new(),
            zeros: Vec::new(),
            output_dtype: None,
            steps: Vec::new(),
            probe: None,
        }
    }

    fn desc(&self, slot: Slot) -> TensorDesc {
        match slot {
            Slot::Input(i) => self.inputs[i].clone(),
            Slot::Output(o) => self.outputs[o].clone(),
            Slot::Partial(p) => self.partials[p].clone(),
            Slot::Host(c) => self.constants[c].desc().clone(),
            Slot::Zeros(z) => self.zeros[z].desc().clone(),
        }
    }

    /// A host tensor of the chain's own, for a step to read.
    fn host_tensor(&mut self, t: HostTensor) -> Slot {
        self.constants.push(t);
        Slot::Host(self.constants.len() - 1)
    }

    /// Appends a call of `info` with `attributes`, its inputs named by
    /// `tensors` (every input of `info`, host ones as [`Slot::Host`]): its
    /// one output is the chain's output when `last`, else a new partial
    /// result, the slot returned.
    fn call(
        &mut self,
        info: &'static OperatorInfo,
        tensors: &[(&str, Slot)],
        attributes: BTreeMap<String, AttrValue>,
        last: bool,
    ) -> Result<Slot, OpError> {
        let mut args = OpArgs {
            attributes,
            ..OpArgs::default()
        };
        let mut inputs = Vec::with_capacity(info.inputs.len());
        for &name in info.inputs {
            let &(_, slot) = tensors.iter().find(|(n, _)| *n == name).ok_or_else(|| {
                OpError::InvalidArgument(format!(
                    "{}: a step of the chain gives {} no `{name}`",
                    self.info.qualified_name(),
                    info.instance_name()
                ))
            })?;
            if let Slot::Host(c) = slot {
                args.host_data
                    .insert(name.to_owned(), self.constants[c].clone());
            }
            args.tensors.insert(name.to_owned(), self.desc(slot));
            inputs.push(slot);
        }
        if last {
            let out = info.outputs[0].to_owned();
            if let Some(d) = self.outputs.first() {
                args.tensors.insert(out.clone(), d.clone());
            }
            if let Some(dtype) = self.output_dtype {
                args.output_dtypes.insert(out, dtype);
            }
        }
        let op = (info.build)(&args)?;
        let output = if last {
            Slot::Output(0)
        } else {
            let produced = op.output_descs();
            let desc = produced.into_iter().next().ok_or_else(|| self.broken())?;
            self.partials.push(desc);
            Slot::Partial(self.partials.len() - 1)
        };
        self.steps.push(Step {
            op,
            inputs,
            outputs: vec![output],
        });
        Ok(output)
    }

    /// Folds `items` from the left through the instances of `spec`'s list
    /// `group` with `attributes` (see the module documentation): the slot
    /// of the result, the chain's output when `last`.
    fn fold(
        &mut self,
        spec: &'static OperatorInfo,
        group: &TensorGroup,
        items: &[Slot],
        attributes: &BTreeMap<String, AttrValue>,
        last: bool,
    ) -> Result<Slot, OpError> {
        let widest = group.max as usize;
        let mut running: Option<Slot> = None;
        let mut next = 0;
        while next < items.len() || running.is_none() {
            // The running partial first, then as many items as fit.
            let mut slots: Vec<Slot> = running.into_iter().collect();
            let take = (widest - slots.len()).min(items.len() - next);
            slots.extend_from_slice(&items[next..next + take]);
            next += take;
            let count = slots.len() as u32;
            let step = instance(spec, group.name, count).ok_or_else(|| {
                OpError::Unsupported(format!(
                    "{}: no instance of {count} tensors",
                    spec.qualified_name()
                ))
            })?;
            let names: Vec<String> = (0..slots.len())
                .map(|k| format!("{}_{k}", group.name))
                .collect();
            let tensors: Vec<(&str, Slot)> = names
                .iter()
                .map(String::as_str)
                .zip(slots.iter().copied())
                .collect();
            let done = next == items.len();
            running = Some(self.call(step, &tensors, attributes.clone(), last && done)?);
        }
        running.ok_or_else(|| self.broken())
    }

    /// Casts each of `items` to FLOAT32, exactly for FLOAT16 (its values
    /// are all FLOAT32 values).
    fn widen(&mut self, items: &[Slot]) -> Result<Vec<Slot>, OpError> {
        let cast = onnx("Cast")?;
        let to = BTreeMap::from([("to".to_owned(), AttrValue::Int(1))]);
        items
            .iter()
            .map(|&s| self.call(cast, &[("input", s)], to.clone(), false))
            .collect()
    }

    /// A tensor of the value `n` of `dtype` (FLOAT32 or FLOAT64) of shape
    /// `[1]`, or `[]` to divide a `rank` 0 sum: Pad's constant around a
    /// cropped-away zero.
    fn count(&mut self, n: usize, dtype: DataType, rank: usize) -> Result<Slot, OpError> {
        let value = match dtype {
            DataType::Float64 => HostTensor::from_slice([1], &[n as f64])?,
            _ => HostTensor::from_slice([1], &[n as f32])?,
        };
        self.zeros
            .push(HostTensor::zeros(TensorDesc::new(dtype, [1]))?);
        let zero = Slot::Zeros(self.zeros.len() - 1);
        let pads = self.host_tensor(HostTensor::from_slice([2], &[-1i64, 1])?);
        let constant = self.host_tensor(value);
        let axes = self.host_tensor(HostTensor::from_slice([0], &[0i64; 0])?);
        let tensors = [
            ("data", zero),
            ("pads", pads),
            ("constant_value", constant),
            ("axes", axes),
        ];
        let count = self.call(onnx("Pad")?, &tensors, BTreeMap::new(), false)?;
        if rank > 0 {
            return Ok(count);
        }
        let shape = self.host_tensor(HostTensor::from_slice([0], &[0i64; 0])?);
        let tensors = [("data", count), ("shape", shape)];
        self.call(onnx("Reshape")?, &tensors, BTreeMap::new(), false)
    }

    /// The chain of `n` tensors of list `group` (the operator's last input
    /// declaration, its only tensors besides the output), with the
    /// attributes and the output of `args`.
    fn left(
        info: &'static OperatorInfo,
        group: &TensorGroup,
        n: usize,
        args: &OpArgs,
    ) -> Result<Chain, OpError> {
        let name = info.qualified_name();
        let widest = group.max as usize;
        if widest < 2 || info.inputs.len() != widest || info.outputs.len() != 1 {
            return Err(OpError::Unsupported(format!(
                "{name}: only a list of two or more tensors as the only inputs chains"
            )));
        }
        let input = |k: usize| {
            let key = format!("{}_{k}", group.name);
            args.tensors
                .get(&key)
                .cloned()
                .ok_or_else(|| OpError::InvalidArgument(format!("{name}: `{key}` is required")))
        };
        let inputs: Vec<TensorDesc> = (0..n).map(input).collect::<Result<_, _>>()?;
        // The rule over the whole list, which no one call sees (a chain's
        // partials may have another type).
        let dtype = inputs[0].dtype;
        if let Some((k, d)) = inputs.iter().enumerate().find(|(_, d)| d.dtype != dtype) {
            return Err(rule(
                info,
                "all inputs must have the same element type T",
                format!(
                    "`dtype({}_{k})` is {}, `dtype({}[0])` is {dtype}",
                    group.name, d.dtype, group.name
                ),
            ));
        }
        // The widest instance over the first tensors, the output inferred.
        let mut prefix = OpArgs {
            attributes: args.attributes.clone(),
            ..OpArgs::default()
        };
        for (k, d) in inputs[..widest].iter().enumerate() {
            prefix
                .tensors
                .insert(format!("{}_{k}", group.name), d.clone());
        }
        let probe = (info.build)(&prefix)?;
        let out_name = info.outputs[0];
        let output: Vec<TensorDesc> = args.tensors.get(out_name).cloned().into_iter().collect();
        let mut chain = Chain::new(info, inputs, output);
        chain.output_dtype = args.output_dtypes.get(out_name).copied();
        chain.probe = Some(probe);
        let items: Vec<Slot> = (0..n).map(Slot::Input).collect();
        let none = BTreeMap::new();
        match info.name {
            "Sum" if dtype == DataType::Float16 => {
                let wide = chain.widen(&items)?;
                let sum = chain.fold(info, group, &wide, &none, false)?;
                chain.narrow(sum, dtype)?;
            }
            "Mean" => {
                // The spec's compute type (a table without FLOAT64 or
                // FLOAT32 never validates: the probe says so).
                let compute = match dtype {
                    DataType::Float64 => DataType::Float64,
                    _ => DataType::Float32,
                };
                let sum_spec = find(info.namespace, "Sum", group.name, 1).ok_or_else(|| {
                    OpError::Unsupported(format!(
                        "{name}: a chain adds with Sum, which the catalog lacks"
                    ))
                })?;
                let sum_group = chained_group(sum_spec).ok_or_else(|| chain.broken())?;
                let wide = if dtype == compute {
                    items
                } else {
                    chain.widen(&items)?
                };
                let sum = chain.fold(sum_spec, sum_group, &wide, &none, false)?;
                let rank = chain.desc(sum).sizes.len();
                let count = chain.count(n, compute, rank)?;
                let div = onnx("Div")?;
                let tensors = [("a", sum), ("b", count)];
                let mean = chain.call(div, &tensors, none.clone(), dtype == compute)?;
                if dtype != compute {
                    chain.narrow(mean, dtype)?;
                }
            }
            _ => {
                chain.fold(info, group, &items, &args.attributes, true)?;
            }
        }
        chain.outputs = chain
            .steps
            .last()
            .map(|s| s.op.output_descs())
            .unwrap_or_default();
        Ok(chain)
    }

    /// The last step: `from` cast to `dtype`, rounded once, as the output.
    fn narrow(&mut self, from: Slot, dtype: DataType) -> Result<Slot, OpError> {
        let to = BTreeMap::from([("to".to_owned(), AttrValue::Int(onnx_type(dtype)))]);
        self.call(onnx("Cast")?, &[("input", from)], to, true)
    }

    /// The chain of a split into `n` outputs of list `group` (the
    /// operator's inputs being the tensor and its host lengths): each step
    /// but the last writes as many outputs as fit less one, and the rest,
    /// which the next step cuts.
    fn split(
        info: &'static OperatorInfo,
        group: &TensorGroup,
        n: usize,
        args: &OpArgs,
    ) -> Result<Chain, OpError> {
        let name = info.qualified_name();
        let widest = group.max as usize;
        let (&[input_name, split_name], 2..) = (info.inputs, widest) else {
            return Err(OpError::Unsupported(format!(
                "{name}: only a tensor and its host lengths split in a chain"
            )));
        };
        let required = |key: &str| {
            args.tensors
                .get(key)
                .cloned()
                .ok_or_else(|| OpError::InvalidArgument(format!("{name}: `{key}` is required")))
        };
        let input = required(input_name)?;
        let outputs: Vec<TensorDesc> = (0..n)
            .map(|k| required(&format!("{}_{k}", group.name)))
            .collect::<Result<_, _>>()?;
        let split = args.host_data.get(split_name);
        let given: Vec<i64> = split.and_then(|t| t.to_vec::<i64>()).unwrap_or_default();
        let rank = input.sizes.len() as i128;
        let int = |key: &str| match args.attributes.get(key) {
            Some(AttrValue::Int(v)) => *v,
            _ => 0,
        };
        let axis = int("axis");
        let a = if axis < 0 { axis + rank } else { axis };
        if !(0..rank).contains(&a) {
            return Err(rule(
                info,
                "axis must be in the range [-r, r-1] where r = rank(input)",
                format!("`axis` is {axis}, `r` is {rank}"),
            ));
        }
        let a = a as usize;
        let mut attributes = args.attributes.clone();
        let lengths = if given.is_empty() {
            // Equal parts, by the spec's rule of the whole count; each step
            // cuts by lengths instead.
            let num_outputs = int("num_outputs");
            if num_outputs != 0 && num_outputs != n as i128 {
                return Err(rule(
                    info,
                    "num_outputs must equal the number of outputs",
                    format!("`num_outputs` is {num_outputs}, `count(outputs)` is {n}"),
                ));
            }
            attributes.remove("num_outputs");
            let dim = i64::from(input.sizes[a]);
            let parts = n as i64;
            let chunk = (dim + parts - 1) / parts;
            if dim < chunk * (parts - 1) {
                return Err(rule(
                    info,
                    "the split axis is too short for that many equal parts",
                    format!("`dim` is {dim}, `chunk` is {chunk}, `n` is {n}"),
                ));
            }
            let mut lengths = vec![chunk; n - 1];
            lengths.push(dim - chunk * (parts - 1));
            lengths
        } else if given.len() != n {
            return Err(rule(
                info,
                "split must have one length per output",
                format!("`len(sp)` is {}, `n` is {n}", given.len()),
            ));
        } else {
            given
        };
        let mut chain = Chain::new(info, vec![input.clone(), required(split_name)?], outputs);
        chain.host = vec![None, split.cloned()];
        let (mut current, mut current_desc, mut k) = (Slot::Input(0), input, 0);
        loop {
            let last = n - k <= widest;
            let take = if last { n - k } else { widest - 1 };
            let mut cut: Vec<i64> = lengths[k..k + take].to_vec();
            let mut outs: Vec<(TensorDesc, Slot)> = (k..k + take)
                .map(|o| (chain.outputs[o].clone(), Slot::Output(o)))
                .collect();
            if !last {
                let rest: i64 = lengths[k + take..].iter().sum();
                let extent = u32::try_from(rest).map_err(|_| {
                    rule(
                        info,
                        "split lengths must not be negative",
                        format!("the last {} lengths add up to {rest}", n - k - take),
                    )
                })?;
                let mut sizes = current_desc.sizes.clone();
                sizes[a] = extent;
                let partial = TensorDesc::new(current_desc.dtype, sizes);
                chain.partials.push(partial.clone());
                cut.push(rest);
                outs.push((partial, Slot::Partial(chain.partials.len() - 1)));
            }
            let count = outs.len() as u32;
            let step_info = instance(info, group.name, count).ok_or_else(|| {
                OpError::Unsupported(format!("{name}: no instance of {count} outputs"))
            })?;
            let lengths_tensor = HostTensor::from_slice([cut.len() as u32], &cut)?;
            let mut step_args = OpArgs {
                attributes: attributes.clone(),
                ..OpArgs::default()
            };
            step_args
                .tensors
                .insert(input_name.to_owned(), current_desc.clone());
            step_args
                .tensors
                .insert(split_name.to_owned(), lengths_tensor.desc().clone());
            step_args
                .host_data
                .insert(split_name.to_owned(), lengths_tensor.clone());
            for (j, (desc, _)) in outs.iter().enumerate() {
                step_args
                    .tensors
                    .insert(format!("{}_{j}", group.name), desc.clone());
            }
            chain.constants.push(lengths_tensor);
            chain.steps.push(Step {
                op: (step_info.build)(&step_args)?,
                inputs: vec![current, Slot::Host(chain.constants.len() - 1)],
                outputs: outs.iter().map(|(_, s)| *s).collect(),
            });
            if last {
                return Ok(chain);
            }
            k += take;
            current = Slot::Partial(chain.partials.len() - 1);
            current_desc = chain.partials[chain.partials.len() - 1].clone();
        }
    }

    fn operator_name(&self) -> String {
        self.info.qualified_name()
    }
}

impl Operator for Chain {
    fn info(&self) -> &'static OperatorInfo {
        self.info
    }

    /// The spec's rules and tables over the list's first tensors (the
    /// widest instance), then every step's validation: the rules over the
    /// rest of the list, a partial standing for the tensors it combines.
    fn validate(&self, level: FeatureLevel) -> Result<(), ValidationError> {
        if let Some(p) = &self.probe {
            p.validate(level)?;
        }
        self.steps.iter().try_for_each(|s| s.op.validate(level))
    }

    fn min_feature_level(&self) -> Option<FeatureLevel> {
        let levels: Option<Vec<FeatureLevel>> = self
            .steps
            .iter()
            .map(|s| s.op.min_feature_level())
            .collect();
        levels?.into_iter().max()
    }

    fn input_descs(&self) -> Vec<TensorDesc> {
        self.inputs.clone()
    }

    fn output_descs(&self) -> Vec<TensorDesc> {
        self.outputs.clone()
    }

    fn host_input(&self, i: usize) -> Option<&HostTensor> {
        self.host.get(i).and_then(Option::as_ref)
    }

    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        ops_core::check_call(self, inputs)?;
        let mut partials: Vec<Option<HostTensor>> = vec![None; self.partials.len()];
        let mut outputs: Vec<Option<HostTensor>> = vec![None; self.outputs.len()];
        for step in &self.steps {
            let args: Vec<&HostTensor> = step
                .inputs
                .iter()
                .map(|slot| match *slot {
                    Slot::Input(i) => inputs.get(i).copied().ok_or_else(|| self.broken()),
                    Slot::Partial(p) => partials[p].as_ref().ok_or_else(|| self.broken()),
                    Slot::Host(c) => Ok(&self.constants[c]),
                    Slot::Zeros(z) => Ok(&self.zeros[z]),
                    Slot::Output(_) => Err(self.broken()),
                })
                .collect::<Result<_, _>>()?;
            let produced = step.op.run_cpu(&args)?;
            for (slot, t) in step.outputs.iter().zip(produced) {
                match *slot {
                    Slot::Partial(p) => partials[p] = Some(t),
                    Slot::Output(o) => outputs[o] = Some(t),
                    Slot::Input(_) | Slot::Host(_) | Slot::Zeros(_) => return Err(self.broken()),
                }
            }
        }
        outputs
            .into_iter()
            .map(|t| t.ok_or_else(|| self.broken()))
            .collect()
    }

    /// The steps' plans one after the other: a partial is a scratch
    /// buffer, a zero tensor one that no pass writes, each step's scratch
    /// buffers come after those.
    fn gpu_plan_for(&self, class: DeviceClass) -> Result<GpuPlan, OpError> {
        let mut plan = GpuPlan {
            outputs: vec![OutputInit::Zero; self.outputs.len()],
            scratch_bytes: Vec::new(),
            passes: Vec::new(),
            index_checks: Vec::new(),
        };
        let zeros = self.zeros.iter().map(HostTensor::desc);
        for p in self.partials.iter().chain(zeros) {
            let bytes = p.byte_size().ok_or_else(|| OpError::TooLarge {
                what: format!("a partial result of {} ({p:?})", self.operator_name()),
                limit: "byte size overflows u64".into(),
            })?;
            plan.scratch_bytes.push(bytes);
        }
        for step in &self.steps {
            let sub = step.op.gpu_plan_for(class)?;
            if !sub.index_checks.is_empty() {
                return Err(OpError::Unsupported(format!(
                    "{}: a step with index checks does not chain",
                    self.operator_name()
                )));
            }
            let base = plan.scratch_bytes.len();
            plan.scratch_bytes.extend(&sub.scratch_bytes);
            let place = |slot: Slot| match slot {
                Slot::Input(i) => Ok(BufferRef::Input(i)),
                Slot::Output(o) => Ok(BufferRef::Output(o)),
                Slot::Partial(p) => Ok(BufferRef::Scratch(p)),
                Slot::Zeros(z) => Ok(BufferRef::Scratch(self.partials.len() + z)),
                Slot::Host(_) => Err(self.unchainable()),
            };
            let input = |i: usize| step.inputs.get(i).copied().ok_or_else(|| self.broken());
            let output = |o: usize| step.outputs.get(o).copied().ok_or_else(|| self.broken());
            for (o, init) in sub.outputs.iter().enumerate() {
                match (*init, output(o)?) {
                    (OutputInit::CopyOfInput(i), Slot::Output(out)) => match input(i)? {
                        Slot::Input(j) => plan.outputs[out] = OutputInit::CopyOfInput(j),
                        _ => return Err(self.unchainable()),
                    },
                    (OutputInit::CopyOfInput(_), _) => return Err(self.unchainable()),
                    (init, Slot::Output(out)) => plan.outputs[out] = init,
                    // Scratch starts zeroed and each partial is written once.
                    (_, _) => {}
                }
            }
            for mut pass in sub.passes {
                for r in &mut pass.buffers {
                    *r = match *r {
                        BufferRef::Input(i) => place(input(i)?)?,
                        BufferRef::Output(o) => place(output(o)?)?,
                        BufferRef::Scratch(s) => BufferRef::Scratch(base + s),
                        other => other,
                    };
                }
                plan.passes.push(pass);
            }
        }
        Ok(plan)
    }

    /// The spec's contract for the list's type (the widest instance's):
    /// exact for Split.
    fn tolerance(&self) -> Tolerance {
        self.probe
            .as_ref()
            .map_or(Tolerance::Exact, |p| p.tolerance())
    }

    fn accuracy_domain(&self) -> Option<(f64, f64)> {
        self.probe.as_ref().and_then(|p| p.accuracy_domain())
    }

    fn index_error(&self, _: &[&HostTensor], check: usize, _: u64) -> OpError {
        OpError::InvalidArgument(format!(
            "{}: a chain has no index check {check}",
            self.operator_name()
        ))
    }

    fn index_bounds(&self) -> Vec<IndexBounds> {
        Vec::new()
    }
}

impl Chain {
    fn broken(&self) -> OpError {
        OpError::InvalidArgument(format!(
            "{}: a step of the chain reads what no step wrote",
            self.operator_name()
        ))
    }

    fn unchainable(&self) -> OpError {
        OpError::Unsupported(format!(
            "{}: a step's pass binds what only the host holds, or starts as a copy of a partial result",
            self.operator_name()
        ))
    }
}
