# Exit codes, arguments and messages a driver can act on (issue 10 part B).
# The contract (README "Exit status", every --help): 0 ok; 1 the result is
# unusable or suspect; 2 usage or I/O error; 3 a --fail-on gate fired.

# ---- kvio-gen: a real --help, bad values are usage errors ----
"$BUILD/kvio-gen" --help > "$T/gen.help" 2>&1
eq "kvio-gen --help: exit 0, lists every option" "0 8" \
	"$? $(grep -cE '^  --(sem|ebpf|serving|lines|mode|ranks|seed|faults) ' "$T/gen.help")"
for bad in "--lines abc" "--lines 10x" "--lines -5" "--mode fast" "--ranks 9" "--bogus" "--lines"; do
	# shellcheck disable=SC2086
	"$BUILD/kvio-gen" --sem "$T/gen.s" --ebpf "$T/gen.e" $bad > /dev/null 2> "$T/gen.err"
	eq "kvio-gen $bad: exit 2, one line" "2 1" "$? $(wc -l < "$T/gen.err")"
done
