# The build contract: gcc built everything above (-Wall -Wextra -Werror); clang
# must be as clean; `make install` puts the commands, the extension and the
# sql/ files (and the docs) where a packager expects them, and the installed set works.
src="lib/*.c db/*.c ingest/*.c report/*.c export/*.c cmd/*.c capture/nvme_uring_cmd_monitor.c capture/monitor_out.c capture/probes.c capture/kvio_load.c scripts/kvio-gen.c"
if command -v clang >/dev/null; then
	out=""
	for f in $src; do
		o=$(clang -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -fsyntax-only -I"$BUILD" -I"$BUILD/capture" -Icapture "$f" 2>&1) || out="$out$f: $o
"
	done
	eq "clang -Wall -Wextra -Werror: every source file" "" "$out"
	eq "clang++ -Wall -Wextra -Werror: the one C++ file" "" \
		"$(clang++ -std=c++17 -Wall -Wextra -Werror -fno-exceptions -fno-rtti -fsyntax-only ingest/sjline.cc 2>&1)"
fi
rm -rf "$T/inst"
make -s install DESTDIR="$T/inst" PREFIX=/usr > "$T/install.out" 2>&1
eq "make install DESTDIR=... PREFIX=/usr: exit 0" 0 $?
missing=""
for f in bin/kvio bin/kvio-ingest bin/kvio-report bin/kvio-export bin/kvio2perfetto bin/nvme_uring_cmd_monitor bin/kvio-load \
	lib/kvio/kvio.so share/kvio/sql/prelude.sql share/kvio/sql/qd1.sql share/doc/kvio/README.md share/doc/kvio/docs/report.md; do
	[ -e "$T/inst/usr/$f" ] || missing="$missing $f"
done
eq "installed files" "" "$missing"
"$T/inst/usr/bin/kvio-ingest" -q -o "$T/inst.db" --sem fixtures/tiny/sem.jsonl --ebpf fixtures/tiny/ebpf.jsonl
eq "installed kvio-ingest runs" 0 $?
eq "installed extension loads in plain sqlite3" "2" \
	"$(sqlite3 -batch -cmd ".load $T/inst/usr/lib/kvio/kvio" "$T/inst.db" "select extract_arg(arg_set_id,'debug.n_cmds') from slice where name like 'store%'")"
eq "PREFIX=/usr: the database's read_with and --help name /usr/lib/kvio/kvio (not /usr/local)" "1 0 1" \
	"$(sqlite3 -batch "$T/inst.db" "select instr(str_value, '.load /usr/lib/kvio/kvio\"') > 0, instr(str_value, '/usr/local') > 0 from metadata where name = 'read_with'" | tr '|' ' ') $("$T/inst/usr/bin/kvio-ingest" --help | grep -c "load /usr/lib/kvio/kvio'")"
make -s user > /dev/null 2>&1 # build/ back to the default PREFIX (the hints of the tests after this one)

# ---- packaging (issue 10) ----
# gcc must be as clean as clang with -Werror: the project's test build says so,
# a plain `make` does not (a packager's newer compiler must not break it)
out=""
for f in $src; do
	o=$(${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -fsyntax-only -I"$BUILD" -I"$BUILD/capture" -Icapture "$f" 2>&1) || out="$out$f: $o
"
done
eq "gcc -Wall -Wextra -Werror: every source file" "" "$out"
# (WERROR and MAKEFLAGS cleared: under .ci/run's `make test WERROR=-Werror` make passes the variable to this make in both)
env -u WERROR MAKEFLAGS= make -s -n -B B="$T/nob" all > "$T/plain.n" 2>&1
eq "a plain make has no -Werror" 0 "$(grep -c -- '-Werror' "$T/plain.n")"
make -s -n -B B="$T/nob" all WERROR=-Werror > "$T/werror.n" 2>&1
eq "make WERROR=-Werror (CI): every compile of ours has -Werror" 0 \
	"$(grep -- '-Wall -Wextra' "$T/werror.n" | grep -vc -- '-Werror')"
# CPPFLAGS on every compile, LDFLAGS on every link (each cc line that writes no .o)
make -s -n -B B="$T/nob" all CPPFLAGS=-DKVIO_PKG_CPP LDFLAGS=-Wl,-zKVIO_PKG_LD > "$T/flags.n" 2>&1
eq "CPPFLAGS: on every C compile" 0 "$(grep -E '^(cc|gcc|clang) .*\.c( |$)' "$T/flags.n" | grep -v -- '-target bpf' | grep -vc -- '-DKVIO_PKG_CPP')"
eq "LDFLAGS: on every link" 0 "$(grep -E '^(cc|gcc|clang) ' "$T/flags.n" | grep -v -- ' -c ' | grep -v -- '-target bpf' | grep -vc -- '-Wl,-zKVIO_PKG_LD')"
# install from a fresh tree without the BPF toolchain: nothing of the tracer is built
make -s -n B="$T/nob" install BPF_CLANG=/nonexistent/clang > "$T/inst.n" 2>&1
eq "make install builds no BPF object and runs no bpftool" 0 "$(grep -cE 'target bpf|bpftool|/nonexistent/clang|-luring' "$T/inst.n")"
eq "make install installs kvio-gen" 1 "$(grep -c 'install -m 755 .*/kvio-gen ' "$T/inst.n")"
[ -e "$T/inst/usr/bin/kvio-gen" ]; eq "kvio-gen installed" 0 $?
"$T/inst/usr/bin/kvio-gen" --help > /dev/null 2>&1; eq "installed kvio-gen --help: exit 0" 0 $?
make -s uninstall DESTDIR="$T/inst" PREFIX=/usr > "$T/uninstall.out" 2>&1
eq "make uninstall: exit 0" 0 $?
eq "make uninstall leaves no file behind" "" "$(find "$T/inst" -type f -o -type l)"
