# bench/alloc_trace.rb - what allocation tracing costs an allocation loop:
# the same loop untraced, with vmheap's tracer (set
# config.trace.allocations true, through vmheap-console against this very
# process) and with ObjectSpace.trace_object_allocations_start, in one
# process, in turn, RUNS times; prints the median seconds of each and
# their ratios to the untraced loop, as a Markdown table.
#
#   ruby -I BUILD/ruby -rvmheap_agent bench/alloc_trace.rb CONSOLE [N] [RUNS]
#
# The loop makes 3 objects per step (an object, a string, an array slot
# grows now and then) from two lines of one method, and keeps at most 1000
# of them, so that the GC frees as fast as the loop allocates: the tracer
# pays for NEWOBJ and FREEOBJ both.
require "objspace"

console = ARGV[0] or abort "usage: alloc_trace.rb CONSOLE [N] [RUNS]"
n = Integer(ARGV[1] || 1_000_000)
runs = Integer(ARGV[2] || 3)

class BenchItem
	def initialize(i)
		@i = i
	end
end

def work(n)
	keep = []
	i = 0
	while i < n
		keep << BenchItem.new(i)
		keep << "item #{i}"
		keep.clear if keep.size > 1000
		i += 1
	end
end

def seconds
	t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
	yield
	Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
end

def agent(console, command)
	out = IO.popen([console, "-p", Process.pid.to_s, "-e", command],
		       err: [:child, :out], &:read)
	$?.success? or abort "vmheap-console -e '#{command}': #{out}"
	out.strip
end

def median(a)
	s = a.sort
	s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

work(n / 10) # warm up
t = { base: [], vmheap: [], objspace: [] }
objects = sites = bytes = nil
runs.times do
	GC.start
	t[:base] << seconds { work(n) }

	agent(console, "set config.trace.allocations true")
	GC.start
	t[:vmheap] << seconds { work(n) }
	objects = agent(console, "get system.allocations.objects")
	sites = agent(console, "get system.allocations.sites")
	bytes = agent(console, "get system.allocations.bytes")
	agent(console, "set config.trace.allocations false")

	GC.start
	ObjectSpace.trace_object_allocations_start
	t[:objspace] << seconds { work(n) }
	ObjectSpace.trace_object_allocations_stop
	ObjectSpace.trace_object_allocations_clear
end

base = median(t[:base])
puts "| #{n} steps (#{3 * n} allocations), #{runs} runs, median | seconds | x untraced |"
puts "| --- | --- | --- |"
puts format("| untraced | %.3f | 1.00 |", base)
puts format("| vmheap (config.trace.allocations) | %.3f | %.2f |",
	    median(t[:vmheap]), median(t[:vmheap]) / base)
puts format("| ObjectSpace.trace_object_allocations_start | %.3f | %.2f |",
	    median(t[:objspace]), median(t[:objspace]) / base)
puts
puts "vmheap's tables at the end of a traced loop: #{objects} objects, " \
     "#{sites} sites, #{bytes.tr("\n", " ")}"
puts "Every run (s): untraced #{t[:base].map { |x| x.round(3) }.join(" ")}; " \
     "vmheap #{t[:vmheap].map { |x| x.round(3) }.join(" ")}; " \
     "objspace #{t[:objspace].map { |x| x.round(3) }.join(" ")}"
