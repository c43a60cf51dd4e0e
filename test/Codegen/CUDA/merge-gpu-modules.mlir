// RUN: qtrain-opt %s --split-input-file --verify-diagnostics \
// RUN:   --qtrain-merge-gpu-modules | FileCheck %s
// RUN: qtrain-opt %s --split-input-file --verify-diagnostics \
// RUN:   --qtrain-merge-gpu-modules="name=kernels" | FileCheck %s --check-prefix=NAMED

// The outlined modules and the GEMM kernels become one module; every
// launch names its kernel there. A kernel name two modules share gets a
// unique one in the second, and its launch follows; the same private
// declaration is kept once.

// CHECK-LABEL: func.func @step(
// CHECK:         gpu.launch_func @qtrain_step_kernels::@step_kernel
// CHECK:         gpu.launch_func @qtrain_step_kernels::@step_kernel_0
// CHECK:         gpu.launch_func @qtrain_step_kernels::@qtrain_gemm_f32
// CHECK-NOT:   gpu.module
// CHECK:       gpu.module @qtrain_step_kernels {
// CHECK-COUNT-1: func.func private @helper(f32) -> f32
// CHECK-DAG:     gpu.func @step_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK-DAG:     gpu.func @step_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK-DAG:     gpu.func @qtrain_gemm_f32(
// CHECK-NOT:   gpu.module
// NAMED:       gpu.launch_func @kernels::@step_kernel
// NAMED:       gpu.module @kernels {
module attributes {gpu.container_module} {
  func.func @step(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1)
      threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @step_kernel_1::@step_kernel blocks in (%c1, %c1, %c1)
      threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @qtrain_step_gemms::@qtrain_gemm_f32 blocks in (%c1, %c1, %c1)
      threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @step_kernel {
    func.func private @helper(f32) -> f32
    gpu.func @step_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @step_kernel_1 {
    func.func private @helper(f32) -> f32
    gpu.func @step_kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @qtrain_step_gemms {
    gpu.func @qtrain_gemm_f32(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Modules serialized differently stay apart: an error.

module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target<chip = "sm_90">] {
  }
  // expected-error @+1 {{this gpu.module's targets or offloading handler differ from those of @a}}
  gpu.module @b [#nvvm.target<chip = "sm_80">] {
  }
}
