// RUN: qtrain-opt %s --split-input-file --qtrain-packed-entry-points -verify-diagnostics | FileCheck %s

// Each entry point loads argument i from args[i]: the pointer itself for a
// pointer argument, the value behind it for a scalar; a scalar result is
// stored through args[n].
// CHECK-LABEL: llvm.func @qtrain_train_step(
//  CHECK-SAME:   %[[ARGS:.*]]: !llvm.ptr)
//       CHECK:   %[[A0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
//       CHECK:   %[[P0:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
//       CHECK:   %[[A1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
//       CHECK:   %[[P1:.*]] = llvm.load %[[A1]] : !llvm.ptr -> !llvm.ptr
//       CHECK:   %[[V1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> i32
//       CHECK:   %[[R:.*]] = llvm.call @train_step(%[[P0]], %[[V1]]) : (!llvm.ptr, i32) -> f32
//       CHECK:   %[[A2:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
//       CHECK:   %[[P2:.*]] = llvm.load %[[A2]] : !llvm.ptr -> !llvm.ptr
//       CHECK:   llvm.store %[[R]], %[[P2]] : f32, !llvm.ptr
//       CHECK:   llvm.return
// CHECK-LABEL: llvm.func @qtrain_eval_step(%{{.*}}: !llvm.ptr)
//       CHECK:   llvm.call @eval_step
//   CHECK-NOT:   llvm.store
//       CHECK:   llvm.return
module {
  llvm.func @train_step(%p: !llvm.ptr, %bits: i32) -> f32 {
    %c = llvm.mlir.constant(0.0 : f32) : f32
    llvm.return %c : f32
  }
  llvm.func @eval_step(%p: !llvm.ptr) {
    llvm.return
  }
}

// -----

// expected-error @below {{qtrain-packed-entry-points: no lowered function @eval_step}}
module {
  llvm.func @train_step(%p: !llvm.ptr) {
    llvm.return
  }
}
