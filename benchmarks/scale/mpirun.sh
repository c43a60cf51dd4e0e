# Sourced by the data-parallel benchmarks: $mpirun runs Open MPI's launcher
# as the machine allows (as root it needs --allow-run-as-root; ranks past
# the cores need --oversubscribe).
mpirun=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun+=(--allow-run-as-root)
command -v mpirun > /dev/null || {
  echo "needs Open MPI's mpirun (scripts/setup.sh installs openmpi-bin)" >&2
  exit 1
}
