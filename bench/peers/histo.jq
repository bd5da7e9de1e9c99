# bench/peers/histo.jq - the peer: a jq histogram of an
# ObjectSpace.dump_all file (JSON lines), in one streaming pass.
#
#   jq -n -r -f bench/peers/histo.jq HEAP.json
#
# Counts objects and sums "memsize" per class address (per type for
# objects without a class, and for IMEMO, whose "class" is the class it
# caches, not its own), collects class names from the CLASS/MODULE
# lines, then prints count, class, bytes sorted by count descending and
# a total line, tab separated.
reduce (inputs | select(.type != "ROOT")) as $o
	({names: {}, counts: {}, bytes: {}, objects: 0, total: 0};
	 (if $o.type != "IMEMO" and $o.class != null then $o.class
	  else "(\($o.type))" end) as $k
	 | .counts[$k] += 1
	 | .bytes[$k] += ($o.memsize // 0)
	 | .objects += 1
	 | .total += ($o.memsize // 0)
	 | if ($o.type == "CLASS" or $o.type == "MODULE") and $o.name != null
	   then .names[$o.address] = $o.name else . end)
| . as $s
| ($s.counts | to_entries
   | map({name: ($s.names[.key] // (if (.key | startswith("0x"))
				      then "#<Class:\(.key)>" else .key end)),
	    count: .value, bytes: $s.bytes[.key]})
   | group_by(.name)
   | map({name: .[0].name, count: (map(.count) | add),
	  bytes: (map(.bytes) | add)})
   | sort_by(-.count, .name)) as $rows
| "count\tclass\tbytes",
  ($rows[] | "\(.count)\t\(.name)\t\(.bytes)"),
  "\($s.objects)\ttotal (\($rows | length) classes)\t\($s.total)"
