// The passes' remarks go through MLIR's remark engine: a plain run prints
// none; --remarks-filter (a regex on the category, the pass name) selects
// them, --remark-format=yaml writes them to --remarks-output-file, and the
// per-kind filters select low groups (passed), high groups (missed) and the
// summary (analysis).
// RUN: qtrain-opt %qtrain_src_root/examples/models/mlp.mlir --qtrain-assign-precision="ratio=0.5" -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: rm -f %t.all.yaml %t.passed.yaml %t.other.yaml
// RUN: qtrain-opt %qtrain_src_root/examples/models/mlp.mlir --qtrain-assign-precision="ratio=0.5" --remarks-filter=qtrain-assign-precision --remark-format=yaml --remarks-output-file=%t.all.yaml -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: FileCheck %s --check-prefix=YAML < %t.all.yaml
// RUN: qtrain-opt %qtrain_src_root/examples/models/mlp.mlir --qtrain-assign-precision="ratio=0.5" --remarks-filter-passed="qtrain-.*" --remark-format=yaml --remarks-output-file=%t.passed.yaml -o /dev/null
// RUN: FileCheck %s --check-prefix=PASSED --implicit-check-not='--- !' < %t.passed.yaml
// RUN: qtrain-opt %qtrain_src_root/examples/models/mlp.mlir --qtrain-assign-precision="ratio=0.5" --remarks-filter=qtrain-rebatch --remark-format=yaml --remarks-output-file=%t.other.yaml -o /dev/null
// RUN: FileCheck %s --allow-empty --check-prefix=OTHER < %t.other.yaml
// The default format prints the selected remarks as diagnostics, without
// the IR of the operation.
// RUN: qtrain-opt %qtrain_src_root/examples/models/mlp.mlir --qtrain-assign-precision="ratio=0.5" --remarks-filter="qtrain-.*" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT

// QUIET-NOT: remark
// QUIET-NOT: see current operation

// YAML:      --- !Passed
// YAML-NEXT: Pass: qtrain-assign-precision
// YAML-NEXT: Name: group-low
// YAML-NEXT: DebugLoc: { File: '{{.*}}mlp.mlir', Line: {{[0-9]+}},
// YAML:      Function: forward
// YAML-NEXT: Args:
// YAML-NEXT: - Remark: 'group 0 (input {{[0-9]+}}): {{.*}}, low: P, Y #qtrain.float<4, 3, 4, saturate>
// YAML:      --- !Missed
// YAML-NEXT: Pass: qtrain-assign-precision
// YAML-NEXT: Name: group-high
// YAML:      - Remark: 'group 1 ({{.*}}, high: P, Y #qtrain.float<6, 9, 0, saturate>
// YAML:      --- !Analysis
// YAML-NEXT: Pass: qtrain-assign-precision
// YAML-NEXT: Name: assignment
// YAML:      - Remark: 'qtrain-assign-precision: order largest, r = 0.5: 1 of

// PASSED:     --- !Passed
// PASSED-NEXT: Pass: qtrain-assign-precision
// PASSED-NEXT: Name: group-low

// OTHER-NOT: qtrain-assign-precision

// PRINT: remark: [Passed] group-low | Category:qtrain-assign-precision | Function=forward | Remark="group 0
// PRINT: remark: [Missed] group-high | Category:qtrain-assign-precision | Function=forward | Remark="group 1
// PRINT: remark: [Analysis] assignment | Category:qtrain-assign-precision | Function=forward | Remark="qtrain-assign-precision: order largest, r = 0.5:
// PRINT-NOT: see current operation
