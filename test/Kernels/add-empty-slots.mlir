// RUN: qtrain-opt %s --split-input-file --qtrain-add-empty-slots -verify-diagnostics | FileCheck %s

// The empty slots go after the last control or state argument of both
// steps, and the module gets an empty qtrain.sites.
// CHECK: module attributes {qtrain.sites = []}
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME:   %{{.*}}: tensor<4xf32>, %{{.*}}: i32 {qtrain.control = "bits"}, %{{.*}}: tensor<2xf32> {qtrain.state = "ema"}, %{{.*}}: tensor<0xi32> {qtrain.control = "slots"}, %{{.*}}: tensor<4xi64>)
// CHECK-LABEL: func.func @eval_step
//  CHECK-SAME:   %{{.*}}: tensor<4xf32>, %{{.*}}: i32 {qtrain.control = "bits"}, %{{.*}}: tensor<0xi32> {qtrain.control = "slots"})
module {
  func.func @train_step(%x: tensor<4xf32>, %bits: i32 {qtrain.control = "bits"}, %ema: tensor<2xf32> {qtrain.state = "ema"}, %labels: tensor<4xi64>) -> f32 {
    %c = arith.constant 0.0 : f32
    return %c : f32
  }
  func.func @eval_step(%x: tensor<4xf32>, %bits: i32 {qtrain.control = "bits"}) -> f32 {
    %c = arith.constant 0.0 : f32
    return %c : f32
  }
}

// -----

// expected-error @below {{qtrain-add-empty-slots: the module has kernel sites}}
module attributes {qtrain.sites = []} {
}

// -----

// expected-error @below {{qtrain-add-empty-slots: no function @train_step}}
module {
}

// -----

module {
  // expected-error @below {{qtrain-add-empty-slots: @train_step has no control arguments}}
  func.func @train_step(%x: tensor<4xf32>) -> f32 {
    %c = arith.constant 0.0 : f32
    return %c : f32
  }
  func.func @eval_step(%x: tensor<4xf32>) -> f32 {
    %c = arith.constant 0.0 : f32
    return %c : f32
  }
}
