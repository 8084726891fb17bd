# The end-to-end capture test in a QEMU guest (scripts/vmtest.sh, also `make
# vmtest`). KVIO_SKIP_VM=1 skips it (and says so as a failure-free note).
if [ "${KVIO_SKIP_VM:-0}" = 1 ]; then
	echo "# vm test skipped (KVIO_SKIP_VM=1)"
else
	sh scripts/vmtest.sh "$T/vm" > "$T/vm.out" 2>&1
	grep -E '^(ok|FAIL) - ' "$T/vm.out"
	grep -E '^    ' "$T/vm.out"
	PASS=$((PASS + $(grep -c '^ok - ' "$T/vm.out")))
	FAIL=$((FAIL + $(grep -c '^FAIL - ' "$T/vm.out")))
	if ! grep -q 'passed, 0 failed' "$T/vm.out"; then
		FAIL=$((FAIL + 1)); echo "FAIL - vm: scripts/vmtest.sh did not finish cleanly"; tail -20 "$T/vm.out"
	fi
fi
