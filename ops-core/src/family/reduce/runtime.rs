//! The selection's CPU reference, GPU planner and the reduce geometry
//! (merged kept and reduced dimensions, chunking) the fold shares.

use std::cmp::Ordering;

use crate::family::pow2_floor;
use crate::{
    row_major_strides, BufferRef, DataType, DeviceClass, Element, GpuPlan, HostTensor, Kernel,
    OpError, OutputInit, Pass, TensorDesc, MAX_THREAD_STEPS,
};

/// What each output element keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// The position of the selected element within the reduced sub-tensor,
    /// row-major over the reduced axes in increasing order.
    Index,
    /// The selected element itself (its raw bits).
    Value,
}

/// Which element is selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Select {
    /// The smallest.
    Min,
    /// The largest.
    Max,
}

/// How floating-point zeros compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Zeros {
    /// -0.0 and +0.0 are equal (a tie).
    Equal,
    /// -0.0 is smaller than +0.0.
    NegativeFirst,
}

/// Which of several equal candidates is selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ties {
    /// The first in row-major order of the reduced sub-tensor.
    First,
    /// The last.
    Last,
}

/// The compile-time configuration of a `reduce` compute block.
///
/// NaN always wins the selection: it compares smaller than every number for
/// `Min` and larger for `Max`; NaNs tie with each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReduceConfig {
    /// What is kept.
    pub keep: Keep,
    /// Which element is selected.
    pub select: Select,
    /// How zeros compare.
    pub zeros: Zeros,
}

/// A kernel variant of the pattern.
///
/// Every variant binds three buffers: `[Params, Input, Output]` for
/// [`Rows`](ReduceVariant::Rows) and [`Tree`](ReduceVariant::Tree),
/// `[Params, Input, Scratch(0)]` for the split passes and `[Params,
/// Scratch(0), Output]` for [`Combine`](ReduceVariant::Combine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceVariant {
    /// One thread per output element, looping over its whole reduced
    /// sub-tensor; consecutive threads take consecutive outputs, so the
    /// reads coalesce when the innermost input dimension is kept (a strided
    /// reduction). No barriers.
    Rows,
    /// A team of [`params::TEAM`] threads per output element (a power of
    /// two up to [`WORKGROUP_SIZE`]; several teams per workgroup): the team's
    /// threads stride over the sub-tensor, so consecutive threads read
    /// consecutive elements when the innermost dimension is reduced, then
    /// combine in shared memory.
    Tree,
    /// Pass 1 of a split strided reduction: one thread per (output,
    /// chunk), consecutive threads on consecutive outputs, each scanning
    /// [`params::CHUNK_LEN`] positions and writing a partial result.
    SplitRows,
    /// Pass 1 of a split contiguous reduction: a team per (output, chunk),
    /// as [`Tree`](ReduceVariant::Tree) over the chunk, writing a partial
    /// result. An all-axes reduction runs many workgroups this way.
    SplitTree,
    /// Pass 2 of a split reduction: a team per output combines its
    /// [`params::CHUNK_COUNT`] partial results and writes the output.
    Combine,
    /// Pass 1 of a contiguous reduction read 16 bytes at a time (the layout
    /// `[outputs, reduce length]`, rows a whole number of `vec4<u32>`): a
    /// team of [`params::TEAM`] threads per (output, chunk), the team's
    /// threads on consecutive vectors, each keeping its own best and writing
    /// it as a partial result (no barriers); [`Combine`](Self::Combine)
    /// follows.
    SplitLanes,
    /// A strided reduction read 16 bytes at a time (the layout `[outer,
    /// reduce length, inner]`, `inner` a whole number of `vec4<u32>`): one
    /// thread per vector of `inner` (several outputs), consecutive threads on
    /// consecutive vectors, looping over the reduced dimension and writing
    /// its outputs. No barriers.
    Columns,
    /// [`Columns`](Self::Columns) over chunks of the reduced dimension,
    /// writing partial results; [`Combine`](Self::Combine) follows.
    SplitColumns,
    /// [`SplitLanes`](Self::SplitLanes) whose team's threads then combine
    /// in shared memory, so that each (output, chunk) writes one partial
    /// result, not one per thread: the long rows and all-axes reductions of
    /// [`DeviceClass::Hardware`], where the combine of a partial per thread
    /// would leave one workgroup reading them all. (Any power-of-two team
    /// works; only workgroup teams use it, smaller teams being faster as
    /// `SplitLanes`: see `BENCHMARKS.md`, Tuning decisions.)
    SplitLanesTree,
    /// [`Combine`](Self::Combine) with teams of one thread: each thread
    /// combines one output's partial results alone, with no shared memory
    /// and no barrier. A CPU adapter (lavapipe) runs a kernel that has a
    /// barrier anywhere as coroutines, one per SIMD batch of a workgroup,
    /// even when its team tree is skipped, so a combine without one is
    /// cheaper there.
    CombineEach,
    /// [`SplitLanes`](Self::SplitLanes) over rows that are not whole
    /// vectors (`len * size` not a multiple of 16 bytes): each row's team
    /// reads the [`params::VECTORS`] vectors from the one holding the row's
    /// first element, and each element counts only when its position lies
    /// in the row. [`DeviceClass::Software`] plans only
    /// (`ReduceTuning::ragged_lanes`): on a CPU adapter, rows one element
    /// short of whole vectors ran several times slower through the word
    /// variants than whole-vector rows through `SplitLanes`.
    SplitLanesRagged,
}

impl ReduceVariant {
    /// Every variant.
    pub const ALL: [ReduceVariant; 11] = [
        ReduceVariant::Rows,
        ReduceVariant::Tree,
        ReduceVariant::SplitRows,
        ReduceVariant::SplitTree,
        ReduceVariant::Combine,
        ReduceVariant::SplitLanes,
        ReduceVariant::Columns,
        ReduceVariant::SplitColumns,
        ReduceVariant::SplitLanesTree,
        ReduceVariant::CombineEach,
        ReduceVariant::SplitLanesRagged,
    ];

    /// The variant's name in kernel keys (`reduce_rows`, `reduce_tree`,
    /// `reduce_split_rows`, `reduce_split_tree`, `reduce_combine`,
    /// `reduce_split_lanes`, `reduce_columns`, `reduce_split_columns`,
    /// `reduce_split_lanes_tree`, `reduce_combine_each`,
    /// `reduce_split_lanes_ragged`).
    pub const fn name(self) -> &'static str {
        match self {
            ReduceVariant::Rows => "reduce_rows",
            ReduceVariant::Tree => "reduce_tree",
            ReduceVariant::SplitRows => "reduce_split_rows",
            ReduceVariant::SplitTree => "reduce_split_tree",
            ReduceVariant::Combine => "reduce_combine",
            ReduceVariant::SplitLanes => "reduce_split_lanes",
            ReduceVariant::Columns => "reduce_columns",
            ReduceVariant::SplitColumns => "reduce_split_columns",
            ReduceVariant::SplitLanesTree => "reduce_split_lanes_tree",
            ReduceVariant::CombineEach => "reduce_combine_each",
            ReduceVariant::SplitLanesRagged => "reduce_split_lanes_ragged",
        }
    }

    /// True for the variants that read the input 16 bytes at a time
    /// (`array<vec4<u32>>`): `SplitLanes`, `Columns`, `SplitColumns`,
    /// `SplitLanesTree` and `SplitLanesRagged`.
    pub const fn is_vector(self) -> bool {
        matches!(
            self,
            ReduceVariant::SplitLanes
                | ReduceVariant::Columns
                | ReduceVariant::SplitColumns
                | ReduceVariant::SplitLanesTree
                | ReduceVariant::SplitLanesRagged
        )
    }

    /// True for the variants that combine in shared memory (and so have
    /// barriers): `Tree`, `SplitTree`, `Combine` and `SplitLanesTree`.
    pub const fn is_tree(self) -> bool {
        matches!(
            self,
            ReduceVariant::Tree
                | ReduceVariant::SplitTree
                | ReduceVariant::Combine
                | ReduceVariant::SplitLanesTree
        )
    }

    /// True for the first pass of a split reduction, which writes partial
    /// results to scratch buffer 0.
    pub const fn is_split(self) -> bool {
        matches!(
            self,
            ReduceVariant::SplitRows
                | ReduceVariant::SplitTree
                | ReduceVariant::SplitLanes
                | ReduceVariant::SplitLanesRagged
                | ReduceVariant::SplitColumns
                | ReduceVariant::SplitLanesTree
        )
    }
}

/// Threads per workgroup of every kernel variant.
pub const WORKGROUP_SIZE: u32 = 256;

/// The vectors a [`ReduceVariant::SplitLanesRagged`] row of `len` elements
/// of `dtype` may touch, from the vector holding its first element: at most
/// `per_vector - 1` elements of the row before it start that vector.
pub fn ragged_window(len: u64, dtype: DataType) -> u64 {
    let per = per_vector(dtype);
    (len + per - 1).div_ceil(per)
}

/// Rows of an inner block of `inner` elements of `dtype` that make a whole
/// number of [`VECTOR_BYTES`] vectors: 1 when the block is whole vectors,
/// up to 16 (an odd number of 8-bit elements).
pub fn phases(inner: u64, dtype: DataType) -> u64 {
    let bytes = inner * dtype.size_bytes() as u64;
    VECTOR_BYTES / gcd(bytes, VECTOR_BYTES)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Bytes the vector variants ([`ReduceVariant::is_vector`]) read at a time.
pub const VECTOR_BYTES: u64 = 16;

/// Elements of `dtype` in one [`VECTOR_BYTES`] vector (2 to 16).
pub const fn per_vector(dtype: DataType) -> u64 {
    VECTOR_BYTES / dtype.size_bytes() as u64
}

/// Largest [`ReduceVariant::SplitLanes`] or
/// [`ReduceVariant::SplitLanesTree`] team: a workgroup. Longer rows take
/// more chunks.
pub(crate) const MAX_LANE_TEAM: u64 = WORKGROUP_SIZE as u64;

/// Tuning of the reduce planner for one device class: every number
/// [`ReduceGeometry::strategy_on`] decides with. See `BENCHMARKS.md`,
/// Tuning decisions, for the measurements behind the values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReduceTuning {
    /// Threads a word strategy aims to run, enough to keep a large GPU's
    /// memory system busy (a few per core of a big discrete GPU); fewer
    /// outputs than this get their reductions split into chunks.
    pub target_threads: u64,
    /// Positions each thread of a [`ReduceVariant::Tree`] team scans, at
    /// least: teams of 8 threads over rows of 256 elements read 32-byte
    /// sectors whole while the combine costs 3 steps.
    pub team_elements: u64,
    /// A contiguous reduction (innermost dimension reduced) shorter than
    /// this many positions runs [`ReduceVariant::Rows`].
    pub tree_min_reduce_len: u64,
    /// Fewest positions a [`ReduceVariant::SplitRows`] chunk holds.
    pub min_chunk: u64,
    /// Vectors each thread of a [`ReduceVariant::SplitLanes`] team reads,
    /// at least, when teams are sized: a thread's loop, not its start-up
    /// and partial result, dominates its time.
    pub lane_vectors: u64,
    /// Shortest contiguous row, in vectors, that the lanes variants take
    /// (shorter rows run the word variants).
    pub lanes_min_vectors: u64,
    /// Vectors per thread of a chunk of a full-workgroup
    /// ([`MAX_LANE_TEAM`]) lanes team: the chunk of an all-axes reduction.
    pub chunk_lane_vectors: u64,
    /// Whether full-workgroup lanes teams combine in shared memory
    /// ([`ReduceVariant::SplitLanesTree`], one partial result per chunk)
    /// rather than write a partial result per thread
    /// ([`ReduceVariant::SplitLanes`]). A GPU combines a workgroup's results
    /// cheaply; the combine of a partial per thread would leave one
    /// workgroup reading them all.
    pub lanes_tree: bool,
    /// Whether rows that are not whole vectors run
    /// [`ReduceVariant::SplitLanesRagged`] (else the word variants).
    pub ragged_lanes: bool,
    /// Whether the lanes variants also take several contiguous rows per
    /// output ([`ReduceGeometry::segmented_rows`] with more than one
    /// segment; else the word variants).
    pub segmented_lanes: bool,
    /// Whether a column reduction whose inner block is not whole vectors
    /// runs [`ReduceVariant::SplitColumns`] in phases ([`phases`]; else the
    /// word variants).
    pub phased_columns: bool,
    /// Threads below which a [`ReduceVariant::Columns`] reduction is split
    /// over chunks of the reduced dimension
    /// ([`ReduceVariant::SplitColumns`]): a hardware GPU needs many threads
    /// with loads in flight.
    pub column_threads: u64,
    /// Fewest rows a [`ReduceVariant::SplitColumns`] chunk holds.
    pub min_column_rows: u64,
    /// Partial results each thread of a [`ReduceVariant::Combine`] team
    /// reads, at least: a few partials per output combine in one thread,
    /// with no barrier; many take a team of up to [`WORKGROUP_SIZE`].
    pub combine_partials: u64,
}

impl ReduceTuning {
    /// The tuning of `class`. The word strategies are tuned alike on both
    /// classes. A software adapter takes the vector variants for every
    /// layout they read and splits columns only below a few thousand
    /// threads; a hardware GPU combines full-workgroup lanes teams in
    /// shared memory over smaller chunks, splits columns up to the threads
    /// that fill it, and keeps the word variants for the layouts not
    /// measured on one (ragged rows, segments, phased columns).
    pub const fn of(class: DeviceClass) -> ReduceTuning {
        match class {
            DeviceClass::Software => ReduceTuning {
                target_threads: 1 << 17,
                team_elements: 32,
                tree_min_reduce_len: 64,
                min_chunk: 32,
                lane_vectors: 32,
                lanes_min_vectors: 16,
                chunk_lane_vectors: 64,
                lanes_tree: false,
                ragged_lanes: true,
                segmented_lanes: true,
                phased_columns: true,
                column_threads: 1 << 14,
                min_column_rows: 32,
                combine_partials: 16,
            },
            DeviceClass::Hardware => ReduceTuning {
                target_threads: 1 << 17,
                team_elements: 32,
                tree_min_reduce_len: 64,
                min_chunk: 32,
                lane_vectors: 32,
                lanes_min_vectors: 16,
                chunk_lane_vectors: 16,
                lanes_tree: true,
                ragged_lanes: false,
                segmented_lanes: false,
                phased_columns: false,
                column_threads: 1 << 17,
                min_column_rows: 32,
                combine_partials: 16,
            },
        }
    }

    /// The combine team for `partials` partial results per output.
    fn combine_team(&self, partials: u64) -> u32 {
        pow2_floor(partials / self.combine_partials).min(u64::from(WORKGROUP_SIZE)) as u32
    }

    /// The team of a lanes row of `vectors` vectors:
    /// `pow2_floor(vectors / lane_vectors)` threads, 2 to [`MAX_LANE_TEAM`].
    fn lane_team(&self, vectors: u64) -> u64 {
        pow2_floor(vectors / self.lane_vectors).clamp(2, MAX_LANE_TEAM)
    }
}

/// The chunk count that splits `len` positions into about `wanted` chunks
/// with none empty: chunks of `len.div_ceil(wanted)` positions, as many as
/// that length needs. Every split strategy's chunk count comes from here, so
/// that chunk `c` of length `chunk_len(len, chunks)` always starts before
/// `len` (an empty chunk has no element to stand for its partial result).
pub fn balanced_chunks(len: u64, wanted: u64) -> u64 {
    if len == 0 {
        return 1;
    }
    len.div_ceil(chunk_len(len, wanted))
}

/// The positions of each chunk when `len` positions are cut into `chunks`
/// chunks: `len.div_ceil(chunks)`.
pub fn chunk_len(len: u64, chunks: u64) -> u64 {
    len.div_ceil(chunks.max(1))
}

/// Words of one partial result in scratch buffer 0: the selected element's
/// raw bits (one word, two for 64-bit types), then its position
/// (`0xffffffff` for an empty chunk).
pub const fn partial_words(input: DataType) -> u64 {
    if input.size_bits() == 64 {
        3
    } else {
        2
    }
}

/// How [`reduce_plan`] runs a reduction: the passes and their team sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceStrategy {
    /// One [`ReduceVariant::Rows`] pass.
    Rows,
    /// One [`ReduceVariant::Tree`] pass with teams of `team` threads.
    Tree {
        /// Threads per output (a power of two, 2 to [`WORKGROUP_SIZE`]).
        team: u32,
    },
    /// [`ReduceVariant::SplitRows`] over `chunks` chunks per output, then
    /// [`ReduceVariant::Combine`] with teams of `combine_team`.
    SplitRows {
        /// Chunks per output.
        chunks: u32,
        /// Threads per output of the combine pass.
        combine_team: u32,
    },
    /// [`ReduceVariant::SplitTree`] with teams of `team` over `chunks`
    /// chunks per output, then [`ReduceVariant::Combine`] with teams of
    /// `combine_team`.
    SplitTree {
        /// Threads per (output, chunk).
        team: u32,
        /// Chunks per output.
        chunks: u32,
        /// Threads per output of the combine pass.
        combine_team: u32,
    },
    /// [`ReduceVariant::SplitLanes`] with teams of `team` over `chunks`
    /// chunks per output (`team * chunks` partial results per output), then
    /// [`ReduceVariant::Combine`] with teams of `combine_team`.
    SplitLanes {
        /// Contiguous rows per output: 1, or for an `[segments, outputs,
        /// len]` input reduced over its first and last axes, `segments`
        /// (each output's rows `len` apart, its partial results
        /// `segments * team * chunks`).
        segments: u32,
        /// Threads per (output, chunk).
        team: u32,
        /// Chunks per output.
        chunks: u32,
        /// Threads per output of the combine pass.
        combine_team: u32,
    },
    /// [`ReduceVariant::SplitLanesTree`] with teams of `team` over `chunks`
    /// chunks per output (`chunks` partial results per output), then
    /// [`ReduceVariant::Combine`] with teams of `combine_team`.
    SplitLanesTree {
        /// Contiguous rows per output: 1, or for an `[segments, outputs,
        /// len]` input reduced over its first and last axes, `segments`
        /// (each output's rows `len` apart, its partial results
        /// `segments * chunks`).
        segments: u32,
        /// Threads per (output, chunk).
        team: u32,
        /// Chunks per output.
        chunks: u32,
        /// Threads per output of the combine pass.
        combine_team: u32,
    },
    /// [`ReduceVariant::SplitLanesRagged`]: as `SplitLanes`, over rows
    /// that are not whole vectors.
    SplitLanesRagged {
        /// Contiguous rows per output: always 1 (see `SplitLanes`).
        segments: u32,
        /// Threads per (output, chunk).
        team: u32,
        /// Chunks per output.
        chunks: u32,
        /// Threads per output of the combine pass.
        combine_team: u32,
    },
    /// One [`ReduceVariant::Columns`] pass.
    Columns,
    /// [`ReduceVariant::SplitColumns`] over `chunks` chunks per output, then
    /// [`ReduceVariant::Combine`] with teams of `combine_team`.
    SplitColumns {
        /// Rows of the inner block that make a run of whole vectors: 1 when
        /// the inner block is whole vectors; 2 to 16 otherwise, each output
        /// then read in `phases` interleaved runs of positions.
        phases: u32,
        /// Chunks per output (of each phase).
        chunks: u32,
        /// Threads per output of the combine pass.
        combine_team: u32,
    },
}

impl ReduceStrategy {
    /// The variant of the first pass.
    pub const fn variant(self) -> ReduceVariant {
        match self {
            ReduceStrategy::Rows => ReduceVariant::Rows,
            ReduceStrategy::Tree { .. } => ReduceVariant::Tree,
            ReduceStrategy::SplitRows { .. } => ReduceVariant::SplitRows,
            ReduceStrategy::SplitTree { .. } => ReduceVariant::SplitTree,
            ReduceStrategy::SplitLanes { .. } => ReduceVariant::SplitLanes,
            ReduceStrategy::SplitLanesTree { .. } => ReduceVariant::SplitLanesTree,
            ReduceStrategy::SplitLanesRagged { .. } => ReduceVariant::SplitLanesRagged,
            ReduceStrategy::Columns => ReduceVariant::Columns,
            ReduceStrategy::SplitColumns { .. } => ReduceVariant::SplitColumns,
        }
    }

    /// The combine pass's teams: `None` for the one-pass strategies.
    pub const fn combine_team(self) -> Option<u32> {
        match self {
            ReduceStrategy::Rows | ReduceStrategy::Tree { .. } | ReduceStrategy::Columns => None,
            ReduceStrategy::SplitRows { combine_team, .. }
            | ReduceStrategy::SplitTree { combine_team, .. }
            | ReduceStrategy::SplitLanes { combine_team, .. }
            | ReduceStrategy::SplitLanesTree { combine_team, .. }
            | ReduceStrategy::SplitLanesRagged { combine_team, .. }
            | ReduceStrategy::SplitColumns { combine_team, .. } => Some(combine_team),
        }
    }

    /// The variants of the passes, in order.
    pub fn variants(self) -> Vec<ReduceVariant> {
        match self.combine_team() {
            None => vec![self.variant()],
            Some(team) => vec![self.variant(), combine_variant(team)],
        }
    }
}

/// The team and chunk count of a [`ReduceVariant::SplitLanes`] (or
/// `SplitLanesRagged`) pass over `outputs` rows of `vectors` vectors under
/// `t`: one chunk below workgroup teams, else chunks of `MAX_LANE_TEAM *
/// t.chunk_lane_vectors` vectors. `None` when the partial results (a thread
/// each, up to 3 words) would not be addressable by u32 words.
fn lane_split(t: &ReduceTuning, outputs: u64, vectors: u64) -> Option<(u64, u64)> {
    let team = t.lane_team(vectors);
    let chunks = if team < MAX_LANE_TEAM {
        1
    } else {
        balanced_chunks(
            vectors,
            vectors.div_ceil(MAX_LANE_TEAM * t.chunk_lane_vectors),
        )
    };
    let partials = outputs.checked_mul(team * chunks)?;
    if !partials_fit(partials) {
        return None;
    }
    Some((team, chunks))
}

/// Whether `partials` partial results, [`partial_words`] (3 at most) each,
/// are addressable by u32 words.
fn partials_fit(partials: u64) -> bool {
    partials
        .checked_mul(3)
        .is_some_and(|w| w <= u64::from(u32::MAX))
}

/// The combine pass's variant for teams of `team` threads:
/// [`ReduceVariant::CombineEach`] for one thread an output, else
/// [`ReduceVariant::Combine`].
pub const fn combine_variant(team: u32) -> ReduceVariant {
    if team == 1 {
        ReduceVariant::CombineEach
    } else {
        ReduceVariant::Combine
    }
}

/// The parameter words of every kernel variant, shared by [`reduce_params`]
/// and the WGSL generator ([`super::wgsl`]).
///
/// Every constant is a word index into the pass's parameter words (the
/// kernels' uniform `params` block, [`crate::Access::Uniform`]):
///
/// | words | meaning |
/// | --- | --- |
/// | 0 | output element count |
/// | 1 | reduce length (elements of each reduced sub-tensor) |
/// | 2 | kept rank `nk` (merged kept dimensions, at most 8) |
/// | 3 | reduced rank `nr` (merged reduced dimensions, at most 8) |
/// | 4 | tie rule: 0 = [`Ties::First`], 1 = [`Ties::Last`] |
/// | 5 | input element count |
/// | 6 | team size: threads per output (or per chunk) of the tree variants, 1 otherwise |
/// | 7 | chunk length: positions per chunk of the split passes (the reduce length otherwise) |
/// | 8..16 | kept sizes, outermost first (unused slots 1) |
/// | 16..24 | kept input strides in elements (unused slots 0) |
/// | 24..32 | reduced sizes, outermost first (unused slots 1) |
/// | 32..40 | reduced input strides in elements (unused slots 0) |
/// | 40 | chunk count: chunks per output of a split reduction (1 otherwise); partial results per output for the combine pass |
/// | 41 | vector variants: `vec4<u32>` vectors per row (`SplitLanes`) or per `inner` (`Columns`), or per `phases` rows of `inner` (`SplitColumns`); 0 otherwise |
/// | 42 | `SplitColumns`: phases, the rows of `inner` that make whole vectors (1 when `inner` is whole vectors); 1 otherwise |
/// | 43 | `SplitLanes`, `SplitLanesTree`: segments, the contiguous rows of each output (1 otherwise) |
///
/// Output element `o` reads from input offset
/// `sum(coord_k * kept_stride_k)` plus, for position `r` of its sub-tensor,
/// `sum(coord_j * reduced_stride_j)`, where the coordinates are `o` and `r`
/// decomposed row-major over the kept and reduced sizes.
///
/// A split reduction's partial results (scratch buffer 0) are
/// [`partial_words`] words each, the `chunk count` partials of output `o`
/// at partial indices `o * chunk count ..`; chunk `c` covers positions
/// `c * chunk length .. min((c + 1) * chunk length, reduce length)`.
///
/// A `SplitLanes` or `SplitLanesTree` pass of `segments` S > 1 reads an
/// `[S, outputs, len]` input as `S * outputs` rows of `len`: row `n *
/// outputs + o`'s partial results go to output `o`'s partials, segment `n`
/// after segments `0..n`, with positions `n * len + ..`.
///
/// A `SplitColumns` pass of `phases` P > 1 reads its `[outer, len, inner]`
/// input as `[outer, len / P, P * inner]`, whose rows are whole vectors:
/// its chunk length counts those rows, and it writes `P * chunk count`
/// partial results per output, the chunks of phase `q` (positions `q`,
/// `q + P`, ...) at `(o * P + q) * chunk count ..`; the combine pass reads
/// them as `P * chunk count` partials per output.
pub mod params {
    /// Output element count.
    pub const OUTPUT_COUNT: usize = 0;
    /// Reduce length.
    pub const REDUCE_LEN: usize = 1;
    /// Kept rank.
    pub const KEPT_RANK: usize = 2;
    /// Reduced rank.
    pub const REDUCED_RANK: usize = 3;
    /// Tie rule (0 first, 1 last).
    pub const TIES: usize = 4;
    /// Input element count.
    pub const INPUT_COUNT: usize = 5;
    /// Threads per team of the tree variants (1 for the others).
    pub const TEAM: usize = 6;
    /// Positions per chunk of a split pass (the reduce length otherwise).
    pub const CHUNK_LEN: usize = 7;
    /// First kept size.
    pub const KEPT_SIZES: usize = 8;
    /// First kept stride.
    pub const KEPT_STRIDES: usize = 16;
    /// First reduced size.
    pub const REDUCED_SIZES: usize = 24;
    /// First reduced stride.
    pub const REDUCED_STRIDES: usize = 32;
    /// Chunks per output of a split reduction (1 otherwise).
    pub const CHUNK_COUNT: usize = 40;
    /// Vectors per row (`SplitLanes`) or per inner block (`Columns`).
    pub const VECTORS: usize = 41;
    /// Rows of the inner block per run of whole vectors (`SplitColumns`).
    pub const PHASES: usize = 42;
    /// Contiguous rows per output (`SplitLanes`, `SplitLanesTree`).
    pub const SEGMENTS: usize = 43;
    /// Total word count.
    pub const LEN: usize = 44;
    /// Most merged dimensions of each kind.
    pub const MAX_DIMS: usize = 8;
    /// The word value of [`Ties::First`](super::Ties::First).
    pub const TIES_FIRST: u32 = 0;
    /// The word value of [`Ties::Last`](super::Ties::Last).
    pub const TIES_LAST: u32 = 1;
}

/// How an input tensor is walked by a reduction over some axes.
///
/// Dimensions of size 1 are dropped and neighbouring dimensions of the same
/// kind (both kept or both reduced) are merged, which changes neither the
/// output order nor the row-major positions within a sub-tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceGeometry {
    /// Kept dimensions `(size, input stride in elements)`, outermost first.
    pub kept: Vec<(u64, u64)>,
    /// Reduced dimensions `(size, input stride in elements)`, outermost first.
    pub reduced: Vec<(u64, u64)>,
    /// Output element count: the product of the kept sizes.
    pub output_count: u64,
    /// Elements of each reduced sub-tensor: the product of the reduced sizes.
    pub reduce_len: u64,
    /// Input element count.
    pub input_count: u64,
}

impl ReduceGeometry {
    /// The geometry of reducing a tensor of `sizes` over `axes` (any order).
    ///
    /// Fails with [`OpError::InvalidArgument`] for an axis out of range or
    /// given twice, and with [`OpError::TooLarge`] when the element count
    /// overflows `u64`.
    pub fn new(sizes: &[u32], axes: &[u32]) -> Result<ReduceGeometry, OpError> {
        let reduced_mask = axes_mask(sizes.len(), axes)?;
        let input_count = count_of(sizes)?;
        // Zero-aware like the input's count: with a zero-size dimension the
        // input is empty whatever the other sizes, and so is the output
        // when the zero is kept.
        let of_kind = |reduced: bool| -> Vec<u32> {
            sizes
                .iter()
                .zip(&reduced_mask)
                .filter(|(_, &r)| r == reduced)
                .map(|(&s, _)| s)
                .collect()
        };
        let output_count =
            crate::element_count(&of_kind(false)).ok_or_else(|| OpError::TooLarge {
                what: "output".into(),
                limit: "element count overflows u64".into(),
            })?;
        let reduce_len = count_of(&of_kind(true))?;
        let strides = row_major_strides(sizes);
        let mut kept: Vec<(u64, u64)> = Vec::new();
        let mut reduced: Vec<(u64, u64)> = Vec::new();
        // Kind of the last dimension pushed (true = reduced), for merging.
        let mut last: Option<bool> = None;
        for (d, (&size, &stride)) in sizes.iter().zip(&strides).enumerate() {
            let size = u64::from(size);
            let is_reduced = reduced_mask[d];
            if size == 1 {
                continue;
            }
            let list = if is_reduced { &mut reduced } else { &mut kept };
            // A merged size divides `output_count` or `reduce_len`; it can
            // only saturate when a zero-size dimension of its kind makes
            // that count 0 (nothing is then read).
            match list.last_mut() {
                Some(prev) if last == Some(is_reduced) => {
                    *prev = (prev.0.saturating_mul(size), stride)
                }
                _ => list.push((size, stride)),
            }
            last = Some(is_reduced);
        }
        Ok(ReduceGeometry {
            kept,
            reduced,
            output_count,
            reduce_len,
            input_count,
        })
    }

    /// True when the innermost merged input dimension is reduced, so that
    /// each output's elements lie in runs of consecutive addresses (a
    /// *contiguous* reduction); false when it is kept (a *strided* one:
    /// consecutive outputs read consecutive addresses).
    pub fn is_contiguous(&self) -> bool {
        self.reduced.last().is_some_and(|&(_, stride)| stride == 1)
    }

    /// How [`reduce_plan`] runs this reduction with the word variants,
    /// which read any layout: the word strategy of
    /// [`DeviceClass::Hardware`]'s `ReduceTuning` (the classes tune it
    /// alike; [`strategy_on`](Self::strategy_on) falls back to its own
    /// class's).
    pub fn strategy(&self) -> ReduceStrategy {
        self.word_strategy(&ReduceTuning::of(DeviceClass::Hardware))
    }

    /// The word strategy under `t`:
    ///
    /// - Strided reductions, and contiguous ones shorter than
    ///   `t.tree_min_reduce_len`: [`ReduceStrategy::Rows`] when there are at
    ///   least `t.target_threads` outputs or the sub-tensors are short,
    ///   otherwise [`ReduceStrategy::SplitRows`] with enough chunks (of at
    ///   least `t.min_chunk` positions) to run about `t.target_threads`
    ///   threads.
    /// - Contiguous reductions: teams sized so that each thread scans about
    ///   `t.team_elements` positions (at most [`WORKGROUP_SIZE`] threads);
    ///   [`ReduceStrategy::Tree`] when that runs `t.target_threads` threads
    ///   or the teams are not full workgroups, otherwise
    ///   [`ReduceStrategy::SplitTree`] with full-workgroup teams over chunks
    ///   of at least `WORKGROUP_SIZE * t.team_elements` positions (an
    ///   all-axes reduction: many workgroups, then one combine).
    fn word_strategy(&self, t: &ReduceTuning) -> ReduceStrategy {
        let (outputs, len) = (self.output_count.max(1), self.reduce_len);
        let wg = u64::from(WORKGROUP_SIZE);
        if !self.is_contiguous() || len < t.tree_min_reduce_len {
            if outputs >= t.target_threads || len < 2 * t.min_chunk {
                return ReduceStrategy::Rows;
            }
            let chunks = balanced_chunks(
                len,
                t.target_threads
                    .div_ceil(outputs)
                    .min(len.div_ceil(t.min_chunk)),
            );
            // Chunk bounds must not wrap u32 (see params::CHUNK_LEN).
            if chunks < 2 || len + chunks > u64::from(u32::MAX) {
                return ReduceStrategy::Rows;
            }
            return ReduceStrategy::SplitRows {
                chunks: chunks as u32,
                combine_team: t.combine_team(chunks),
            };
        }
        let team = pow2_floor(len / t.team_elements).min(wg);
        // Team indices must fit u32.
        if outputs.saturating_mul(team) > u64::from(u32::MAX) {
            return ReduceStrategy::Rows;
        }
        if outputs * team >= t.target_threads || team < wg {
            return ReduceStrategy::Tree { team: team as u32 };
        }
        let chunks = balanced_chunks(
            len,
            t.target_threads
                .div_ceil(outputs * wg)
                .min(len.div_ceil(wg * t.team_elements)),
        );
        if chunks < 2 || len + chunks > u64::from(u32::MAX) {
            return ReduceStrategy::Tree { team: team as u32 };
        }
        ReduceStrategy::SplitTree {
            team: WORKGROUP_SIZE,
            chunks: chunks as u32,
            combine_team: t.combine_team(chunks),
        }
    }

    /// The variant of the first pass of [`strategy`](Self::strategy).
    pub fn variant(&self) -> ReduceVariant {
        self.strategy().variant()
    }

    /// How [`reduce_plan`] runs this reduction over elements of `dtype`: a
    /// vector strategy, reading 16 bytes at a time, when the layout allows
    /// it, otherwise the word strategy ([`strategy`](Self::strategy)).
    ///
    /// - [`ReduceStrategy::SplitLanes`]: one merged reduced dimension of
    ///   stride 1 (the layout `[outputs, len]`) whose rows are whole vectors,
    ///   at least `ReduceTuning::lanes_min_vectors` of them. Teams of
    ///   `pow2_floor(vectors / lane_vectors)` threads (2 to
    ///   [`WORKGROUP_SIZE`]); full-workgroup teams take chunks of
    ///   `WORKGROUP_SIZE * chunk_lane_vectors` vectors.
    /// - [`ReduceStrategy::Columns`]: one merged reduced dimension whose
    ///   stride is the innermost kept dimension (the layout `[outer, len,
    ///   inner]`), `inner` a whole number of vectors; one thread per vector
    ///   of `inner`. [`ReduceStrategy::SplitColumns`] when that is fewer than
    ///   `ReduceTuning::column_threads` threads: chunks of at least
    ///   `ReduceTuning::min_column_rows` rows bring it up to about that
    ///   many.
    /// - [`ReduceStrategy::SplitLanesRagged`]: rows that are not whole
    ///   vectors, read over each row's window of vectors.
    /// - `SplitLanes` over segments: the first and last axes of `[N, C, L]`
    ///   ([`segmented_rows`](Self::segmented_rows)), its N * C rows of L read
    ///   as any rows are.
    /// - `SplitColumns` in phases: an inner block that is not whole vectors,
    ///   read P rows of it at a time ([`phases`]).
    ///
    /// The last three serve [`DeviceClass::Software`] only.
    pub fn strategy_for(&self, dtype: DataType) -> ReduceStrategy {
        self.strategy_on(dtype, DeviceClass::Software)
    }

    /// [`strategy_for`](Self::strategy_for) on an adapter of `class`, with
    /// the numbers and choices of `ReduceTuning::of``(class)`.
    /// [`DeviceClass::Hardware`] differs in two places:
    ///
    /// - rows long enough for full-workgroup [`ReduceStrategy::SplitLanes`]
    ///   teams run [`ReduceStrategy::SplitLanesTree`] over chunks of
    ///   `WORKGROUP_SIZE * chunk_lane_vectors` vectors, combining in shared
    ///   memory: one partial result per chunk instead of one per thread;
    /// - column reductions are split up to more threads.
    pub fn strategy_on(&self, dtype: DataType, class: DeviceClass) -> ReduceStrategy {
        let t = ReduceTuning::of(class);
        self.vector_strategy(dtype, &t)
            .unwrap_or_else(|| self.word_strategy(&t))
    }

    /// [`ReduceStrategy::SplitLanesRagged`] for contiguous rows that are not
    /// whole vectors, where `t.ragged_lanes`: the teams and chunks of
    /// `SplitLanes` over each row's window of [`ragged_window`] vectors.
    fn ragged_strategy(&self, dtype: DataType, t: &ReduceTuning) -> Option<ReduceStrategy> {
        if !t.ragged_lanes {
            return None;
        }
        let outputs = self.output_count;
        let window = ragged_window(self.reduce_len, dtype);
        if window < t.lanes_min_vectors {
            return None;
        }
        let (team, chunks) = lane_split(t, outputs, window)?;
        // Element offsets (o * len + position) fit u32.
        if outputs
            .checked_mul(self.reduce_len)
            .is_none_or(|e| e > u64::from(u32::MAX))
        {
            return None;
        }
        Some(ReduceStrategy::SplitLanesRagged {
            segments: 1,
            team: team as u32,
            chunks: chunks as u32,
            combine_team: t.combine_team(team * chunks),
        })
    }

    /// The contiguous rows each output reduces: `(segments, len)` for one
    /// reduced dimension of stride 1 (`segments` 1), or for an `[segments,
    /// outputs, len]` input reduced over its first and last axes (one kept
    /// dimension between two reduced ones, e.g. a per-channel reduction of
    /// `[N, C, H, W]` over axes 0, 2 and 3).
    pub fn segmented_rows(&self) -> Option<(u64, u64)> {
        match (self.reduced.as_slice(), self.kept.as_slice()) {
            (&[(len, 1)], _) => Some((1, len)),
            (&[(segments, outer_stride), (len, 1)], &[(kept, kept_stride)])
                if kept_stride == len && outer_stride == kept * len =>
            {
                Some((segments, len))
            }
            _ => None,
        }
    }

    /// The lanes strategies over [`segmented_rows`](Self::segmented_rows):
    /// `outputs * segments` rows of `len` elements (segments of more than one
    /// row where `t.segmented_lanes`).
    fn lanes_strategy(&self, dtype: DataType, t: &ReduceTuning) -> Option<ReduceStrategy> {
        let (segments, len) = self.segmented_rows()?;
        if !(len * dtype.size_bytes() as u64).is_multiple_of(VECTOR_BYTES) {
            return if segments == 1 {
                self.ragged_strategy(dtype, t)
            } else {
                None
            };
        }
        let rows = self.output_count.checked_mul(segments)?;
        let vectors = len / per_vector(dtype);
        if vectors < t.lanes_min_vectors || segments > u64::from(u32::MAX) {
            return None;
        }
        let team = t.lane_team(vectors);
        if t.lanes_tree && team == MAX_LANE_TEAM {
            let chunks = balanced_chunks(
                vectors,
                vectors.div_ceil(MAX_LANE_TEAM * t.chunk_lane_vectors),
            );
            let partials = rows.checked_mul(chunks)?;
            if !partials_fit(partials)
                || partials
                    .checked_mul(team)
                    .is_none_or(|t| t > u64::from(u32::MAX))
            {
                return None;
            }
            return Some(ReduceStrategy::SplitLanesTree {
                segments: segments as u32,
                team: team as u32,
                chunks: chunks as u32,
                combine_team: t.combine_team(segments * chunks),
            });
        }
        let (team, chunks) = lane_split(t, rows, vectors)?;
        Some(ReduceStrategy::SplitLanes {
            segments: segments as u32,
            team: team as u32,
            chunks: chunks as u32,
            combine_team: t.combine_team(segments * team * chunks),
        })
    }

    fn vector_strategy(&self, dtype: DataType, t: &ReduceTuning) -> Option<ReduceStrategy> {
        let bytes = dtype.size_bytes() as u64;
        let outputs = self.output_count;
        if outputs == 0 || self.reduce_len < 2 {
            return None;
        }
        match self.segmented_rows() {
            Some((1, _)) => return self.lanes_strategy(dtype, t),
            Some(_) if t.segmented_lanes => return self.lanes_strategy(dtype, t),
            Some(_) => return None,
            None => {}
        }
        let &[(len, stride)] = self.reduced.as_slice() else {
            return None;
        };
        let per_vector = per_vector(dtype);
        let &(inner, inner_stride) = self.kept.last()?;
        if inner_stride != 1 || inner != stride {
            return None;
        }
        let wanted = t.column_threads;
        if !(inner * bytes).is_multiple_of(VECTOR_BYTES) {
            return self.phased_strategy(dtype, t);
        }
        let threads = outputs / per_vector;
        if threads >= wanted || len < 2 * t.min_column_rows {
            return Some(ReduceStrategy::Columns);
        }
        let chunks = balanced_chunks(len, wanted.div_ceil(threads).min(len / t.min_column_rows));
        if chunks < 2 {
            return Some(ReduceStrategy::Columns);
        }
        if !partials_fit(outputs * chunks) {
            return None;
        }
        Some(ReduceStrategy::SplitColumns {
            phases: 1,
            chunks: chunks as u32,
            combine_team: t.combine_team(chunks),
        })
    }

    /// [`ReduceStrategy::SplitColumns`] of `phases` P > 1 for an `[outer,
    /// len, inner]` reduction whose inner block is not whole vectors, where
    /// `t.phased_columns`: P rows of `inner` make whole vectors, so the
    /// input reads as `[outer, len / P, P * inner]` in vectors when P
    /// divides `len` and `len / P` is at least `t.min_column_rows`. Each
    /// output then has P partial results a chunk.
    fn phased_strategy(&self, dtype: DataType, t: &ReduceTuning) -> Option<ReduceStrategy> {
        if !t.phased_columns {
            return None;
        }
        let bytes = dtype.size_bytes() as u64;
        let (len, inner) = (self.reduce_len, self.kept.last()?.0);
        let phases = phases(inner, dtype);
        if !len.is_multiple_of(phases) || len / phases < t.min_column_rows {
            return None;
        }
        let rows = len / phases;
        let outer = self.output_count / inner;
        let threads = outer * (phases * inner * bytes / VECTOR_BYTES);
        let chunks = balanced_chunks(
            rows,
            t.column_threads
                .div_ceil(threads)
                .min(rows / t.min_column_rows)
                .max(1),
        );
        // Partial results and element offsets fit u32.
        if !partials_fit(self.output_count.saturating_mul(phases * chunks))
            || self.input_count > u64::from(u32::MAX)
        {
            return None;
        }
        Some(ReduceStrategy::SplitColumns {
            phases: phases as u32,
            chunks: chunks as u32,
            combine_team: t.combine_team(phases * chunks),
        })
    }
}

impl ReduceStrategy {
    /// The same strategy with its combine pass run by teams of `team`
    /// threads (`None` for the one-pass strategies).
    fn with_combine_team(self, team: u32) -> Option<ReduceStrategy> {
        let mut s = self;
        match &mut s {
            ReduceStrategy::Rows | ReduceStrategy::Tree { .. } | ReduceStrategy::Columns => {
                return None
            }
            ReduceStrategy::SplitRows { combine_team, .. }
            | ReduceStrategy::SplitTree { combine_team, .. }
            | ReduceStrategy::SplitLanes { combine_team, .. }
            | ReduceStrategy::SplitLanesTree { combine_team, .. }
            | ReduceStrategy::SplitLanesRagged { combine_team, .. }
            | ReduceStrategy::SplitColumns { combine_team, .. } => *combine_team = team,
        }
        Some(s)
    }
}

impl ReduceGeometry {
    /// Every strategy [`reduce_plan_with`] accepts for this reduction over
    /// `dtype`: the planner's choices on both device classes and its word
    /// strategy ([`strategy`](Self::strategy)), then the word strategies
    /// taken past the thresholds that rule them out here, as far as
    /// [`MAX_THREAD_STEPS`] allows — one
    /// [`ReduceStrategy::Rows`] pass, [`ReduceStrategy::Tree`] teams,
    /// [`ReduceStrategy::SplitRows`] and [`ReduceStrategy::SplitTree`] over
    /// chunks of `min_chunk` and `WORKGROUP_SIZE * team_elements`
    /// positions of each class's `ReduceTuning` (the word kernels read any
    /// layout) — and the column
    /// strategies both split and not where the layout is columns of whole
    /// vectors. Every split strategy appears with its combine pass both as
    /// [`ReduceVariant::CombineEach`] and as [`ReduceVariant::Combine`].
    ///
    /// Each gives the same result bit for bit; tests and `ops fuzz
    /// --variants all` run them all. Empty when there is nothing to reduce
    /// (no output element).
    pub fn strategies(&self, dtype: DataType) -> Vec<ReduceStrategy> {
        let mut out: Vec<ReduceStrategy> = Vec::new();
        if self.output_count == 0 {
            return out;
        }
        let mut push = |s: ReduceStrategy| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        let picked = [
            self.strategy_on(dtype, DeviceClass::Software),
            self.strategy_on(dtype, DeviceClass::Hardware),
            self.strategy(),
        ];
        picked.into_iter().for_each(&mut push);
        let (outputs, len) = (self.output_count, self.reduce_len);
        // No thread loops more than MAX_THREAD_STEPS times (the planner's own
        // picks reach it only past 1 GiB inputs).
        let steps = |per_thread: u64| per_thread <= MAX_THREAD_STEPS;
        if steps(len) {
            push(ReduceStrategy::Rows);
        }
        let wg = u64::from(WORKGROUP_SIZE);
        let max = u64::from(u32::MAX);
        // Partial results and chunk bounds addressable by u32.
        let splits = |chunks: u64| {
            chunks >= 2
                && len + chunks <= max
                && partials_fit(outputs.saturating_mul(chunks))
                && steps(chunk_len(len, chunks))
        };
        // Each class's word and column strategies past their thresholds.
        for class in DeviceClass::ALL {
            let t = ReduceTuning::of(class);
            let team = pow2_floor(len / t.team_elements).clamp(2, wg);
            if len >= 2 && outputs.saturating_mul(team) <= max && steps(len / team) {
                push(ReduceStrategy::Tree { team: team as u32 });
            }
            let chunks = balanced_chunks(len, len.div_ceil(t.min_chunk));
            if splits(chunks) {
                push(ReduceStrategy::SplitRows {
                    chunks: chunks as u32,
                    combine_team: t.combine_team(chunks),
                });
            }
            let chunks = balanced_chunks(len, len.div_ceil(wg * t.team_elements));
            if splits(chunks) && outputs.saturating_mul(chunks * wg) <= max {
                push(ReduceStrategy::SplitTree {
                    team: WORKGROUP_SIZE,
                    chunks: chunks as u32,
                    combine_team: t.combine_team(chunks),
                });
            }
            // Columns of whole vectors: both one pass and split at the most.
            if picked.iter().any(|s| {
                matches!(
                    s,
                    ReduceStrategy::Columns | ReduceStrategy::SplitColumns { phases: 1, .. }
                )
            }) {
                if steps(len) {
                    push(ReduceStrategy::Columns);
                }
                let chunks = balanced_chunks(len, len / t.min_column_rows);
                if chunks >= 2 && partials_fit(outputs.saturating_mul(chunks)) {
                    push(ReduceStrategy::SplitColumns {
                        phases: 1,
                        chunks: chunks as u32,
                        combine_team: t.combine_team(chunks),
                    });
                }
            }
        }
        let splits: Vec<ReduceStrategy> = out.clone();
        for s in splits {
            if let Some(team) = s.combine_team() {
                let other = if team == 1 { 2 } else { 1 };
                if let Some(t) = s.with_combine_team(other) {
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
        }
        out
    }
}

/// Which dimensions `axes` reduces; rejects out-of-range and repeated axes.
fn axes_mask(rank: usize, axes: &[u32]) -> Result<Vec<bool>, OpError> {
    let mut mask = vec![false; rank];
    for &a in axes {
        let slot = mask.get_mut(a as usize).ok_or_else(|| {
            OpError::InvalidArgument(format!(
                "reduce axis {a} is out of range for a tensor of {rank} dimensions"
            ))
        })?;
        if *slot {
            return Err(OpError::InvalidArgument(format!(
                "reduce axis {a} is given more than once in {axes:?}"
            )));
        }
        *slot = true;
    }
    Ok(mask)
}

fn count_of(sizes: &[u32]) -> Result<u64, OpError> {
    crate::element_count(sizes).ok_or_else(|| OpError::TooLarge {
        what: "tensor".into(),
        limit: "element count overflows u64".into(),
    })
}

/// Checks the output description and data types against the configuration
/// and the geometry; shared by the CPU reference and the plan builder.
fn check_call(
    cfg: &ReduceConfig,
    input: DataType,
    geometry: &ReduceGeometry,
    output: &TensorDesc,
) -> Result<(), OpError> {
    let out_count = count_of(&output.sizes)?;
    if out_count != geometry.output_count {
        return Err(OpError::InvalidArgument(format!(
            "the output holds {out_count} elements (sizes {:?}) but the reduction yields {}",
            output.sizes, geometry.output_count
        )));
    }
    match cfg.keep {
        Keep::Value if output.dtype != input => {
            return Err(OpError::InvalidArgument(format!(
                "the output data type {} must be the input data type {input}",
                output.dtype
            )))
        }
        Keep::Index if !output.dtype.is_int() => {
            return Err(OpError::InvalidArgument(format!(
                "the output data type {} must be an integer type to hold indices",
                output.dtype
            )))
        }
        Keep::Index if geometry.output_count > 0 && geometry.reduce_len > 0 => {
            let max = geometry.reduce_len as i128 - 1;
            let fits = crate::with_element_type!(output.dtype, T => T::from_i128(max).is_some());
            if !fits {
                return Err(OpError::InvalidArgument(format!(
                    "index {max} of a reduction over {} elements does not fit the output data type {}",
                    geometry.reduce_len, output.dtype
                )));
            }
        }
        _ => {}
    }
    if geometry.output_count > 0 && geometry.reduce_len == 0 {
        return Err(OpError::InvalidArgument(format!(
            "cannot reduce over an empty dimension: {} output elements would each reduce 0 elements",
            geometry.output_count
        )));
    }
    Ok(())
}

/// The CPU reference of the pattern.
///
/// Reduces `input` over `axes` (any order; each at most once) into a tensor
/// described by `output`, whose element count must be the product of the
/// kept sizes (its shape is otherwise free). Comparisons use the typed
/// element ([`Element::partial_cmp_value`], [`Element::is_nan`],
/// [`Element::is_negative_zero`]), never the bit keys of the GPU kernels.
pub fn reduce_cpu(
    cfg: &ReduceConfig,
    ties: Ties,
    input: &HostTensor,
    axes: &[u32],
    output: &TensorDesc,
) -> Result<HostTensor, OpError> {
    let geometry = ReduceGeometry::new(input.sizes(), axes)?;
    check_call(cfg, input.dtype(), &geometry, output)?;
    let best =
        crate::with_element_type!(input.dtype(), T => select_cpu::<T>(cfg, ties, input, axes))?;
    let mut bytes = Vec::with_capacity(best.len() * output.dtype.size_bytes());
    let width = input.dtype().size_bytes();
    for &(pos, offset) in &best {
        match cfg.keep {
            Keep::Value => {
                bytes.extend_from_slice(&input.bytes()[offset * width..(offset + 1) * width])
            }
            Keep::Index => crate::with_element_type!(output.dtype, O => {
                // check_call proved every position fits.
                let v = O::from_i128(pos as i128).ok_or_else(|| {
                    OpError::InvalidArgument(format!("index {pos} does not fit {}", output.dtype))
                })?;
                v.write_le(&mut bytes);
            }),
        }
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// For every output element, `(position, input offset)` of its selected element.
///
/// Walks the input in row-major order; each element's output index and
/// position come straight from its coordinates, independently of the merged
/// [`ReduceGeometry`] the GPU path uses.
fn select_cpu<T: Element>(
    cfg: &ReduceConfig,
    ties: Ties,
    input: &HostTensor,
    axes: &[u32],
) -> Result<Vec<(u64, usize)>, OpError> {
    let sizes = input.sizes();
    let mask = axes_mask(sizes.len(), axes)?;
    let kept: Vec<u32> = sizes
        .iter()
        .zip(&mask)
        .filter(|(_, &r)| !r)
        .map(|(&s, _)| s)
        .collect();
    let out_count = crate::element_count(&kept).ok_or_else(|| OpError::TooLarge {
        what: "output".into(),
        limit: "element count overflows u64".into(),
    })?;
    let out_count = usize::try_from(out_count).map_err(|_| OpError::TooLarge {
        what: "output".into(),
        limit: "host address space".into(),
    })?;
    let candidates =
        (out_count as u64).checked_mul(std::mem::size_of::<Option<(u64, usize)>>() as u64);
    crate::check_host_bytes(
        || "a selection's input copy and candidates".into(),
        (input.len() as u64)
            .checked_mul(std::mem::size_of::<T>() as u64)
            .zip(candidates)
            .and_then(|(a, b)| a.checked_add(b)),
    )?;
    let values: Vec<T> = input.to_vec::<T>().unwrap_or_default();
    let mut best: Vec<Option<(u64, usize)>> = vec![None; out_count];
    let mut coords = vec![0u32; sizes.len()];
    for (offset, &value) in values.iter().enumerate() {
        if offset > 0 {
            // Advance the row-major coordinates.
            for d in (0..sizes.len()).rev() {
                coords[d] += 1;
                if coords[d] < sizes[d] {
                    break;
                }
                coords[d] = 0;
            }
        }
        let (mut out, mut pos) = (0u64, 0u64);
        for d in 0..sizes.len() {
            let (c, s) = (u64::from(coords[d]), u64::from(sizes[d]));
            if mask[d] {
                pos = pos * s + c;
            } else {
                out = out * s + c;
            }
        }
        let slot = &mut best[out as usize];
        let replace = match *slot {
            None => true,
            Some((best_pos, best_offset)) => match compare(cfg, value, values[best_offset]) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => match ties {
                    Ties::First => pos < best_pos,
                    Ties::Last => pos > best_pos,
                },
            },
        };
        if replace {
            *slot = Some((pos, offset));
        }
    }
    best.into_iter()
        .map(|b| {
            b.ok_or_else(|| {
                OpError::InvalidArgument("cannot reduce over an empty dimension".into())
            })
        })
        .collect()
}

/// `Less` when `a` is preferred to `b` by the selection, `Equal` for a tie.
fn compare<T: Element>(cfg: &ReduceConfig, a: T, b: T) -> Ordering {
    // Order by "smaller" first; NaN is the winner of either selection.
    let numeric = match (a.is_nan(), b.is_nan()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        (false, false) => a.partial_cmp_value(b).unwrap_or(Ordering::Equal),
    };
    let numeric = match (numeric, cfg.zeros) {
        (Ordering::Equal, Zeros::NegativeFirst) => {
            // Equal values that differ only in the sign of zero.
            b.is_negative_zero().cmp(&a.is_negative_zero())
        }
        (o, _) => o,
    };
    match cfg.select {
        Select::Min => numeric,
        Select::Max => numeric.reverse(),
    }
}

/// The parameter words of a one-pass [`ReduceVariant::Rows`] reduction
/// (layout in [`params`]); [`reduce_plan`] adjusts the team and chunk words
/// of each pass.
///
/// Fails with [`OpError::TooLarge`] when a count, size or stride exceeds
/// `u32`, or more than [`params::MAX_DIMS`] merged dimensions of a kind remain.
pub fn reduce_params(geometry: &ReduceGeometry, ties: Ties) -> Result<Vec<u32>, OpError> {
    let too_large = |what: &str| OpError::TooLarge {
        what: what.into(),
        limit: "u32 addressing of the reduce kernels".into(),
    };
    let word = |v: u64, what: &str| u32::try_from(v).map_err(|_| too_large(what));
    let mut p = vec![0u32; params::LEN];
    p[params::OUTPUT_COUNT] = word(geometry.output_count, "output element count")?;
    p[params::REDUCE_LEN] = word(geometry.reduce_len, "reduce length")?;
    p[params::INPUT_COUNT] = word(geometry.input_count, "input element count")?;
    p[params::TIES] = match ties {
        Ties::First => params::TIES_FIRST,
        Ties::Last => params::TIES_LAST,
    };
    p[params::TEAM] = 1;
    p[params::CHUNK_LEN] = p[params::REDUCE_LEN];
    p[params::CHUNK_COUNT] = 1;
    p[params::PHASES] = 1;
    p[params::SEGMENTS] = 1;
    for (dims, rank_word, sizes_at, strides_at, what) in [
        (
            &geometry.kept,
            params::KEPT_RANK,
            params::KEPT_SIZES,
            params::KEPT_STRIDES,
            "kept",
        ),
        (
            &geometry.reduced,
            params::REDUCED_RANK,
            params::REDUCED_SIZES,
            params::REDUCED_STRIDES,
            "reduced",
        ),
    ] {
        if dims.len() > params::MAX_DIMS {
            return Err(OpError::TooLarge {
                what: format!("{} merged {what} dimensions", dims.len()),
                limit: format!("{} dimensions", params::MAX_DIMS),
            });
        }
        p[rank_word] = dims.len() as u32;
        for slot in 0..params::MAX_DIMS {
            let (size, stride) = dims.get(slot).copied().unwrap_or((1, 0));
            p[sizes_at + slot] = word(size, "dimension size")?;
            p[strides_at + slot] = word(stride, "dimension stride")?;
        }
    }
    Ok(p)
}

/// One reduction to plan: what [`reduce_plan`], [`reduce_plans`] and
/// [`reduce_plan_with`] take.
pub struct ReduceCall<'a> {
    /// The selection the spec declares.
    pub cfg: &'a ReduceConfig,
    /// The tie rule, from the call's attribute.
    pub ties: Ties,
    /// The input tensor.
    pub input: &'a TensorDesc,
    /// The plan's input slot of `input`.
    pub input_slot: usize,
    /// The reduced axes.
    pub axes: &'a [u32],
    /// The output tensor.
    pub output: &'a TensorDesc,
    /// The plan's output slot of `output`.
    pub output_slot: usize,
    /// The generated kernel of a variant for this call's data types
    /// (`None`: not generated, an [`OpError::Unsupported`] when planned).
    pub kernel: &'a dyn Fn(ReduceVariant) -> Option<&'static Kernel>,
}

impl ReduceCall<'_> {
    /// The call's geometry, once the call is checked against its
    /// configuration (data types, output shape).
    fn geometry(&self) -> Result<ReduceGeometry, OpError> {
        let geometry = ReduceGeometry::new(&self.input.sizes, self.axes)?;
        check_call(self.cfg, self.input.dtype, &geometry, self.output)?;
        Ok(geometry)
    }
}

/// The GPU plan of a reduction on an adapter of `class`, run as
/// [`ReduceGeometry::strategy_on`] says for the input's data type (a vector
/// strategy when rows or inner blocks are whole 16-byte vectors, else
/// [`ReduceGeometry::strategy`]).
///
/// - [`ReduceStrategy::Rows`], [`ReduceStrategy::Tree`] and
///   [`ReduceStrategy::Columns`]: one pass binding `[Params,
///   Input(input_slot), Output(output_slot)]`.
/// - The split strategies: a [`ReduceVariant::SplitRows`],
///   [`ReduceVariant::SplitTree`], [`ReduceVariant::SplitLanes`],
///   [`ReduceVariant::SplitLanesTree`] or
///   [`ReduceVariant::SplitColumns`] pass binding `[Params,
///   Input(input_slot), Scratch(0)]` that writes its partial results (per
///   output: `chunk count`, or `team * chunk count` for `SplitLanes`), then
///   a [`ReduceVariant::Combine`] pass binding `[Params, Scratch(0),
///   Output(output_slot)]`. Partial results keep the selected element's
///   bits and position, and every combine breaks ties by position, so the
///   result is the CPU reference's whatever the chunking.
///
/// The call's `kernel` returns the generated kernel of a variant (`None`:
/// not generated, an [`OpError::Unsupported`]). The plan's `outputs` has
/// `output_slot + 1` entries, all [`OutputInit::Zero`] (the packed sub-word
/// stores of 8- and 16-bit outputs rely on it). With no output elements
/// the plan has no pass.
pub fn reduce_plan(call: &ReduceCall<'_>, class: DeviceClass) -> Result<GpuPlan, OpError> {
    let geometry = call.geometry()?;
    let strategy = geometry.strategy_on(call.input.dtype, class);
    plan_strategy(call, &geometry, strategy)
}

/// Every plan of [`ReduceGeometry::strategies`] for this call, each with
/// its strategy's name (`SplitColumns { phases: 1, chunks: 50, ..}`):
/// what tests and `ops fuzz --variants all` run beside the planner's
/// choice. Empty when the call has no output element.
pub fn reduce_plans(call: &ReduceCall<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
    let geometry = call.geometry()?;
    geometry
        .strategies(call.input.dtype)
        .into_iter()
        .map(|s| Ok((format!("{s:?}"), plan_strategy(call, &geometry, s)?)))
        .collect()
}

/// [`reduce_plan`] run as `strategy` says, which must be one of
/// [`ReduceGeometry::strategies`] for the call ([`OpError::InvalidArgument`]
/// otherwise; with no output element any strategy gives the empty plan).
pub fn reduce_plan_with(
    call: &ReduceCall<'_>,
    strategy: ReduceStrategy,
) -> Result<GpuPlan, OpError> {
    let geometry = call.geometry()?;
    if geometry.output_count > 0 && !geometry.strategies(call.input.dtype).contains(&strategy) {
        return Err(OpError::InvalidArgument(format!(
            "{strategy:?} is not a strategy of this reduction ({:?} over axes {:?})",
            call.input.sizes, call.axes
        )));
    }
    plan_strategy(call, &geometry, strategy)
}

/// The plan of a checked call ([`ReduceCall::geometry`] passed) run as
/// `strategy`, one of `geometry.strategies`: the body shared by
/// [`reduce_plan`], [`reduce_plans`] and [`reduce_plan_with`].
fn plan_strategy(
    call: &ReduceCall<'_>,
    geometry: &ReduceGeometry,
    strategy: ReduceStrategy,
) -> Result<GpuPlan, OpError> {
    let &ReduceCall {
        ties,
        input,
        input_slot,
        output,
        output_slot,
        kernel,
        ..
    } = call;
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Zero; output_slot + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    if geometry.output_count == 0 {
        return Ok(plan);
    }
    // Every word index the kernels compute must fit u32.
    let words = |desc: &TensorDesc, count: u64| {
        count
            .checked_mul(desc.dtype.size_bytes() as u64)
            .map(|b| b.div_ceil(4))
            .filter(|&w| w <= u64::from(u32::MAX))
            .ok_or_else(|| OpError::TooLarge {
                what: format!("a {} tensor of {count} elements", desc.dtype),
                limit: "u32 word addressing of the reduce kernels".into(),
            })
    };
    words(input, geometry.input_count)?;
    words(output, geometry.output_count)?;
    let base = reduce_params(geometry, ties)?;
    let kernel = |variant: ReduceVariant| {
        kernel(variant).ok_or_else(|| {
            OpError::Unsupported(format!(
                "no {} kernel for input {} and output {}",
                variant.name(),
                input.dtype,
                output.dtype
            ))
        })
    };
    let wg = u64::from(WORKGROUP_SIZE);
    let outputs = geometry.output_count;
    let input_buffers = vec![
        BufferRef::Params,
        BufferRef::Input(input_slot),
        BufferRef::Output(output_slot),
    ];
    let with = |team: u32, chunk_len: u64, chunks: u32| {
        let mut p = base.clone();
        p[params::TEAM] = team;
        // chunk_len <= reduce_len, which fits u32.
        p[params::CHUNK_LEN] = chunk_len as u32;
        p[params::CHUNK_COUNT] = chunks;
        p
    };
    let per_vector = per_vector(input.dtype);
    let len = geometry.reduce_len;
    // The column strategies' inner block: the innermost kept dimension.
    let inner = geometry.kept.last().map_or(1, |&(size, _)| size);
    // Each split strategy: its first pass's variant, its parameters and
    // threads, then the partial results per output and the combine team.
    let (split, split_params, threads, per_output, combine_team) = match strategy {
        ReduceStrategy::Rows => {
            plan.passes.push(Pass {
                kernel: kernel(ReduceVariant::Rows)?,
                buffers: input_buffers,
                params: base,
                workgroups: outputs.div_ceil(wg),
            });
            return Ok(plan);
        }
        ReduceStrategy::Tree { team } => {
            plan.passes.push(Pass {
                kernel: kernel(ReduceVariant::Tree)?,
                buffers: input_buffers,
                params: with(team, len, 1),
                workgroups: (outputs * u64::from(team)).div_ceil(wg),
            });
            return Ok(plan);
        }
        ReduceStrategy::Columns => {
            let mut p = base;
            p[params::VECTORS] = vectors_word(inner / per_vector)?;
            plan.passes.push(Pass {
                kernel: kernel(ReduceVariant::Columns)?,
                buffers: input_buffers,
                params: p,
                workgroups: (outputs / per_vector).div_ceil(wg),
            });
            return Ok(plan);
        }
        ReduceStrategy::SplitRows {
            chunks,
            combine_team,
        } => {
            let p = with(1, chunk_len(len, u64::from(chunks)), chunks);
            let partials = u64::from(chunks);
            (
                ReduceVariant::SplitRows,
                p,
                outputs * partials,
                partials,
                combine_team,
            )
        }
        ReduceStrategy::SplitTree {
            team,
            chunks,
            combine_team,
        } => {
            let p = with(team, chunk_len(len, u64::from(chunks)), chunks);
            let threads = outputs * u64::from(chunks) * u64::from(team);
            let partials = u64::from(chunks);
            (ReduceVariant::SplitTree, p, threads, partials, combine_team)
        }
        ReduceStrategy::SplitLanes {
            segments,
            team,
            chunks,
            combine_team,
        }
        | ReduceStrategy::SplitLanesTree {
            segments,
            team,
            chunks,
            combine_team,
        }
        | ReduceStrategy::SplitLanesRagged {
            segments,
            team,
            chunks,
            combine_team,
        } => {
            // Chunks of whole vectors (of each ragged row's window) of the
            // outputs' rows; a partial result per thread, or per team for
            // the tree.
            let segments = u64::from(segments);
            let row_len = len / segments;
            let vectors = match strategy.variant() {
                ReduceVariant::SplitLanesRagged => ragged_window(len, input.dtype),
                _ => row_len / per_vector,
            };
            let chunk = chunk_len(vectors, u64::from(chunks)) * per_vector;
            let mut p = with(team, chunk, chunks);
            p[params::VECTORS] = vectors_word(vectors)?;
            p[params::SEGMENTS] = segments as u32;
            let teams = outputs * segments * u64::from(chunks);
            let per_team = match strategy.variant() {
                ReduceVariant::SplitLanesTree => 1,
                _ => u64::from(team),
            };
            (
                strategy.variant(),
                p,
                teams * u64::from(team),
                segments * u64::from(chunks) * per_team,
                combine_team,
            )
        }
        ReduceStrategy::SplitColumns {
            phases,
            chunks,
            combine_team,
        } => {
            // Rows of `phases * inner` elements, whole vectors.
            let phases = u64::from(phases);
            let rows = len / phases;
            let mut p = with(1, chunk_len(rows, u64::from(chunks)), chunks);
            p[params::PHASES] = phases as u32;
            p[params::VECTORS] = vectors_word(phases * inner / per_vector)?;
            let threads = outputs * phases / per_vector * u64::from(chunks);
            let partials = phases * u64::from(chunks);
            (
                ReduceVariant::SplitColumns,
                p,
                threads,
                partials,
                combine_team,
            )
        }
    };
    let partials = outputs * per_output;
    if partials.saturating_mul(partial_words(input.dtype)) > u64::from(u32::MAX)
        || threads > u64::from(u32::MAX)
    {
        return Err(OpError::TooLarge {
            what: format!("{partials} partial results"),
            limit: "u32 addressing of the reduce kernels".into(),
        });
    }
    plan.scratch_bytes
        .push(partials * partial_words(input.dtype) * 4);
    plan.passes.push(Pass {
        kernel: kernel(split)?,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(input_slot),
            BufferRef::Scratch(0),
        ],
        params: split_params.clone(),
        workgroups: threads.div_ceil(wg),
    });
    let mut combine = split_params;
    combine[params::TEAM] = combine_team;
    // per_output <= partials, checked above.
    combine[params::CHUNK_COUNT] = per_output as u32;
    plan.passes.push(Pass {
        kernel: kernel(combine_variant(combine_team))?,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Scratch(0),
            BufferRef::Output(output_slot),
        ],
        params: combine,
        workgroups: (outputs * u64::from(combine_team)).div_ceil(wg),
    });
    Ok(plan)
}

/// The [`params::VECTORS`] word: a count of vectors.
fn vectors_word(vectors: u64) -> Result<u32, OpError> {
    u32::try_from(vectors).map_err(|_| OpError::TooLarge {
        what: format!("{vectors} 16-byte vectors of a row or inner block"),
        limit: "u32 addressing of the reduce kernels".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    const ARG_MIN: ReduceConfig = ReduceConfig {
        keep: Keep::Index,
        select: Select::Min,
        zeros: Zeros::Equal,
    };
    const ARG_MAX: ReduceConfig = ReduceConfig {
        keep: Keep::Index,
        select: Select::Max,
        zeros: Zeros::Equal,
    };
    const REDUCE_MIN: ReduceConfig = ReduceConfig {
        keep: Keep::Value,
        select: Select::Min,
        zeros: Zeros::NegativeFirst,
    };
    const REDUCE_MAX: ReduceConfig = ReduceConfig {
        keep: Keep::Value,
        select: Select::Max,
        zeros: Zeros::NegativeFirst,
    };

    fn run<T: Element, O: Element>(
        cfg: ReduceConfig,
        ties: Ties,
        sizes: &[u32],
        data: &[T],
        axes: &[u32],
        out_sizes: &[u32],
    ) -> Vec<O> {
        let input = HostTensor::from_slice(sizes.to_vec(), data).unwrap();
        let out = reduce_cpu(
            &cfg,
            ties,
            &input,
            axes,
            &TensorDesc::new(O::DTYPE, out_sizes.to_vec()),
        )
        .unwrap();
        out.to_vec::<O>().unwrap()
    }

    #[test]
    fn argmin_seed_examples() {
        let x = [1i32, 2, 3, 3, 0, 4, 2, 5, 2];
        let all = run::<i32, u32>(ARG_MIN, Ties::First, &[3, 3], &x, &[0, 1], &[1, 1]);
        assert_eq!(all, [4]);
        let rows = run::<i32, i64>(ARG_MIN, Ties::First, &[3, 3], &x, &[0], &[1, 3]);
        assert_eq!(rows, [0, 1, 2]);
        let cols = run::<i32, i32>(ARG_MIN, Ties::First, &[3, 3], &x, &[1], &[3, 1]);
        assert_eq!(cols, [0, 1, 0]);
        // The output shape may drop the reduced axes.
        let cols = run::<i32, u64>(ARG_MIN, Ties::First, &[3, 3], &x, &[1], &[3]);
        assert_eq!(cols, [0, 1, 0]);
    }

    #[test]
    fn ties_first_and_last() {
        let x = [1u8, 2, 3, 2, 1];
        assert_eq!(
            run::<u8, u32>(ARG_MIN, Ties::First, &[5], &x, &[0], &[1]),
            [0]
        );
        assert_eq!(
            run::<u8, u32>(ARG_MIN, Ties::Last, &[5], &x, &[0], &[1]),
            [4]
        );
        let y = [3i16, 1, 3, 0, 3];
        assert_eq!(
            run::<i16, u32>(ARG_MAX, Ties::First, &[5], &y, &[0], &[1]),
            [0]
        );
        assert_eq!(
            run::<i16, u32>(ARG_MAX, Ties::Last, &[5], &y, &[0], &[1]),
            [4]
        );
    }

    #[test]
    fn nan_wins() {
        let x = [1.0f32, f32::NAN, -5.0, f32::NAN, f32::NEG_INFINITY];
        assert_eq!(
            run::<f32, u32>(ARG_MIN, Ties::First, &[5], &x, &[0], &[1]),
            [1]
        );
        assert_eq!(
            run::<f32, u32>(ARG_MIN, Ties::Last, &[5], &x, &[0], &[1]),
            [3]
        );
        assert_eq!(
            run::<f32, u32>(ARG_MAX, Ties::First, &[5], &x, &[0], &[1]),
            [1]
        );
        // Keep::Value keeps the selected NaN's payload.
        let a = f64::from_bits(0x7ff8_0000_0000_0001);
        let b = f64::from_bits(0xfff8_0000_0000_0002);
        let v = run::<f64, f64>(REDUCE_MIN, Ties::First, &[3], &[0.5, a, b], &[0], &[1]);
        assert_eq!(v[0].to_bits(), a.to_bits());
        let v = run::<f64, f64>(REDUCE_MAX, Ties::Last, &[3], &[0.5, a, b], &[0], &[1]);
        assert_eq!(v[0].to_bits(), b.to_bits());
        let h = [f16::from_f32(2.0), f16::NAN];
        assert_eq!(
            run::<f16, i64>(ARG_MIN, Ties::First, &[2], &h, &[0], &[]),
            [1]
        );
    }

    #[test]
    fn signed_zeros() {
        let x = [0.0f32, -0.0, 1.0];
        // Equal: a tie, broken by position.
        assert_eq!(
            run::<f32, u32>(ARG_MIN, Ties::First, &[3], &x, &[0], &[1]),
            [0]
        );
        assert_eq!(
            run::<f32, u32>(ARG_MIN, Ties::Last, &[3], &x, &[0], &[1]),
            [1]
        );
        let y = [0.0f32, -0.0, -1.0];
        assert_eq!(
            run::<f32, u32>(ARG_MAX, Ties::First, &[3], &y, &[0], &[1]),
            [0]
        );
        assert_eq!(
            run::<f32, u32>(ARG_MAX, Ties::Last, &[3], &y, &[0], &[1]),
            [1]
        );
        // NegativeFirst: -0.0 < +0.0.
        let v = run::<f32, f32>(REDUCE_MIN, Ties::First, &[3], &x, &[0], &[1]);
        assert_eq!(v[0].to_bits(), (-0.0f32).to_bits());
        let v = run::<f32, f32>(REDUCE_MAX, Ties::Last, &[3], &y, &[0], &[1]);
        assert_eq!(v[0].to_bits(), 0.0f32.to_bits());
        let neg_first = ReduceConfig {
            keep: Keep::Index,
            ..REDUCE_MIN
        };
        let z = [f16::ZERO, f16::NEG_ZERO, f16::ZERO];
        assert_eq!(
            run::<f16, u8>(neg_first, Ties::Last, &[3], &z, &[0], &[1]),
            [1]
        );
    }

    #[test]
    fn keep_value_is_bit_exact() {
        let big = (1u64 << 53) + 1;
        let x = [big + 2, big, big + 1, u64::MAX];
        assert_eq!(
            run::<u64, u64>(REDUCE_MIN, Ties::First, &[4], &x, &[0], &[1]),
            [big]
        );
        assert_eq!(
            run::<u64, u64>(REDUCE_MAX, Ties::First, &[2, 2], &x, &[1], &[2, 1]),
            [big + 2, u64::MAX]
        );
        let i = [-128i8, 127, 0, -1];
        assert_eq!(
            run::<i8, i8>(REDUCE_MIN, Ties::First, &[4], &i, &[0], &[1]),
            [-128]
        );
        assert_eq!(
            run::<i8, i8>(REDUCE_MAX, Ties::First, &[2, 2], &i, &[0], &[2]),
            [0, 127]
        );
        let f = [1e-310f64, -1e-310, f64::INFINITY, -f64::MAX];
        let v = run::<f64, f64>(REDUCE_MIN, Ties::First, &[4], &f, &[0], &[1]);
        assert_eq!(v[0].to_bits(), (-f64::MAX).to_bits());
        let v = run::<f64, f64>(REDUCE_MAX, Ties::First, &[4], &f, &[0], &[1]);
        assert_eq!(v[0], f64::INFINITY);
    }

    #[test]
    fn axes_in_any_order() {
        // 2x3x2: reduce axes {2, 0} == {0, 2}; positions row-major over (axis 0, axis 2).
        let x: Vec<i32> = vec![5, 9, 1, 7, 3, 3, 8, 0, 6, 2, 4, 1];
        let a = run::<i32, u32>(ARG_MAX, Ties::First, &[2, 3, 2], &x, &[2, 0], &[1, 3, 1]);
        let b = run::<i32, u32>(ARG_MAX, Ties::First, &[2, 3, 2], &x, &[0, 2], &[3]);
        assert_eq!(a, b);
        // Column 0: [5,9,8,0] -> 1; column 1: [1,7,6,2] -> 1; column 2: [3,3,4,1] -> 2.
        assert_eq!(a, [1, 1, 2]);
    }

    /// The bench's shapes: what each device class runs.
    #[test]
    fn hardware_class_strategies() {
        let hw = |sizes: &[u32], axes: &[u32], dt| {
            ReduceGeometry::new(sizes, axes)
                .unwrap()
                .strategy_on(dt, DeviceClass::Hardware)
        };
        let sw = |sizes: &[u32], axes: &[u32], dt| {
            ReduceGeometry::new(sizes, axes).unwrap().strategy_for(dt)
        };
        let cube = [256, 256, 256];
        let f32 = DataType::Float32;
        // All axes: 2^22 vectors in chunks of 256 * 16, one partial each.
        assert_eq!(
            hw(&cube, &[0, 1, 2], f32),
            ReduceStrategy::SplitLanesTree {
                segments: 1,
                team: 256,
                chunks: 1024,
                combine_team: 64
            }
        );
        assert_eq!(
            sw(&cube, &[0, 1, 2], f32),
            ReduceStrategy::SplitLanes {
                segments: 1,
                team: 256,
                chunks: 256,
                combine_team: 256
            }
        );
        // Rows of 64 vectors: teams of 2 threads writing a partial each, on
        // both.
        assert_eq!(
            sw(&cube, &[2], f32),
            ReduceStrategy::SplitLanes {
                segments: 1,
                team: 2,
                chunks: 1,
                combine_team: 1
            }
        );
        assert_eq!(hw(&cube, &[2], f32), sw(&cube, &[2], f32));
        // Columns: 16K threads suffice on a CPU; a GPU splits the 256 rows
        // into 8 chunks of 32 (128K threads).
        for axes in [[0], [1]] {
            assert_eq!(sw(&cube, &axes, f32), ReduceStrategy::Columns);
            assert_eq!(
                hw(&cube, &axes, f32),
                ReduceStrategy::SplitColumns {
                    phases: 1,
                    chunks: 8,
                    combine_team: 1
                }
            );
        }
        // Enough column threads already: no split.
        assert_eq!(hw(&[64, 1 << 19], &[0], f32), ReduceStrategy::Columns);
        // Ragged rows: words on hardware plans, SplitLanesRagged on software.
        let odd = [(1 << 12) + 1, 255];
        let words = ReduceGeometry::new(&odd, &[0, 1]).unwrap().strategy();
        assert_eq!(hw(&odd, &[0, 1], f32), words);
        assert!(matches!(
            sw(&odd, &[0, 1], f32),
            ReduceStrategy::SplitLanesRagged { .. }
        ));
    }

    #[test]
    fn segmented_lanes_for_rows_a_kept_dimension_apart() {
        let f32 = DataType::Float32;
        let g = ReduceGeometry::new(&[256, 256, 256], &[0, 2]).unwrap();
        assert_eq!(g.segmented_rows(), Some((256, 256)));
        // 65,536 rows of 64 vectors in teams of 2: 512 partials an output.
        assert_eq!(
            g.strategy_on(f32, DeviceClass::Software),
            ReduceStrategy::SplitLanes {
                segments: 256,
                team: 2,
                chunks: 1,
                combine_team: 32
            }
        );
        assert_eq!(g.strategy_on(f32, DeviceClass::Hardware), g.strategy());
        // A per-channel reduction of [N, C, H, W]: rows of H * W.
        let g = ReduceGeometry::new(&[8, 64, 16, 16], &[0, 2, 3]).unwrap();
        assert_eq!(g.segmented_rows(), Some((8, 256)));
        assert!(matches!(
            g.strategy_on(f32, DeviceClass::Software),
            ReduceStrategy::SplitLanes { segments: 8, .. }
        ));
        // Rows that are not whole vectors, or too short, keep the words.
        let g = ReduceGeometry::new(&[8, 64, 255], &[0, 2]).unwrap();
        assert_eq!(g.strategy_on(f32, DeviceClass::Software), g.strategy());
        let g = ReduceGeometry::new(&[8, 64, 32], &[0, 2]).unwrap();
        assert_eq!(g.strategy_on(f32, DeviceClass::Software), g.strategy());
        // Not the layout: two kept dimensions, or the innermost kept.
        let g = ReduceGeometry::new(&[4, 8, 64, 256], &[1, 3]).unwrap();
        assert_eq!(g.segmented_rows(), None);
        let g = ReduceGeometry::new(&[8, 64, 256], &[0, 1]).unwrap();
        assert_eq!(g.segmented_rows(), None);
        let g = ReduceGeometry::new(&[8, 64, 256], &[2]).unwrap();
        assert_eq!(g.segmented_rows(), Some((1, 256)));
    }

    #[test]
    fn phased_columns_for_inner_blocks_not_whole_vectors() {
        use DataType::{Float16, Float32, Int64, Int8};
        assert_eq!(phases(255, Float32), 4);
        assert_eq!(phases(254, Float32), 2);
        assert_eq!(phases(256, Float32), 1);
        assert_eq!(phases(49, Float16), 8);
        assert_eq!(phases(49, Int8), 16);
        assert_eq!(phases(49, Int64), 2);
        let sw = |sizes: &[u32], dtype| {
            ReduceGeometry::new(sizes, &[1])
                .unwrap()
                .strategy_on(dtype, DeviceClass::Software)
        };
        // [256, 256, 255] over its middle axis: rows of 4 * 255 FLOAT32
        // elements, 65,280 threads, one chunk; 4 partial results an output.
        assert_eq!(
            sw(&[256, 256, 255], Float32),
            ReduceStrategy::SplitColumns {
                phases: 4,
                chunks: 1,
                combine_team: 1
            }
        );
        // Few outputs: chunks of at least min_column_rows rows of phases.
        assert_eq!(
            sw(&[2, 1024, 49], Float16),
            ReduceStrategy::SplitColumns {
                phases: 8,
                chunks: 4,
                combine_team: 2
            }
        );
        // A length that is no multiple of the phases, or under 32 rows of
        // them, keeps the word strategy; so do hardware plans.
        let words = |sizes: &[u32]| ReduceGeometry::new(sizes, &[1]).unwrap().strategy();
        assert_eq!(sw(&[256, 258, 255], Float32), words(&[256, 258, 255]));
        assert_eq!(sw(&[256, 124, 255], Float32), words(&[256, 124, 255]));
        let g = ReduceGeometry::new(&[256, 256, 255], &[1]).unwrap();
        assert_eq!(g.strategy_on(Float32, DeviceClass::Hardware), g.strategy());
    }

    #[test]
    fn geometry_merges_and_picks_variants() {
        let g = ReduceGeometry::new(&[2, 1, 3, 4, 5], &[2, 3]).unwrap();
        assert_eq!(g.kept, vec![(2, 60), (5, 1)]);
        assert_eq!(g.reduced, vec![(12, 5)]);
        assert_eq!((g.output_count, g.reduce_len, g.input_count), (10, 12, 120));
        assert!(!g.is_contiguous());
        assert_eq!(g.strategy(), ReduceStrategy::Rows);
        let g = ReduceGeometry::new(&[1000, 7], &[1]).unwrap();
        assert!(g.is_contiguous());
        assert_eq!(g.variant(), ReduceVariant::Rows);
        let g = ReduceGeometry::new(&[4, 100], &[1]).unwrap();
        assert_eq!(g.strategy(), ReduceStrategy::Tree { team: 2 });
        // Rows of 256: teams of 8, each thread scanning 32 positions.
        let g = ReduceGeometry::new(&[256, 256, 256], &[2]).unwrap();
        assert_eq!(g.strategy(), ReduceStrategy::Tree { team: 8 });
        // All axes: many workgroups over chunks, then one combine.
        let g = ReduceGeometry::new(&[256, 256, 256], &[0, 1, 2]).unwrap();
        assert_eq!(
            g.strategy(),
            ReduceStrategy::SplitTree {
                team: 256,
                chunks: 512,
                combine_team: 32
            }
        );
        // Strided with few outputs: chunks of at least min_chunk positions.
        let g = ReduceGeometry::new(&[4096, 4], &[0]).unwrap();
        assert_eq!(
            g.strategy(),
            ReduceStrategy::SplitRows {
                chunks: 128,
                combine_team: 8
            }
        );
        let g = ReduceGeometry::new(&[256, 1 << 17], &[0]).unwrap();
        assert_eq!(g.strategy(), ReduceStrategy::Rows);
        // 2^17 INT8 outputs: 2^13 threads of 16, split in two.
        assert_eq!(
            g.strategy_for(DataType::Int8),
            ReduceStrategy::SplitColumns {
                phases: 1,
                chunks: 2,
                combine_team: 1
            }
        );
        assert_eq!(g.strategy_for(DataType::Float64), ReduceStrategy::Columns);
        assert_eq!(g.strategy_for(DataType::Float64).variants().len(), 1);
        assert!(g.strategy_for(DataType::Int8).variant().is_vector());
        assert!(!g.strategy().variant().is_vector());
        assert!(!ReduceVariant::Combine.is_vector() && ReduceVariant::SplitLanes.is_split());
        // Vector strategies: rows of whole 16-byte vectors.
        let g = ReduceGeometry::new(&[256, 256, 256], &[2]).unwrap();
        let lanes = |team, chunks, combine_team| ReduceStrategy::SplitLanes {
            segments: 1,
            team,
            chunks,
            combine_team,
        };
        assert_eq!(g.strategy_for(DataType::Float32), lanes(2, 1, 1));
        assert_eq!(g.strategy_for(DataType::Int8), lanes(2, 1, 1));
        // Combine teams of one thread run the barrier-free combine.
        assert_eq!(
            g.strategy_for(DataType::Float32).variants(),
            [ReduceVariant::SplitLanes, ReduceVariant::CombineEach]
        );
        let g = ReduceGeometry::new(&[2, 20000], &[0, 1]).unwrap();
        assert_eq!(g.strategy_for(DataType::Float32), lanes(256, 1, 16));
        assert_eq!(
            g.strategy_for(DataType::Float32).variants(),
            [ReduceVariant::SplitLanes, ReduceVariant::Combine]
        );
        // Ragged rows: software plans read them as vectors too.
        let r = ReduceGeometry::new(&[256, 256, 255], &[2]).unwrap();
        assert_eq!(ragged_window(255, DataType::Float32), 65);
        assert_eq!(ragged_window(7, DataType::Int8), 2);
        assert_eq!(
            r.strategy_on(DataType::Float32, DeviceClass::Software),
            ReduceStrategy::SplitLanesRagged {
                segments: 1,
                team: 2,
                chunks: 1,
                combine_team: 1
            }
        );
        assert_eq!(
            r.strategy_on(DataType::Float32, DeviceClass::Hardware),
            r.strategy()
        );
        // A ragged row shorter than lanes_min_vectors vectors: words.
        let r = ReduceGeometry::new(&[256, 57], &[1]).unwrap();
        assert_eq!(
            r.strategy_on(DataType::Float32, DeviceClass::Software),
            r.strategy()
        );
        // One ragged row of 2^20 + 1 elements: chunks of workgroup teams.
        let r = ReduceGeometry::new(&[(1 << 20) + 1], &[0]).unwrap();
        assert!(matches!(
            r.strategy_on(DataType::Float32, DeviceClass::Software),
            ReduceStrategy::SplitLanesRagged {
                segments: 1,
                team: 256,
                chunks: 17,
                ..
            }
        ));
        assert_eq!(combine_variant(1), ReduceVariant::CombineEach);
        assert_eq!(combine_variant(2), ReduceVariant::Combine);
        assert!(!ReduceVariant::CombineEach.is_tree() && !ReduceVariant::CombineEach.is_split());
        assert_eq!(g.strategy_for(DataType::Int16), lanes(128, 1, 8));
        // Rows of 7 bytes, or of fewer than lanes_min_vectors vectors: words.
        let g = ReduceGeometry::new(&[256, 7], &[1]).unwrap();
        assert_eq!(g.strategy_for(DataType::Int8), g.strategy());
        let g = ReduceGeometry::new(&[256, 60], &[1]).unwrap();
        assert_eq!(g.strategy_for(DataType::Float32), g.strategy());
        // Columns: inner blocks of whole vectors.
        let g = ReduceGeometry::new(&[256, 256, 256], &[0]).unwrap();
        assert_eq!(g.strategy_for(DataType::Float32), ReduceStrategy::Columns);
        let g = ReduceGeometry::new(&[256, 256, 256], &[1]).unwrap();
        assert_eq!(g.strategy_for(DataType::Float32), ReduceStrategy::Columns);
        let g = ReduceGeometry::new(&[64, 4], &[0]).unwrap();
        assert_eq!(
            g.strategy_for(DataType::Float32),
            ReduceStrategy::SplitColumns {
                phases: 1,
                chunks: 2,
                combine_team: 1
            }
        );
        assert_eq!(g.strategy_for(DataType::Int8), g.strategy());
        // Two reduced dimensions: words.
        let g = ReduceGeometry::new(&[8, 16, 16], &[0, 2]).unwrap();
        assert_eq!(g.strategy_for(DataType::Float32), g.strategy());
        assert!(ReduceGeometry::new(&[2, 2], &[2]).is_err());
        assert!(ReduceGeometry::new(&[2, 2], &[1, 1]).is_err());
    }

    #[test]
    fn argument_errors() {
        let input = HostTensor::from_slice([2, 3], &[1u8; 6]).unwrap();
        let bad = |cfg: ReduceConfig, out: TensorDesc| {
            matches!(
                reduce_cpu(&cfg, Ties::First, &input, &[1], &out),
                Err(OpError::InvalidArgument(_))
            )
        };
        assert!(bad(ARG_MIN, TensorDesc::new(DataType::Uint32, [3])));
        assert!(bad(ARG_MIN, TensorDesc::new(DataType::Float32, [2])));
        assert!(bad(REDUCE_MIN, TensorDesc::new(DataType::Int8, [2])));
        let wide = HostTensor::zeros(TensorDesc::new(DataType::Uint8, [300])).unwrap();
        let r = reduce_cpu(
            &ARG_MIN,
            Ties::First,
            &wide,
            &[0],
            &TensorDesc::new(DataType::Int8, [1]),
        );
        assert!(matches!(r, Err(OpError::InvalidArgument(_))));
        let empty = HostTensor::zeros(TensorDesc::new(DataType::Uint8, [2, 0])).unwrap();
        let r = reduce_cpu(
            &ARG_MIN,
            Ties::First,
            &empty,
            &[1],
            &TensorDesc::new(DataType::Int32, [2]),
        );
        match r {
            Err(OpError::InvalidArgument(m)) => {
                assert!(m.starts_with("cannot reduce over an empty dimension"))
            }
            other => panic!("{other:?}"),
        }
        let r = reduce_cpu(
            &ARG_MIN,
            Ties::First,
            &empty,
            &[0],
            &TensorDesc::new(DataType::Int32, [0]),
        )
        .unwrap();
        assert!(r.is_empty());
    }

    #[test]
    fn plan_shape() {
        static K: Kernel = Kernel::new("test/reduce", "", "main", &[], WORKGROUP_SIZE);
        let input = TensorDesc::new(DataType::Float16, [1000, 7]);
        let out = TensorDesc::new(DataType::Float16, [1000]);
        let plan = reduce_plan(
            &ReduceCall {
                cfg: &REDUCE_MIN,
                ties: Ties::Last,
                input: &input,
                input_slot: 0,
                axes: &[1],
                output: &out,
                output_slot: 0,
                kernel: &|v| (v == ReduceVariant::Rows).then_some(&K),
            },
            DeviceClass::Software,
        )
        .unwrap();
        assert_eq!(plan.outputs, vec![OutputInit::Zero]);
        let pass = &plan.passes[0];
        assert_eq!(pass.workgroups, 4);
        assert_eq!(pass.params.len(), params::LEN);
        assert_eq!(pass.params[params::TIES], params::TIES_LAST);
        assert_eq!(pass.params[params::OUTPUT_COUNT], 1000);
        assert_eq!(pass.params[params::REDUCE_LEN], 7);
        assert_eq!(pass.params[params::KEPT_SIZES], 1000);
        assert_eq!(pass.params[params::KEPT_STRIDES], 7);
        assert_eq!(pass.params[params::TEAM], 1);
        assert!(plan.scratch_bytes.is_empty());
        // A split reduction: partials in scratch 0, then a combine. 2^20
        // FLOAT64 positions in 2^19 vectors: teams of 256 over 32 chunks of
        // 256 * 64 vectors.
        let all = TensorDesc::new(DataType::Float64, [1 << 12, 1 << 8]);
        let plan = reduce_plan(
            &ReduceCall {
                cfg: &ARG_MIN,
                ties: Ties::First,
                input: &all,
                input_slot: 0,
                axes: &[0, 1],
                output: &TensorDesc::new(DataType::Uint32, [1, 1]),
                output_slot: 0,
                kernel: &|_| Some(&K),
            },
            DeviceClass::Software,
        )
        .unwrap();
        assert_eq!(plan.passes.len(), 2);
        assert_eq!(plan.scratch_bytes, vec![32 * 256 * 3 * 4]);
        let (split, combine) = (&plan.passes[0], &plan.passes[1]);
        assert_eq!(split.buffers[2], BufferRef::Scratch(0));
        assert_eq!(split.workgroups, 32);
        assert_eq!(split.params[params::CHUNK_COUNT], 32);
        assert_eq!(split.params[params::CHUNK_LEN], 2 * 256 * 64);
        assert_eq!(split.params[params::TEAM], 256);
        assert_eq!(split.params[params::VECTORS], 1 << 19);
        assert_eq!(combine.buffers[1], BufferRef::Scratch(0));
        assert_eq!(combine.params[params::TEAM], 256);
        assert_eq!(combine.params[params::CHUNK_COUNT], 32 * 256);
        assert_eq!(combine.workgroups, 1);
        // The same on a hardware GPU: workgroup trees over chunks of
        // 256 * 16 vectors, one partial result each (128 of them).
        let plan = reduce_plan(
            &ReduceCall {
                cfg: &ARG_MIN,
                ties: Ties::First,
                input: &all,
                input_slot: 0,
                axes: &[0, 1],
                output: &TensorDesc::new(DataType::Uint32, [1, 1]),
                output_slot: 0,
                kernel: &|v| {
                    (v == ReduceVariant::SplitLanesTree || v == ReduceVariant::Combine)
                        .then_some(&K)
                },
            },
            DeviceClass::Hardware,
        )
        .unwrap();
        assert_eq!(plan.passes.len(), 2);
        assert_eq!(plan.scratch_bytes, vec![128 * 3 * 4]);
        let (split, combine) = (&plan.passes[0], &plan.passes[1]);
        assert_eq!(split.buffers[2], BufferRef::Scratch(0));
        assert_eq!(split.workgroups, 128);
        assert_eq!(split.params[params::CHUNK_COUNT], 128);
        assert_eq!(split.params[params::CHUNK_LEN], 2 * 256 * 16);
        assert_eq!(split.params[params::TEAM], 256);
        assert_eq!(combine.params[params::TEAM], 8);
        assert_eq!(combine.params[params::CHUNK_COUNT], 128);
        assert_eq!(combine.workgroups, 1);
        // An odd number of FLOAT32 positions, no whole vectors: the word
        // path on a GPU, ragged lanes over windows of vectors on a CPU.
        let odd = TensorDesc::new(DataType::Float32, [(1 << 12) + 1, 255]);
        let odd_plan = |class| {
            reduce_plan(
                &ReduceCall {
                    cfg: &ARG_MIN,
                    ties: Ties::First,
                    input: &odd,
                    input_slot: 0,
                    axes: &[0, 1],
                    output: &TensorDesc::new(DataType::Uint32, [1, 1]),
                    output_slot: 0,
                    kernel: &|_| Some(&K),
                },
                class,
            )
            .unwrap()
        };
        let plan = odd_plan(DeviceClass::Hardware);
        assert_eq!(plan.passes[0].params[params::TEAM], 256);
        assert_eq!(plan.passes[0].params[params::VECTORS], 0);
        let plan = odd_plan(DeviceClass::Software);
        let len = ((1 << 12) + 1) * 255;
        let window = ragged_window(len, DataType::Float32);
        assert_eq!(plan.passes[0].params[params::VECTORS] as u64, window);
        assert_eq!(plan.passes[0].params[params::REDUCE_LEN] as u64, len);
        assert_eq!(plan.passes[0].params[params::TEAM], 256);
        let chunks = u64::from(plan.passes[0].params[params::CHUNK_COUNT]);
        // Chunks of whole vectors cover the window.
        let chunk = u64::from(plan.passes[0].params[params::CHUNK_LEN]) / 4;
        assert!(chunk * chunks >= window && chunk * (chunks - 1) < window);
        assert_eq!(
            plan.passes[1].params[params::CHUNK_COUNT] as u64,
            chunks * 256
        );
        // A strided reduction over whole vectors: one Columns pass, a thread
        // per 4 FLOAT32 outputs.
        let strided = TensorDesc::new(DataType::Float32, [3, 64, 1 << 16]);
        let plan = reduce_plan(
            &ReduceCall {
                cfg: &REDUCE_MIN,
                ties: Ties::First,
                input: &strided,
                input_slot: 0,
                axes: &[1],
                output: &TensorDesc::new(DataType::Float32, [3, 1 << 16]),
                output_slot: 0,
                kernel: &|_| Some(&K),
            },
            DeviceClass::Software,
        )
        .unwrap();
        assert_eq!(plan.passes.len(), 1);
        assert_eq!(plan.passes[0].params[params::VECTORS], 1 << 14);
        assert_eq!(plan.passes[0].workgroups, 3 * (1 << 14) / 256);
        let r = reduce_plan(
            &ReduceCall {
                cfg: &REDUCE_MIN,
                ties: Ties::Last,
                input: &input,
                input_slot: 0,
                axes: &[1],
                output: &out,
                output_slot: 0,
                kernel: &|_| None,
            },
            DeviceClass::Software,
        );
        assert!(matches!(r, Err(OpError::Unsupported(_))));
        let huge = TensorDesc::new(DataType::Float64, [1 << 20, 1 << 12]);
        let r = reduce_plan(
            &ReduceCall {
                cfg: &ARG_MIN,
                ties: Ties::First,
                input: &huge,
                input_slot: 0,
                axes: &[1],
                output: &TensorDesc::new(DataType::Int64, [1 << 20]),
                output_slot: 0,
                kernel: &|_| Some(&K),
            },
            DeviceClass::Software,
        );
        assert!(matches!(r, Err(OpError::TooLarge { .. })));
        let empty = TensorDesc::new(DataType::Float64, [0, 5]);
        let plan = reduce_plan(
            &ReduceCall {
                cfg: &ARG_MIN,
                ties: Ties::First,
                input: &empty,
                input_slot: 0,
                axes: &[1],
                output: &TensorDesc::new(DataType::Int64, [0]),
                output_slot: 0,
                kernel: &|_| None,
            },
            DeviceClass::Software,
        )
        .unwrap();
        assert!(plan.passes.is_empty());
    }
}
