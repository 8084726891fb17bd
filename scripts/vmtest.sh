#!/bin/sh
# vmtest.sh — the end-to-end capture test on an emulated NVMe device.
#
# Boots Debian's linux-image-amd64 kernel (nvme modules, BTF) under QEMU/TCG with
# a small initramfs (busybox-static, the nvme modules, a static
# nvme_uring_cmd_monitor and kvio-load). In the guest: for each mode
# (serialized, batched) start the monitor, run kvio-load, stop the monitor;
# then the files go out over the serial console (lines prefixed "KVIO:<file>:").
# On the host: kvio-ingest + kvio-report, and the checks. Nothing is installed
# into the host's /boot: the kernel package is extracted with dpkg -x.
#
#   scripts/vmtest.sh [OUTDIR]     (default build/vm; exit 0 when every check passes)
# Prints "ok - ..." / "FAIL - ..." lines and a closing "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=$ROOT/build
VM=${1:-$B/vm}
mkdir -p "$VM"
PASS=0
FAIL=0
check() { # check NAME CONDITION-EXIT-STATUS [detail]
	if [ "$2" -eq 0 ]; then PASS=$((PASS + 1)); echo "ok - vm: $1"
	else FAIL=$((FAIL + 1)); echo "FAIL - vm: $1 ${3:-}"; fi
}
die() { echo "vmtest: $*" >&2; FAIL=$((FAIL + 1)); echo "FAIL - vm: $*"; echo "$PASS passed, $FAIL failed"; exit 1; }

# ---- 1. the guest kernel: Debian's, pinned through linux-image-amd64 -------
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$kpkg" ]; then
	apt-get update -qq >/dev/null 2>&1
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
[ -n "$kpkg" ] || die "cannot resolve the kernel package behind linux-image-amd64 (apt lists?)"
K=$VM/$kpkg
if [ ! -f "$K/vmlinux" ]; then
	rm -rf "$K" && mkdir -p "$K/deb"
	(cd "$K/deb" && apt-get download "$kpkg" >/dev/null 2>&1) || die "apt-get download $kpkg failed"
	dpkg -x "$K"/deb/*.deb "$K/root" || die "dpkg -x failed"
	rm -rf "$K/deb"
	vmlinuz=$(ls "$K"/root/boot/vmlinuz-* | head -1)
	# the uncompressed kernel (ELF with .BTF) for a PVH boot: the xz stream in the bzImage
	off=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(); print(d.find(b'\xfd7zXZ\x00'))" "$vmlinuz")
	[ "$off" -gt 0 ] || die "no xz stream in $vmlinuz"
	tail -c +$((off + 1)) "$vmlinuz" | xz -dc > "$K/vmlinux" 2>/dev/null
	[ -s "$K/vmlinux" ] || die "could not extract vmlinux"
fi
kver=$(ls "$K/root/lib/modules" | head -1)

# ---- 2. static guest binaries ------------------------------------------------
make -s "$B/capture/nvme_uring_cmd_monitor.skel.h" >/dev/null || die "cannot build the BPF skeleton"
cc -static -O2 -D_GNU_SOURCE -I"$B/capture" -Icapture -o "$VM/nvme_uring_cmd_monitor" \
	capture/nvme_uring_cmd_monitor.c capture/monitor_out.c capture/probes.c -lbpf -lelf -lz ||
	die "static link of nvme_uring_cmd_monitor failed"
cc -static -O2 -D_GNU_SOURCE -o "$VM/kvio-load" capture/kvio_load.c -luring || die "static link of kvio-load failed"

# ---- 3. initramfs -----------------------------------------------------------------
R=$VM/initramfs
rm -rf "$R" && mkdir -p "$R/bin" "$R/mod" "$R/proc" "$R/sys" "$R/dev" "$R/tmp"
cp /bin/busybox "$R/bin/busybox" || die "busybox-static is not installed"
cp "$VM/nvme_uring_cmd_monitor" "$VM/kvio-load" "$R/bin/"
n=0
for m in crct10dif_common crct10dif_generic crc-t10dif crc64 crc64_rocksoft_generic crc64-rocksoft t10-pi nvme-core nvme; do
	f=$(find "$K/root/lib/modules/$kver" -name "$m.ko" | head -1)
	[ -n "$f" ] || die "module $m.ko not found in $kpkg"
	n=$((n + 1))
	cp "$f" "$R/mod/$(printf %02d $n)-$m.ko"
done
cat > "$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in /mod/*.ko; do insmod "$m" || echo "KVIO-ERR insmod $m"; done
i=0
while [ ! -e /dev/ng0n1 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
[ -e /dev/ng0n1 ] || echo "KVIO-ERR no /dev/ng0n1"
echo 1 > /proc/sys/kernel/bpf_stats_enabled
run() { # run MODE ARGS...: one monitor session around one kvio-load run
	mode=$1; shift
	nvme_uring_cmd_monitor --jsonl /tmp/$mode.ebpf.jsonl --lba-size 512 --stats 2>/tmp/$mode.mon.err &
	mon=$!
	i=0
	while ! grep -q attached /tmp/$mode.mon.err && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	kvio-load --dev /dev/ng0n1 --sem /tmp/$mode.sem.jsonl --mode $mode "$@" > /tmp/$mode.load.out 2>&1
	sleep 0.5
	kill -INT $mon
	wait $mon
}
run serialized --objects 4 --object-bytes 524288
run batched --objects 4 --object-bytes 4194304 --qd 32
# a capture onto a full disk (a 16 KiB tmpfs): the monitor must say so, not exit 0
mkdir -p /full && mount -t tmpfs -o size=16k tmpfs /full || echo "KVIO-ERR mount tmpfs"
nvme_uring_cmd_monitor --jsonl /full/ebpf.jsonl --lba-size 512 2>/tmp/full.mon.err &
mon=$!
i=0
while ! grep -q attached /tmp/full.mon.err && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kvio-load --dev /dev/ng0n1 --sem /tmp/full.sem.jsonl --mode batched --objects 4 --object-bytes 4194304 --qd 32 \
	> /tmp/full.load.out 2>&1
sleep 1.5
kill -INT $mon
wait $mon
echo "exit=$?" >> /tmp/full.mon.err
for f in /tmp/*.jsonl /tmp/*.out /tmp/*.err; do
	b=${f##*/}
	sed "s|^|KVIO:$b:|" "$f"
done
echo "KVIO-DONE"
poweroff -f
EOF
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc 2>/dev/null | gzip -1 > "$VM/initramfs.cpio.gz") || die "cpio failed"

# ---- 4. boot ------------------------------------------------------------------------------
rm -f "$VM/nvme.img" && truncate -s 1G "$VM/nvme.img"
log=$VM/serial.log
timeout 600 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 1024 -smp 2 -nographic -no-reboot \
	-nodefaults -serial stdio -display none -kernel "$K/vmlinux" -initrd "$VM/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=1 rdinit=/init" \
	-drive file="$VM/nvme.img",if=none,id=nvm,format=raw -device nvme,serial=deadbeef,drive=nvm \
	< /dev/null > "$log" 2>&1
grep -q KVIO-DONE "$log"
check "guest ran to the end (serial log $log)" $?
grep "KVIO-ERR" "$log" | sed 's/^/    /'
out=$VM/out
rm -rf "$out" && mkdir -p "$out"
tr -d '\r' < "$log" | awk -v d="$out" 'index($0, "KVIO:") == 1 {
	rest = substr($0, 6); i = index(rest, ":"); f = substr(rest, 1, i - 1)
	print substr(rest, i + 1) > (d "/" f) }'

# ---- 5. on the host: ingest, report, checks -------------------------------------
"$B/kvio-ingest" -q -o "$out/vm.db" --merge "serialized=$out/serialized.sem.jsonl,$out/serialized.ebpf.jsonl" \
	--merge "batched=$out/batched.sem.jsonl,$out/batched.ebpf.jsonl"
check "kvio-ingest of the guest captures" $?
"$B/kvio-report" "$out/vm.db" --json > "$out/report.json"
check "kvio-report --json" $?
for mode in serialized batched; do
	grep -E "probes on|stats" "$out/$mode.mon.err" 2>/dev/null | sed 's/^/    /' >&2
	issued=$(sed -n 's/^RESULT cmds=\([0-9]*\) .*/\1/p' "$out/$mode.load.out" 2>/dev/null)
	if grep -q "errors=0 verify=OK" "$out/$mode.load.out" 2>/dev/null; then
		echo "ok - vm: $mode: kvio-load verified its data (errors=0 verify=OK)"
	else
		echo "FAIL - vm: $mode: kvio-load verified its data: $(tail -3 "$out/$mode.load.out" 2>/dev/null)"
	fi
	python3 - "$out/report.json" "$mode" "${issued:-0}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))[sys.argv[2]]
issued = int(sys.argv[3])
c = d["commands"]
checks = [
    ("every issued command seen (%d = %d)" % (c["n"], issued), c["n"] == issued and issued > 0),
    ("every command tagged", c["tagged"] == c["n"] and c["untagged"] == 0),
    ("every command paired with its completion (real_cover %s)" % c["real_cover"], c["real_cover"] == 1.0),
    ("no ring-buffer drops", d.get("capture", {}).get("drops") == 0),
]
v = d["qd1"].get("load", {}).get("verdict", "")
if sys.argv[2] == "serialized":
    checks.append(("QD1 verdict serialized (%s)" % v, "serialized" in v))
else:
    checks.append(("QD1 verdict pipelined (%s)" % v, v == "pipelined"))
for name, ok in checks:
    print(("ok - vm: %s: %s" if ok else "FAIL - vm: %s: %s") % (sys.argv[2], name))
PY
done > "$out/checks.txt"
# the capture onto a full disk: one line saying lines are being lost, exit status 1
{
	n_lost=$(grep -c 'lines are being lost' "$out/full.mon.err" 2>/dev/null)
	if [ "${n_lost:-0}" = 1 ] && grep -q '^exit=1$' "$out/full.mon.err"; then
		echo "ok - vm: monitor writing to a full disk: one line saying lines are lost, exit 1"
	else
		echo "FAIL - vm: monitor writing to a full disk: $(tr '\n' ' ' < "$out/full.mon.err" 2>/dev/null)"
	fi
} >> "$out/checks.txt"
cat "$out/checks.txt"
PASS=$((PASS + $(grep -c '^ok - ' "$out/checks.txt")))
FAIL=$((FAIL + $(grep -c '^FAIL - ' "$out/checks.txt")))
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
