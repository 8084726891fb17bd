#!/bin/sh
# scripts/sqlcost.sh DB FILE... — what each sql/ file costs after sql/prelude.sql, in millions of
# instructions counted by valgrind's callgrind (deterministic: it does not move with the host's
# load, unlike wall time on a shared machine). FILE is a name in sql/ (qd1) or a path to a .sql
# file. EXT (default build/kvio) and SQLDIR (default sql) pick the extension and the files, so two
# builds can be compared. A development aid, not part of make bench; needs valgrind.
set -u
[ $# -ge 2 ] || { echo "usage: scripts/sqlcost.sh DB FILE..." >&2; exit 2; }
db=$1; shift
ext=${EXT:-build/kvio}
sd=${SQLDIR:-sql}
tmp=$(mktemp /tmp/sqlcost.XXXXXX)
trap 'rm -f "$tmp"' EXIT
ir() {
	printf '.load %s\n.read %s/prelude.sql\n.output /dev/null\n%s\n' "$ext" "$sd" "$1" > "$tmp"
	valgrind --tool=callgrind --callgrind-out-file=/dev/null sqlite3 "$db" < "$tmp" 2>&1 >/dev/null |
		awk '/refs:/ { gsub(",", "", $4); print int($4 / 1e6) }'
}
base=$(ir "")
total=0
for f in "$@"; do
	case $f in */*|*.sql) p=$f ;; *) p=$sd/$f.sql ;; esac
	n=$(($(ir ".read $p") - base))
	printf '%-24s %7d M\n' "$f" "$n"
	total=$((total + n))
done
echo "total $total M (the prelude alone: $base M)"
