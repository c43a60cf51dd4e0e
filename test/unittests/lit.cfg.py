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
