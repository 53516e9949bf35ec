#!/usr/bin/env bash
# Kernel builds as swprofiles (kbench build, plan exec's builds) on a stand-in
# kernel tree: tests/data/fake-kernel-tree, copied into a fresh git
# repository here. Its Makefile implements the targets kbench calls and logs
# every make run and every compile to $FAKE_KERNEL_CALLS, so the test sees
# that a cached build runs no make at all and a new commit recompiles only
# its changed file in the same object directory.
source "$(dirname "$0")/lib.bash"
: "${KBENCH_SOURCE_DIR:?path to the kbench source tree}"
command -v git >/dev/null || skip "no git"
command -v make >/dev/null || skip "no make"
command -v gcc >/dev/null || skip "no gcc"

export GIT_AUTHOR_NAME="kbench test" GIT_AUTHOR_EMAIL=test@kbench.invalid
export GIT_COMMITTER_NAME="kbench test" GIT_COMMITTER_EMAIL=test@kbench.invalid
export FAKE_KERNEL_CALLS="$WORK/calls"
CACHE="$WORK/cache"
TREE="$WORK/tree"
cp -r "$KBENCH_SOURCE_DIR/tests/data/fake-kernel-tree" "$TREE"
git -C "$TREE" init -q && git -C "$TREE" add -A && git -C "$TREE" commit -qm base && git -C "$TREE" tag v1
: >"$FAKE_KERNEL_CALLS"

# plan FILE BUILD-MAPPING [SWPROFILE-NAME]
plan() {
  cat >"$1" <<YAML
sut: {connection: {method: qemu}}
swprofiles:
  - name: ${3:-fake}
    build: $2
benchmarks: [syscall/getpid]
YAML
}
calls() { wc -l <"$FAKE_KERNEL_CALLS"; }

# --- first build runs make; the second finds it cached ----------------------------
plan "$WORK/tree.yaml" "{source: tree, config: tinyconfig, fragments: [CONFIG_EXTRA=y], compiler: gcc, make_args: [W=1]}"
"$KBENCH" plan check "$WORK/tree.yaml" >"$WORK/out" 2>"$WORK/err" && pass || fail "plan check: $(cat "$WORK/err")"
[ "$(calls)" -eq 0 ] && pass || fail "plan check ran make: $(cat "$FAKE_KERNEL_CALLS")"

"$KBENCH" build "$WORK/tree.yaml" --build-cache "$CACHE" >"$WORK/out" 2>"$WORK/err"
[ $? -eq 0 ] && pass || fail "first build: $(cat "$WORK/err")"
expect_contains "$WORK/out" "built in"
expect_contains "$WORK/err" "kbench: build: fake: building"
grep -q "tinyconfig CC=" "$FAKE_KERNEL_CALLS" && grep -q " bzImage CC=" "$FAKE_KERNEL_CALLS" && pass ||
  fail "the first build did not run make tinyconfig and bzImage: $(cat "$FAKE_KERNEL_CALLS")"
key=$(awk '{print $2}' "$WORK/out")
image=$(awk '{print $NF}' "$WORK/out")
[[ "$key" =~ ^[0-9a-f]{12}$ ]] && pass || fail "key column: '$key'"
out_dir=$(dirname "$image")
[ "$(basename "$image")" = vmlinuz-6.1.0-fake ] && pass || fail "image name: $image"
for f in config-6.1.0-fake info.json build.log; do [ -f "$out_dir/$f" ] && pass || fail "no $f beside the image"; done
grep -q '^CONFIG_EXTRA=y' "$out_dir/config-6.1.0-fake" && pass || fail "the fragment is not in the config"
[ ! -e "$out_dir/modules-6.1.0-fake.tar" ] && pass || fail "a modules tarball without CONFIG_MODULES"
grep -q '"compiler_version": "gcc' "$out_dir/info.json" && grep -q '"config_sha256"' "$out_dir/info.json" && pass ||
  fail "info.json lacks the compiler version or config hash: $(cat "$out_dir/info.json")"

before=$(calls)
"$KBENCH" build "$WORK/tree.yaml" --build-cache "$CACHE" >"$WORK/out2" 2>"$WORK/err"
[ $? -eq 0 ] && pass || fail "second build: $(cat "$WORK/err")"
grep -q "^fake  $key  cached  .* $image\$" "$WORK/out2" && pass || fail "second build not cached: $(cat "$WORK/out2")"
[ "$(calls)" -eq "$before" ] && pass || fail "a cached build ran make: $(tail -n +$((before + 1)) "$FAKE_KERNEL_CALLS")"

# --- a working-tree edit is another kernel --------------------------------------------
echo 'int syscall(void) { return 3; }' >"$TREE/kernel/syscall.c"
"$KBENCH" build "$WORK/tree.yaml" --build-cache "$CACHE" >"$WORK/out3" 2>"$WORK/err"
edited_key=$(awk '{print $2}' "$WORK/out3")
[ -n "$edited_key" ] && [ "$edited_key" != "$key" ] && grep -q "built in" "$WORK/out3" && pass ||
  fail "an edited tree was not rebuilt: $(cat "$WORK/out3" "$WORK/err")"
git -C "$TREE" checkout -q -- kernel/syscall.c

# --- refs: a new commit builds incrementally in the same object directory -----------------
plan "$WORK/v1.yaml" "{source: tree, ref: v1, config: defconfig}"
"$KBENCH" build "$WORK/v1.yaml" --build-cache "$CACHE" >"$WORK/out" 2>"$WORK/err" && pass || fail "v1: $(cat "$WORK/err")"
v1_obj=$(grep -o "$CACHE/obj/[0-9a-f]*" "$WORK/err" | head -1)
[ -n "$v1_obj" ] && pass || fail "no object directory in: $(cat "$WORK/err")"
v1_image=$(awk '{print $NF}' "$WORK/out")
tar -tf "$(dirname "$v1_image")/modules-6.1.0-fake.tar" | grep -q "^lib/modules/6.1.0-fake/kernel/fake.ko$" && pass ||
  fail "defconfig (CONFIG_MODULES=y) gave no modules tarball holding lib/modules/<release>"
git -C "$TREE" status --porcelain | grep -q . && fail "the build touched the user's checkout" || pass
echo 'int syscall(void) { return 4; }' >"$TREE/kernel/syscall.c"
git -C "$TREE" commit -qam "a second commit" && git -C "$TREE" tag v2
plan "$WORK/v2.yaml" "{source: tree, ref: v2, config: defconfig}"
before=$(calls)
"$KBENCH" build "$WORK/v2.yaml" --build-cache "$CACHE" >"$WORK/out" 2>"$WORK/err" && pass || fail "v2: $(cat "$WORK/err")"
expect_contains "$WORK/err" "(incremental in $v1_obj"
tail -n +$((before + 1)) "$FAKE_KERNEL_CALLS" >"$WORK/v2-calls"
grep -q "^compile syscall.c$" "$WORK/v2-calls" && pass || fail "v2 did not recompile its changed file: $(cat "$WORK/v2-calls")"
grep -q "^compile sched.c$" "$WORK/v2-calls" && fail "v2 recompiled an unchanged file: $(cat "$WORK/v2-calls")" || pass
grep -q "^$v1_obj bzImage" "$WORK/v2-calls" && pass || fail "v2 was built elsewhere: $(cat "$WORK/v2-calls")"
[ "$(awk '{print $NF}' "$WORK/out")" != "$v1_image" ] && pass || fail "v2 has v1's output"
# v1 again: its output is still cached.
before=$(calls)
"$KBENCH" build "$WORK/v1.yaml" --build-cache "$CACHE" >"$WORK/out" 2>"$WORK/err"
grep -q " cached " "$WORK/out" && [ "$(calls)" -eq "$before" ] && pass || fail "v1 rebuilt: $(cat "$WORK/out")"

# --- two builds at once share the cache safely --------------------------------------------
plan "$WORK/o1.yaml" "{source: tree, config: tinyconfig, make_args: [KCFLAGS=-O1]}"
"$KBENCH" build "$WORK/o1.yaml" --build-cache "$CACHE" >"$WORK/p1" 2>/dev/null &
"$KBENCH" build "$WORK/o1.yaml" --build-cache "$CACHE" >"$WORK/p2" 2>/dev/null
wait $!
p1=$(awk '{print $NF}' "$WORK/p1")
p2=$(awk '{print $NF}' "$WORK/p2")
[ -n "$p1" ] && [ "$p1" = "$p2" ] && [ -f "$p1" ] && pass || fail "concurrent builds: $(cat "$WORK/p1" "$WORK/p2")"
cat "$WORK/p1" "$WORK/p2" | grep -c "^fake  [0-9a-f]*  cached " | grep -qx 1 && pass ||
  fail "concurrent builds: not one built and one cached: $(cat "$WORK/p1" "$WORK/p2")"

# --- a failing build: exit 1, the swprofile named, the log's tail ---------------------------
plan "$WORK/broken.yaml" "{source: tree, config: tinyconfig, fragments: [CONFIG_BREAK_BUILD=y]}" broken
"$KBENCH" build "$WORK/broken.yaml" --build-cache "$CACHE" >"$WORK/out" 2>"$WORK/err"
status=$?
[ $status -eq 1 ] && pass || fail "failed build: exit $status, expected 1"
expect_contains "$WORK/err" "swprofile broken: kernel build failed"
expect_contains "$WORK/err" "planted build failure"
expect_contains "$WORK/err" "kernel/file60.o"
grep -q "kernel/file1\.o$" "$WORK/err" && fail "more than the log's tail: $(cat "$WORK/err")" || pass
log=$(grep -o "log: [^)]*" "$WORK/err" | head -1 | cut -c6-)
[ -f "$log" ] && grep -q "kernel/file1\.o$" "$log" && pass || fail "the whole log is not kept at '$log'"
# plan exec: the same failure before anything is measured or stored.
"$KBENCH" plan exec "$WORK/broken.yaml" --build-cache "$CACHE" --store "sqlite://$WORK/store.db" >"$WORK/out" 2>"$WORK/err"
status=$?
[ $status -eq 1 ] && pass || fail "plan exec with a failing build: exit $status"
expect_contains "$WORK/err" "swprofile broken: kernel build failed"
[ ! -e "$WORK/store.db" ] && pass || fail "a failed build created the store"

# --- bad specs: exit 2, one line -------------------------------------------------------------
plan "$WORK/bad-compiler.yaml" "{source: tree, compiler: icc}"
expect_bad_input "build: unknown compiler" "$KBENCH" build "$WORK/bad-compiler.yaml" --build-cache "$CACHE"
grep -q "bad-compiler.yaml:4: swprofiles\[\].build.compiler: expected gcc or clang, got 'icc'" "$WORK/err" && pass ||
  fail "got: $(cat "$WORK/err")"
plan "$WORK/bad-source.yaml" "{source: nowhere}"
expect_bad_input "build: missing source" "$KBENCH" build "$WORK/bad-source.yaml" --build-cache "$CACHE"
plan "$WORK/bad-ref.yaml" "{source: tree, ref: no-such-tag}"
expect_bad_input "build: unknown ref" "$KBENCH" build "$WORK/bad-ref.yaml" --build-cache "$CACHE"
expect_bad_input "plan check: unknown ref" "$KBENCH" plan check "$WORK/bad-ref.yaml"
grep -q "build.ref 'no-such-tag'" "$WORK/err" && pass || fail "got: $(cat "$WORK/err")"
plan "$WORK/bad-fragment.yaml" "{source: tree, fragments: [missing.config]}"
expect_bad_input "build: missing fragment" "$KBENCH" build "$WORK/bad-fragment.yaml" --build-cache "$CACHE"
printf 'swprofiles:\n  - {name: x, kernel: /boot/vmlinuz, build: {source: tree}}\nbenchmarks: [syscall/getpid]\n' >"$WORK/both.yaml"
expect_bad_input "build and kernel" "$KBENCH" build "$WORK/both.yaml" --build-cache "$CACHE"
printf 'swprofiles:\n  - {name: x, build: {source: tree}}\nbenchmarks: [syscall/getpid]\n' >"$WORK/local.yaml"
expect_bad_input "plan exec: build on a local SUT" "$KBENCH" plan exec "$WORK/local.yaml" --build-cache "$CACHE" \
  --store "sqlite://$WORK/store.db"
before=$(calls)
plan "$WORK/no-dep.yaml" "{source: tree, config: tinyconfig, fragments: [CONFIG_NEEDS_DEP=y]}"
# Found only once make has made the config: after the progress line, one line.
"$KBENCH" build "$WORK/no-dep.yaml" --build-cache "$CACHE" >"$WORK/out" 2>"$WORK/err"
status=$?
[ $status -eq 2 ] && pass || fail "a fragment option that did not take: exit $status, expected 2"
grep -v "^kbench: build: " "$WORK/err" >"$WORK/err-lines"
[ "$(wc -l <"$WORK/err-lines")" -eq 1 ] && grep -q "kbench: swprofile fake: build.fragments: CONFIG_NEEDS_DEP=y did not take" \
  "$WORK/err-lines" && pass || fail "got: $(cat "$WORK/err")"
grep -q "bzImage" <(tail -n +$((before + 1)) "$FAKE_KERNEL_CALLS") && fail "built although the config was wrong" || pass
expect_bad_input "build: --swprofile unknown" "$KBENCH" build "$WORK/tree.yaml" --swprofile nosuch --build-cache "$CACHE"

finish
