// RUN: qtrain-opt %s -split-input-file -verify-diagnostics --remarks-filter="qtrain-.*" --qtrain-rebatch="batch=4"
// RUN: split-file %s %t
// RUN: not qtrain-opt %t/options.mlir --qtrain-rebatch 2>&1 | FileCheck %s --check-prefix=NO-BATCH
// RUN: not qtrain-opt %t/options.mlir --qtrain-rebatch="batch=4 from=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE-FROM
// RUN: not qtrain-opt %t/options.mlir --qtrain-rebatch="batch=4 from=3" 2>&1 | FileCheck %s --check-prefix=WRONG-FROM

// expected-error @+1 {{qtrain-rebatch: no function @forward with a body of one block in the module (set forward=<name>)}}
module {
  func.func @main(%x: tensor<1x2xf32>) -> tensor<1x2xf32> { return %x : tensor<1x2xf32> }
}

// -----

// expected-error @+1 {{qtrain-rebatch: @forward has no input with a static batch to infer it from; set from=<n>}}
func.func @forward(%w: tensor<2x2xf32> {qtrain.param}) -> tensor<2x2xf32> {
  return %w : tensor<2x2xf32>
}

// -----

// expected-error @+1 {{qtrain-rebatch: 'func.func' would need the batch at dimension 0 of input #1 of type 'tensor<f32>'}}
func.func @forward(%x: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{qtrain-rebatch: @forward returns nothing}}
func.func @forward(%x: tensor<2x3xf32>) {
  return
}

// -----

// The result must carry the batch too.
func.func @forward(%x: tensor<2x3xf32>) -> f32 {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{qtrain-rebatch: 'func.return' would need the batch at dimension 0 of a value of type 'f32'}}
  return %c : f32
}

// -----

// flatten of everything folds the batch into the features: the fold is
// followed, but the logits must keep one row per sample.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  // expected-error @+1 {{qtrain-rebatch: 'func.return': the result ('tensor<6xf32>') folds the batch 2 with other dimensions at dimension 0; @forward must return it as a dimension of its own}}
  return %0 : tensor<6xf32>
}

// -----

func.func @forward(%x: tensor<4x3xf32>) -> tensor<2x2x3xf32> {
  // expected-error @+1 {{qtrain-rebatch: 'tensor.expand_shape' splits the batch into several dimensions (group 0 of the reassociation); it cannot be rebatched}}
  %0 = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 2, 3] : tensor<4x3xf32> into tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

// At batch 1, an unsqueeze next to the batch cannot tell the new unit
// dimension from the batch unless something pins it down.
func.func @forward(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{qtrain-rebatch: 'tensor.expand_shape' reshapes the unit batch together with other unit dimensions; it cannot tell which one is the batch}}
  %0 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 1, 3] : tensor<1x3xf32> into tensor<1x1x3xf32>
  %1 = tensor.collapse_shape %0 [[0, 1], [2]] : tensor<1x1x3xf32> into tensor<1x3xf32>
  return %1 : tensor<1x3xf32>
}

// -----

// A mean over the batch divides by the exported batch size.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' reduces over the batch (loop 0); its result could depend on the batch size (a mean over the batch, batch statistics), so it is not rebatched}}
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %x : tensor<2x3xf32>
}

// -----

// A parallel loop over the batch that the result does not keep.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<3xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' drops the batch (loop 0) from init #0; its result would not be per image}}
  %last = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %x : tensor<2x3xf32>
}

// -----

// A constant the batch was baked into.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{qtrain-rebatch: this constant of type 'tensor<2x3xf32>' has the batch dimension baked in (used along the batch by 'linalg.add'); lift it (qtrain-lift-params) or export at the new batch}}
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %0 = linalg.add ins(%x, %c : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @forward(%p: tensor<2x3xf32> {qtrain.param}, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.add' uses parameter #0 of @forward along the batch; a parameter cannot be rebatched}}
  %0 = linalg.add ins(%x, %p : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @forward(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{qtrain-rebatch: 'tensor.pad' pads the batch (dimension 0)}}
  %0 = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<2x3xf32> to tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Taking the first sample.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{qtrain-rebatch: 'tensor.extract_slice' slices the batch (dimension 0); only whole batches can be rebatched}}
  %0 = tensor.extract_slice %x[0, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
  return %x : tensor<2x3xf32>
}

// -----

func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{qtrain-rebatch: 'tensor.extract' is not supported by qtrain-rebatch: it cannot re-infer the batch dimension through it}}
  %0 = tensor.extract %x[%c0, %c0] : tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}

// -----

// The logits come out transposed: the batch is not their leading dimension.
func.func @forward(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.transpose ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) permutation = [1, 0]
  // expected-error @+1 {{qtrain-rebatch: 'func.return' needs the batch of a value at dimension 0, but it is at dimension 1}}
  return %0 : tensor<2x2xf32>
}

// -----

// Two operands carry the batch along different loops.
func.func @forward(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' iterates over the batch with loops 0 and 1}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %x : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// A constant index into a batch larger than 1 reads one sample only.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' indexes the batch (dimension 0) of operand #0 with '0'; only a loop of its own can be rebatched}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}

// -----

// At batch 1, a constant 0 at the batch is a broadcast only where it lines
// up with a loop of its own.
func.func @forward(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %e = tensor.empty() : tensor<1x3xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' reads the batch of operand #0 with a constant index that is not a broadcast of a trailing-aligned unit dimension}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d0)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x3xf32>) outs(%e : tensor<1x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x3xf32>
  return %x : tensor<1x3xf32>
}

// -----

// The batch loop inside an affine expression.
func.func @forward(%x: tensor<2x3xf32>, %y: tensor<4xf32> {qtrain.param}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' indexes operand #1 with 'd0 + d1', which mixes the batch loop with others}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<2x3xf32>, tensor<4xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x1xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' indexes the batch (dimension 0) of operand #0 with 'd0 + d1'; only a loop of its own can be rebatched}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x1xf32>
  return %x : tensor<2x3xf32>
}

// -----

// At batch 1, one sample broadcast over 5 rows: those are not a batch.
func.func @forward(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' broadcasts the batch of operand #0 over loop 0 of size 5, which is not the batch 1; it cannot be rebatched}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<5x3xf32>
  return %x : tensor<1x3xf32>
}

// -----

// One empty operand read with the batch loop twice.
func.func @forward(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %o = tensor.empty() : tensor<2x2xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' needs the batch of operand #1 at dimensions 0 and 1}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %e : tensor<2x2xf32>, tensor<2x2xf32>) outs(%o : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    linalg.yield %a : f32
  } -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// A fold must keep the sample index outermost: after the transpose the
// batch is the inner member of the group.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  // expected-error @+1 {{qtrain-rebatch: 'tensor.collapse_shape' folds the batch (dimension 1) into group 0 of the reassociation behind dimension 0 of size 3; only a fold whose outermost member is the batch can be rebatched}}
  %0 = tensor.collapse_shape %t [[0, 1]] : tensor<3x2xf32> into tensor<6xf32>
  return %x : tensor<2x3xf32>
}

// -----

// Splitting a fold of batch 2 x 3 as 3 x 2 cuts across samples.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  // expected-error @+1 {{qtrain-rebatch: 'tensor.expand_shape' splits the batch into several dimensions (group 0 of the reassociation); it cannot be rebatched}}
  %0 = tensor.expand_shape %f [[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
  return %x : tensor<2x3xf32>
}

// -----

// The same, seen from the expanded side: a consumer puts the batch at
// dimension 1 of the expand's result, behind a dimension of size 3.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e6 = tensor.empty() : tensor<6xf32>
  // expected-error @+1 {{qtrain-rebatch: 'tensor.expand_shape' splits group 0 of the reassociation so that dimension 0 of size 3 comes before the batch (dimension 1); it cannot be rebatched}}
  %u = tensor.expand_shape %e6 [[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.transpose ins(%u : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
  %0 = linalg.add ins(%x, %t : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A consumer needs a fold of batch 2 x 3 from a [3, 2] source.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  // expected-error @+1 {{qtrain-rebatch: 'tensor.collapse_shape' mixes the batch with other dimensions (group 0 of the reassociation); it cannot be rebatched}}
  %g = tensor.collapse_shape %e [[0, 1]] : tensor<3x2xf32> into tensor<6xf32>
  %o = tensor.empty() : tensor<6xf32>
  %0 = linalg.add ins(%f, %g : tensor<6xf32>, tensor<6xf32>) outs(%o : tensor<6xf32>) -> tensor<6xf32>
  return %x : tensor<2x3xf32>
}

// -----

// A sum over the sequence of a batch x sequence fold adds up the tokens of
// every sample.
func.func @forward(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' reduces over loop 0, which folds the batch with other dimensions (size 3); it would mix samples, so it is not rebatched}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x2 : tensor<3x4xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %x : tensor<1x3x4xf32>
}

// -----

// A matmul that contracts the fold (a Gram matrix over the tokens).
func.func @forward(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %te = tensor.empty() : tensor<4x3xf32>
  %xt = linalg.transpose ins(%x2 : tensor<3x4xf32>) outs(%te : tensor<4x3xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.matmul' reduces over loop 2, which folds the batch with other dimensions (size 3); it would mix samples, so it is not rebatched}}
  %g = linalg.matmul ins(%xt, %x2 : tensor<4x3xf32>, tensor<3x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %x : tensor<1x3x4xf32>
}

// -----

// One value per sample broadcast over the rows of a fold: at batch 4 the
// rows of sample b would need row b, not the loop.
func.func @forward(%x: tensor<1x3x4xf32>, %p: tensor<1x4xf32>) -> tensor<1x3x4xf32> {
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' broadcasts the batch of operand #1 over loop 0 of size 3, which is not the batch 1; it cannot be rebatched}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x2, %p : tensor<3x4xf32>, tensor<1x4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %x : tensor<1x3x4xf32>
}

// -----

// A constant index into a fold reads the first sample's first row.
func.func @forward(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %e = tensor.empty() : tensor<1x4xf32>
  // expected-error @+1 {{qtrain-rebatch: 'linalg.generic' reads dimension 0 of operand #0, which folds the batch with other dimensions, at the constant index 0: that is the first sample's part only}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x2 : tensor<3x4xf32>) outs(%e : tensor<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x4xf32>
  return %x : tensor<1x3x4xf32>
}

// -----

// Slicing part of a fold.
func.func @forward(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  // expected-error @+1 {{qtrain-rebatch: 'tensor.extract_slice' slices the batch (dimension 0); only whole batches can be rebatched}}
  %0 = tensor.extract_slice %x2[0, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
  return %x : tensor<1x3x4xf32>
}

// -----

//--- options.mlir
// NO-BATCH: error: qtrain-rebatch: set the new batch size with batch=<n> (a positive number), got 0
// NEGATIVE-FROM: error: qtrain-rebatch: from must be positive, got -1
// WRONG-FROM: error: qtrain-rebatch: 'func.func': dimension 0 of input #0 ('tensor<2x3xf32>') should be the batch 3, but it is 2
// expected-remark @+1 {{rebatched @forward from batch 2 to 4 (0 ops rewritten)}}
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
