# bench/attach_native.rb - the malloc tracker's cost when it was loaded
# into a running Ruby (bench/attach_cost.sh): with ARGV[0] "attach" the
# script loads libvmheap-malloc-attach.so (ARGV[1]) with Fiddle, routes
# the process's allocator calls to it and starts tracking, as `set
# config.native.track true` does in an attached process; then it does the
# same Ruby work as bench/native_bench.sh's "ruby" workload.
if ARGV[0] == "attach"
  require "fiddle"
  lib = Fiddle.dlopen(ARGV[1])
  route = Fiddle::Function.new(lib["vmheap_native_route"],
                               [Fiddle::TYPE_VOIDP], Fiddle::TYPE_INT)
  start = Fiddle::Function.new(lib["vmheap_native_start"], [],
                               Fiddle::TYPE_INT)
  raise "route" unless route.call(nil) == 0
  raise "start" unless start.call == 0
end
a = []
1_200_000.times { |i| a << ("x" * (24 + i % 200)); a.shift if a.size > 20_000 }
h = {}
600_000.times { |i| h["k#{i % 50_000}"] = [i, i.to_s * 3] }
