// RUN: qtrain-opt %s --qtrain-share-functions | FileCheck %s

// Two variants equal up to their float and i32 constants share one body that
// takes the constants that differ (not the 0.0 they agree on) as trailing
// arguments; each call passes its variant's values. The public one keeps its
// symbol as a call of the shared body.
// CHECK-LABEL: func.func @step
//       CHECK:   %[[Q7:.*]] = arith.constant 1.270000e+02 : f32
//       CHECK:   %[[Z7:.*]] = arith.constant 64 : i32
//       CHECK:   call @site0_forward_shared(%arg0, %[[Q7]], %[[Z7]])
//       CHECK:   %[[Q3:.*]] = arith.constant 3.000000e+00 : f32
//       CHECK:   %[[Z3:.*]] = arith.constant 4 : i32
//       CHECK:   call @site0_forward_shared(%arg0, %[[Q3]], %[[Z3]])
//       CHECK:   call @index_b1(
//       CHECK:   call @index_b2(
//       CHECK:   call @bitserial_b1(
//       CHECK:   call @bitserial_b2(
//       CHECK:   call @addressed_b1(
//       CHECK:   call @addressed_b2(
func.func @step(%x: f32, %i: index) -> (f32, f32, f32, f32, i32, i32, f32, f32) {
  %a = call @site0_forward_b7(%x) : (f32) -> f32
  %b = call @site0_forward_b3(%x) : (f32) -> f32
  %c = call @index_b1(%i) : (index) -> f32
  %d = call @index_b2(%i) : (index) -> f32
  %e = call @bitserial_b1() : () -> i32
  %f = call @bitserial_b2() : () -> i32
  %g = call @addressed_b1(%x) : (f32) -> f32
  %h = call @addressed_b2(%x) : (f32) -> f32
  return %a, %b, %c, %d, %e, %f, %g, %h : f32, f32, f32, f32, i32, i32, f32, f32
}

// CHECK-LABEL: func.func private @site0_forward_shared(%arg0: f32, %arg1: f32, %arg2: i32) -> f32
//   CHECK-DAG:   arith.constant 0.000000e+00 : f32
//   CHECK-NOT:   arith.constant {{.*}} : i32
//       CHECK:   arith.minimumf %arg0, %arg1
//       CHECK:   arith.sitofp %arg2
// CHECK-LABEL: func.func @site0_forward_b7(%arg0: f32) -> f32
//  CHECK-NEXT:   arith.constant 1.270000e+02
//  CHECK-NEXT:   arith.constant 64 : i32
//  CHECK-NEXT:   call @site0_forward_shared
//  CHECK-NEXT:   return
func.func @site0_forward_b7(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %max = arith.constant 127.0 : f32
  %zp = arith.constant 64 : i32
  %0 = arith.minimumf %x, %max : f32
  %1 = arith.maximumf %0, %zero : f32
  %2 = arith.sitofp %zp : i32 to f32
  %3 = arith.addf %1, %2 : f32
  return %3 : f32
}
// CHECK-NOT: func.func private @site0_forward_b3
func.func private @site0_forward_b3(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %max = arith.constant 3.0 : f32
  %zp = arith.constant 4 : i32
  %0 = arith.minimumf %x, %max : f32
  %1 = arith.maximumf %0, %zero : f32
  %2 = arith.sitofp %zp : i32 to f32
  %3 = arith.addf %1, %2 : f32
  return %3 : f32
}

// Index constants (loop bounds, offsets) must be equal.
// CHECK-LABEL: func.func private @index_b1
// CHECK-LABEL: func.func private @index_b2
func.func private @index_b1(%i: index) -> f32 {
  %c = arith.constant 1 : index
  %0 = arith.addi %i, %c : index
  %1 = arith.index_cast %0 : index to i32
  %2 = arith.sitofp %1 : i32 to f32
  return %2 : f32
}
func.func private @index_b2(%i: index) -> f32 {
  %c = arith.constant 2 : index
  %0 = arith.addi %i, %c : index
  %1 = arith.index_cast %0 : index to i32
  %2 = arith.sitofp %1 : i32 to f32
  return %2 : f32
}

// Code widths that select the bit-serial GEMM must be equal (its call
// passes them); wider ones may differ.
// CHECK-LABEL: func.func private @bitserial_b1
// CHECK-LABEL: func.func private @bitserial_b2
func.func private @bitserial_b1() -> i32 {
  %c = arith.constant 0 : i32
  %0 = arith.addi %c, %c {qtrain.code_bits = array<i32: 2, 2>} : i32
  return %0 : i32
}
func.func private @bitserial_b2() -> i32 {
  %c = arith.constant 0 : i32
  %0 = arith.addi %c, %c {qtrain.code_bits = array<i32: 1, 2>} : i32
  return %0 : i32
}

// A function referenced other than by a call keeps its body.
// CHECK-LABEL: func.func private @addressed_b1
// CHECK-LABEL: func.func private @addressed_b2
func.func private @addressed_b1(%x: f32) -> f32 {
  %c = arith.constant 1.0 : f32
  %0 = arith.addf %x, %c : f32
  return %0 : f32
}
func.func private @addressed_b2(%x: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %0 = arith.addf %x, %c : f32
  return %0 : f32
}
func.func @take_address() -> (() -> ()) {
  %f = func.constant @addressed_b1 : (f32) -> f32
  %g = func.constant @addressed_b2 : (f32) -> f32
  %n = func.constant @nothing : () -> ()
  return %n : () -> ()
}
func.func private @nothing()

// Canonicalization uniques equal constants: in @collide_b2 the zero point
// equals the step constant 4, so that function has one constant where
// @collide_b3 has two. They are still compared use by use, and share one
// body that takes the zero point (the one use whose values differ).
// CHECK-LABEL: func.func @step_collide
//       CHECK:   %[[Z8:.*]] = arith.constant 8 : i32
//       CHECK:   call @collide_shared(%arg0, %[[Z8]])
//       CHECK:   %[[Z4:.*]] = arith.constant 4 : i32
//       CHECK:   call @collide_shared(%arg0, %[[Z4]])
// CHECK-LABEL: func.func private @collide_shared(%arg0: i32, %arg1: i32) -> i32
//       CHECK:   %[[C4:.*]] = arith.constant 4 : i32
//       CHECK:   %[[S:.*]] = arith.addi %arg0, %[[C4]]
//       CHECK:   arith.subi %[[S]], %arg1
//   CHECK-NOT: func.func private @collide_b
func.func @step_collide(%x: i32) -> (i32, i32) {
  %a = call @collide_b3(%x) : (i32) -> i32
  %b = call @collide_b2(%x) : (i32) -> i32
  return %a, %b : i32, i32
}
func.func private @collide_b3(%x: i32) -> i32 {
  %c4 = arith.constant 4 : i32
  %zp = arith.constant 8 : i32
  %0 = arith.addi %x, %c4 : i32
  %1 = arith.subi %0, %zp : i32
  return %1 : i32
}
func.func private @collide_b2(%x: i32) -> i32 {
  %c4 = arith.constant 4 : i32
  %0 = arith.addi %x, %c4 : i32
  %1 = arith.subi %0, %c4 : i32
  return %1 : i32
}
