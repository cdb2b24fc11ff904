#!/usr/bin/env bash
# One-shot read of the NVIDIA GPU health fields (docs/gpus.md#proven-on-a-real-gpu), each field in its
# own nvidia-smi call, so a field this driver lacks shows as unsupported instead of failing the others
# (an unknown field makes the whole query fail: exit 2, 'Field "x" is not a valid field to query.').
# Prints per GPU and field
#   health GPU<index> <field>: <value> (<verdict>)
# where the verdict is healthy, SICK, "not supported on this GPU" ([N/A], [Not Supported]) or "value not
# understood"; a field the driver does not know, or a call that fails or hangs (10 s), gets one line
#   health <field>: unsupported by this driver (...) | not read (...)
# and then a summary line. Exit status: 0 when every answer is understood and none is sick, 1 when a
# GPU reads sick or a value is not understood, 2 when no field could be read at all.
set -u
fields=(ecc.errors.uncorrected.volatile.total remapped_rows.pending remapped_rows.failure retired_pages.pending clocks_event_reasons.hw_slowdown)
# Drivers before 535 call the slowdown reasons clocks_throttle_reasons.
declare -A older=([clocks_event_reasons.hw_slowdown]=clocks_throttle_reasons.hw_slowdown)
read_n=0 sick=0 odd=0 unread=0

# query FIELD: sets out (at most 8 KiB of stdout and stderr) and rc of one bounded nvidia-smi call.
query() {
	out=$(
		set -o pipefail
		timeout -k 1 10 nvidia-smi --query-gpu=index,"$1" --format=csv,noheader 2>&1 </dev/null | head -c 8192
	)
	rc=$?
}

# verdict FIELD VALUE: sets v to what the value says of the GPU's health.
verdict() {
	case $2 in
	"[N/A]" | N/A | "[Not Supported]" | "Not Supported") v="not supported on this GPU" ;;
	"[GPU is lost]" | "ERR!" | "[Unknown Error]") v=SICK ;;
	0 | No | "Not Active") v=healthy ;;
	Yes | Active) v=SICK ;;
	*)
		if [[ $2 =~ ^[0-9]{1,18}$ ]]; then
			v=SICK # a count above 0: uncorrectable errors, pending or failed remappings
		else
			v="value not understood"
		fi
		;;
	esac
}

for f in "${fields[@]}"; do
	name=$f
	query "$f"
	if [[ $rc -ne 0 && $out == *"is not a valid field"* && -n ${older[$f]:-} ]]; then
		name=${older[$f]}
		query "$name"
	fi
	if [[ $rc -ne 0 ]]; then
		first=${out%%$'\n'*}
		first=${first//[[:cntrl:]]/?}
		if [[ $out == *"is not a valid field"* ]]; then
			echo "health $name: unsupported by this driver (${first:0:160})"
		elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
			echo "health $name: not read (no answer within 10 s)"
		else
			echo "health $name: not read (exit status $rc: ${first:0:160})"
		fi
		unread=$((unread + 1))
		continue
	fi
	read_n=$((read_n + 1))
	while IFS= read -r line; do
		[[ -n $line ]] || continue
		idx=${line%%,*}
		val=${line#*,}
		val=${val# }
		val=${val//[[:cntrl:]]/?}
		verdict "$name" "$val"
		case $v in
		SICK) sick=$((sick + 1)) ;;
		"value not understood") odd=$((odd + 1)) ;;
		esac
		echo "health GPU${idx:0:9} $name: ${val:0:80} ($v)"
	done <<<"$out"
done
echo "health: ${#fields[@]} fields, $read_n read, $unread not read; $sick sick answer(s), $odd not understood"
((read_n > 0)) || exit 2
((sick == 0 && odd == 0)) || exit 1
exit 0
