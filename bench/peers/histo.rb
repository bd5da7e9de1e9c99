# bench/peers/histo.rb - the peer: a heapy-style Ruby histogram of an
# ObjectSpace.dump_all file (JSON lines), the way Ruby users do it today.
#
#   ruby bench/peers/histo.rb HEAP.json
#
# One JSON.parse per line.  Objects are counted per class: the class
# address is resolved to its name through the CLASS/MODULE lines of the
# same file; objects without a class (IMEMO, NODE...) count under their
# type.  Bytes are the "memsize" fields.  Prints count, class, bytes,
# sorted by count descending, and a total line: the same table as
# vmheap-histo.
require "json"
require_relative "heap_census"

abort "usage: histo.rb HEAP.json" unless ARGV.size == 1
census = HeapCensus.read(ARGV[0])
HeapCensus.print_histogram(census)
