# bench/peers/diff.rb - the peer: a heapy-style Ruby diff of two
# ObjectSpace.dump_all files (JSON lines).
#
#   ruby bench/peers/diff.rb OLD.json NEW.json
#
# Reads both files with one JSON.parse per line and prints one row per
# class whose count or bytes changed (new, gone and bytes-only classes
# included): count delta, class, bytes delta, sorted by count delta
# descending.  The same table as vmheap-diff.
require_relative "heap_census"

abort "usage: diff.rb OLD.json NEW.json" unless ARGV.size == 2
old = HeapCensus.read(ARGV[0])
new = HeapCensus.read(ARGV[1])
names = (old.counts.keys + new.counts.keys).uniq
rows = names.filter_map do |name|
	dc = new.counts[name] - old.counts[name]
	db = new.bytes[name] - old.bytes[name]
	[dc, name, db] unless dc.zero? && db.zero?
end
rows.sort_by! { |dc, name, _| [-dc, name] }
printf("%10s  %-40s %14s\n", "count", "class", "bytes")
rows.each { |dc, name, db| printf("%+10d  %-40s %+14d\n", dc, name, db) }
printf("%+10d  %-40s %+14d\n", new.objects - old.objects,
       "total (#{rows.size} classes changed)", new.total_bytes - old.total_bytes)
