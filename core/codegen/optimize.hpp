// Output upcasting: register tiling of reduce kernels such as matmul, written as AST rewrites.
//
// For a kernel whose stores are contiguous along its innermost output range j and that reduces
// something depending on j (out[i*N+j] = sum_k a[i*K+k] * b[k*N+j]), choose_upcast() picks
// - W, the target's vector lanes for the stored dtype, and V: j is replaced by
//   j' * (V*W) + v*W + lane, so each of the V copies of the kernel's body works on a vector of
//   W consecutive elements (vector loads of b, vector accumulators, vector stores);
// - R, an upcast of the outermost other output range i: i -> i' * R + r, for r in 0..R-1.
// The R*V stores share their reduce loop (the linearizer emits REDUCEs over the same RANGEs
// into one loop), so the innermost loop runs R*V independent vector accumulators and reuses
// every load of a across V vectors and every vector of b across R rows.
// When b's panel is large, k is tiled too (k -> k0 * KT + k1) and the loops are reordered
// j' > k0 > i' > k1 so that a tile of the panel stays in cache across row blocks; the output
// then holds partial sums, read back (a gated LOAD, skipped for k0 = 0) and added to. A
// symbolic k (a batch a weight gradient reduces over) is not tiled, but the loops are still
// reordered j' > i' when there are column blocks enough to share: each panel of b is then
// reused across the row blocks instead of all of b streaming past every row block.
// When the loads are contiguous along the reduce range k instead of j (out = a @ b.T, both
// operands k-major: every Linear layer's forward), the dot form is used: i and j are upcast by
// R and C scalar copies, and k -> k' * W + lane, so the R*C sums become W-lane vector
// accumulators fed by R + C vector loads per step, summed across lanes after the loop.
// With 16 vector registers (AVX2), every register counts: the row (and dot-form column)
// factors are the most that fit, whether or not they divide. With 32, the vector form takes up
// to 12 rows (24 accumulators) in the fewest even blocks, and the dot form powers of two that
// divide the constant extents. A factor that does not divide, or a symbolic extent (the
// launch variable n0: a batch size), leaves a last block whose rows are clamped to the last
// row and whose stores are gated, so one compiled kernel serves every size.
#ifndef POLYGRAD_CODEGEN_OPTIMIZE_HPP
#define POLYGRAD_CODEGEN_OPTIMIZE_HPP

#include "codegen/lower.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace polygrad::codegen {

/// An upcast choice for one kernel (see the file comment). `j` null: no upcast.
struct UpcastPlan {
  const UOp* i = nullptr;        ///< the row range upcast by `rows`, or null
  const UOp* j = nullptr;        ///< the vectorised range
  int rows = 1;                  ///< R
  int vectors = 1;               ///< V
  int lanes = 1;                 ///< W
  const UOp* k = nullptr;        ///< the reduce range split into k tiles, or null
  int k_tile = 0;                ///< KT: k -> k0 * KT + k1, partial sums stored per k0; 0 with
                                 ///< k set: a symbolic k, whole (j' > i' reordering only)
  int col_blocks = 1;            ///< k tiles: column blocks per launch step, looped inside i
  const UOp* k_outer = nullptr;  ///< slices of a reduce over two ranges (batch, positions):
                                 ///< the outer one is k0; the inner is k (KT its extent) in
                                 ///< the vector form, dot_k in the dot form
  int k_group = 1;               ///< dot form, sliced by k_outer: values of it per slice (the
                                 ///< last slice takes what is left)
  const UOp* dot_k = nullptr;    ///< dot form: the reduce range vectorised by `lanes`, or null
  std::vector<std::pair<const UOp*, int>> dot_ks;  ///< dot form: every REDUCE's range and its
                                                   ///< lanes (dot_k and `lanes` first)
  int cols = 1;                                    ///< dot form: C, the scalar upcast of `j`
  /// dot form without a row range (one row of a times a large b.T): the C columns of a step
  /// are one from each of C equal parts of j, not C neighbours (C long streams of b's rows)
  bool strided_cols = false;
  bool tail = false;  ///< vector form: no W of 4 or more lanes divides j's extent;
                      ///< the blocks are rounded up, a vector past the last column
                      ///< is moved back to end there and stores only its new lanes
};

/// The heuristic: which ranges to upcast and by how much, from the target's vector width and
/// the kernel's extents. Returns a plan with j == nullptr when the kernel does not qualify.
UpcastPlan choose_upcast(const UOpRef& sink, const Target& target);

/// True when the reduce kernel `sink` could be vectorised along its output range `r` (loads and
/// stores contiguous along it). That takes a constant extent: the scheduler keeps such a range
/// static rather than making it a launch variable.
bool vectorizes_along(const UOpRef& sink, const UOp* r);

/// A buffer a kernel should read from a copy laid out in panels (see panel_packing).
struct PanelPacking {
  int64_t slot = 0;      ///< the DEFINE_GLOBAL slot of the operand
  int64_t row = 0;       ///< the operand's row length in elements
  int64_t panel = 0;     ///< P: the kernel's column block (V * W output columns)
  bool by_rows = false;  ///< false: b is (k, n), panels of P columns; true: b is (n, k) (a kernel
                         ///< computing a @ b.T), panels of P rows, each stored k-major
  /// a is (k, m) (a kernel computing a.T @ b): one panel of all its rows (the scheduler sets
  /// P to the row count), a transpose, read with the output rows' extent compiled in
  bool transpose_rows = false;
  /// a is (m, k), the kernel's row operand, read in panels of P = R rows (the kernel's row
  /// block), each stored k-major: the R values a k step broadcasts are adjacent. Written by a
  /// copy kernel over a's rows (write_to_panels), so the row count may be a launch variable;
  /// the copy holds ceil(m / P) panels, and the rows of a last partial one that the copy
  /// leaves unwritten are never read (the kernel clamps its rows to the last one).
  bool row_operand = false;
  /// Panels of columns of a buffer whose row count is this launch variable (the batch a
  /// weight gradient reduces over), null when the count is constant. Written by a copy kernel
  /// over the buffer's rows; the last panel may be partial (P need not divide the row).
  const UOp* rows_var = nullptr;
  /// b is (k, n), read by a tail plan (the column block does not divide n), in panels of P
  /// columns written by a copy kernel over b's rows, the last panel partial, its missing
  /// columns unwritten and unread: P the column block when the plan's moved-back last vector
  /// lies within one panel; else, when b's rows are a stride apart that falls into a few L1
  /// sets (within a cache line of a multiple of 4 KiB), one panel of P > n columns (padded
  /// rows: element (r, c) at r * P + c). With `by_rows` (b is (n, k), read by a tail plan):
  /// panels of P rows, the last one partial, written by a copy kernel over b's rows.
  bool padded = false;
};

/// The offset of element `off` of a buffer of `rows` rows of `p.row` elements in its copy in
/// panels. Element (r, c) moves to (c / P) * rows * P + r * P + c % P in panels of columns
/// (each holds P columns of every row, one row after the other), and to
/// (r / P) * row * P + c * P + r % P in panels of rows (each holds P rows, one column after the
/// other: a transpose of b, P rows at a time). Simplified.
/// `rows` is p.rows_var when that is set.
UOpRef panel_offset(const UOpRef& off, int64_t rows, const PanelPacking& p);
/// The same for a row count that is an expression (a launch variable).
UOpRef panel_offset(const UOpRef& off, const UOpRef& rows, const PanelPacking& p);

/// `sink` with every offset into buffer `p.slot` (of `rows` rows) moved to its copy in panels.
UOpRef read_from_panels(const UOpRef& sink, int64_t rows, const PanelPacking& p);

/// The copy kernel `sink` (storing element e of a buffer of `rows` rows of `p.row` elements at
/// offset e of slot 0) with its stores moved to the panels' layout.
UOpRef write_to_panels(const UOpRef& sink, const UOpRef& rows, const PanelPacking& p);

/// The copy kernel `sink` (over output ranges r then c, storing element r * p.row + c of a
/// buffer of `rows` rows at offset r * p.row + c of slot 0, its value any expression of r and c)
/// into p's panels, as kernels whose launch steps write whole runs of the copy:
/// - panels of columns: blocks of 4 rows (the launch), then the full panels; each of the
///   block's rows stores its P elements of a panel in a loop over them, which the codegen
///   vectorises, or, for P not a multiple of 4, as P consecutive scalar stores, which the
///   target's compiler merges into vector moves. A second kernel writes the partial last panel
///   when P does not divide the row. Copied row by row instead (write_to_panels), each row's
///   stores land P elements at a time a panel apart, into as many lines as there are panels,
///   all in a few L1 sets when a panel is a multiple of 4 KiB: on an AMD EPYC Milan, one
///   thread, a (512, 2048) copy in panels of 6 columns took 0.8 ms that way and 0.2 ms in these
///   kernels (a plain copy 0.13).
/// - panels of rows: a panel of P rows per launch step, then its columns, each column's P
///   elements stored one after the other.
/// A last partial block's rows past `rows` copy the last row again, into slots of the copy
/// nothing reads. Empty when a panel is wider than 32 elements, or a row has no full panel of
/// columns.
std::vector<UOpRef> copy_in_row_blocks(const UOpRef& sink, const UOpRef& rows,
                                       const PanelPacking& p);

/// On a target without groups (a CPU), the vector form of a matmul-shaped kernel streams, per
/// column block, k rows of V*W contiguous elements of b, each row `row` elements after the
/// previous. As BLAS libraries do, the kernel can read b from a copy in column panels
/// (panel_offset) instead, where each column block's k rows are contiguous. That pays for its
/// copy when b is larger than half an L2, `rows` (the product of the other output extents) is
/// 64 or more, k is constant, the column block divides the row, and either b's rows are a
/// multiple of 512 bytes apart (they fall into a few L1 sets and evict each other; 4 KiB apart:
/// all in one) or a column block's row is at most two cache lines (short rows a page apart
/// prefetch poorly). Measured on AVX-512 (Sapphire Rapids), copy included: 1024^3 5.4 ms, 2.1x
/// faster than unpacked; the kernel alone 1.1-1.2x faster than on the padded rows used before;
/// 512 x 1088 x 1024 7% faster; wide blocks (784 columns as 7 vectors) 4-14% slower, so not
/// packed.
/// A kernel in the dot form whose b is read k-major (a @ b.T: every Linear layer) with b larger
/// than half an L2 and 64 or more rows reads b from panels of rows instead, which makes it a
/// vector-form kernel with k slices and column blocks (checked by planning it).
/// A vector-form kernel whose row operand a is read k-major (a.T @ b: a Linear layer's weight
/// gradient x.T @ dy) with a larger than an L2 (and at most kMaxTransposeBytes) reads a from a
/// transposed copy: per k step each row block reads R elements of a, a row of a apart, and at
/// 4 KiB apart those fall into a few L1 sets. 1024^3 on Sapphire Rapids: 11.6 -> 5.9 ms
/// (torch 7.8), b then in column panels too; 1023^3 13.7 -> 8.2.
/// With 16 vector registers, a vector-form kernel with k sliced (b's panel larger than an L1),
/// 256 or more columns and a row operand a (m, k), k-major, of 64 or more rows reads a from
/// panels of its R-row blocks (`row_operand`): the R rows a k step broadcasts from are
/// otherwise a row of a apart, 4 KiB at k = 1024, in a few sets of an 8-way L1 beside the panel
/// of b. The k slices then grow to what the row block's slice of a allows (see choose_upcast).
/// A vector-form kernel in a tail plan (n not a multiple of the column block: 777, 1023, 1025)
/// with b larger than half an L2 reads b from a copy written over b's rows (`padded`): in
/// column panels with a partial last one when the plan's moved-back last vector lies within a
/// panel (777, 1023), else, when b's rows are within a cache line of a multiple of 4 KiB apart
/// (1025), from rows padded to a multiple of the column block that is not: a k slice's rows
/// otherwise share a few L1 sets (on an AMD EPYC Milan, AVX2, the 1025^3 kernel in a C
/// driver: 22-25 -> 16-18 ms).
/// A vector-form kernel reducing over a launch variable (a weight gradient over the batch,
/// `batch` its value here) whose operands are (batch, n) and (batch, m), both batch-major,
/// reads them from panels of the column block (b, as above) and of the row block (a): per
/// batch step a column block's b would be a row of b apart and a row block's a a row of a
/// apart, and both copies keep the batch a variable (`rows_var`).
/// nullopt otherwise.
std::optional<PanelPacking> panel_packing(const UOpRef& sink, const Target& target, int64_t rows,
                                          int64_t batch = 0);

/// `sink` rewritten by `plan` (unchanged when plan.j is null).
UOpRef apply_upcast(const UOpRef& sink, const UpcastPlan& plan);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_OPTIMIZE_HPP
