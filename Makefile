# kvio — build, test, demo, bench, install.  `make demo` and `make test` are the
# two commands a newcomer needs (they install missing Debian packages first).
CC      ?= cc
CXX     ?= g++
CFLAGS  ?= -O2 -g
# -Werror is the project's own test builds' business (tests/t_80_build.sh, CI:
# `make WERROR=-Werror`), never a packager's: a newer compiler's new warning
# must not break `make` or `make install`. CPPFLAGS and LDFLAGS are honoured.
WERROR  ?=
WFLAGS  := -std=c11 -Wall -Wextra $(WERROR) -D_GNU_SOURCE
LDLIBS  := -lsqlite3 -lprotobuf-c -lz -lm -lpthread -lsimdjson -lstdc++ -lxxhash
PREFIX  ?= /usr/local
DESTDIR ?=
B       := build

LIB_SRC    := lib/util.c lib/progress.c lib/u64map.c lib/strpool.c lib/window.c lib/outfile.c lib/cli.c lib/jsonesc.c lib/writeback.c
# db/: the database itself. DB_SRC as the commands open and write it; EXT_SRC the
# SQLite extension (kvio_cmd, extract_arg, the operators), built twice: into
# kvio (SQLITE_CORE) and as the loadable build/kvio.so
DB_SRC     := db/schema.c
EXT_SRC    := db/ext.c db/ddl.c db/valid.c db/values.c db/memo.c db/check.c db/chunk.c db/dir.c db/store.c db/cmd_vtab.c db/cmd_scan.c db/args.c \
              db/op_key.c db/op_batch.c db/op_pct.c db/op_depth.c db/op_group.c db/op_tvf.c db/op_grid.c db/op_sign.c db/op_keep.c
INGEST_SRC := ingest/jsonl.c ingest/jlshape.c ingest/input.c ingest/records.c ingest/arm.c ingest/load.c ingest/join.c ingest/stream.c ingest/streamlive.c ingest/write.c ingest/dbw.c ingest/pftrace.c \
              ingest/offset.c ingest/ingest.c ingest/follow.c ingest/live.c ingest/livectr.c ingest/livemem.c ingest/livesrv.c ingest/entry.c
REPORT_SRC := report/report.c report/label.c report/run.c report/multi.c report/metric.c report/compare.c report/compare_out.c report/compare_html.c report/stats.c report/fmt_text.c report/fmt_json.c report/html.c report/json.c report/watch.c
EXPORT_SRC := export/export.c export/pfwrite.c export/window.c export/slices.c export/cmds.c export/findings.c
CMD_SRC    := cmd/main.c cmd/kvio2perfetto.c cmd/check.c cmd/pcache.c cmd/hugemem.c
SQL_FILES  := $(sort $(wildcard sql/*.sql))
HDRS       := $(wildcard lib/*.h db/*.h ingest/*.h report/*.h export/*.h cmd/*.h)
KVIO_SRC   := $(CMD_SRC) $(LIB_SRC) $(DB_SRC) $(INGEST_SRC) $(REPORT_SRC) $(EXPORT_SRC)
KVIO_OBJ   := $(KVIO_SRC:%.c=$(B)/%.o) $(B)/ingest/sjline.o $(EXT_SRC:%.c=$(B)/%.core.o) $(B)/sqlfiles.o \
              $(B)/htmlassets.o $(B)/kvio.pb-c.o
CMDS       := kvio-ingest kvio-report kvio-export kvio2perfetto kvio-check

.PHONY: all user capture deps demo test bench vmtest fuzz install uninstall clean FORCE
CAPTURE_SRC := capture/nvme_uring_cmd_monitor.c capture/monitor_out.c capture/probes.c
CAPTURE_HDR := $(wildcard capture/*.h)
BPF_CLANG   ?= clang

# user: the commands, the extension and kvio-gen (no BPF toolchain, no liburing);
# capture: the tracer (clang -target bpf, bpftool) and kvio-load (liburing)
USER_BIN := $(B)/kvio $(addprefix $(B)/,$(CMDS)) $(B)/kvio.so $(B)/kvio-gen
CAPTURE_BIN := $(B)/nvme_uring_cmd_monitor $(B)/kvio-load
all: user capture
user: $(USER_BIN)
capture: $(CAPTURE_BIN)

$(B)/%.o: %.c $(HDRS) $(B)/kvio.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) -I$(B) -c $< -o $@

# the one C++ file (simdjson behind a C interface); no -march: simdjson's
# library picks its stage-1 kernel for the CPU at run time
$(B)/ingest/sjline.o: ingest/sjline.cc ingest/sjline.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra $(WERROR) -fno-exceptions -fno-rtti $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# the .pftrace messages (read by ingest/pftrace.c, written by export/): lib/kvio.proto compiled by protoc-c
$(B)/kvio.pb-c.c $(B)/kvio.pb-c.h: lib/kvio.proto
	@mkdir -p $(B)
	protoc-c --c_out=$(B) --proto_path=lib lib/kvio.proto

$(B)/kvio.pb-c.o: $(B)/kvio.pb-c.c
	$(CC) -std=c11 $(CPPFLAGS) $(CFLAGS) -I$(B) -c $< -o $@

$(B)/sqlfiles.c: $(SQL_FILES) scripts/embed-sql.sh
	@mkdir -p $(B)
	sh scripts/embed-sql.sh $@ $(SQL_FILES)

$(B)/sqlfiles.o: $(B)/sqlfiles.c report/sqlfiles.h
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) -Ireport -c $< -o $@

# the page parts of kvio-report --html (Chart.js itself is read at run time)
$(B)/htmlassets.c: report/html.js report/html.css scripts/embed-text.sh
	@mkdir -p $(B)
	sh scripts/embed-text.sh $@ kvio_html_js report/html.js kvio_html_css report/html.css

$(B)/htmlassets.o: $(B)/htmlassets.c
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# the extension linked into kvio calls SQLite's API without PLT stubs
$(B)/db/%.core.o: db/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) -fno-plt -DSQLITE_CORE -c $< -o $@

# where `make install` puts the extension, named by kvio's hints (.load PREFIX/lib/kvio/kvio):
# rewritten only when PREFIX changes, so `make install PREFIX=/usr` rebuilds what names it
$(B)/kvio_prefix.h: FORCE
	@mkdir -p $(B)
	@printf '#define KVIO_LIBDIR "%s"\n' '$(PREFIX)/lib/kvio' > $@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(B)/ingest/dbw.o $(B)/ingest/entry.o: $(B)/kvio_prefix.h
FORCE:

$(B)/kvio: $(KVIO_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(addprefix $(B)/,$(CMDS)): $(B)/kvio
	ln -sf kvio $@

# the loadable extension: only sqlite3_kvio_init is exported
$(B)/kvio.so: $(EXT_SRC) $(HDRS)
	@mkdir -p $(B)
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $(EXT_SRC) -lxxhash -lm

# capture/: the BPF object (clang -target bpf), its skeleton (bpftool), the tracer
$(B)/capture/nvme_uring_cmd_monitor.bpf.o: capture/nvme_uring_cmd_monitor.bpf.c $(CAPTURE_HDR)
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall $(WERROR) -Icapture -c $< -o $@

$(B)/capture/nvme_uring_cmd_monitor.skel.h: $(B)/capture/nvme_uring_cmd_monitor.bpf.o
	bpftool gen skeleton $< name nvme_uring_cmd_monitor_bpf > $@.tmp && mv $@.tmp $@

$(B)/nvme_uring_cmd_monitor: $(CAPTURE_SRC) $(CAPTURE_HDR) $(B)/capture/nvme_uring_cmd_monitor.skel.h
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -I$(B)/capture -Icapture -o $@ $(CAPTURE_SRC) -lbpf -lelf -lz

$(B)/kvio-load: capture/kvio_load.c
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< -luring

# the fuzz target "parser": the fast path and the full parser side by side
$(B)/jl-diff: tests/jl_diff.c ingest/jsonl.c ingest/jlshape.c lib/util.c $(B)/ingest/sjline.o ingest/jsonl.h ingest/sjline.h
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ tests/jl_diff.c ingest/jsonl.c ingest/jlshape.c lib/util.c $(B)/ingest/sjline.o -lsimdjson -lstdc++ -lm

$(B)/kvio-gen: scripts/kvio-gen.c
	@mkdir -p $(B)
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< -lm

deps:
	@sh scripts/install-deps

demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

test: deps
	@$(MAKE) --no-print-directory all
	@sh tests/run.sh

vmtest: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/vmtest.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/bench.sh

# mutation fuzzing of the inputs under ASan/UBSan (minutes; not part of `make test`),
# after the output cases (full disks, signals, same-file refusals: tests/t_35_outputs.sh)
# on the same build; then the databases (issue 21): scripts/dbfuzz.py (whole databases
# mutated, as damage and, DBFUZZ_FORGER of the runs, as a forger would, through every
# reader; DBFUZZ_RUNS) and the
# libFuzzer targets tests/fuzz_chunk.c and tests/fuzz_db.c (clang, FUZZ_SECONDS each;
# scripts/libfuzz.sh: seeds in $(B)/fuzz-corpus, a line per target). Exit 1 on a finding.
FUZZ_RUNS ?= 300
FUZZ_SEED ?= 1
DBFUZZ_RUNS ?= 150
DBFUZZ_FORGER ?= 0.5
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -DSQLITE_CORE -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -g -O1 \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
fuzz: deps
	@$(MAKE) --no-print-directory B=$(B)/asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		$(addprefix $(B)/asan/,$(CMDS)) $(B)/asan/kvio-gen $(B)/asan/jl-diff $(B)/asan/kvio.so $(B)/asan/dbforge
	@$(MAKE) --no-print-directory $(B)/libfuzz/fuzz_chunk $(B)/libfuzz/fuzz_db
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		KVIO_TEST_BUILD=$(abspath $(B)/asan) sh tests/run.sh tests/t_35_outputs.sh
	@python3 scripts/fuzz.py $(B)/asan $(B)/fuzz --runs $(FUZZ_RUNS) --seed $(FUZZ_SEED)
	@rc=0; python3 scripts/dbfuzz.py $(B)/asan $(B)/dbfuzz --runs $(DBFUZZ_RUNS) --seed $(FUZZ_SEED) --expect-clean \
		--keep-going --forger $(DBFUZZ_FORGER) || rc=1; \
	sh scripts/libfuzz.sh $(B)/asan $(B)/libfuzz $(B)/fuzz-corpus $(FUZZ_SECONDS) || rc=1; exit $$rc

# dbforge (tests/t_36_damaged.sh builds its own; dbfuzz.py's forger uses this one)
$(B)/dbforge: tests/dbforge.c db/chunk.c db/valid.c db/values.c db/memo.c db/ddl.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -DSQLITE_CORE -o $@ tests/dbforge.c db/chunk.c db/valid.c db/values.c \
		db/memo.c db/ddl.c -lsqlite3 -lxxhash -lpthread

# the libFuzzer targets: a chunk blob (the real checksum, re-sealed by the target), a whole
# database (-DKVIO_FUZZ_NO_SUMS: every checksum passes, db/chunk.c and db/valid.c)
$(B)/libfuzz/fuzz_chunk: tests/fuzz_chunk.c db/chunk.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz_chunk.c db/chunk.c -lsqlite3 -lxxhash

$(B)/libfuzz/fuzz_db: tests/fuzz_db.c $(EXT_SRC) $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DKVIO_FUZZ_NO_SUMS -o $@ tests/fuzz_db.c $(EXT_SRC) -lsqlite3 -lxxhash -lm -lpthread

# install: the user-space set (builds it if needed, never the BPF toolchain);
# the tracer and kvio-load are installed when they were built (make capture)
BINDIR  = $(DESTDIR)$(PREFIX)/bin
INST_CAPTURE = nvme_uring_cmd_monitor kvio-load
install: user
	install -d $(BINDIR) $(DESTDIR)$(PREFIX)/lib/kvio $(DESTDIR)$(PREFIX)/share/kvio/sql
	install -m 755 $(B)/kvio $(B)/kvio-gen $(BINDIR)/
	for c in $(INST_CAPTURE); do if [ -x $(B)/$$c ]; then install -m 755 $(B)/$$c $(BINDIR)/ || exit 1; \
		else echo "install: $(B)/$$c not built (make capture), not installed"; fi; done
	for c in $(CMDS); do ln -sf kvio $(BINDIR)/$$c || exit 1; done
	install -m 644 $(B)/kvio.so $(DESTDIR)$(PREFIX)/lib/kvio/kvio.so
	install -m 644 sql/*.sql $(DESTDIR)$(PREFIX)/share/kvio/sql/
	install -d $(DESTDIR)$(PREFIX)/share/doc/kvio/docs
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/kvio/
	install -m 644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/kvio/docs/

# uninstall: what install puts there, and the directories only kvio uses
uninstall:
	for c in kvio kvio-gen $(INST_CAPTURE) $(CMDS); do rm -f $(BINDIR)/$$c; done
	rm -rf $(DESTDIR)$(PREFIX)/lib/kvio $(DESTDIR)$(PREFIX)/share/kvio $(DESTDIR)$(PREFIX)/share/doc/kvio

clean:
	rm -rf $(B)
