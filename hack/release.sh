#!/usr/bin/env bash
# release.sh builds Stowage's release artifacts with nothing but Go and the
# module proxy (no container daemon). RELEASING.md explains each artifact.
#
#   release.sh image DIR PLATFORM...   the controller's image as an OCI layout
#                                      (VERSION in the environment, else dev)
#   release.sh dist VERSION            dist/: everything, built twice and compared
#   release.sh provider VERSION DIGEST DIR PLATFORM...
#                                      the provider's zips, manifest and checksums
#                                      alone, its image pinned by DIGEST (for tests)
#   release.sh sign VERSION KEY        sign the provider's checksums with gpg
#
# The release tooling (go-containerregistry, cyclonedx-gomod's generator,
# helm) comes from the tools module in hack/tools, never the product's go.mod. Every artifact is
# reproducible: the same commit gives the same bytes, which dist checks by
# building everything a second time into a scratch folder.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
readonly PROVIDER=terraform-provider-stowage
readonly IMAGE_REPO=ghcr.io/stowage-dev/stowage
readonly PROVIDER_PLATFORMS=(darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64)
readonly IMAGE_PLATFORMS=(linux/amd64 linux/arm64)

export GOFLAGS=-buildvcs=false GOWORK=off CGO_ENABLED=0
GO="${GO:-go}"

# Scratch folders, removed on exit.
SCRATCH=()
trap 'rm -rf "${SCRATCH[@]}"' EXIT
scratch() { local d; d="$(mktemp -d)"; SCRATCH+=("$d"); printf '%s' "$d"; }

log() { printf 'release: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

commit() { git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown; }

# source_date_epoch is the commit's time: the images' creation time.
source_date_epoch() {
  if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then echo "$SOURCE_DATE_EPOCH"; return; fi
  git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0
}

# stamp is the -ldflags that set what `stowage version` prints.
stamp() {
  local pkg=github.com/stowage-dev/stowage/controller/buildinfo
  printf -- '-s -w -buildid= -X %s.version=%s -X %s.commit=%s' "$pkg" "$1" "$pkg" "$(commit)"
}

# tool builds a command of the tools module into DIR and prints its path.
tool() {
  local dir="$1" pkg="$2"
  (cd "$ROOT/hack/tools" && "$GO" build -trimpath -o "$dir/" "$pkg") || die "building $pkg from hack/tools"
  printf '%s/%s' "$dir" "$(basename "$pkg")"
}

# stowage_binary builds a static stowage for linux/ARCH into DIR/stowage.
stowage_binary() {
  local version="$1" arch="$2" dir="$3"
  (cd "$ROOT" && GOOS=linux GOARCH="$arch" "$GO" build -trimpath -ldflags "$(stamp "$version")" \
    -o "$dir/stowage" ./controller/cmd/stowage) || die "building stowage for linux/$arch"
}

# image VERSION OUT WORK PLATFORM... writes the OCI layout OUT and prints
# the index's digest.
image() {
  local version="$1" out="$2" work="$3" p args=()
  shift 3
  for p in "$@"; do
    stowage_binary "$version" "${p#linux/}" "$work/stowage_${p/\//_}"
    args+=(-binary "$p=$work/stowage_${p/\//_}/stowage")
  done
  "$(tool "$work/tools" ./ociimage)" -out "$out" "${args[@]}" \
    -zoneinfo "$("$GO" env GOROOT)/lib/time/zoneinfo.zip" \
    -version "$version" -commit "$(commit)" -created "$(source_date_epoch)"
}

# provider VERSION DIGEST OUT WORK PLATFORM... writes the provider's zips,
# manifest and checksums as the Terraform Registry takes them.
provider() {
  local version="$1" digest="$2" out="$3" work="$4" v="${1#v}" p goos arch exe zip
  shift 4
  (cd "$ROOT" && make -s lambda-embed) || die "building the Lambda's zips the provider embeds"
  mkdir -p "$out"
  for p in "$@"; do
    goos="${p%/*}" arch="${p#*/}" exe="${PROVIDER}_v$v"
    [[ "$goos" == windows ]] && exe+=.exe
    (cd "$ROOT" && GOOS="$goos" GOARCH="$arch" "$GO" build -trimpath \
      -ldflags "-s -w -buildid= -X main.version=$v -X main.imageDigest=$digest" \
      -o "$work/provider_${goos}_$arch/$exe" ./provider) || die "building the provider for $p"
    zip="${PROVIDER}_${v}_${goos}_$arch.zip"
    (cd "$ROOT" && "$GO" run ./lambda/cmd/zipbootstrap -o "$out/$zip" -entry "$exe" "$work/provider_${goos}_$arch/$exe")
  done
  printf '{"version":1,"metadata":{"protocol_versions":["6.0"]}}\n' >"$out/${PROVIDER}_${v}_manifest.json"
  (cd "$out" && sha256sum "${PROVIDER}_${v}"_*.zip "${PROVIDER}_${v}_manifest.json" | LC_ALL=C sort -k2 >"${PROVIDER}_${v}_SHA256SUMS")
}

# chart packages charts/stowage at the release's version, its image pinned
# by the index's digest, with helm's SOURCE_DATE_EPOCH for fixed times.
chart() {
  local version="$1" digest="$2" out="$3" work="$4" helm
  helm="$(tool "$work/tools" helm.sh/helm/v4/cmd/helm)"
  cp -r "$ROOT/charts/stowage" "$work/chart"
  sed -i "s|^  digest: \"\"\$|  digest: \"$digest\"|" "$work/chart/values.yaml"
  grep -q "^  digest: \"$digest\"\$" "$work/chart/values.yaml" || die "pinning the chart's image: no image.digest in values.yaml"
  SOURCE_DATE_EPOCH="$(source_date_epoch)" "$helm" package "$work/chart" --version "${version#v}" --app-version "$version" \
    --destination "$out" >/dev/null || die "packaging the chart"
}

# sbom writes the CycloneDX SBOM of the linux/amd64 binary's modules, with
# a serial number and a timestamp that depend on the release alone.
sbom() {
  local version="$1" out="$2" work="$3"
  "$(tool "$work/tools" ./sbom)" -version "$version" -commit "$(commit)" -created "$(source_date_epoch)" \
    -o "$out/stowage_${version#v}_sbom.cdx.json" "$work/stowage_linux_amd64/stowage" || die "writing the SBOM"
}

# build VERSION OUT writes every artifact into OUT.
build() {
  local version="$1" out="$2" work digest
  work="$(scratch)"
  rm -rf "$out" && mkdir -p "$out"
  log "the image (${IMAGE_PLATFORMS[*]})"
  digest="$(image "$version" "$out/image" "$work" "${IMAGE_PLATFORMS[@]}")"
  log "the provider ($IMAGE_REPO:$version@$digest)"
  provider "$version" "$digest" "$out" "$work" "${PROVIDER_PLATFORMS[@]}"
  log "the chart"
  chart "$version" "$digest" "$out" "$work"
  log "the Lambda's zips"
  (cd "$ROOT" && make -s lambda LAMBDA_DIR="$out" >/dev/null) || die "building the Lambda's zips"
  log "the SBOM"
  sbom "$version" "$out" "$work"
  (cd "$out" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
}

dist() {
  local version="$1" again
  [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
    die "VERSION=$version: give a release version, e.g. make release VERSION=v1.2.3"
  [[ -z "$(git -C "$ROOT" status --porcelain 2>/dev/null)" ]] ||
    die "the work tree has changes: a release is built from a commit (commit or stash them)"
  build "$version" "$ROOT/dist"
  again="$(scratch)"
  log "building everything again to compare"
  build "$version" "$again/dist"
  diff -u "$ROOT/dist/SHA256SUMS" "$again/dist/SHA256SUMS" >&2 ||
    die "two builds of commit $(commit) differ (above): the release is not reproducible"
  log "dist/ for $version at $(commit); both builds gave the same digests:"
  (cd "$ROOT/dist" && find . -type f -printf '%P\n' | LC_ALL=C sort | while read -r f; do
    printf '%12d  %s  %s\n' "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-64)" "$f"
  done)
}

# sign writes the detached signature the Registry checks the checksums by,
# with KEY from the caller's keyring: the key never lives in the repository.
# DIST (default dist/) is the folder of the checksums.
sign() {
  local version="$1" key="$2" sums
  [[ -n "$key" ]] || die "GPG_KEY: give the fingerprint of the release signing key"
  sums="${DIST:-$ROOT/dist}/${PROVIDER}_${version#v}_SHA256SUMS"
  [[ -f "$sums" ]] || die "$sums is missing: run make release VERSION=$version first"
  gpg --batch --yes --local-user "$key" --output "$sums.sig" --detach-sign "$sums"
  gpg --batch --verify "$sums.sig" "$sums"
}

case "${1:-}" in
  image) shift; out="$1"; shift
    image "${VERSION:-dev}" "$out" "$(scratch)" "$@" ;;
  dist) dist "${2:-}" ;;
  provider) shift; [[ $# -ge 4 ]] || die "usage: release.sh provider VERSION DIGEST DIR PLATFORM..."
    provider "$1" "$2" "$3" "$(scratch)" "${@:4}" ;;
  sign) sign "${2:-}" "${3:-}" ;;
  *) die "usage: release.sh image DIR PLATFORM... | dist VERSION | provider VERSION DIGEST DIR PLATFORM... | sign VERSION KEY" ;;
esac
