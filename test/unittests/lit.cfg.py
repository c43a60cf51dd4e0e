# -*- Python -*-
# lit configuration of the GoogleTest suites: every executable named *Tests
# under the build's test/unittests is run test by test.

import os

import lit.formats

config.name = "qtrain-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.suffixes = []
config.test_source_root = os.path.join(config.qtrain_obj_root, "test", "unittests")
config.test_exec_root = config.test_source_root

# Sanitizer builds (docs/reliability.md): pass the sanitizers' options on.
import os as _os
for _name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if _name in _os.environ:
        config.environment[_name] = _os.environ[_name]
