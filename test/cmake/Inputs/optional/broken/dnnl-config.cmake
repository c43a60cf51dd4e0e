# A package config whose own required lookup fails, as Debian's
# dnnl-config.cmake does without OpenCL's development files.
find_package(QTrainNoSuchDependency REQUIRED)
