// RUN: qtrain-opt %s --split-input-file --verify-diagnostics \
// RUN:   --qtrain-cuda-host-calls | FileCheck %s

// The step's device memory as calls of the runtime's CUDA host ABI, the
// descriptors built around the returned pointers; the host waits for the
// kernels before it reads memory itself.

// CHECK-DAG:   llvm.func @qtrain_cuda_alloc(i64, i32) -> !llvm.ptr
// CHECK-DAG:   llvm.func @qtrain_cuda_memcpy(!llvm.ptr, !llvm.ptr, i64)
// CHECK-DAG:   llvm.func @qtrain_cuda_free(!llvm.ptr)
// CHECK-DAG:   llvm.func @qtrain_cuda_synchronize()
// CHECK-LABEL: func.func @buffers(
// CHECK:         %[[BYTES:.*]] = llvm.ptrtoint
// CHECK:         %[[SHARED:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:         %[[P:.*]] = llvm.call @qtrain_cuda_alloc(%[[BYTES]], %[[SHARED]]) : (i64, i32) -> !llvm.ptr
// CHECK:         llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK:         llvm.insertvalue %[[P]], %{{.*}}[1]
// CHECK:         llvm.mlir.constant(1 : i32) : i32
// CHECK:         llvm.call @qtrain_cuda_alloc
// CHECK:         llvm.mul
// CHECK:         llvm.call @qtrain_cuda_memcpy(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT:    llvm.call @qtrain_cuda_synchronize() : () -> ()
// CHECK-NEXT:    memref.load
// CHECK:         llvm.extractvalue %{{.*}}[0]
// CHECK:         llvm.call @qtrain_cuda_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NOT:     gpu.
// CHECK:         return
func.func @buffers(%a: memref<4x300xf32>) -> f32 {
  %t = gpu.alloc () : memref<4x300xf32>
  %s = gpu.alloc host_shared () : memref<f32>
  gpu.memcpy %t, %a : memref<4x300xf32>, memref<4x300xf32>
  %v = memref.load %s[] : memref<f32>
  gpu.dealloc %t : memref<4x300xf32>
  return %v : f32
}

// -----

func.func @async(%a: memref<4xf32>) {
  %t0 = gpu.wait async
  // expected-error @+1 {{qtrain-cuda-host-calls: expected a synchronous op on dense buffers}}
  %t, %t1 = gpu.alloc async [%t0] () : memref<4xf32>
  return
}

// -----

#strided = strided<[8], offset: 1>
func.func @strided(%a: memref<4xf32, #strided>, %b: memref<4xf32>) {
  // expected-error @+1 {{qtrain-cuda-host-calls: expected a synchronous op on dense buffers}}
  gpu.memcpy %b, %a : memref<4xf32>, memref<4xf32, #strided>
  return
}

// -----

// A copy from the host code's stack (the record of an entry point's scalar
// arguments, qtrain-arguments-to-device) is an upload, ordered after the
// launches before it without waiting for them; the host's stores to its
// stack need no wait either.
// CHECK-DAG:   llvm.func @qtrain_cuda_upload(!llvm.ptr, !llvm.ptr, i64)
// CHECK-LABEL: func.func @record(
// CHECK-NOT:     qtrain_cuda_synchronize
// CHECK:         memref.store
// CHECK-NOT:     qtrain_cuda_synchronize
// CHECK:         llvm.call @qtrain_cuda_upload(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT:     qtrain_cuda_memcpy
// CHECK:         return
func.func @record(%step: i64) {
  %c0 = arith.constant 0 : index
  %host = memref.alloca () : memref<1xi64>
  memref.store %step, %host[%c0] : memref<1xi64>
  %device = gpu.alloc () : memref<1xi64>
  gpu.memcpy %device, %host : memref<1xi64>, memref<1xi64>
  gpu.dealloc %device : memref<1xi64>
  return
}
