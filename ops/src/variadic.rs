//! Variadic operators past their widest instance.
//!
//! A spec's variadic list (`input data: tensor[1..=4]`) is compiled once
//! per count, up to what one kernel binds; ONNX's lists have no upper
//! bound. A call with more tensors than the widest instance runs as a
//! chain of instances ([`Chain`]): the first takes as many tensors as it
//! can and writes a partial result, each next one takes the running
//! partial as its first input and as many further tensors as fit, and the
//! last writes the output. `Sum(a, ..., t)` is `Sum(Sum(Sum(a, b, c, d), e,
//! f, g), ...)`, so the spec's left-to-right order is kept exactly;
//! `Concat` lays the partial out first, as the single call would. Each
//! partial is a tensor of the element type: where a spec adds FLOAT16 in
//! `f32` and rounds once per call, a chain rounds once per call too.
//!
//! Only operators whose spec makes such a chain equal to the single call
//! are chained ([`LEFT_CHAINS`]): a left fold of their list (Sum, Max,
//! Min), or a concatenation (Concat). Mean divides by the count once at the
//! end, so a chain of Means is not a Mean; past its widest instance it
//! stays a gap of the catalog.
//!
//! A variadic output list is chained the other way ([`OUTPUT_CHAINS`]):
//! Split into more parts than the widest instance writes cuts the first
//! parts and one rest, then cuts the rest again, each cut by the lengths
//! `split` gives. Equal parts (no `split`) are the spec's rule of the
//! whole count, which a chain does not apply, so they stay a gap.

use std::fmt;

use ops_core::{
    BufferRef, DeviceClass, FeatureLevel, GpuPlan, HostTensor, IndexBounds, OpArgs, OpError,
    Operator, OperatorInfo, OutputInit, TensorDesc, TensorGroup, Tolerance, ValidationError,
};

/// Operators (namespace, name) whose variadic input list may be chained
/// from the left: the spec's value of `n` tensors equals its value of the
/// partial of the first `k` and the remaining `n - k`.
pub const LEFT_CHAINS: &[(&str, &str)] = &[
    ("onnx", "Sum"),
    ("onnx", "Max"),
    ("onnx", "Min"),
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
/// its own, then, for a chained list, `data_4`, `data_5`, ... up to the
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

/// The instance of `info`'s spec whose list `group` has `count` tensors.
fn instance(info: &OperatorInfo, group: &str, count: u32) -> Option<&'static OperatorInfo> {
    ops::catalog().iter().copied().find(|i| {
        i.namespace == info.namespace
            && i.name == info.name
            && i.groups.iter().any(|g| g.name == group && g.count == count)
    })
}

/// How many tensors of list `group` `args` gives: `group_0`, `group_1`, ...
fn given(args: &OpArgs, group: &str) -> usize {
    (0..)
        .take_while(|k| args.tensors.contains_key(&format!("{group}_{k}")))
        .count()
}

/// Builds the descriptor of `info` from `args`: the instance's own when
/// the args' list fits it, else a [`Chain`] of instances.
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
    /// Host tensor `i` of the chain's own (a step's `split` lengths), which
    /// no GPU pass binds.
    Host(usize),
}

/// One instance call of a chain.
#[derive(Debug)]
struct Step {
    op: Box<dyn Operator>,
    inputs: Vec<Slot>,
    outputs: Vec<Slot>,
}

/// A variadic operator's call as a chain of calls of its instances (see
/// the module documentation).
pub struct Chain {
    /// The widest instance: the operator the chain stands for.
    info: &'static OperatorInfo,
    inputs: Vec<TensorDesc>,
    outputs: Vec<TensorDesc>,
    partials: Vec<TensorDesc>,
    /// The host tensors the steps read ([`Slot::Host`]).
    constants: Vec<HostTensor>,
    /// The host data of each input the descriptor keeps (`split`).
    host: Vec<Option<HostTensor>>,
    steps: Vec<Step>,
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

impl Chain {
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
        let out_name = info.outputs[0];
        let mut steps = Vec::new();
        let mut partials: Vec<TensorDesc> = Vec::new();
        let mut next = 0;
        while next < n {
            // The running partial first, then as many inputs as fit.
            let mut slots: Vec<Slot> = partials
                .len()
                .checked_sub(1)
                .map(Slot::Partial)
                .into_iter()
                .collect();
            let take = (widest - slots.len()).min(n - next);
            slots.extend((next..next + take).map(Slot::Input));
            next += take;
            let last = next == n;
            let count = slots.len() as u32;
            let step_info = instance(info, group.name, count).ok_or_else(|| {
                OpError::Unsupported(format!("{name}: no instance of {count} tensors"))
            })?;
            let mut step_args = OpArgs {
                attributes: args.attributes.clone(),
                ..OpArgs::default()
            };
            for (k, slot) in slots.iter().enumerate() {
                let desc = match *slot {
                    Slot::Input(i) => inputs[i].clone(),
                    Slot::Partial(p) => partials[p].clone(),
                    Slot::Output(_) | Slot::Host(_) => {
                        unreachable!("outputs are never a step's input")
                    }
                };
                step_args
                    .tensors
                    .insert(format!("{}_{k}", group.name), desc);
            }
            if last {
                if let Some(out) = args.tensors.get(out_name) {
                    step_args.tensors.insert(out_name.to_owned(), out.clone());
                }
                if let Some(dtype) = args.output_dtypes.get(out_name) {
                    step_args.output_dtypes.insert(out_name.to_owned(), *dtype);
                }
            }
            let op = (step_info.build)(&step_args)?;
            let produced = op.output_descs();
            let output = if last {
                Slot::Output(0)
            } else {
                partials.push(produced[0].clone());
                Slot::Partial(partials.len() - 1)
            };
            steps.push(Step {
                op,
                inputs: slots,
                outputs: vec![output],
            });
        }
        let outputs = steps
            .last()
            .map(|s| s.op.output_descs())
            .unwrap_or_default();
        Ok(Chain {
            info,
            host: vec![None; inputs.len()],
            inputs,
            outputs,
            partials,
            constants: Vec::new(),
            steps,
        })
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
        let lengths: Vec<i64> = split.and_then(|t| t.to_vec::<i64>()).unwrap_or_default();
        if lengths.is_empty() {
            return Err(OpError::Unsupported(format!(
                "{name}: equal parts of more than {widest} outputs: give `{split_name}`"
            )));
        }
        if lengths.len() != n {
            return Err(OpError::InvalidArgument(format!(
                "{name}: split must have one length per output: `{split_name}` has {} lengths, the call {n} outputs",
                lengths.len()
            )));
        }
        let rank = input.sizes.len() as i128;
        let axis = match args.attributes.get("axis") {
            Some(ops_core::AttrValue::Int(a)) => *a,
            _ => 0,
        };
        let a = if axis < 0 { axis + rank } else { axis };
        if !(0..rank).contains(&a) {
            return Err(OpError::InvalidArgument(format!(
                "{name}: axis must be in the range [-r, r-1] where r = rank(input): `axis` is {axis}, r is {rank}"
            )));
        }
        let a = a as usize;
        let mut chain = Chain {
            info,
            inputs: vec![input.clone(), required(split_name)?],
            outputs,
            partials: Vec::new(),
            constants: Vec::new(),
            host: vec![None, split.cloned()],
            steps: Vec::new(),
        };
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
                    OpError::InvalidArgument(format!(
                        "{name}: split lengths must not be negative: the last {} add up to {rest}",
                        n - k - take
                    ))
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
                attributes: args.attributes.clone(),
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

    /// Every step's validation: the spec's rules over the list, a partial
    /// standing for the tensors it combines.
    fn validate(&self, level: FeatureLevel) -> Result<(), ValidationError> {
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
                    Slot::Output(_) => Err(self.broken()),
                })
                .collect::<Result<_, _>>()?;
            let produced = step.op.run_cpu(&args)?;
            for (slot, t) in step.outputs.iter().zip(produced) {
                match *slot {
                    Slot::Partial(p) => partials[p] = Some(t),
                    Slot::Output(o) => outputs[o] = Some(t),
                    Slot::Input(_) | Slot::Host(_) => return Err(self.broken()),
                }
            }
        }
        outputs
            .into_iter()
            .map(|t| t.ok_or_else(|| self.broken()))
            .collect()
    }

    /// The steps' plans one after the other: a partial is a scratch
    /// buffer, each step's scratch buffers come after those before it.
    fn gpu_plan_for(&self, class: DeviceClass) -> Result<GpuPlan, OpError> {
        let mut plan = GpuPlan {
            outputs: vec![OutputInit::Zero; self.outputs.len()],
            scratch_bytes: Vec::new(),
            passes: Vec::new(),
            index_checks: Vec::new(),
        };
        for p in &self.partials {
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

    fn tolerance(&self) -> Tolerance {
        self.steps
            .first()
            .map_or(Tolerance::Exact, |s| s.op.tolerance())
    }

    fn accuracy_domain(&self) -> Option<(f64, f64)> {
        self.steps.first().and_then(|s| s.op.accuracy_domain())
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
