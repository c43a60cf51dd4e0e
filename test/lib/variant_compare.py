#!/usr/bin/env python3
"""Writes a C program that checks every kernel variant of a module against
a reference build of the same variants.

    variant_compare.py [--exact] VARIANTS.mlir > compare.c
    clang-22 -O2 compare.c -ldl -o compare
    ./compare TESTED.so REFERENCE.so

VARIANTS.mlir is the module as qtrain-materialize-variants and
qtrain-integer-kernels leave it; TESTED.so and REFERENCE.so are it lowered
(qtrain-lower-cpu: bare pointers, the result as a trailing out-parameter)
once as built and once with qtrain-integer-kernels{f64-reference}, i.e. the
reference quantizer (fake_quant, bit-exact with runtime/Quantize.h) and an
fp64 product. A lowered variant may write into its tensor arguments (the
step's bufferization accounts for that), so every call gets fresh copies.
Every variant is called in both with the same inputs: tensors
of seeded pseudo-normal values, the f32 scalars (explicit ranges) -2.5 and
2.5 in turn, seed 1234 and step 7. The program prints, per variant, the
largest |tested - reference| relative to max |reference|, and fails when it
exceeds the tolerance of the variant's kernel kind (integer kernels differ
from the reference only by the fp32 rounding of each dequantized value;
f32 ones also by fp32 accumulation). It also checks that each variant at b
bits is far from the reference at b - 1 bits, so a variant that ignored its
bitwidth would fail.

With --exact the outputs must be identical bit for bit (REFERENCE.so then
being the module built with qtrain-integer-kernels{reference-sums}: i64
accumulators, full-size masks, nothing collapsed).
"""

import re
import sys

FUNC = re.compile(
    r'func\.func @(\w+)\((.*?)\) -> (tensor<[^>]*>) attributes '
    r'\{qtrain\.variant = #qtrain\.variant<([^>]*)>')
ARG = re.compile(r'%\w+: (tensor<[^>]*>|f32|i64|i32)')
TOLERANCE = {'i8': 1e-6, 'i16': 1e-6, 'f64': 1e-6, 'f32': 1e-5}


def elements(tensor):
    dims = tensor[len('tensor<'):-1].split('x')[:-1]
    count = 1
    for d in dims:
        count *= int(d)
    return count


def main():
    args = sys.argv[1:]
    exact = '--exact' in args
    args = [a for a in args if a != '--exact']
    text = open(args[0]).read()
    variants = []
    for m in FUNC.finditer(text):
        name, args, result, attrs = m.groups()
        kernel = re.search(r'kernel = (\w+)', attrs)
        bits = int(re.search(r'\bbits = (\d+)', attrs).group(1))
        variants.append((name, ARG.findall(args), result,
                         kernel.group(1) if kernel else 'f32', bits))
    if not variants:
        sys.exit('variant_compare.py: no variants in ' + args[0])
    names = {v[0] for v in variants}
    out = []
    w = out.append
    w('#include <dlfcn.h>\n#include <math.h>\n#include <stdint.h>\n'
      '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n')
    w('static uint64_t state = 88172645463325252ull;\n'
      'static float next(void) {  /* xorshift64, sum of 4 uniforms */\n'
      '  float s = 0;\n'
      '  for (int i = 0; i < 4; ++i) {\n'
      '    state ^= state << 13; state ^= state >> 7; state ^= state << 17;\n'
      '    s += (float)(state >> 40) / 16777216.0f;\n'
      '  }\n'
      '  return (s - 2.0f) * 1.7f;\n}\n'
      'static float *tensor(long n) {\n'
      '  float *p = malloc(n * sizeof(float));\n'
      '  for (long i = 0; i < n; ++i) p[i] = next();\n'
      '  return p;\n}\n'
      'static double diff(const float *a, const float *b, long n) {\n'
      '  double worst = 0, scale = 0;\n'
      '  for (long i = 0; i < n; ++i) {\n'
      '    if (isnan(a[i]) != isnan(b[i])) return INFINITY;\n'
      '    double d = fabs((double)a[i] - (double)b[i]);\n'
      '    if (d > worst) worst = d;\n'
      '    if (fabs((double)b[i]) > scale) scale = fabs((double)b[i]);\n'
      '  }\n'
      '  return worst / (scale > 0 ? scale : 1);\n}\n')
    w('int main(int argc, char **argv) {\n'
      '  if (argc != 3) { fprintf(stderr, "usage: compare TESTED.so '
      'REFERENCE.so\\n"); return 2; }\n'
      '  void *tested = dlopen(argv[1], RTLD_NOW);\n'
      '  void *reference = dlopen(argv[2], RTLD_NOW);\n'
      '  if (!tested || !reference) { fprintf(stderr, "%s\\n", dlerror()); '
      'return 2; }\n'
      '  int failures = 0, checked = 0;\n')
    for name, args, result, kernel, bits in variants:
        params = []
        for a in args:
            params.append({'f32': 'float', 'i64': 'int64_t',
                           'i32': 'int32_t'}.get(a, 'float *'))
        params.append('float *')
        n = elements(result)
        w('  {\n    typedef void (*fn)(%s);\n' % ', '.join(params))
        w('    fn t = (fn)dlsym(tested, "%s"), r = (fn)dlsym(reference, "%s");\n'
          % (name, name))
        w('    if (!t || !r) { printf("%s missing\\n"); ++failures; }\n'
          '    else {\n' % name)
        call = []
        scalars = 0
        for i, a in enumerate(args):
            if a == 'f32':
                call.append('%s' % ('-2.5f' if scalars % 2 == 0 else '2.5f'))
                scalars += 1
            elif a == 'i64':
                call.append('1234')
            elif a == 'i32':
                call.append('7')
            else:
                w('      float *p%d = tensor(%d), *a%d = malloc(%d * 4);\n'
                  % (i, elements(a), i, elements(a)))
                call.append('a%d' % i)
        fresh = ''.join('memcpy(a%d, p%d, %d * 4); ' % (i, i, elements(a))
                        for i, a in enumerate(args) if a.startswith('tensor'))
        w('      float *yt = malloc(%d * sizeof(float)), '
          '*yr = malloc(%d * sizeof(float));\n' % (n, n))
        w('      %st(%s);\n      %sr(%s);\n' % (fresh, ', '.join(call + ['yt']),
                                               fresh, ', '.join(call + ['yr'])))
        w('      double e = diff(yt, yr, %d);\n' % n)
        if exact:
            w('      int ok = memcmp(yt, yr, %d * 4) == 0;\n' % n)
            w('      if (!ok) e = e > 0 ? e : INFINITY;\n')
        else:
            w('      int ok = e <= %g;\n' % TOLERANCE[kernel])
        w('      printf("%%-44s %%-3s %%s", "%s", "%s", ok ? (%d ? "bit-exact" : "") : "");\n'
          % (name, kernel, 1 if exact else 0))
        w('      printf(" rel err %.2e", e);\n')
        lower = re.sub(r'_b%d(_|$)' % bits, r'_b%d\1' % (bits - 1), name)
        if bits >= 2 and lower in names:
            w('      float *yl = malloc(%d * sizeof(float));\n' % n)
            w('      fn l = (fn)dlsym(reference, "%s");\n' % lower)
            w('      if (l) { %sl(%s);\n' % (fresh, ', '.join(call + ['yl'])))
            w('        double o = diff(yt, yl, %d);\n' % n)
            w('        printf(", vs %d bits %%.2e", o);\n' % (bits - 1))
            w('        ok &= o > 1e-3; }\n      free(yl);\n')
        w('      printf(" %s\\n", ok ? "ok" : "MISMATCH");\n')
        w('      failures += !ok; ++checked;\n')
        for i, a in enumerate(args):
            if a.startswith('tensor'):
                w('      free(a%d); free(p%d);\n' % (i, i))
        w('      free(yt); free(yr);\n    }\n  }\n')
    w('  printf("variant-compare: %d variants, %s\\n", checked, '
      'failures ? "FAIL" : "PASS");\n'
      '  return failures ? 1 : 0;\n}\n')
    sys.stdout.write(''.join(out))


if __name__ == '__main__':
    main()
