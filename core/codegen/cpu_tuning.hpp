// The CPU strategy's tuning thresholds (strategy.hpp), in one place, each with its reason. The
// measurements behind them are in the comments of the code that uses them (optimize.hpp,
// panels.cpp, loop_order.cpp) and in bench/README.md. The group strategy's are in
// group/tuning.hpp; the passes both strategies share keep theirs beside their code.
#ifndef POLYGRAD_CODEGEN_CPU_TUNING_HPP
#define POLYGRAD_CODEGEN_CPU_TUNING_HPP

#include <cstddef>
#include <cstdint>

namespace polygrad::codegen::cpu_tuning {

// --- caches ---------------------------------------------------------------------------------
/// L1 data cache assumed where the target declares none: a current x86 core's 32 KiB.
inline constexpr int64_t kDefaultL1Bytes = int64_t{32} << 10;
/// L2 per core assumed where the target declares none: the smallest of current x86 cores.
inline constexpr int64_t kDefaultL2Bytes = int64_t{512} << 10;
/// Outputs from this size up use streaming stores: well past a core's share of the last-level
/// cache, the lines would be evicted before anything reads them again.
inline constexpr int64_t kStreamBytes = int64_t{16} << 20;

// --- register tiles (optimize.hpp) ----------------------------------------------------------
/// Shortest k slice: shorter ones spend more on storing and reloading partial sums than the
/// cache reuse saves.
inline constexpr int64_t kMinKTile = 32;
/// Longest k slice: past it a column block's slice of b no longer stays in L1.
inline constexpr int64_t kMaxKTile = 128;
/// Column blocks that share a row block's slice of a: more leave their slices past L2.
inline constexpr int64_t kMaxColBlocks = 8;
/// Rows of the vector form with 32 vector registers: 24 accumulators, the rest for loads.
inline constexpr int64_t kMaxRows = 12;
/// Column vectors per step of a reduce with no row range to upcast (a column sum): 4 cache lines
/// of each row's page per visit.
inline constexpr int64_t kMaxColumnVectors = 8;
/// Narrowest vectors of a tail plan or a narrowed width: below 4 lanes scalar code is as fast.
inline constexpr int64_t kMinTailLanes = 4;
inline constexpr int64_t kMinLanes = 4;
/// Most column groups of the dot form looped together: enough to reuse the row's vectors.
inline constexpr int64_t kMaxGroup = 8;
/// A one-row product x @ w (optimize.cpp, one_row_product): each launch step reads about this
/// much of every row of w (runs the prefetchers follow), in k slices of kRowProductKTile rows.
/// In C on a 2-core AVX-512 EPYC, 768 x 50257: blocks of 32 columns over all of k 3.5-4.4
/// GB/s, 1024 columns in slices of 16 rows 9.5 GB/s (a sum of w 9.2; slices of 8: 7.7-9.3, of
/// 32 rows of 2048 columns 5.0-5.4). In polygrad on that host, the product's share of a sum's
/// rate in the same rounds (medians of 11, six runs alternating): 4 KiB per row 44-74%, 16 KiB
/// 61-80%.
inline constexpr int64_t kRowProductBytes = 16384;
inline constexpr int64_t kRowProductKTile = 16;

// --- panel copies (panels.cpp) --------------------------------------------------------------
/// Rows from which a copy of b in panels pays for itself (the copy is one pass over b).
inline constexpr int64_t kMinPanelRows = 64;
/// Largest a of a.T @ b read from a transposed copy: the copy must stay cheap beside the kernel.
inline constexpr int64_t kMaxTransposeBytes = int64_t{16} << 20;
/// b's rows a multiple of this apart fall into a few L1 sets (an 8-way L1 of 64-byte lines).
inline constexpr int64_t kSetConflictBytes = 512;
/// A column block's row of at most this is short enough to prefetch poorly a row apart.
inline constexpr int64_t kShortBlockBytes = 128;
/// A copy of a row operand costs about a matmul of 20 columns; it pays from this many columns.
inline constexpr int64_t kMinRowOperandColumns = 256;
/// Rows a panel copy kernel writes per launch step: 4 rows' stores to a panel of 4 floats or
/// more fill its lines. Each row was P scalar stores in straight-line code then (now a vector
/// loop where P is a multiple of 4), so the block set the kernel's size: 8 rows took clang twice
/// as long (bench/README.md) for no faster copies.
inline constexpr int64_t kCopyBlockRows = 4;
/// Widest panel written by stores one element at a time (the compiler merges them into moves).
inline constexpr int64_t kMaxCopyPanel = 32;

// --- loop order, stashes and stores ---------------------------------------------------------
/// Side of the square tiles a transposing copy runs in: 16 x 16 floats are 16 lines each way.
inline constexpr int64_t kTransposeTile = 16;
/// Below this cost a reduce's value is cheaper to compute again than to store and reload (x -
/// max is; a decomposed exp, some 30 ops, is not).
inline constexpr int kMinStashCost = 8;
/// Most consecutive scalar stores emitted as one run (values first, then stores), so the
/// target's compiler merges them into vector moves.
inline constexpr size_t kMaxStoreRun = 16;

}  // namespace polygrad::codegen::cpu_tuning

#endif  // POLYGRAD_CODEGEN_CPU_TUNING_HPP
