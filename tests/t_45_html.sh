# t_45_html.sh — kvio-report --html: the page opened in headless Chromium
# (sourced by run.sh). tests/html_check.py reads the page, its DOM after
# html.js drew it (#kvio-summary: every chart's datasets and point counts,
# every error caught) and the JSON report, and compares with values from
# elsewhere: the sql/html_*.sql rows in the plain sqlite3 CLI, a Python
# recomputation from the slices, the JSON's own numbers. The screenshots stay
# in build/html-test/ for a person to look at.

H=$BUILD/html-test
mkdir -p "$H"
# a browser that hangs is stopped after 120 s (and the checks fail)
CHROMIUM="timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
	--disable-component-update --disable-sync --disable-default-apps --mute-audio"

# chrome_dom PAGE OUT: the DOM of PAGE after its scripts ran
chrome_dom() {
	u=$(mktemp -d "$T/chr.XXXXXX")
	$CHROMIUM --user-data-dir="$u" --dump-dom "file://$1" > "$2" 2>"$u.err" || cat "$u.err" >&2
	rm -rf "$u"
}

# chrome_shot PAGE PNG: a full-width screenshot of PAGE
chrome_shot() {
	u=$(mktemp -d "$T/chr.XXXXXX")
	$CHROMIUM --user-data-dir="$u" --window-size=1400,4400 --screenshot="$2" "file://$1" >/dev/null 2>&1
	rm -rf "$u"
}

# html_page NAME DB [report options]: the page, JSON and text report of one run,
# the page checked by html_check.py (its ok/FAIL lines counted)
html_page() {
	name=$1; db=$2; shift 2
	"$BUILD/kvio-report" "$db" --html "$T/$name.html" --json "$T/$name.json" "$@" > "$T/$name.txt" 2>"$T/$name.err"
	rc=$?
	case " ${HTML_RC:-0} " in *" $rc "*) rc=ok ;; esac
	eq "html $name: kvio-report exits ${HTML_RC:-0}" ok "$rc"
	chrome_dom "$T/$name.html" "$T/$name.dom"
	python3 tests/html_check.py "$db" "$BUILD/kvio" "$T/$name.html" "$T/$name.dom" "$T/$name.json" "$T/$name.txt" \
		"$@" > "$T/$name.check" 2>&1
	crc=$?
	grep -v '^ok - ' "$T/$name.check" | head -20
	PASS=$((PASS + $(grep -c '^ok - ' "$T/$name.check")))
	FAIL=$((FAIL + $(grep -c '^FAIL - ' "$T/$name.check")))
	[ -s "$T/$name.check" ] || { FAIL=$((FAIL + 1)); echo "FAIL - html $name: html_check.py printed nothing"; }
	# a checker that died (a traceback) is a failure, not a page with no checks
	[ "$crc" -eq 0 ] || grep -q '^FAIL - ' "$T/$name.check" || { FAIL=$((FAIL + 1)); echo "FAIL - html $name: html_check.py exited $crc"; }
}

# the demo's A/B database (scripts/demo.sh): serialized stock vs batched
"$BUILD/kvio-gen" --sem "$T/hs.s" --ebpf "$T/hs.e" --lines 20000 --mode serialized 2>/dev/null
"$BUILD/kvio-gen" --sem "$T/hb.s" --ebpf "$T/hb.e" --lines 20000 --mode batched --seed 2 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/hab.db" --merge "stock=$T/hs.s,$T/hs.e" --merge "batched=$T/hb.s,$T/hb.e"
html_page ab "$T/hab.db"
chrome_shot "$T/ab.html" "$H/ab.png"
eq "html ab: the screenshot is kept" 1 "$([ -s "$H/ab.png" ] && echo 1)"
# the stock arm's load path is serialized: its banner says so, in red
eq "html ab: the stock banner is red and says why" 1 \
	"$(grep -c '<section class="banner bad" data-label="stock"><h2>stock</h2><p class="why">looks serialized (QD~1): load' "$T/ab.html")"

# --base stock: the A/B charts pair against stock, so their series is the batched arm
# (html_ab.sql took the first label whatever --base said: both charts were empty)
html_page ab-base "$T/hab.db" --base stock
eq "html ab-base: each A/B chart draws the batched arm against stock" "ab:load=batched − stock ab:store=batched − stock" \
	"$(python3 -c "import json,re,sys; d=json.loads(re.search(r'id=\"kvio-data\">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1)); print(' '.join('%s=%s' % (c['id'], ','.join(x['name'] for x in c['series'] if x['xy'] and not x['name'].startswith('zero'))) for c in d['charts'] if c['id'].startswith('ab:')))" "$T/ab-base.html")"

# a real of the banner reads with 4 digits; the JSON's repr (e.g. 14.504732487320144) is its data-v and tooltip
eq "html ab: the mean queue depth reads rounded, exactly as the JSON writes it in data-v and the tooltip" 1 \
	"$(python3 -c "import json,sys; v=json.load(open(sys.argv[2]))['stock']['qd']['mean']; print(int(('data-key=\"qd.mean\"><span class=\"v\" data-v=\"%r\" title=\"%r\">%.4g</span>' % (v, v, v)) in open(sys.argv[1], encoding='utf-8').read()))" "$T/ab.html" "$T/ab.json")"

# a label filter selecting one arm (no A/B charts: there is nothing to pair)
html_page ab-stock "$T/hab.db" --label stock
# a time window: every chart of the commands overlapping 20-60 ms only
html_page ab-window "$T/hab.db" --time-range 0.02,0.06
eq "html ab-window: the throughput buckets start inside the window" 1 \
	"$(python3 -c "import json,re,sys; d=json.loads(re.search(r'id=\"kvio-data\">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1)); s=[c for c in d['charts'] if c['id']=='tput:mbs'][0]['series']; print(int(all(x['xy'][0] >= 0.02e9 - 300e3 for x in s)))" "$T/ab-window.html")"

# a single-arm capture without completions: the charts that need them say so
"$BUILD/kvio-gen" --sem "$T/hn.s" --ebpf "$T/hn.e" --lines 20000 --no-completions --seed 5 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/hnc.db" --sem "$T/hn.s" --ebpf "$T/hn.e" 2>/dev/null
html_page nocmp "$T/hnc.db"
chrome_shot "$T/nocmp.html" "$H/nocmp.png"

# a capture with 0 commands (semantic trace only)
"$BUILD/kvio-ingest" -q -o "$T/h0.db" --sem "$T/hn.s" 2>/dev/null
# (the report of no command may be "unusable", exit 1: the page is written all the same)
HTML_RC="0 1"
html_page nocmds "$T/h0.db"
HTML_RC=0

# TP ranks and serving spans: the barrier skew and TTFT charts; another batch gap
"$BUILD/kvio-gen" --sem "$T/hr.s" --ebpf "$T/hr.e" --lines 20000 --ranks 4 --serving "$T/hr.v" --seed 3 2>/dev/null
"$BUILD/kvio-ingest" -q -o "$T/hr.db" --sem "$T/hr.s" --ebpf "$T/hr.e" --serving "$T/hr.v"
html_page ranks "$T/hr.db" --batch-gap-us 5
eq "html ranks: TP barrier and serving charts" "tp:gap serving:load_ttft" \
	"$(grep -o '"id":"\(tp:gap\|serving:[a-z_]*\)"' "$T/ranks.html" | cut -d'"' -f4 | tr '\n' ' ' | sed 's/ $//')"

# Chart.js missing: one line naming it, exit 2, nothing written
KVIO_CHARTJS=$T/none.js "$BUILD/kvio-report" "$T/hab.db" --html "$T/miss.html" > /dev/null 2>"$T/miss.err"
eq "html: a missing Chart.js is exit 2" 2 $?
eq "html: ... one line naming the file" "kvio-report: $T/none.js: cannot read Chart.js: No such file or directory (install Debian's libjs-chart.js: scripts/install-deps)" \
	"$(cat "$T/miss.err")"
eq "html: ... and no page, no temp file" "" "$(ls "$T" | grep '^miss\.html')"
# an unwritable place: exit 2, the user's path named, nothing left behind
"$BUILD/kvio-report" "$T/hab.db" --html "$T/nodir/r.html" > /dev/null 2>"$T/nodir.err"
eq "html: an unwritable path is exit 2" 2 $?
eq "html: ... naming the path" "kvio-report: creating $T/nodir/r.html: No such file or directory" "$(cat "$T/nodir.err")"
# the page never overwrites the database
sum=$(cksum < "$T/hab.db")
"$BUILD/kvio-report" "$T/hab.db" --html "$T/hab.db" > /dev/null 2>"$T/same.err"
eq "html: --html onto the database is exit 2" 2 $?
eq "html: ... and the database is untouched" "$sum" "$(cksum < "$T/hab.db")"
