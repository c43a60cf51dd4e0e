// RUN: qtrain-opt %s --qtrain-map-step-to-gpu --qtrain-emulate-gpu \
// RUN:   | mlir-opt --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// (37000 values: 5 blocks, the last of which combines their 5 partial
// values.) Many levels (8 values a block: 37000 -> 4625 -> 579 -> 73 -> 10
// -> 2, combined by the last block of that level), blocks of 4 threads (6
// rounded down):
// RUN: qtrain-opt %s --qtrain-map-step-to-gpu="reduction-fan-in=2 threads-per-block=6" \
// RUN:     --qtrain-emulate-gpu \
// RUN:   | mlir-opt --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// The same levels, the last level's partial values combined by a launch of
// a thread per output:
// RUN: qtrain-opt %s --qtrain-map-step-to-gpu="reduction-fan-in=2 threads-per-block=6 last-block-combines=false" \
// RUN:     --qtrain-emulate-gpu \
// RUN:   | mlir-opt --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s
// Not split (one thread per output element), the same results:
// RUN: qtrain-opt %s --qtrain-map-step-to-gpu="reduction-fan-in=0" \
// RUN:     --qtrain-emulate-gpu \
// RUN:   | mlir-opt --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_c_runner_utils | FileCheck %s

// Split reductions (docs/passes/map-step-to-gpu.md) run on the CPU
// (qtrain-emulate-gpu: each launch as loops over its blocks, each block's
// parts between barriers as loops over its threads; printed by the C runner
// utilities' printI64),
// on integers, whose sums are exact: an element dropped or combined twice
// by a level changes the result. The expected values are computed apart
// (Python): sum over i < 37, j < 1000 of (1000 i + j) mod 97 is 1774839;
// channel c's sum of 600 n + 100 c + 10 h + w over n < 8, h < 10, w < 10 is
// 1719600 + 80000 c; over i < 4096, ((i + 5) 7919 mod 4099) - 2000 has its
// minimum -2000 at i = 4094 and its maximum 2098 at i = 2140.

#id2 = affine_map<(i, j) -> (i, j)>
#scalar2 = affine_map<(i, j) -> ()>
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
#v = affine_map<(i) -> (i)>
#s = affine_map<(i) -> ()>

// CHECK: 1774844
// CHECK-NEXT: 1774846
// CHECK-NEXT: 1719600
// CHECK-NEXT: 1800600
// CHECK-NEXT: 1881600
// CHECK-NEXT: 1962600
// CHECK-NEXT: 2043600
// CHECK-NEXT: 2124600
// CHECK-NEXT: -2000
// CHECK-NEXT: 2098
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c97 = arith.constant 97 : i32
  %c1000 = arith.constant 1000 : i32
  %c1i = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  %c100 = arith.constant 100 : index
  %c600 = arith.constant 600 : index

  // 37 x 1000 -> 1, onto a fill of 5 (the fill runs in the last level).
  %a = memref.alloc() : memref<37x1000xi32>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<37x1000xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k = arith.muli %ii, %c1000 : i32
    %l = arith.addi %k, %jj : i32
    %m = arith.remui %l, %c97 : i32
    linalg.yield %m : i32
  }
  %sum = memref.alloc() : memref<i32>
  %five = arith.constant 5 : i32
  linalg.fill ins(%five : i32) outs(%sum : memref<i32>)
  linalg.generic {indexing_maps = [#id2, #scalar2],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<37x1000xi32>) outs(%sum : memref<i32>) {
  ^bb0(%x: i32, %acc: i32):
    %r = arith.addi %acc, %x : i32
    linalg.yield %r : i32
  }
  %total = memref.load %sum[] : memref<i32>

  // The same values made from the reduction's own indices (linalg.index of
  // its reduced loops; the input only gives the loops' sizes), onto 7:
  // 1774846.
  %again = memref.alloc() : memref<i32>
  %seven = arith.constant 7 : i32
  linalg.fill ins(%seven : i32) outs(%again : memref<i32>)
  linalg.generic {indexing_maps = [#id2, #scalar2],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<37x1000xi32>) outs(%again : memref<i32>) {
  ^bb0(%unused: i32, %acc: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k = arith.muli %ii, %c1000 : i32
    %l = arith.addi %k, %jj : i32
    %m = arith.remui %l, %c97 : i32
    %r = arith.addi %m, %acc : i32
    linalg.yield %r : i32
  }
  %total2 = memref.load %again[] : memref<i32>
  %w1 = arith.extsi %total : i32 to i64
  func.call @printI64(%w1) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %w0 = arith.extsi %total2 : i32 to i64
  func.call @printI64(%w0) : (i64) -> ()
  func.call @printNewline() : () -> ()

  // Per channel over batch and pixels, onto 1000 c (not a fill: the last
  // level reads it).
  %dy = memref.alloc() : memref<8x6x10x10xi32>
  linalg.generic {indexing_maps = [#nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%dy : memref<8x6x10x10xi32>) {
  ^bb0(%o: i32):
    %n = linalg.index 0 : index
    %ch = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %n6 = arith.muli %n, %c600 : index
    %c1 = arith.muli %ch, %c100 : index
    %h1 = arith.muli %h, %c10 : index
    %t0 = arith.addi %n6, %c1 : index
    %t1 = arith.addi %t0, %h1 : index
    %t2 = arith.addi %t1, %w : index
    %t = arith.index_cast %t2 : index to i32
    linalg.yield %t : i32
  }
  %db = memref.alloc() : memref<6xi32>
  linalg.generic {indexing_maps = [affine_map<(c) -> (c)>], iterator_types = ["parallel"]}
      outs(%db : memref<6xi32>) {
  ^bb0(%o: i32):
    %ch = linalg.index 0 : index
    %t = arith.index_cast %ch : index to i32
    %u = arith.muli %t, %c1000 : i32
    linalg.yield %u : i32
  }
  linalg.generic {indexing_maps = [#nchw, #c],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : memref<8x6x10x10xi32>) outs(%db : memref<6xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %r = arith.addi %x, %acc : i32
    linalg.yield %r : i32
  }
  scf.for %k = %c0 to %c6 step %c1i {
    %e = memref.load %db[%k] : memref<6xi32>
    %w2 = arith.extsi %e : i32 to i64
    func.call @printI64(%w2) : (i64) -> ()
    func.call @printNewline() : () -> ()
  }

  // The minimum and the maximum, two outputs of one op.
  %x = memref.alloc() : memref<4096xi32>
  %c5 = arith.constant 5 : index
  %c7919 = arith.constant 7919 : index
  %c4099 = arith.constant 4099 : index
  %c2000 = arith.constant 2000 : i32
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      outs(%x : memref<4096xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %i5 = arith.addi %i, %c5 : index
    %p = arith.muli %i5, %c7919 : index
    %q = arith.remui %p, %c4099 : index
    %qi = arith.index_cast %q : index to i32
    %r = arith.subi %qi, %c2000 : i32
    linalg.yield %r : i32
  }
  %lo = memref.alloc() : memref<i32>
  %hi = memref.alloc() : memref<i32>
  %big = arith.constant 1000000 : i32
  %small = arith.constant -1000000 : i32
  linalg.fill ins(%big : i32) outs(%lo : memref<i32>)
  linalg.fill ins(%small : i32) outs(%hi : memref<i32>)
  linalg.generic {indexing_maps = [#v, #s, #s], iterator_types = ["reduction"]}
      ins(%x : memref<4096xi32>) outs(%lo, %hi : memref<i32>, memref<i32>) {
  ^bb0(%e: i32, %l: i32, %h: i32):
    %0 = arith.minsi %e, %l : i32
    %1 = arith.maxsi %h, %e : i32
    linalg.yield %0, %1 : i32, i32
  }
  %min = memref.load %lo[] : memref<i32>
  %max = memref.load %hi[] : memref<i32>
  %w3 = arith.extsi %min : i32 to i64
  func.call @printI64(%w3) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %w4 = arith.extsi %max : i32 to i64
  func.call @printI64(%w4) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %a : memref<37x1000xi32>
  memref.dealloc %sum : memref<i32>
  memref.dealloc %again : memref<i32>
  memref.dealloc %dy : memref<8x6x10x10xi32>
  memref.dealloc %db : memref<6xi32>
  memref.dealloc %x : memref<4096xi32>
  memref.dealloc %lo : memref<i32>
  memref.dealloc %hi : memref<i32>
  return
}
