# The layout of docs/architecture.md holds (tests/layout.py): the folders' arrows on the
# #include lines and on the built objects' symbols, no files of a folder calling each
# other in a circle, file and function sizes, header bodies, and the page naming every
# source file. Each rule is first shown to fail on a tree made to break it.
L=$T/layout
rm -rf "$L"; mkdir -p "$L"
cp -r db ingest report export cmd lib capture docs "$L/"

# ---- each rule fails where it should (planted violations) ----
sed -i 's|#include "kvio_int.h"|#include "kvio_int.h"\n#include "../ingest/model.h"|' "$L/db/store.c"
sed -i 's|#include "report.h"|#include "report.h"\n#include "../export/export.h"|' "$L/report/label.c"
eq "layout includes: a db/ file including ingest/, a report/ file including export/, named" \
	"db/store.c:7: db/ includes ../ingest/model.h (db/ may reach db, lib)
report/label.c:5: report/ includes ../export/export.h (report/ may reach db, lib, report)" \
	"$(python3 tests/layout.py "$L" includes)"
{ printf 'static int long_one(void)\n{\n'; i=0; while [ $i -lt 81 ]; do echo "	(void)0;"; i=$((i + 1)); done; printf '	return 0;\n}\n'; } >> "$L/lib/cli.c"
printf 'int body_in_header(void)\n{\n\treturn 1;\n}\n' >> "$L/lib/cli.h"
# the brace lines of the planted bodies: two lines after each file's end; long_one is
# { + 81 statements + return + } = 84 lines
c0=$(($(wc -l < lib/cli.c) + 2)) h0=$(($(wc -l < lib/cli.h) + 2))
eq "layout sizes: an 84-line function and a header with a body, named" \
	"lib/cli.c:$c0: long_one is 84 lines (at most 80)|lib/cli.h:$h0: body_in_header: a function body in a header (only small static inlines)" \
	"$(python3 tests/layout.py "$L" sizes | sort | tr '\n' '|' | sed 's/|$//')"
: > "$L/ingest/unnamed_new.c"
eq "layout map: a file the page does not name" "ingest/unnamed_new.c: not named in docs/architecture.md" \
	"$(python3 tests/layout.py "$L" map)"
# objects: lib/ calling db/, and two db/ files calling each other
mkdir -p "$L/b/lib" "$L/b/db"
printf 'int db_a(void);\nint lib_x(void) { return db_a(); }\n' > "$L/b/x.c"
printf 'int db_b(void);\nint db_a(void) { return db_b(); }\n' > "$L/b/a.c"
printf 'int db_a(void);\nint db_b(void) { return db_a() + 1; }\n' > "$L/b/b.c"
cc -c -o "$L/b/lib/x.o" "$L/b/x.c" && cc -c -o "$L/b/db/a.o" "$L/b/a.c" && cc -c -o "$L/b/db/b.o" "$L/b/b.c"
eq "layout symbols: lib/ calling db/ and a circle in db/, named" \
	"lib/x.o calls db/a.o (db_a): lib/ may reach lib|files calling each other in a circle: db/a.o db/b.o" \
	"$(python3 tests/layout.py "$L" symbols "$L/b" | tr '\n' '|' | sed 's/|$//')"

# ---- the tree holds them ----
eq "layout: every #include follows the folders' arrows" "" "$(python3 tests/layout.py . includes)"
eq "layout: the built objects follow the arrows, no circles within a folder" "" \
	"$(python3 tests/layout.py . symbols "$BUILD")"
eq "layout: .c files under 1,000 lines, functions under 80, headers declare" "" "$(python3 tests/layout.py . sizes)"
eq "layout: docs/architecture.md names every source file" "" "$(python3 tests/layout.py . map)"
