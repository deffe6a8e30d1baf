//! Families under one typed contract: what a spec's `compute <family> { .. }`
//! block computes, each family one module implementing [`Family`].
//!
//! A family states, in one place:
//!
//! - its parameters ([`Family::params`]: tensors and integer expressions),
//!   which the spec compiler lowers with the spec's names and types and
//!   bakes into a `static` of [`Value`]s, the family's checked
//!   configuration;
//! - what it asks of the spec's support tables ([`Family::constraints`]),
//!   which the spec compiler checks and reports into the spec;
//! - its kernels ([`Family::kernels`], one per variant and data-type pair
//!   the tables admit), each kernel's bindings declared once as
//!   [`Binding`]s (WGSL declarations, [`Access`] list and the pass's
//!   [`BufferRef`] order all come from that one list), and its WGSL;
//! - its CPU reference, GPU plans, tolerance and index checks, over a
//!   [`Call`]: the descriptor ([`OpEnv`]), the configuration and the
//!   kernels of the operator.
//!
//! The spec compiler names no family: it reads [`FAMILIES`], lowers the
//! declared parameters and generates the same few lines of glue for every
//! family. Adding a family is adding its module and one line to
//! [`FAMILIES`].

use crate::expr::Expr;
use crate::scalar::{Precision, Scalar, Ty};
use crate::wgsl::segments::Buffer;
use crate::wgsl::writer::Writer;
use crate::{
    Access, BufferRef, DataType, DeviceClass, GpuPlan, HostTensor, IndexBounds, Kernel, KernelText,
    OpError, TensorDesc, Tolerance,
};

/// Declares a kernel's parameter words once, `mod name [LEN] { WORD =
/// position, .. }`: a module of `pub const` positions, `LEN` (the word
/// count) and `WGSL` (each word's WGSL constant,
/// `P_` and its name, with its position, for [`declare_words`]).
macro_rules! param_words {
    (
        $(#[$m:meta])*
        $vis:vis mod $name:ident [$len:expr] {
            $( $(#[$d:meta])* $word:ident = $value:expr ),* $(,)?
        }
    ) => {
        $(#[$m])*
        $vis mod $name {
            $( $(#[$d])* pub const $word: usize = $value; )*
            /// Total word count.
            pub const LEN: usize = $len;
            /// Each word's WGSL constant (`P_` and its name) and position.
            pub const WGSL: &[(&str, usize)] = &[$((concat!("P_", stringify!($word)), $word)),*];
        }
    };
}
pub(crate) use param_words;

/// Writes `const P_<WORD>: u32 = <position>u;` for each of `words` (a
/// [`param_words!`] module's `WGSL`).
pub(crate) fn declare_words(w: &mut Writer, words: &[(&str, usize)]) {
    for (name, word) in words {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
}

/// The opening of a family's kernel module, the same for every family: a
/// comment of where it was generated from, its key and `what` (a line
/// each); `const WORKGROUP_SIZE` and (where a thread takes several work
/// items) `const ELEMENTS_PER_THREAD`; the parameter words
/// ([`declare_words`]); `consts` (each a commented constant); then the
/// buffers' declarations and accessors.
pub(crate) struct Prologue<'a> {
    /// Where the kernel was generated from.
    pub origin: &'a str,
    /// Its key.
    pub key: &'a str,
    /// What it computes, a comment line each.
    pub what: &'a [String],
    /// Threads per workgroup.
    pub workgroup_size: u32,
    /// Work items a thread takes; `None` for kernels whose thread takes
    /// one (a column, a slice position), which declare no
    /// `ELEMENTS_PER_THREAD`.
    pub elements_per_thread: Option<u64>,
    /// The parameter words (a [`param_words!`] module's `WGSL`).
    pub words: &'a [(&'a str, usize)],
    /// Further constants: (comment, declaration).
    pub consts: &'a [(&'a str, &'a str)],
    /// The kernel's buffers.
    pub buffers: &'a [Buffer<'a>],
}

impl Prologue<'_> {
    /// Writes the opening to `w`.
    pub(crate) fn write(&self, w: &mut Writer) {
        use crate::wgsl::segments;
        w.comment(format!("@generated from {}", self.origin));
        w.comment(format!("kernel: {}", self.key));
        for line in self.what {
            w.comment(line);
        }
        w.blank();
        w.line(format!(
            "const WORKGROUP_SIZE: u32 = {}u;",
            self.workgroup_size
        ));
        if let Some(items) = self.elements_per_thread {
            w.line(format!("const ELEMENTS_PER_THREAD: u32 = {items}u;"));
        }
        declare_words(w, self.words);
        for (comment, line) in self.consts {
            w.comment(*comment);
            w.line(*line);
        }
        w.blank();
        segments::write_bindings(w, self.buffers);
    }
}

/// The largest power of two at most `v` (1 for 0): team sizes.
pub(crate) fn pow2_floor(v: u64) -> u64 {
    if v <= 1 {
        1
    } else {
        1 << (63 - v.leading_zeros())
    }
}

/// The row-major coordinates of element `position` of a tensor of `sizes`
/// (index errors name elements by them).
pub(crate) fn coordinates(sizes: &[u32], position: u64) -> Vec<u32> {
    let mut rest = position;
    let mut coords = vec![0u32; sizes.len()];
    for (c, &s) in coords.iter_mut().zip(sizes).rev() {
        if s > 0 {
            *c = (rest % u64::from(s)) as u32;
            rest /= u64::from(s);
        }
    }
    coords
}

/// Work items of a kernel storing `count` elements of `data` whole words
/// at a time: one per element of 32- and 64-bit data, one per `u32` word
/// of 4 (8-bit) or 2 (16-bit) elements.
pub(crate) fn word_items(count: u64, data: crate::DataType) -> u64 {
    match data.size_bytes() {
        1 => count.div_ceil(4),
        2 => count.div_ceil(2),
        _ => count,
    }
}

pub mod concat;
pub mod divisor;
pub mod elementwise;
pub mod fold;
pub mod gather_elements;
pub mod gather_nd;
pub mod one_hot;
pub mod pad;
pub mod reduce;
pub mod scatter;
pub mod view;

/// Every family under the contract, by the name a spec writes after
/// `compute`. Generated code reaches its family by position here.
pub static FAMILIES: &[&dyn Family] = &[
    &gather_elements::GatherElements,
    &one_hot::OneHot,
    &gather_nd::GATHER_ND,
    &gather_nd::GATHER,
    &view::VIEW,
    &view::SPLIT,
    &concat::Concat,
    &pad::Pad,
    &elementwise::ElementwiseFamily,
    &fold::FoldFamily,
    &reduce::ReduceFamily,
    &scatter::SCATTER_ELEMENTS,
    &scatter::SCATTER_ND,
];

/// The family named `name` and its position in [`FAMILIES`].
pub fn family(name: &str) -> Option<(usize, &'static dyn Family)> {
    FAMILIES
        .iter()
        .copied()
        .enumerate()
        .find(|(_, f)| f.name() == name)
}

/// What a declared parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// An input tensor's name.
    Input,
    /// An output tensor's name.
    Output,
    /// An integer expression over the descriptor (attributes, sizes,
    /// ranks), evaluated per call, that must be a valid count or position.
    Count,
    /// A [`ParamKind::Count`] the block may leave out ([`Value::Absent`]).
    OptionalCount,
    /// A list expression over the descriptor, evaluated per call.
    List,
    /// A [`ParamKind::List`] the block may leave out ([`Value::Absent`]).
    OptionalList,
    /// One of `words`, by its position ([`Value::Word`]).
    Word(&'static [&'static str]),
    /// Optionally, a host input tensor or a float, integer, boolean or
    /// scalar attribute naming a value ([`Value::Tensor`],
    /// [`Value::Attr`] or [`Value::Absent`]).
    OptionalValue,
    /// A list of 1 to `max` input tensors (`[a, b]`), read on the device
    /// when `device` (else host tensors may be listed too).
    Inputs {
        /// The most the list may hold.
        max: usize,
        /// Every tensor is read on the device.
        device: bool,
    },
    /// A list of output tensors (`[a, b]`); `every`: the operator's
    /// outputs, all of them in order.
    Outputs {
        /// The list must be every output, in order.
        every: bool,
    },
    /// An expression in the spec's arithmetic ([`crate::scalar`]) of the
    /// elements of tensor-list parameter `over` (named by their tensors,
    /// [`Var::INPUTS`](crate::scalar::Var::INPUTS) in order) and the attributes, of the type of tensor
    /// parameter `result` ([`Value::Arithmetic`]).
    Arithmetic {
        /// The tensor-list parameter whose elements it reads.
        over: usize,
        /// The tensor parameter whose type it has.
        result: usize,
    },
    /// `exact` or `ulp(n)` ([`Value::Accuracy`]).
    Accuracy,
    /// Optionally, `[lo, hi]`: the input values an accuracy bound is
    /// stated for, which fuzzers draw from ([`Value::Domain`]).
    OptionalDomain,
    /// One of `words`, by its position ([`Value::Word`]), or left out
    /// ([`Value::Absent`]).
    OptionalWord(&'static [&'static str]),
    /// One role of an instruction ([`Value::Instruction`]): an expression
    /// in the spec's arithmetic of the variables `vars`, each, like the
    /// result, of the data type `T` of tensor parameter `of` (one type
    /// parameter, bound per table row).
    Instruction {
        /// The tensor parameter whose data type is `T`.
        of: usize,
        /// What `T` is, for diagnostics ("the folded tensor's data type").
        what: &'static str,
        /// The variables it may read, each with the parameter the block
        /// must give for it to be in scope (`None`: always).
        vars: &'static [(crate::scalar::Var, Option<usize>)],
        /// What a block that leaves it out gets.
        missing: Missing,
    },
    /// One of `words` ([`Value::Word`]), or one per value of an enum or
    /// boolean attribute, `attr { MEMBER: word, .. }`
    /// ([`Value::WordByAttr`]); [`Call::word`] reads either.
    WordByAttr(&'static [&'static str]),
    /// `exact` or `ulp(bound)`, `bound` an INT64 expression of the
    /// variable ([`Value::Bound`]): the bound as a function of, say, the
    /// number of elements folded.
    AccuracyOf(crate::scalar::Var),
}

/// What an [`ParamKind::Instruction`] the block leaves out is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// The block must give it.
    Required,
    /// [`Value::Absent`].
    Absent,
    /// The variable itself (`finish` left out is `acc`).
    Var(crate::scalar::Var),
}

impl ParamKind {
    /// True for the kinds a block may leave out.
    pub fn optional(self) -> bool {
        matches!(
            self,
            ParamKind::OptionalCount
                | ParamKind::OptionalList
                | ParamKind::OptionalValue
                | ParamKind::OptionalDomain
                | ParamKind::OptionalWord(_)
                | ParamKind::Instruction {
                    missing: Missing::Absent | Missing::Var(_),
                    ..
                }
        )
    }
}

/// A parameter of a family's `compute` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its key in the block.
    pub name: &'static str,
    /// What it is.
    pub kind: ParamKind,
}

impl Param {
    /// An input tensor parameter.
    pub const fn input(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Input,
        }
    }

    /// An output tensor parameter.
    pub const fn output(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Output,
        }
    }

    /// An integer expression parameter.
    pub const fn count(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Count,
        }
    }

    /// An integer expression parameter the block may leave out.
    pub const fn optional_count(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::OptionalCount,
        }
    }

    /// A list expression parameter.
    pub const fn list(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::List,
        }
    }

    /// A list expression parameter the block may leave out.
    pub const fn optional_list(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::OptionalList,
        }
    }

    /// One of `words`.
    pub const fn word(name: &'static str, words: &'static [&'static str]) -> Param {
        Param {
            name,
            kind: ParamKind::Word(words),
        }
    }

    /// An optional host tensor or scalar attribute.
    pub const fn optional_value(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::OptionalValue,
        }
    }

    /// A list of 1 to `max` input tensors read on the device.
    pub const fn inputs(name: &'static str, max: usize) -> Param {
        Param {
            name,
            kind: ParamKind::Inputs { max, device: true },
        }
    }

    /// A list of 1 to `max` input tensors, host tensors among them.
    pub const fn any_inputs(name: &'static str, max: usize) -> Param {
        Param {
            name,
            kind: ParamKind::Inputs { max, device: false },
        }
    }

    /// An expression of the elements of list parameter `over`, of the type
    /// of tensor parameter `result`.
    pub const fn arithmetic(name: &'static str, over: usize, result: usize) -> Param {
        Param {
            name,
            kind: ParamKind::Arithmetic { over, result },
        }
    }

    /// An accuracy contract.
    pub const fn accuracy(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::Accuracy,
        }
    }

    /// An optional input domain.
    pub const fn optional_domain(name: &'static str) -> Param {
        Param {
            name,
            kind: ParamKind::OptionalDomain,
        }
    }

    /// One of `words`, or left out.
    pub const fn optional_word(name: &'static str, words: &'static [&'static str]) -> Param {
        Param {
            name,
            kind: ParamKind::OptionalWord(words),
        }
    }

    /// An instruction's role: an expression of `vars`, all of the type of
    /// tensor parameter `of` (`what`), and what it is when left out.
    pub const fn instruction(
        name: &'static str,
        (of, what): (usize, &'static str),
        vars: &'static [(crate::scalar::Var, Option<usize>)],
        missing: Missing,
    ) -> Param {
        Param {
            name,
            kind: ParamKind::Instruction {
                of,
                what,
                vars,
                missing,
            },
        }
    }

    /// One of `words`, or one per value of an enum or boolean attribute.
    pub const fn word_by_attr(name: &'static str, words: &'static [&'static str]) -> Param {
        Param {
            name,
            kind: ParamKind::WordByAttr(words),
        }
    }

    /// An accuracy contract whose bound is an expression of `var`.
    pub const fn accuracy_of(name: &'static str, var: crate::scalar::Var) -> Param {
        Param {
            name,
            kind: ParamKind::AccuracyOf(var),
        }
    }

    /// A list of output tensors, every output in order when `every`.
    pub const fn outputs(name: &'static str, every: bool) -> Param {
        Param {
            name,
            kind: ParamKind::Outputs { every },
        }
    }
}

/// A parameter's lowered value, in the order of [`Family::params`].
#[derive(Clone, Copy, Debug)]
pub enum Value {
    /// A tensor, by its position among the operator's tensors (inputs
    /// first, then outputs).
    Tensor(usize),
    /// An integer expression.
    Count(&'static Expr),
    /// A list expression.
    List(&'static Expr),
    /// Tensors, by position.
    Tensors(&'static [usize]),
    /// A [`ParamKind::Word`]'s position among its words.
    Word(u32),
    /// A [`ParamKind::Arithmetic`] expression.
    Arithmetic(&'static Arithmetic),
    /// A [`ParamKind::Accuracy`]: `None` exact, else a bound in ULPs.
    Accuracy(Option<u64>),
    /// A [`ParamKind::OptionalDomain`]: the lowest and highest input value.
    Domain(f64, f64),
    /// Attribute `i` of the descriptor, as a scalar
    /// ([`OpEnv::scalar_attr`]).
    Attr(usize),
    /// A [`ParamKind::Instruction`]'s expression.
    Instruction(&'static Instruction),
    /// A [`ParamKind::WordByAttr`] by attribute `attr` (spec order): the
    /// word's position for each of its values (an enum's members in
    /// order; a boolean's `false`, `true`).
    WordByAttr(usize, &'static [u32]),
    /// A [`ParamKind::AccuracyOf`]: `None` exact, else the bound in ULPs,
    /// an INT64 expression of the variable.
    Bound(Option<&'static Instruction>),
    /// An optional parameter the block leaves out.
    Absent,
}

impl Value {
    /// The tensor position of a [`ParamKind::Input`] or
    /// [`ParamKind::Output`] parameter's value.
    ///
    /// # Panics
    ///
    /// On a count: the spec compiler lowers every parameter as declared, so
    /// a family reading its own parameter by its declared position cannot
    /// meet one.
    pub fn tensor(&self) -> usize {
        match *self {
            Value::Tensor(t) => t,
            _ => unreachable!("a count parameter read as a tensor"),
        }
    }

    /// The positions of a [`ParamKind::Outputs`] parameter's tensors.
    ///
    /// # Panics
    ///
    /// On another value, as [`Value::tensor`].
    pub fn tensors(&self) -> &'static [usize] {
        match *self {
            Value::Tensors(t) => t,
            _ => unreachable!("a parameter read as a tensor list"),
        }
    }

    /// The expression of a [`ParamKind::Arithmetic`] parameter's value.
    ///
    /// # Panics
    ///
    /// On another value, as [`Value::tensor`].
    pub fn arithmetic(&self) -> &'static Arithmetic {
        match *self {
            Value::Arithmetic(a) => a,
            _ => unreachable!("a parameter read as arithmetic"),
        }
    }

    /// The bound of a [`ParamKind::Accuracy`] parameter's value (`None`:
    /// exact).
    ///
    /// # Panics
    ///
    /// On another value, as [`Value::tensor`].
    pub fn accuracy(&self) -> Option<u64> {
        match *self {
            Value::Accuracy(a) => a,
            _ => unreachable!("a parameter read as an accuracy"),
        }
    }

    /// The expression of a [`ParamKind::Instruction`] parameter's value
    /// (`None`: left out, [`Missing::Absent`]).
    ///
    /// # Panics
    ///
    /// On another value, as [`Value::tensor`].
    pub fn instruction(&self) -> Option<&'static Instruction> {
        match *self {
            Value::Instruction(i) => Some(i),
            Value::Absent => None,
            _ => unreachable!("a parameter read as an instruction"),
        }
    }

    /// The position of a [`ParamKind::Word`] or [`ParamKind::OptionalWord`]
    /// parameter's word (`None`: left out).
    ///
    /// # Panics
    ///
    /// On another value, as [`Value::tensor`].
    pub fn word(&self) -> Option<u32> {
        match *self {
            Value::Word(w) => Some(w),
            Value::Absent => None,
            _ => unreachable!("a parameter read as a word"),
        }
    }

    /// The expression of a [`ParamKind::Count`] or [`ParamKind::List`]
    /// parameter's value.
    ///
    /// # Panics
    ///
    /// On a tensor, as [`Value::tensor`].
    pub fn count(&self) -> &'static Expr {
        match *self {
            Value::Count(e) | Value::List(e) => e,
            _ => unreachable!("a tensor parameter read as an expression"),
        }
    }
}

/// A [`ParamKind::Arithmetic`] parameter's lowered expression.
#[derive(Clone, Copy, Debug)]
pub struct Arithmetic {
    /// The expression: the list's tensors are [`Var::INPUTS`](crate::scalar::Var::INPUTS), in order.
    pub value: &'static Scalar,
    /// The type of each tensor: the list's, then the result's. Tensors the
    /// spec's rules tie together share a type parameter ([`Ty::Param`];
    /// the result's, when it has one, is parameter 0), a tensor of one
    /// data type has it ([`Ty::Data`]).
    pub types: &'static [Ty],
    /// Every binding of the type parameters the support tables admit.
    pub bindings: &'static [Types],
    /// The expression as the spec writes it.
    pub text: &'static str,
}

/// A [`ParamKind::Instruction`]'s lowered expression.
#[derive(Clone, Copy, Debug)]
pub struct Instruction {
    /// The expression, of type [`Ty::T`].
    pub value: &'static Scalar,
    /// The expression as the spec writes it (the variable's name when left
    /// out).
    pub text: &'static str,
}

/// A mistake in how a block combines its parameters
/// ([`Family::misuse`]), reported at the block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misuse {
    /// What is wrong.
    pub message: String,
    /// How to put it right.
    pub help: String,
}

/// A condition a family puts on the spec's support tables, checked by the
/// spec compiler and reported at the offending table row. Parameters are
/// named by their position in [`Family::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// The tensor lists integer types only.
    Integer(usize),
    /// The tensor lists numbers only (no BOOL): it holds indices.
    Numbers(usize),
    /// A tensor value of the parameter is a host tensor; `what` says what
    /// it gives ("gives the pad's constant").
    Host(usize, &'static str),
    /// The two tensors list the same types in every table entry; `what` is
    /// the verb of the message ("moves the elements of").
    SameTypes(usize, usize, &'static str),
    /// Every type the tensor lists is one the family computes for
    /// ([`Family::unsupported`]); `verb` names what it does ("folded").
    Computes(usize, &'static str),
}

/// The data types a kernel is generated for (a pair of tensors' types, or
/// the binding of an expression's type parameters): at most
/// [`Types::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Types {
    len: usize,
    list: [DataType; Types::MAX],
}

impl Types {
    /// The most data types a kernel is generated for.
    pub const MAX: usize = 4;

    /// The types of `list`.
    ///
    /// # Panics
    ///
    /// When `list` holds more than [`Types::MAX`] (a family's own kernel
    /// list, at compile time).
    pub const fn new(list: &[DataType]) -> Types {
        assert!(
            list.len() <= Types::MAX,
            "a kernel of more than 4 data types"
        );
        let mut out = [DataType::Bool; Types::MAX];
        let mut i = 0;
        while i < list.len() {
            out[i] = list[i];
            i += 1;
        }
        Types {
            len: list.len(),
            list: out,
        }
    }

    /// The pair `(a, b)`.
    pub const fn pair(a: DataType, b: DataType) -> Types {
        Types::new(&[a, b])
    }

    /// The types, in order.
    pub fn as_slice(&self) -> &[DataType] {
        &self.list[..self.len]
    }
}

impl std::ops::Index<usize> for Types {
    type Output = DataType;

    fn index(&self, i: usize) -> &DataType {
        &self.as_slice()[i]
    }
}

/// One kernel of a family: a variant (also the key's middle part) for a
/// list of data types, with its bindings and workgroup size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelDecl {
    /// The variant's name.
    pub variant: &'static str,
    /// The data types it is generated for.
    pub types: Types,
    /// Its bindings' access, in binding order.
    pub bindings: &'static [Access],
    /// Threads per workgroup (the kernel's `WORKGROUP_SIZE`).
    pub workgroup_size: u32,
}

/// A kernel variant as [`KernelDecl::for_pairs`] takes it: its name and
/// its bindings' access.
pub type Variant = (&'static str, &'static [Access]);

impl KernelDecl {
    /// One kernel per variant of `variants`, of `workgroup_size` threads,
    /// for each pair of `pairs` that `keep` accepts: what
    /// [`Family::kernels`] returns for most families.
    pub fn for_pairs(
        pairs: Vec<(DataType, DataType)>,
        keep: impl Fn(DataType, DataType) -> bool,
        variants: &[Variant],
        workgroup_size: u32,
    ) -> Vec<KernelDecl> {
        pairs
            .into_iter()
            .filter(|&(a, b)| keep(a, b))
            .flat_map(|(a, b)| {
                variants.iter().map(move |&(variant, bindings)| KernelDecl {
                    variant,
                    types: Types::pair(a, b),
                    bindings,
                    workgroup_size,
                })
            })
            .collect()
    }
}

/// A kernel of an operator, as generated code lists them.
#[derive(Debug)]
pub struct KernelEntry {
    /// Which kernel.
    pub decl: KernelDecl,
    /// The kernel.
    pub kernel: &'static Kernel,
}

/// What a binding of a kernel holds, by the family's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The parameter words.
    Params,
    /// The input tensor of parameter `i`.
    Input(usize),
    /// The output tensor of parameter `i`.
    Output(usize),
    /// The status words.
    Status,
    /// Scratch buffer `i` of the plan.
    Scratch(usize),
}

impl Role {
    /// What a pass binds for this role, the tensor of parameter `p` being
    /// input `input(p)` or output `output(p)`.
    pub fn buffer(
        self,
        input: impl Fn(usize) -> usize,
        output: impl Fn(usize) -> usize,
    ) -> BufferRef {
        match self {
            Role::Params => BufferRef::Params,
            Role::Input(p) => BufferRef::Input(input(p)),
            Role::Output(p) => BufferRef::Output(output(p)),
            Role::Status => BufferRef::Status,
            Role::Scratch(i) => BufferRef::Scratch(i),
        }
    }
}

/// One binding of a kernel, declared once: its WGSL buffer and what the
/// plan binds to it.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    /// The WGSL global (name, access, element view).
    pub buffer: Buffer<'static>,
    /// What the plan binds.
    pub role: Role,
}

/// The [`Access`] list of `bindings`, in a `const` for a
/// [`KernelDecl::bindings`].
pub const fn accesses<const N: usize>(bindings: &[Binding; N]) -> [Access; N] {
    let mut out = [Access::Read; N];
    let mut i = 0;
    while i < N {
        out[i] = bindings[i].buffer.access;
        i += 1;
    }
    out
}

/// The [`Buffer`]s of `bindings`, in a `const` for the WGSL generator.
pub const fn buffers<const N: usize>(bindings: &[Binding; N]) -> [Buffer<'static>; N] {
    let mut out = [Buffer::params(); N];
    let mut i = 0;
    while i < N {
        out[i] = bindings[i].buffer;
        i += 1;
    }
    out
}

/// The descriptor of an operator, as a family reads it. Generated code
/// implements it for every descriptor type.
pub trait OpEnv {
    /// The operator's name.
    fn op_name(&self) -> &'static str;
    /// Tensor `i` (inputs first, then outputs).
    fn tensor(&self, i: usize) -> &TensorDesc;
    /// Tensor `i`'s name in the spec.
    fn tensor_name(&self, i: usize) -> &'static str;
    /// The number of input tensors.
    fn input_count(&self) -> usize;
    /// `e` evaluated over the descriptor, as a count or position.
    fn count(&self, e: &Expr) -> Result<usize, OpError>;
    /// List expression `e` evaluated over the descriptor.
    fn list(&self, e: &Expr) -> Result<Vec<i128>, OpError>;
    /// Attribute `i` as a scalar: an integer, float or boolean attribute's
    /// value, an enum attribute's member position, a scalar attribute read
    /// as its tensor's data type (a list attribute is 0).
    fn scalar_attr(&self, i: usize) -> crate::scalar::Value;
    /// Every attribute as [`OpEnv::scalar_attr`] gives it, in spec order.
    fn scalar_attrs(&self) -> Vec<crate::scalar::Value>;
    /// Host input `i`, when the descriptor holds it.
    fn host(&self, i: usize) -> Option<&HostTensor>;
}

/// One call of a family: the descriptor, the family's configuration and
/// the operator's kernels.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    /// The descriptor.
    pub env: &'a dyn OpEnv,
    /// The checked configuration, in the order of [`Family::params`].
    pub config: &'a [Value],
    /// The operator's kernels.
    pub kernels: &'a [KernelEntry],
}

impl<'a> Call<'a> {
    /// The call of `env` with `config` and `kernels`.
    pub fn new(env: &'a dyn OpEnv, config: &'a [Value], kernels: &'a [KernelEntry]) -> Self {
        Call {
            env,
            config,
            kernels,
        }
    }

    /// The tensor position of tensor parameter `p`.
    pub fn slot(&self, p: usize) -> usize {
        self.config[p].tensor()
    }

    /// The description of tensor parameter `p`.
    pub fn desc(&self, p: usize) -> &'a TensorDesc {
        self.env.tensor(self.slot(p))
    }

    /// The spec's name of tensor parameter `p`.
    pub fn name(&self, p: usize) -> &'static str {
        self.env.tensor_name(self.slot(p))
    }

    /// The position among the inputs of input parameter `p`.
    pub fn input(&self, p: usize) -> usize {
        self.slot(p)
    }

    /// The position among the outputs of output parameter `p`.
    pub fn output(&self, p: usize) -> usize {
        self.slot(p) - self.env.input_count()
    }

    /// Count parameter `p` evaluated for this descriptor.
    pub fn count(&self, p: usize) -> Result<usize, OpError> {
        self.env.count(self.config[p].count())
    }

    /// List parameter `p` evaluated for this descriptor.
    pub fn list(&self, p: usize) -> Result<Vec<i128>, OpError> {
        self.env.list(self.config[p].count())
    }

    /// Optional list parameter `p` evaluated for this descriptor, `None`
    /// when the block leaves it out.
    pub fn optional_list(&self, p: usize) -> Result<Option<Vec<i128>>, OpError> {
        match self.config[p] {
            Value::Absent => Ok(None),
            v => self.env.list(v.count()).map(Some),
        }
    }

    /// The descriptions of tensor-list parameter `p`'s tensors.
    pub fn descs(&self, p: usize) -> Vec<&'a TensorDesc> {
        self.config[p]
            .tensors()
            .iter()
            .map(|&t| self.env.tensor(t))
            .collect()
    }

    /// The position of word parameter `p`'s word for this descriptor
    /// ([`ParamKind::Word`], [`ParamKind::WordByAttr`]).
    pub fn word(&self, p: usize) -> u32 {
        match self.config[p] {
            Value::WordByAttr(attr, words) => {
                let at = match self.env.scalar_attr(attr) {
                    crate::scalar::Value::B(b) => usize::from(b),
                    crate::scalar::Value::I(i) => usize::try_from(i).unwrap_or(0),
                    crate::scalar::Value::F(_) => 0,
                };
                words.get(at).copied().unwrap_or(0)
            }
            v => v.word().unwrap_or(0),
        }
    }

    /// Optional count parameter `p` evaluated for this descriptor, `None`
    /// when the block leaves it out.
    pub fn optional_count(&self, p: usize) -> Result<Option<usize>, OpError> {
        match self.config[p] {
            Value::Absent => Ok(None),
            v => self.env.count(v.count()).map(Some),
        }
    }

    /// The host tensor of input parameter `p` among `inputs`.
    pub fn host<'h>(&self, inputs: &[&'h HostTensor], p: usize) -> Result<&'h HostTensor, OpError> {
        inputs.get(self.input(p)).copied().ok_or_else(|| {
            OpError::InvalidArgument(format!("{}: missing inputs", self.env.op_name()))
        })
    }

    /// The kernel of `variant` for data types `types`, if the tables
    /// admit it.
    pub fn kernel(&self, variant: &str, types: &[DataType]) -> Option<&'static Kernel> {
        self.kernels
            .iter()
            .find(|k| k.decl.variant == variant && k.decl.types.as_slice() == types)
            .map(|k| k.kernel)
    }

    /// What a pass binds for `bindings`, in their order.
    pub fn buffers(&self, bindings: &[Binding]) -> Vec<BufferRef> {
        bindings
            .iter()
            .map(|b| b.role.buffer(|p| self.input(p), |p| self.output(p)))
            .collect()
    }
}

/// A family: the meaning of `compute <name> { .. }`.
pub trait Family: Sync {
    /// The name a spec writes after `compute`.
    fn name(&self) -> &'static str;

    /// The block's parameters.
    fn params(&self) -> &'static [Param];

    /// What the family asks of the support tables, for `config`.
    fn constraints(&self, config: &[Value]) -> &'static [Constraint] {
        let _ = config;
        &[]
    }

    /// Why the family cannot compute for tensors of data type `dtype` with
    /// `config` ([`Constraint::Computes`]): an operation its arithmetic
    /// lacks on the GPU for that type.
    fn unsupported(&self, config: &[Value], dtype: DataType) -> Option<String> {
        let _ = (config, dtype);
        None
    }

    /// A mistake in how the block combines its parameters (one of two
    /// parameters given), checked once they are lowered.
    fn misuse(&self, config: &[Value]) -> Option<Misuse> {
        let _ = config;
        None
    }

    /// True when the family reads inputs through their strides
    /// ([`crate::OperatorInfo::strided_inputs`]).
    fn strided_inputs(&self) -> bool {
        false
    }

    /// The kernels to generate for `config`, given `pairs(a, b)`: every
    /// pair of data types the tables admit for tensors `a` and `b` (tensor
    /// positions).
    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl>;

    /// True when a kernel moves one data type (its pair is `(T, T)`), which
    /// its key then names once.
    fn one_type(&self) -> bool {
        false
    }

    /// The key of kernel `k` of operator `operator` (its name qualified by
    /// its namespace): `{operator}/{variant}/{A}/{B}`, or
    /// `{operator}/{variant}/{T}` for a [`Family::one_type`] family.
    fn kernel_key(&self, operator: &str, k: &KernelDecl) -> String {
        let (a, b) = (k.types[0].spec_name(), k.types[1].spec_name());
        if self.one_type() {
            format!("{operator}/{}/{a}", k.variant)
        } else {
            format!("{operator}/{}/{a}/{b}", k.variant)
        }
    }

    /// The text of kernel `k`, keyed `key`, generated from `origin`.
    fn kernel_text(&self, config: &[Value], k: &KernelDecl, key: &str, origin: &str) -> KernelText;

    /// The accuracy contract.
    fn tolerance(&self, call: &Call<'_>) -> Tolerance {
        let _ = call;
        Tolerance::Exact
    }

    /// The CPU reference (inputs already checked against the descriptor).
    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError>;

    /// The GPU plan for a device of `class`.
    fn gpu_plan(&self, call: &Call<'_>, class: DeviceClass) -> Result<GpuPlan, OpError>;

    /// Every GPU plan the family can choose for this call, by name (the
    /// fuzzers and boundary tests run each); by default the one plan.
    fn gpu_plan_variants(&self, call: &Call<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
        let plan = self.gpu_plan(call, DeviceClass::default())?;
        Ok(vec![(self.name().to_owned(), plan)])
    }

    /// The error for the GPU's index check `check` failing at element
    /// `position`; by default a device error, for a family whose kernels
    /// check no index.
    fn index_error(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        check: usize,
        position: u64,
    ) -> OpError {
        let _ = inputs;
        OpError::Device(format!(
            "{} has no index checks, but the GPU reported check {check} at {position}",
            call.env.op_name()
        ))
    }

    /// The index tensors' bounds, for fuzzers.
    fn index_bounds(&self, call: &Call<'_>) -> Vec<IndexBounds> {
        let _ = call;
        Vec::new()
    }

    /// Lines the generated descriptor's documentation adds for `config`
    /// (what it computes, its accuracy).
    fn docs(&self, config: &[Value]) -> Vec<String> {
        let _ = config;
        Vec::new()
    }
}

/// [`Family::gpu_plan`], an [`OpError::Unsupported`] naming the operator.
pub fn gpu_plan(
    family: &dyn Family,
    call: &Call<'_>,
    class: DeviceClass,
) -> Result<GpuPlan, OpError> {
    family
        .gpu_plan(call, class)
        .map_err(|e| name_unsupported(call, e))
}

/// `e`, an [`OpError::Unsupported`] naming the call's operator.
pub fn name_unsupported(call: &Call<'_>, e: OpError) -> OpError {
    match e {
        OpError::Unsupported(m) => OpError::Unsupported(format!("{}: {m}", call.env.op_name())),
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Var;
    use crate::wgsl::segments;

    /// Every kernel of every family, for every pair of data types it
    /// accepts, is valid WGSL on core WebGPU, plain and (where it has one)
    /// segmented, with one segment count per binding.
    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        static AXIS: Expr = Expr::Int(0);
        // `in0` or `in1`, as a select: defined on every data type.
        static EVERY: [Types; DataType::ALL.len()] = {
            let mut out = [Types::new(&[]); DataType::ALL.len()];
            let mut i = 0;
            while i < out.len() {
                out[i] = Types::new(&[DataType::ALL[i]]);
                i += 1;
            }
            out
        };
        static SELECT: Arithmetic = Arithmetic {
            value: &Scalar::Select(
                &Scalar::Bool(true),
                &Scalar::Var(Var::In0),
                &Scalar::Var(Var::In1),
            ),
            types: &[Ty::T, Ty::T, Ty::T],
            bindings: &EVERY,
            text: "test",
        };
        for f in FAMILIES {
            let config: Vec<Value> = f
                .params()
                .iter()
                .enumerate()
                .map(|(i, p)| match p.kind {
                    ParamKind::Input | ParamKind::Output => Value::Tensor(i),
                    ParamKind::Count | ParamKind::OptionalCount => Value::Count(&AXIS),
                    ParamKind::List | ParamKind::OptionalList => Value::List(&AXIS),
                    ParamKind::Word(_) => Value::Word(0),
                    ParamKind::OptionalValue => Value::Absent,
                    ParamKind::Inputs { .. } | ParamKind::Outputs { .. } => Value::Tensors(&[1, 2]),
                    ParamKind::Arithmetic { .. } => Value::Arithmetic(&SELECT),
                    ParamKind::Accuracy => Value::Accuracy(None),
                    ParamKind::OptionalDomain => Value::Absent,
                    ParamKind::OptionalWord(_) => Value::Word(0),
                    // The first variable in scope, else 0.
                    ParamKind::Instruction { vars, .. } => {
                        let value: &'static Scalar = match vars.first() {
                            Some(&(v, _)) => Box::leak(Box::new(Scalar::Var(v))),
                            None => &Scalar::Int(0, Ty::T),
                        };
                        Value::Instruction(Box::leak(Box::new(Instruction {
                            value,
                            text: "test",
                        })))
                    }
                    ParamKind::AccuracyOf(_) => Value::Bound(None),
                    ParamKind::WordByAttr(_) => Value::Word(0),
                })
                .collect();
            let every = |_: usize, _: usize| {
                let all = DataType::ALL.iter().copied();
                all.clone()
                    .flat_map(|a| all.clone().map(move |b| (a, b)))
                    .collect()
            };
            let kernels = f.kernels(&config, &every);
            assert!(!kernels.is_empty(), "{}: no kernels", f.name());
            for k in kernels {
                let key = f.kernel_key("T", &k);
                let text = segments::combined(f.kernel_text(&config, &k, &key, "test"));
                let size = k.workgroup_size;
                crate::wgsl::validated_module(&key, segments::plain_part(&text), "main", size);
                // Only a kernel of several tensor bindings, whose segments
                // would pass core WebGPU's 8 storage buffers per stage,
                // may lack a segmented variant (concat of 2 or more).
                let bindings = k.bindings.len();
                match segments::segmented_part(&text) {
                    Some((counts, segmented)) => {
                        assert_eq!(counts.len(), bindings, "{key}");
                        crate::wgsl::validated_module(&key, segmented, "main", size);
                    }
                    None => assert!(bindings > 3, "{key}: no segmented variant"),
                }
            }
        }
    }
}
