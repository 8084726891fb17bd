# The build contract: gcc built everything above (-Wall -Wextra -Werror); clang
# must be as clean; `make install` puts the commands, the extension and the
# sql/ files (and the docs) where a packager expects them, and the installed set works.
src="lib/*.c ingest/*.c report/*.c capture/nvme_uring_cmd_monitor.c capture/monitor_out.c capture/probes.c capture/kvio_load.c scripts/kvio-gen.c"
if command -v clang >/dev/null; then
	out=""
	for f in $src; do
		o=$(clang -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -fsyntax-only -I"$BUILD" -I"$BUILD/capture" -Icapture "$f" 2>&1) || out="$out$f: $o
"
	done
	eq "clang -Wall -Wextra -Werror: every source file" "" "$out"
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
