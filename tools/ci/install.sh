#!/usr/bin/env bash
# Install and consume, as a user would: build myattn, `cmake --install` it to a temporary prefix,
# then build and run examples/consumer (find_package) and examples/pkg-config (pkg-config alone)
# against that prefix, and check what they link and include. Twice: with TBB (the default) and
# the Python package, whose install is imported from the prefix's site directory; and with
# -DMYATTN_WITH_TBB=OFF, whose build also runs the test suite (CI builds and tests it). Debian's
# python3 is named: another one may come first on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."

tools/install-deps.sh
tools/install-deps.sh pkgconf

jobs=$(nproc)
python=/usr/bin/python3
root=$(pwd)
builds=build/ci-install # kept between runs, so a rerun only rebuilds what changed
work=$(mktemp -d "${TMPDIR:-/tmp}/myattn-install.XXXXXX")
trap 'rm -rf "${work}"' EXIT

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

# needed FILE: the shared libraries FILE asks for (readelf NEEDED), one per line.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# site_dir PREFIX: where Python looks for packages installed at PREFIX (lib/python3.X/site-packages).
site_dir() {
  "${python}" -c "import sys, sysconfig; print(sysconfig.get_path('platlib', 'posix_prefix', vars={'platbase': sys.argv[1], 'base': sys.argv[1]}))" "$1"
}

# consume NAME WITH_TBB WITH_PYTHON: everything a consumer of ${work}/NAME/prefix relies on.
consume() {
  local name=$1 with_tbb=$2 with_python=$3
  local prefix=${work}/${name}/prefix out=${work}/${name}
  echo "--- ${name}: consuming ${prefix}"

  # What was installed, and no more of our build than that.
  for f in lib/libmyattn.a include/myattn/myattn.hpp include/myattn/export.hpp bin/myattn \
    lib/cmake/myattn/myattnConfig.cmake lib/cmake/myattn/myattnConfigVersion.cmake \
    lib/cmake/myattn/myattnTargets.cmake lib/pkgconfig/myattn.pc share/doc/myattn/LICENSE; do
    [ -e "${prefix}/${f}" ] || fail "${name}: ${f} was not installed"
  done
  # A static library only: the one shared object allowed is the Python extension module.
  local site module=none shared
  if [ "${with_python}" = ON ]; then
    site=$(site_dir "${prefix}")
    module=${site}/myattn/_myattn$("${python}" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
    [ -f "${module}" ] || fail "${name}: the Python extension module is not at ${module}"
  fi
  shared=$(find "${prefix}" \( -name '*.so' -o -name '*.so.*' \) ! -path "${module}")
  [ -z "${shared}" ] || fail "${name}: a shared library was installed: ${shared}"

  # The installed headers include only each other and the standard library (<name>, no
  # extension), so no xsimd, nlohmann_json, TBB or kernel header reaches a consumer...
  local bad
  bad=$(grep -hE '^\s*#\s*include' "${prefix}"/include/myattn/*.hpp |
    grep -vE '^\s*#\s*include\s*("myattn/[a-z0-9_]+\.hpp"|<[a-z_]+>)\s*$' || true)
  [ -z "${bad}" ] || fail "${name}: installed headers include more than myattn/ and the standard library: ${bad}"
  # ...and an actual compile, with only the prefix on the include path, opens none of them.
  mkdir -p "${out}"
  c++ -std=c++20 -M -MF "${out}/example.d" -I"${prefix}/include" examples/consumer/main.cpp
  bad=$(tr -s ' ' '\n' <"${out}/example.d" |
    grep -vE "^(|\\\\|main\.o:|examples/consumer/main\.cpp|${prefix}/include/myattn/.*)$" |
    grep -E 'xsimd|nlohmann|tbb|myattn' || true)
  [ -z "${bad}" ] || fail "${name}: compiling the example opened ${bad}"
  # The exported target carries no build-tree dependency and no ISA flag.
  if grep -qE 'nlohmann|xsimd|xtl|-m(avx|fma)' "${prefix}"/lib/cmake/myattn/*.cmake; then
    fail "${name}: the CMake package refers to nlohmann_json, xsimd or ISA flags"
  fi

  # find_package consumer.
  cmake -S examples/consumer -B "${out}/consumer" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="${prefix}" \
    >/dev/null
  cmake --build "${out}/consumer" -j"${jobs}" >/dev/null
  local exe=${out}/consumer/myattn_consumer
  "${exe}" | tee "${out}/consumer.log"
  grep -qx 'batched rows match single forwards' "${out}/consumer.log" || fail "${name}: consumer did not finish"

  # The library inside the example runs the ISA the installed CLI picks (the example was
  # compiled with no -m flag); on x86-64 the one library holds the AVX2 and AVX-512 kernels.
  local cli_isa ex_isa
  cli_isa=$("${prefix}/bin/myattn" info | sed -n 's/^active isa: *\([a-z0-9]*\).*/\1/p')
  ex_isa=$(sed -n 's/^active ISA: \([a-z0-9]*\).*/\1/p' "${out}/consumer.log")
  if [ -z "${ex_isa}" ] || [ "${ex_isa}" != "${cli_isa}" ]; then
    fail "${name}: example runs '${ex_isa}', the CLI '${cli_isa}'"
  fi
  if [ "$(uname -m)" = x86_64 ]; then
    grep -qE '^compiled ISAs: avx512 avx2 scalar$' "${out}/consumer.log" ||
      fail "${name}: the AVX2 / AVX-512 kernels are not in libmyattn.a"
  fi

  # pkg-config consumer (examples/pkg-config/build.sh: c++ main.cpp $(pkg-config ... --static myattn)).
  PKG_CONFIG_PATH="${prefix}/lib/pkgconfig" examples/pkg-config/build.sh "${out}/pkgconfig_consumer"
  "${out}/pkgconfig_consumer"

  # Neither links libmyattn dynamically; without TBB, they need no TBB either.
  local bin
  for bin in "${exe}" "${out}/pkgconfig_consumer"; do
    echo "$(basename "${bin}") needs: $(needed "${bin}" | tr '\n' ' ')"
    if needed "${bin}" | grep -q libmyattn; then fail "${name}: ${bin} links libmyattn dynamically"; fi
    if [ "${with_tbb}" = OFF ] && needed "${bin}" | grep -q libtbb; then fail "${name}: ${bin} links TBB"; fi
  done
  if [ "${with_tbb}" = OFF ]; then
    if grep -q 'TBB::' "${prefix}/lib/cmake/myattn/myattnTargets.cmake"; then fail "${name}: package needs TBB"; fi
    if PKG_CONFIG_PATH="${prefix}/lib/pkgconfig" pkg-config --libs --static myattn | grep -qE '(^| )-ltbb'; then
      fail "${name}: myattn.pc needs TBB"
    fi
  fi
  stat -c 'size: %s %n' "${prefix}/lib/libmyattn.a" "${exe}" "${out}/pkgconfig_consumer"
  if [ "${with_python}" = ON ]; then consume_python "${name}" "${prefix}" "${site}" "${module}"; fi
}

# consume_python NAME PREFIX SITE MODULE: the Python package installed in SITE, imported from
# there through PYTHONPATH (README), and from a venv made at a prefix of its own.
consume_python() {
  local name=$1 prefix=$2 site=$3 module=$4 f
  echo "--- ${name}: Python package in ${site}"
  for f in python/myattn/*.py; do
    [ -f "${site}/myattn/$(basename "${f}")" ] || fail "${name}: ${f} was not installed in ${site}/myattn"
  done
  # libmyattn is inside it; torch is never linked (only recognised once the caller imported it).
  echo "$(basename "${module}") needs: $(needed "${module}" | tr '\n' ' ')"
  if needed "${module}" | grep -qE 'libmyattn|torch|c10'; then fail "${name}: ${module} links libmyattn or torch"; fi
  mkdir -p "${work}/${name}/py"
  (cd "${work}/${name}/py" && PYTHONPATH="${site}" "${python}" "${root}/tools/ci/check-installed-python.py" \
    "${site}" "${prefix}/bin/myattn" .) || fail "${name}: the installed Python package failed"
  (cd "${work}/${name}/py" && PYTHONPATH="${site}" "${python}" -m myattn info) >/dev/null ||
    fail "${name}: python3 -m myattn info failed"

  # README's alternative: a venv that sees Debian's packages, the package installed into it.
  local venv=${work}/${name}/venv
  "${python}" -m venv --system-site-packages --without-pip "${venv}"
  cmake --install "${build_dir[${name}]}" --prefix "${venv}" >/dev/null
  (cd "${venv}" && bin/python -c 'import myattn, sys; sys.exit(not myattn.__file__.startswith(sys.prefix))') ||
    fail "${name}: a venv at the prefix does not import its own myattn"
}

declare -A build_dir # the build tree each variant installs from

# build_and_install NAME CMAKE_ARGS...: a Release build in ${builds}/NAME with warnings as
# errors and the default ISAs, installed to ${work}/NAME/prefix.
build_and_install() {
  local name=$1
  shift
  build_dir[${name}]=${builds}/${name}
  cmake -S . -B "${builds}/${name}" -DCMAKE_BUILD_TYPE=Release -DMYATTN_WERROR=ON -DMYATTN_BUILD_BENCH=OFF \
    "$@" >/dev/null
  cmake --build "${builds}/${name}" -j"${jobs}"
  cmake --install "${builds}/${name}" --prefix "${work}/${name}/prefix" >/dev/null
}

# With TBB (the default): the library, the CLI and the Python package, from the release stage's
# own tree, configured as tools/ci/release.sh configures it (and built here when this stage runs
# alone): installing what one built is what a user does, and CI is spared another Release build
# of every kernel at every precision.
build_dir[tbb]=build/release
cmake --preset release -DMYATTN_PYTHON=ON -DPython3_EXECUTABLE="${python}" >/dev/null
cmake --build --preset release -j"${jobs}"
cmake --install build/release --prefix "${work}/tbb/prefix" >/dev/null
consume tbb ON ON

# Without TBB: one build serves the test suite and the install.
build_and_install notbb -DMYATTN_WITH_TBB=OFF -DMYATTN_BUILD_TESTS=ON
ctest --test-dir "${builds}/notbb" -j"${jobs}" --output-on-failure --timeout 900
consume notbb OFF OFF

# A shared build's myattn.pc says how to link a shared library (configure only: seconds).
cmake -S . -B "${builds}/shared" -DBUILD_SHARED_LIBS=ON -DMYATTN_BUILD_TESTS=OFF -DMYATTN_BUILD_BENCH=OFF >/dev/null
grep -q '^# Link libmyattn.so with: .*pkg-config --cflags --libs myattn)' "${builds}/shared/myattn.pc" &&
  ! grep -q 'libmyattn\.a\|--static' "${builds}/shared/myattn.pc" ||
  { cat "${builds}/shared/myattn.pc" >&2; fail "shared: myattn.pc does not describe a shared library"; }
